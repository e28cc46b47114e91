/**
 * The published files are generated from their single sources (scripts/amalgamate.mjs) and must
 * match them: sgfp4.h carries the WebAssembly kernel's parts verbatim but for the documented
 * rewrites, and kernels/ holds byte copies of the GPU kernels (and the SPIR-V words as .spv).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { compile, pkgRoot, repoRoot } from "./native.js";
// @ts-expect-error plain .mjs build script of this package
import { shippedSpirv } from "../scripts/amalgamate.mjs";

const header = readFileSync(path.join(pkgRoot, "sgfp4.h"), "utf8");
const cpuNative = path.join(repoRoot, "packages", "cpu-decoder", "native");
const hasSpirvVal = (() => {
  try {
    execFileSync("spirv-val", ["--version"], { stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
})();

/** The text of one `/* ==== label ==== *\/` section of sgfp4.h. */
function section(label: string): string {
  const start = header.indexOf(`/* ==== ${label} ==== */\n`);
  expect(start, label).toBeGreaterThanOrEqual(0);
  const body = header.slice(header.indexOf("\n", start) + 1);
  const end = body.search(/^\/\* ==== |^#endif \/\* SGFP4__IMPLEMENTATION_DONE/m);
  return body.slice(0, end);
}

describe("generated files", () => {
  it("match a regeneration from their sources (pnpm --filter @sgfp4/c-decoder build)", () => {
    const out = execFileSync("node", [path.join(pkgRoot, "scripts", "amalgamate.mjs"), "--check"], { encoding: "utf8" });
    expect(out).toContain("generated files match their sources");
  }, 60_000);

  it("sgfp4.h holds every part of the wasm kernel, in kernel.c's order, unchanged but for the native rewrites", () => {
    const parts = [...readFileSync(path.join(cpuNative, "kernel.c"), "utf8").matchAll(/^#include "([\w.]+)"/gm)].map((m) => m[1]!);
    expect(parts.length).toBeGreaterThanOrEqual(5);
    const positions = parts.map((p) => header.indexOf(`/* ==== packages/cpu-decoder/native/${p} ==== */`));
    expect(positions.every((at) => at > 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    for (const part of parts) {
      const undone = section(`packages/cpu-decoder/native/${part}`)
        .replace(/\/\* (#include "[\w.]+") \(packages\/format\/generated\/[\w.]+, inlined below\) \*\/\n[\s\S]*?\/\* end of [\w.]+ \*\/\n/g, "$1\n")
        .replace(/SGFP4__LEAF_PAYLOAD\((table\[\d+\])\)/g, "(const u8 *)$1")
        .replace(/SGFP4__STREAM_ADDR\(in\)/g, "(u32)in")
        .replace(/SGFP4__KERNEL_API/g, "EXPORT");
      const source = readFileSync(path.join(cpuNative, part), "utf8")
        .replace(/^#include <wasm_simd128\.h>\n/m, "")
        .replace(/__attribute__\(\(export_name\("\w+"\)\)\)/g, "EXPORT");
      expect(undone.trimEnd(), part).toBe(source.trimEnd());
    }
  });

  it("sgfp4.h inlines the leaf-table contract header the kernel includes, unchanged", () => {
    const contract = readFileSync(path.join(repoRoot, "packages", "format", "generated", "sgfp4_leaf_table.h"), "utf8").trimEnd();
    const inlined = /inlined below\) \*\/\n([\s\S]*?)\n\/\* end of sgfp4_leaf_table\.h \*\//.exec(header)?.[1];
    expect(inlined).toBe(contract);
  });

  it("kernels/ holds the GLSL, SPIR-V and leaf-table contract files byte for byte", () => {
    const same = (copy: string, source: string) => expect(readFileSync(path.join(pkgRoot, copy)).equals(readFileSync(path.join(repoRoot, source))), copy).toBe(true);
    same("kernels/glsl/decode.comp", "packages/vulkan-addon/native/shaders/decode.comp");
    same("kernels/glsl/copy.comp", "packages/vulkan-addon/native/shaders/copy.comp");
    const shipped = shippedSpirv();
    expect(shipped).toEqual(["kDecodeHalfSpv.inc", "kDecodeSpv.inc"]); // the addon's gen/shaders.h arrays
    for (const f of shipped) same(`kernels/spirv/${f}`, `packages/vulkan-addon/native/gen/${f}`);
    for (const f of ["sgfp4_leaf_table.h", "sgfp4_leaf_table.glsl", "sgfp4_leaf_table.wgsl"]) same(`kernels/contract/${f}`, `packages/format/generated/${f}`);
  });

  it("kernels/spirv/*.spv are the words of the addon's SPIR-V, valid for spirv-val where it is installed", () => {
    for (const [spv, inc] of [["decode.spv", "kDecodeSpv.inc"], ["decode-half.spv", "kDecodeHalfSpv.inc"]] as const) {
      const bytes = readFileSync(path.join(pkgRoot, "kernels", "spirv", spv));
      const words = [...readFileSync(path.join(pkgRoot, "kernels", "spirv", inc), "utf8").matchAll(/0x([0-9a-f]{8})/gi)].map((m) => parseInt(m[1]!, 16));
      expect(bytes.length, spv).toBe(4 * words.length);
      expect(words.every((w, i) => bytes.readUInt32LE(4 * i) === w), spv).toBe(true);
      expect(bytes.readUInt32LE(0)).toBe(0x07230203);
      if (hasSpirvVal) execFileSync("spirv-val", ["--target-env", "vulkan1.1", path.join(pkgRoot, "kernels", "spirv", spv)], { stdio: "pipe" });
    }
  });

  it("kernels/spirv/*.inc compile as C initializers", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "sgfp4-spv-"));
    const file = path.join(dir, "embed.c");
    writeFileSync(file, `#include <stdint.h>\nstatic const uint32_t spv[] =\n#include "kDecodeSpv.inc"\n;\nint main(void) { return spv[0] == 0x07230203u ? 0 : 1; }\n`);
    execFileSync(compile("embed-spv", [file], ["-I", path.join(pkgRoot, "kernels", "spirv")]));
  });

  it("kernels/wgsl holds the WGSL that @sgfp4/webgpu-decoder runs", async () => {
    const dist = path.join(repoRoot, "packages", "webgpu-decoder", "dist");
    const shader = (await import(pathToFileURL(path.join(dist, "shader.js")).href)) as { decodeShader(v: string, f: string, a: boolean): string; COPY_SHADER: string };
    const prep = (await import(pathToFileURL(path.join(dist, "prep-shader.js")).href)) as { CELLS_SHADER: string; FIRST_LEAF_SHADER: string };
    const file = (f: string) => readFileSync(path.join(pkgRoot, "kernels", "wgsl", f), "utf8");
    expect(file("decode-tree-f32.wgsl")).toBe(shader.decodeShader("tree", "f32", false));
    expect(file("decode-single-bf16-x4.wgsl")).toBe(shader.decodeShader("single", "bf16", true));
    expect(file("copy.wgsl")).toBe(shader.COPY_SHADER);
    expect(file("prep-first-leaf.wgsl")).toBe(prep.FIRST_LEAF_SHADER);
  });
});
