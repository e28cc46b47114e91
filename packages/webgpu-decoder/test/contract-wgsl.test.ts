/**
 * The generated WGSL of the leaf-table contract (@sgfp4/format's LEAF_TABLE_WGSL, the same text
 * as packages/format/generated/sgfp4_leaf_table.wgsl) compiled and run on the device: every
 * function against the TypeScript definition, on every 16-bit input. Skipped, with the reason,
 * without a WebGPU adapter.
 */
import { describe, expect, it } from "vitest";
import { LEAF_TABLE_WGSL, fp4Code, geometryLog2, geometryMode, geometryX, geometryY, halfBitsToFloatBits, isHalfNonFinite, leafPayloadBytes, paramsBiasBits, paramsScaleBits, t158Code, v2HeaderParams } from "@sgfp4/format";
import { requestDevice } from "../src/gpu.js";

const got = await requestDevice();
const noGpu = "error" in got ? got.error : undefined;

const N = 0x10000;
/** One output word per function and input; `w` is the invocation index, `h` a word with both halves set. */
const CASES: [wgsl: string, want: (w: number) => number][] = [
  ["sgfp4_half_to_float_bits(w)", (w) => halfBitsToFloatBits(w)],
  ["select(0u, 1u, sgfp4_half_nonfinite(w))", (w) => Number(isHalfNonFinite(w))],
  ["bitcast<u32>(sgfp4_fp4_code(w & 15u))", (w) => fp4Code(w & 15) >>> 0],
  ["bitcast<u32>(sgfp4_t158_code(w & 3u))", (w) => t158Code(w & 3) >>> 0],
  ["sgfp4_geometry_y(w) | (sgfp4_geometry_x(w) << 8u) | (sgfp4_geometry_log2(w) << 16u) | (sgfp4_geometry_mode(w) << 24u)", (w) => (geometryY(w) | (geometryX(w) << 8) | (geometryLog2(w) << 16) | (geometryMode(w) << 24)) >>> 0],
  ["sgfp4_geometry_pack(sgfp4_geometry_y(w), sgfp4_geometry_x(w), sgfp4_geometry_log2(w), sgfp4_geometry_mode(w))", (w) => w],
  ["sgfp4_params_scale_bits(h) ^ (sgfp4_params_bias_bits(h) << 16u)", (w) => (paramsScaleBits(hOf(w)) ^ (paramsBiasBits(hOf(w)) << 16)) >>> 0],
  ["sgfp4_v2_header_params(h)", (w) => v2HeaderParams(hOf(w))],
  ["sgfp4_leaf_payload_bytes(2u + w % 5u, (w >> 3u) & 1u)", (w) => leafPayloadBytes(2 + (w % 5), (w >> 3) & 1)],
];
const hOf = (w: number) => (Math.imul(w, 0x9e3779b9) ^ w) >>> 0;

describe.skipIf(noGpu)("leaf-table contract in WGSL, on the device", () => {
  it("computes what the TypeScript definition computes, on every 16-bit input", async () => {
    const device = (got as { device: GPUDevice }).device;
    const code = `${LEAF_TABLE_WGSL}
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let w = id.x;
  let h = (w * 0x9e3779b9u) ^ w;
${CASES.map(([e], k) => `  out[w * ${CASES.length}u + ${k}u] = ${e};`).join("\n")}
}`;
    const module = device.createShaderModule({ code });
    const errors = (await module.getCompilationInfo()).messages.filter((m) => m.type === "error").map((m) => `${m.lineNum}: ${m.message}`);
    expect(errors).toEqual([]);
    const size = N * CASES.length * 4;
    const buffer = device.createBuffer({ size, usage: 0x80 | 0x4 }); // STORAGE | COPY_SRC
    const readback = device.createBuffer({ size, usage: 0x1 | 0x8 }); // MAP_READ | COPY_DST
    const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer } }] }));
    pass.dispatchWorkgroups(N / 64);
    pass.end();
    enc.copyBufferToBuffer(buffer, 0, readback, 0, size);
    device.queue.submit([enc.finish()]);
    await readback.mapAsync(0x1); // GPUMapMode.READ
    const words = new Uint32Array(readback.getMappedRange().slice(0));
    readback.unmap();
    buffer.destroy();
    readback.destroy();
    const wrong: string[] = [];
    CASES.forEach(([e, want], k) => {
      for (let w = 0; w < N && wrong.length < 10; w++) if (words[w * CASES.length + k] !== want(w) >>> 0) wrong.push(`${e} at w = ${w}: ${words[w * CASES.length + k]} != ${want(w) >>> 0}`);
    });
    expect(wrong).toEqual([]);
  }, 120_000);
});
