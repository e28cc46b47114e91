// The WGSL kernels of @sgfp4/webgpu-decoder as files: every decode variant (one leaf per block, or
// several found through the block's first leaf; f32, f16, bf16 output; any or 4-aligned column
// count), the first-leaf prep kernel and the copy kernel, taken from its built modules (dist/shader.js, dist/prep-shader.js) so the
// text is exactly what that package runs. Their binding layout is documented in those modules.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

export async function wgslKernels() {
  const root = dirname(createRequire(import.meta.url).resolve("@sgfp4/webgpu-decoder/package.json"));
  const load = (f) => import(pathToFileURL(join(root, "dist", f)).href);
  const shader = await load("shader.js");
  const prep = await load("prep-shader.js");
  const files = {
    "prep-first-leaf.wgsl": prep.FIRST_LEAF_SHADER,
    "copy.wgsl": shader.COPY_SHADER,
  };
  for (const variant of ["single", "tree"]) {
    for (const format of ["f32", "f16", "bf16"]) {
      for (const aligned of [false, true]) {
        files[`decode-${variant}-${format}${aligned ? "-x4" : ""}.wgsl`] = shader.decodeShader(variant, format, aligned);
      }
    }
  }
  return files;
}
