// Do two builds write the same bytes where the wide digest does not look (larger tensors, several lambdas,
// real models)? Every synthetic family at 512x512 under six lambdas, and each ONNX model's weight tensors
// (one encodeTensor each) at the default, lambda 0.02 and 0.002, bpw 4.5 and bpw 3; both builds' containers
// compared byte for byte. Where they differ: SNR and bpw of both, per setting.
// Usage: node bench/same-bytes.mjs <build A> <build B> [model.onnx ...]
import { readFileSync } from "node:fs";
import { loadBuild } from "./load-build.mjs";
import { onnxWeightTensors } from "@sgfp4/testkit/workloads";

const [dirA, dirB, ...models] = process.argv.slice(2);
if (!dirA || !dirB) throw new Error("usage: node bench/same-bytes.mjs <build A> <build B> [model.onnx ...]");
const builds = [await loadBuild(dirA), await loadBuild(dirB)];
const { FAMILIES, synthetic } = builds[1];

/** Both builds' encodes of the tensors: whether every container is the same, and each build's SNR / bpw. */
async function compare(tensors, options) {
  const out = [];
  let same = true;
  const bytes = [[], []];
  for (const [i, m] of builds.entries()) {
    let sig = 0;
    let err = 0;
    let bits = 0;
    let n = 0;
    for (const t of tensors) {
      const r = await m.encodeTensor(t.data, t.shape, { profile: "v2", ...options });
      bytes[i].push(r.bytes);
      for (let k = 0; k < t.data.length; k++) {
        const d = t.data[k] - r.decoded[k];
        sig += t.data[k] * t.data[k];
        err += d * d;
      }
      bits += 8 * r.bytes.length;
      n += t.data.length;
    }
    out.push(`${(10 * Math.log10(sig / err)).toFixed(4)} dB at ${(bits / n).toFixed(4)} bpw`);
  }
  bytes[0].forEach((a, k) => (same &&= Buffer.compare(Buffer.from(a), Buffer.from(bytes[1][k])) === 0));
  return { same, detail: same ? "" : ` (A ${out[0]}, B ${out[1]})` };
}

let same = 0;
let total = 0;
const report = async (label, tensors, options) => {
  const r = await compare(tensors, options);
  total++;
  if (r.same) same++;
  else console.log(`differs: ${label} ${JSON.stringify(options)}${r.detail}`);
};
for (const family of FAMILIES) {
  const tensors = [{ data: synthetic(family, 512, 512, 9), shape: [512, 512] }];
  for (const lambda of [0.0005, 0.002, 0.006, 0.02, 0.08, 0.3]) await report(family, tensors, { lambda });
}
for (const file of models) {
  const tensors = onnxWeightTensors(readFileSync(file));
  for (const options of [{}, { lambda: 0.02 }, { lambda: 0.002 }, { bpw: 4.5 }, { bpw: 3 }]) await report(file.split("/").pop(), tensors, options);
}
console.log(`${same} of ${total} settings: the same bytes`);
