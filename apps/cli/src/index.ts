export { createProgram, main } from "./program.js";
export { EXIT, CliError, parseShape } from "./util.js";
export { npyHeader } from "./npy.js";
export { inspectContainer, formatInspection, type Inspection } from "./commands/inspect.js";
