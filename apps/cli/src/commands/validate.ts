import type { Command } from "commander";
import { validate, type Warning } from "@sgfp4/format";
import { EXIT, parseProfile, parseShape, readInput } from "../util.js";

export function describeWarning(w: Warning): string {
  const at: string[] = [];
  if (w.record !== undefined) at.push(`record ${w.record}`);
  if (w.leaf !== undefined) at.push(`leaf ${w.leaf}`);
  if (w.offset !== undefined) at.push(`byte offset ${w.offset}`);
  return `warning: ${w.kind}: ${w.message}${at.length ? ` (at ${at.join(", ")})` : ""}`;
}

export function registerValidate(program: Command): void {
  program
    .command("validate")
    .description("check a container without decoding it (exit 0 valid, 3 invalid, 4 warnings with --strict)")
    .argument("<file>", "container")
    .requiredOption("--shape <OxI>", "shape: rows x columns")
    .option("--profile <profile>", "v1, v2 or auto", "auto")
    .option("--strict", "also report ignored bytes and negative scales (DECISIONS.md section 4); exit 4 if any")
    .option("--json", "print { valid, file, profile, shape, blocks, leaves, bytes, warnings, error? } as JSON (same exit status)")
    .action(async (file: string, opts: { shape: string; profile: string; strict?: boolean; json?: boolean }) => {
      const shape = parseShape(opts.shape);
      const profile = parseProfile(opts.profile);
      const bytes = await readInput(file);
      const r = validate(bytes, { profile, shape, strict: !!opts.strict });
      if (r.code !== undefined || !r.container) {
        const code = r.code ?? "INVALID_ARGUMENT";
        const message = r.message ?? "rejected";
        const line = message.startsWith(`${code}:`) ? message : `${code}: ${message}`;
        if (opts.json) process.stdout.write(JSON.stringify({ valid: false, file, shape, error: { code, message: line } }, null, 2) + "\n");
        process.stderr.write(`error: ${line}\n`);
        process.exitCode = EXIT.INVALID_CONTAINER;
        return;
      }
      const c = r.container;
      if (opts.json) {
        const warnings = r.warnings.map((w) => ({ ...w, text: describeWarning(w) }));
        process.stdout.write(JSON.stringify({ valid: true, file, profile: c.profile, shape, blocks: c.blockCount, leaves: c.leafCount, bytes: c.byteLength, warnings }, null, 2) + "\n");
        if (opts.strict && warnings.length) process.exitCode = EXIT.WARNINGS;
        return;
      }
      const unit = c.profile === "v1" ? "block" : "record";
      process.stdout.write(`valid: ${file}: ${c.profile}, shape ${shape[0]}x${shape[1]}, ${c.blockCount} ${unit}${c.blockCount === 1 ? "" : "s"}, ${c.leafCount} leaves, ${c.byteLength} bytes\n`);
      const n = r.warnings.length;
      if (opts.strict) {
        for (const w of r.warnings) process.stdout.write(describeWarning(w) + "\n");
        process.stdout.write(`${n} warning${n === 1 ? "" : "s"}\n`);
        if (n) process.exitCode = EXIT.WARNINGS;
      } else if (n) process.stdout.write(`${n} warning${n === 1 ? "" : "s"} (run with --strict to list them)\n`);
    });
}
