import { writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { checkTemplate, createCommandDecoder, isCommandDecoder, fillTemplate, loadVectorSet, resolveDecoders, runConformance, type VectorSet } from "../src/index.js";
import { buildVectorSet, type BuiltSet } from "./fixtures.js";

let built: BuiltSet;
let set: VectorSet;
let script: string;

/**
 * An external decoder speaking the --backend-cmd protocol, answering from construction.
 * argv: container profile rows cols output; MODE env picks a misbehaviour.
 */
beforeAll(async () => {
  built = await buildVectorSet();
  set = await loadVectorSet(built.dir);
  const answers = Object.fromEntries([...built.answers].map(([k, v]) => [k, "code" in v ? { code: v.code } : { floats: [...v.floats] }]));
  script = path.join(built.dir, "decoder.mjs");
  await writeFile(
    script,
    `import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
const answers = ${JSON.stringify(answers)};
const [container, profile, rows, cols, output] = process.argv.slice(2);
const mode = process.env.MODE ?? "good";
const a = answers[createHash("sha256").update(readFileSync(container)).digest("hex")];
if (!a) { console.error("unknown container"); process.exit(1); }
if (mode === "sleep") await new Promise((r) => setTimeout(r, 60000));
if (!["v1", "v2"].includes(profile) || !(rows > 0) || !(cols > 0)) { console.error("bad args " + process.argv.join(" ")); process.exit(2); }
if (a.code) {
  if (mode === "noline") process.exit(3);
  if (mode === "exit1") { console.error("error: " + a.code + ": bad"); process.exit(1); }
  if (mode === "stdout") { console.log("error: " + a.code); process.exit(3); }
  console.error("decoding " + container);
  console.error("error: " + a.code + ": detail of the fault");
  process.exit(3);
}
if (a.floats.length !== rows * cols) { console.error("shape mismatch"); process.exit(1); }
const f = new Float32Array(a.floats);
if (mode === "flip") new Uint32Array(f.buffer)[0] ^= 0x80000000;
const buf = Buffer.from(f.buffer);
writeFileSync(output, mode === "short" ? buf.subarray(0, buf.length - 4) : buf);
`,
  );
});

const template = () => `node ${JSON.stringify(script)} {container} {profile} {rows} {cols} {output}`;
const run = async (mode: string, timeoutMs?: number) => {
  const backend = createCommandDecoder(`MODE=${mode} ${template()}`, timeoutMs ? { timeoutMs } : {});
  return runConformance({ vectors: set, backends: [backend] });
};

describe("--backend-cmd protocol", () => {
  it("passes a correct external decoder (output file, exit 3 + error line)", async () => {
    const r = await run("good");
    expect(r.backends[0]!.cases.filter((c) => c.failure).map((c) => c.failure!.message)).toEqual([]);
    expect(r.totals).toEqual({ passed: 4, failed: 0, skipped: 0 });
  });

  it("reads the error line from stdout too", async () => {
    expect((await run("stdout")).totals.failed).toBe(0);
  });

  it("reports a flipped sign bit from the output file", async () => {
    const r = await run("flip");
    const f = r.backends[0]!.cases[0]!.failure!;
    // v1-basic element 0: 0.5 * -5 - 1 = -3.5 (0xc0600000); flipped sign: 3.5 (0x40600000)
    expect(f).toMatchObject({ kind: "mismatch", index: 0, row: 0, col: 0, expectedBits: 0xc0600000, actualBits: 0x40600000 });
  });

  it("reports a short output file as a wrong length", async () => {
    const r = await run("short");
    expect(r.backends[0]!.cases[0]!.failure).toMatchObject({ kind: "length", expectedLength: 15, actualLength: 14 });
  });

  it("fails a rejection that does not exit with status 3", async () => {
    const r = await run("exit1");
    const f = r.backends[0]!.cases.find((c) => c.vector === "v2-bad-version")!.failure!;
    expect(f.kind).toBe("unexpected-error");
    expect(f.message).toMatch(/status 1 \(it printed an error line: a rejection must exit with status 3\)/);
  });

  it("fails exit 3 without an error line", async () => {
    const r = await run("noline");
    expect(r.backends[0]!.cases.find((c) => c.vector === "v2-bad-version")!.failure!.message).toMatch(/printed no "error: CODE" line/);
  });

  it("kills a decoder that runs past the timeout", async () => {
    const t0 = Date.now();
    const r = await run("sleep", 500);
    expect(r.totals.failed).toBe(4);
    expect(r.backends[0]!.cases[0]!.failure!.message).toMatch(/did not finish within 500 ms/);
    expect(Date.now() - t0).toBeLessThan(20_000);
  });

  it("is what resolveDecoders builds for commands", async () => {
    const [b] = await resolveDecoders([], { commands: [template()] });
    expect(b!.name).toBe("cmd");
    const r = await runConformance({ vectors: set, backends: [b!] });
    expect(r.totals.passed).toBe(4);
  });

  it("runs several processes at once with concurrency, keeping vector order", async () => {
    const backend = createCommandDecoder(template());
    expect(isCommandDecoder(backend)).toBe(true);
    const r = await runConformance({ vectors: set, backends: [backend], concurrency: (b) => (isCommandDecoder(b) ? 3 : 1) });
    expect(r.totals).toEqual({ passed: 4, failed: 0, skipped: 0 });
    expect(r.backends[0]!.cases.map((c) => c.vector)).toEqual(built.ids);
  });

  it("writes f32 only: asked for f16 it refuses with INVALID_ARGUMENT before running anything", async () => {
    const d = createCommandDecoder(`MODE=good ${template()}`);
    expect(d.formats).toEqual(["f32"]);
    await expect(d.decode(new Uint8Array(8), { profile: "v1", shape: [1, 1], format: "f16" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    const r = await runConformance({ vectors: set, backends: [d] });
    expect(r.backends.map((b) => b.format)).toEqual(["f32"]);
  });

  it("checks templates and quotes values for the shell", () => {
    expect(() => checkTemplate("dec {container}")).toThrow(/must use \{output\}/);
    expect(() => checkTemplate("dec {container} {output} {shape}")).toThrow(/unknown placeholder \{shape\}/);
    expect(fillTemplate("d {container} {rows}x{cols} {profile} {output}", { container: "/t/it's here", rows: "3", cols: "5", profile: "v1", output: "/o" })).toBe(
      "d '/t/it'\\''s here' '3'x'5' 'v1' '/o'",
    );
  });
});
