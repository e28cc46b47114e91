// SNR (dB) and actual bits per weight of the encoder per input, at given bpw targets or the default: 1024x1024
// synthetic() tensors (seed 7) per family and, given an ONNX file, its weight tensors as one model (one lambda).
// Usage: node bench/policy-snr.mjs <bpw list | default> ['<EncodeOptions JSON>'] [model.onnx] [families]
//   e.g. node bench/policy-snr.mjs 3,4.5 '{"policy":"spec"}' silero_vad_v5.onnx gaussian,laplacian
// (Silero VAD: dist/silero_vad_v5.onnx from `npm pack @ricky0123/vad-web@0.0.31`.) N=512 in the environment: smaller.
import { readFileSync } from "node:fs";
import { analyzeTensor, encodeTensor, encodeTensorWith, searchLambda, synthetic } from "../dist/internal.js";
import { onnxWeightTensors } from "@sgfp4/testkit/workloads";

const [bpwArg = "default", optionsJson = "{}", onnx, familyArg] = process.argv.slice(2);
const opts = JSON.parse(optionsJson);
const targets = bpwArg === "default" ? [undefined] : bpwArg.split(",").map(Number);
const families = familyArg ? familyArg.split(",") : ["gaussian", "laplacian", "student-t", "row-scale"];
const N = Number(process.env.N ?? 1024);
const inputs = families.map((f) => ({ label: f, tensors: [{ data: synthetic(f, N, N, 7), shape: [N, N] }] }));
if (onnx) inputs.push({ label: onnx.split("/").pop(), tensors: onnxWeightTensors(readFileSync(onnx)) });

/** Encodes of every tensor of an input: one lambda for all of them when a target is given. */
async function encodeAll(tensors, bpw) {
  if (bpw === undefined) return Promise.all(tensors.map((t) => encodeTensor(t.data, t.shape, opts)));
  const analyses = [];
  for (const t of tensors) analyses.push(await analyzeTensor(t.data, t.shape, opts));
  const lambda = searchLambda(analyses, bpw * tensors.reduce((s, t) => s + t.data.length, 0));
  const out = [];
  for (const [i, t] of tensors.entries()) out.push(await encodeTensorWith(t.data, t.shape, opts, lambda, analyses[i]));
  return out;
}

for (const bpw of targets) {
  const cells = [];
  for (const { label, tensors } of inputs) {
    const encodes = await encodeAll(tensors, bpw);
    let bytes = 0, sig = 0, err = 0, weights = 0, clipped = 0;
    encodes.forEach((r, i) => {
      const d = tensors[i].data;
      bytes += r.bytes.length;
      weights += d.length;
      clipped += r.stats.clipped;
      for (let k = 0; k < d.length; k++) {
        sig += d[k] * d[k];
        err += (d[k] - r.decoded[k]) ** 2;
      }
    });
    cells.push(`${label} ${(10 * Math.log10(sig / err)).toFixed(2)} dB @ ${((bytes * 8) / weights).toFixed(3)}${clipped ? ` (${clipped} clipped)` : ""}`);
  }
  console.log(`bpw ${bpw ?? "default"} ${optionsJson}: ${cells.join(" | ")}`);
}
