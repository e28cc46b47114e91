/**
 * The generated kernel-language files: current with their definition, and each language's
 * rendering computes what the TypeScript definition computes (JavaScript on every input here;
 * C compiled and run; GLSL compiled; WGSL is run on a device by
 * packages/webgpu-decoder/test/contract-wgsl.test.ts).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CONTRACT_FILES, emitContract } from "../src/emit.js";
import { halfBitsToFloatBits, isHalfNonFinite } from "../src/fp16.js";
import * as lt from "../src/leaf-table.js";
import { PORTABLE_CONSTANTS, PORTABLE_FUNCTIONS } from "../src/portable.js";

const generated = join(import.meta.dirname, "..", "generated");
const scratch = mkdtempSync(join(tmpdir(), "sgfp4-contract-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function have(cmd: string): boolean {
  try {
    execFileSync(cmd, ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Inputs for the one-word functions: every 16-bit pattern, plus words with high bits set. */
const WORDS = [...Array.from({ length: 0x10000 }, (_, h) => h), 0xffffffff, 0x80000000, 0x7c00_7c0f, 0xdead_beef, 0x0001_f3ff];
/** What each generated function must return, from the TypeScript definition. */
const ONE_WORD: Record<string, (w: number) => number> = {
  geometry_y: lt.geometryY,
  geometry_x: lt.geometryX,
  geometry_log2: lt.geometryLog2,
  geometry_mode: lt.geometryMode,
  params_scale_bits: lt.paramsScaleBits,
  params_bias_bits: lt.paramsBiasBits,
  v2_header_params: lt.v2HeaderParams,
  half_nonfinite: (w) => Number(isHalfNonFinite(w & 0xffff)),
  half_to_float_bits: (w) => halfBitsToFloatBits(w & 0xffff),
  fp4_code: (w) => lt.fp4Code(w & 15),
  t158_code: (w) => lt.t158Code(w & 3),
};
/** Inputs a function is defined on (the kernels never pass more). */
const DOMAIN: Record<string, (w: number) => number> = { half_nonfinite: (w) => w & 0xffff, half_to_float_bits: (w) => w & 0xffff, fp4_code: (w) => w & 15, t158_code: (w) => w & 3 };
const LEAF_SIZES = [2, 3, 4, 5, 6].flatMap((log2) => [0, 1].map((mode) => [log2, mode] as const));

describe("generated contract files", () => {
  it.each(Object.entries(CONTRACT_FILES))("%s: %s is current (regenerate: pnpm --filter @sgfp4/format build)", (lang, file) => {
    expect(readFileSync(join(generated, file), "utf8")).toBe(emitContract(lang as "c"));
  });

  it("every portable function has a reference here", () => {
    expect(PORTABLE_FUNCTIONS.map((f) => f.name).sort()).toEqual([...Object.keys(ONE_WORD), "geometry_pack", "leaf_payload_bytes"].sort());
  });

  it("the JavaScript rendering equals the TypeScript definition on every input", () => {
    const names = PORTABLE_FUNCTIONS.map((f) => `sgfp4_${f.name}`);
    const js = new Function(`${emitContract("js")}\nreturn { ${names.join(", ")} };`)() as Record<string, (...a: number[]) => number | boolean>;
    for (const [name, want] of Object.entries(ONE_WORD)) {
      const f = js[`sgfp4_${name}`]!;
      const domain = DOMAIN[name] ?? ((w: number) => w);
      const wrong = WORDS.filter((w) => Number(f(domain(w))) !== want(w));
      expect(wrong.map((w) => `${name}(0x${w.toString(16)})`)).toEqual([]);
    }
    for (const [log2, mode] of LEAF_SIZES) expect(js.sgfp4_leaf_payload_bytes!(log2, mode)).toBe(lt.leafPayloadBytes(log2, mode));
    expect(js.sgfp4_geometry_pack!(63, 60, 6, 1)).toBe(lt.packGeometry(63, 60, 6, 1));
  });

  it.skipIf(!have("cc"))("the C header compiles and computes the same bits (cc)", () => {
    const calls = Object.keys(ONE_WORD)
      .map((n) => `printf("%u ", (unsigned)(uint32_t)sgfp4_${n}(${DOMAIN[n] ? `w & ${n === "fp4_code" ? 15 : n === "t158_code" ? 3 : 0xffff}u` : "w"}));`)
      .join("\n    ");
    const program = `#include <stdio.h>
#include "${CONTRACT_FILES.c}"
static const uint32_t extra[] = {${WORDS.slice(0x10000).map((w) => `${w}u`).join(", ")}};
static void row(uint32_t w) {
    ${calls}
    printf("\\n");
}
int main(void) {
  for (uint32_t w = 0; w < 0x10000u; w++) row(w);
  for (unsigned i = 0; i < sizeof extra / sizeof extra[0]; i++) row(extra[i]);
  ${LEAF_SIZES.map(([l, m]) => `printf("%u ", sgfp4_leaf_payload_bytes(${l}u, ${m}u));`).join(" ")}
  printf("\\n%u %u\\n", sgfp4_geometry_pack(63u, 60u, 6u, 1u), ${PORTABLE_CONSTANTS.map((c) => `SGFP4_${c.name}`).join(" + ")});
  return 0;
}
`;
    writeFileSync(join(scratch, "check.c"), program);
    execFileSync("cc", ["-std=c99", "-Wall", "-Wextra", "-Werror", "-I", generated, "-o", join(scratch, "check"), join(scratch, "check.c")]);
    const lines = execFileSync(join(scratch, "check"), { encoding: "utf8", maxBuffer: 64 << 20 }).trim().split("\n");
    const toU32 = (v: number) => v >>> 0;
    const want = WORDS.map((w) => Object.values(ONE_WORD).map((f) => toU32(f(w))).join(" "));
    expect(lines.slice(0, WORDS.length).map((l) => l.trim())).toEqual(want);
    expect(lines[WORDS.length]!.trim()).toBe(LEAF_SIZES.map(([l, m]) => lt.leafPayloadBytes(l, m)).join(" "));
    expect(lines[WORDS.length + 1]).toBe(`${lt.packGeometry(63, 60, 6, 1)} ${toU32(PORTABLE_CONSTANTS.reduce((s, c) => s + c.value, 0))}`);
  });

  it.skipIf(!have("glslc"))("the GLSL include compiles with every function used (glslc)", () => {
    const uses = PORTABLE_FUNCTIONS.map((f) => {
      const call = `sgfp4_${f.name}(${f.params.map(() => "h").join(", ")})`;
      return f.returns === "bool" ? `(${call} ? 1u : 0u)` : `uint(${call})`;
    });
    writeFileSync(
      join(scratch, "check.comp"),
      `#version 450\n#include "${CONTRACT_FILES.glsl}"\nlayout(local_size_x = 64) in;\nlayout(std430, binding = 0) buffer B { uint v[]; } b;\nvoid main() {\n  uint h = gl_GlobalInvocationID.x;\n  b.v[h] = ${uses.join(" + ")} + SGFP4_LEAF_WORDS;\n}\n`,
    );
    execFileSync("glslc", ["-I", generated, "--target-env=vulkan1.0", "-o", join(scratch, "check.spv"), join(scratch, "check.comp")]);
  });
});
