// Loaded with `node --import` before a README example: records what each console.log line of the
// example printed (by its line number in the example file), written as JSON on exit.
import { writeFileSync } from "node:fs";
import { format } from "node:util";

const file = process.env.SGFP4_EXAMPLE_FILE;
const log = process.env.SGFP4_EXAMPLE_LOG;
const records = [];
const print = console.log;
console.log = (...args) => {
  const frame = (new Error().stack ?? "").split("\n").find((l) => l.includes(file));
  const line = frame ? Number(/:(\d+):\d+\)?$/.exec(frame)?.[1]) : 0;
  records.push({ line, text: format(...args) });
  print(...args);
};
process.on("exit", () => writeFileSync(log, JSON.stringify(records)));
