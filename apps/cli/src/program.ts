import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { registerConformance } from "./commands/conformance.js";
import { registerDecode } from "./commands/decode.js";
import { registerInspect } from "./commands/inspect.js";
import { registerModelCommands } from "./commands/model.js";
import { registerValidate } from "./commands/validate.js";
import { EXIT, describeError } from "./util.js";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };

export function createProgram(): Command {
  const program = new Command("sgfp4")
    .description("SGFP4 containers: decode, validate, inspect, run the conformance suite; encode, verify and rebuild models (safetensors, sharded checkpoints, ONNX)")
    .version(pkg.version)
    .showHelpAfterError("(run sgfp4 help for usage)")
    .addHelpText(
      "after",
      "\nExit status: 0 ok, 1 failure (I/O, backend, failing conformance, verify/decode-model mismatch), 2 usage or input that cannot be used as given (bad model file, output folder not empty, --bpw below the minimum, --include matching nothing, missing shard), 3 invalid container (error: CODE: detail on stderr), 4 validate --strict found warnings, 130/143 interrupted (SIGINT/SIGTERM; partial output removed).\n--json (encode, verify, validate, inspect, merge-manifests): one JSON document on stdout, same exit status.",
    );
  registerDecode(program);
  registerValidate(program);
  registerInspect(program);
  registerConformance(program);
  registerModelCommands(program);
  return program;
}

/** Runs the CLI; resolves to the exit status instead of exiting, so tests can call it too. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = createProgram();
  program.exitOverride();
  for (const c of program.commands) c.exitOverride();
  try {
    await program.parseAsync(argv as string[]);
    return typeof process.exitCode === "number" ? process.exitCode : EXIT.OK;
  } catch (e) {
    if (e instanceof CommanderError) {
      // commander has printed the message (or the help / version) already
      return e.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    }
    const { line, exitCode } = describeError(e);
    process.stderr.write(line + "\n");
    return exitCode;
  }
}
