/**
 * The published files are generated from their single sources (scripts/amalgamate.mjs) and must
 * match them: sgfp4.h carries the WebAssembly kernel's parts verbatim but for the documented
 * rewrites, and kernels/ holds byte copies of the GPU kernels.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { pkgRoot, repoRoot } from "./native.js";

const header = readFileSync(path.join(pkgRoot, "sgfp4.h"), "utf8");
const cpuNative = path.join(repoRoot, "packages", "cpu-decoder", "native");

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
        .replace(/SGFP4__LEAF_PAYLOAD\((table\[\d+\])\)/g, "(const u8 *)$1")
        .replace(/SGFP4__STREAM_ADDR\(in\)/g, "(u32)in")
        .replace(/SGFP4__KERNEL_API/g, "EXPORT");
      const source = readFileSync(path.join(cpuNative, part), "utf8")
        .replace(/^#include <wasm_simd128\.h>\n/m, "")
        .replace(/__attribute__\(\(export_name\("\w+"\)\)\)/g, "EXPORT");
      expect(undone.trimEnd(), part).toBe(source.trimEnd());
    }
  });

  it("kernels/ holds the GLSL, SPIR-V and leaf-table contract files byte for byte", () => {
    const same = (copy: string, source: string) => expect(readFileSync(path.join(pkgRoot, copy)).equals(readFileSync(path.join(repoRoot, source))), copy).toBe(true);
    same("kernels/glsl/decode.comp", "packages/vulkan-addon/native/shaders/decode.comp");
    same("kernels/glsl/copy.comp", "packages/vulkan-addon/native/shaders/copy.comp");
    same("kernels/spirv/shaders.h", "packages/vulkan-addon/native/gen/shaders.h");
    for (const f of ["sgfp4_leaf_table.h", "sgfp4_leaf_table.glsl", "sgfp4_leaf_table.wgsl"]) same(`kernels/contract/${f}`, `packages/format/generated/${f}`);
  });

  it("kernels/wgsl holds the WGSL that @sgfp4/webgpu-decoder runs", async () => {
    const dist = path.join(repoRoot, "packages", "webgpu-decoder", "dist");
    const shader = (await import(pathToFileURL(path.join(dist, "shader.js")).href)) as { decodeShader(v: string, f: string, a: boolean): string; COPY_SHADER: string };
    const prep = (await import(pathToFileURL(path.join(dist, "prep-shader.js")).href)) as { CELLS_SHADER: string; FIRST_LEAF_SHADER: string };
    const file = (f: string) => readFileSync(path.join(pkgRoot, "kernels", "wgsl", f), "utf8");
    expect(file("decode-cells-f32.wgsl")).toBe(shader.decodeShader("cells", "f32", false));
    expect(file("decode-single-bf16-x4.wgsl")).toBe(shader.decodeShader("single", "bf16", true));
    expect(file("copy.wgsl")).toBe(shader.COPY_SHADER);
    expect(file("prep-cells.wgsl")).toBe(prep.CELLS_SHADER);
    expect(file("prep-first-leaf.wgsl")).toBe(prep.FIRST_LEAF_SHADER);
  });
});
