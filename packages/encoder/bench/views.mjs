// Stored 2-D views of real model tensors at equal size (the quality benchmark's real models through
// encodeModel at --bpw, decoded on the CPU decoder): each tensor as [dims[0], rest] (`source`), as
// the encoder's encodedShape (`joined`: k rows side by side where that pads less), and with rows
// also split (`split`: [dims[0] * k, rest / k] allowed too, which the encoder does not do).
// Usage: node bench/views.mjs [model, default pp-ocrv4-rec] [bpw, default 4.5]   (after pnpm build)
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REAL_MODELS, loadRealModel } from "@sgfp4/testkit/workloads";
import { decode } from "@sgfp4/cpu-decoder";
import { encodeModel, encodedShape, readModelManifest, writeSafetensors } from "../dist/internal.js";

const padded = (r, c) => Math.ceil(r / 64) * Math.ceil(c / 64) * 4096;
/** encodedShape, with splits of rows allowed as well */
function splitOrJoined([r, c]) {
  let best = encodedShape([r, c]);
  for (let k = 2; k <= c; k++) if (c % k === 0 && padded(r * k, c / k) < padded(...best)) best = [r * k, c / k];
  return best;
}
// [view of the tensor given to encodeModel, keepRows]
const views = { source: [(s) => s, true], joined: [(s) => s, false], split: [splitOrJoined, true] };

const name = process.argv[2] ?? "pp-ocrv4-rec";
const bpw = Number(process.argv[3] ?? 4.5);
const { weights } = loadRealModel(REAL_MODELS.find((m) => m.name === name));
console.log(`| ${name}, --bpw ${bpw} | bpw | SNR dB | stored weights (padded) | tensors re-viewed |\n| --- | ---: | ---: | ---: | ---: |`);
for (const [label, [view, keepRows]] of Object.entries(views)) {
  const tensors = weights.map((t) => ({ ...t, shape: view(t.shape) }));
  const dir = mkdtempSync(join(tmpdir(), "sgfp4-views-"));
  try {
    const file = join(dir, "w.safetensors");
    await writeSafetensors(file, tensors.map((t) => ({ name: t.name, dtype: "F32", shape: t.shape, byteLength: t.data.byteLength, bytes: async () => new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength) })));
    await encodeModel(file, join(dir, "out"), { bpw, threads: 2, minElements: 1, keepRows });
    const m = await readModelManifest(join(dir, "out"));
    let sig = 0;
    let err = 0;
    let bytes = 0;
    let n = 0;
    let stored = 0;
    for (const t of tensors) {
      const e = m.tensors.find((x) => x.name === t.name);
      const b = new Uint8Array(readFileSync(join(dir, "out", e.file)));
      const d = decode(b, { profile: "v2", shape: e.shape });
      bytes += b.length;
      n += t.data.length;
      stored += padded(...e.shape);
      for (let i = 0; i < t.data.length; i++) {
        sig += t.data[i] ** 2;
        err += (t.data[i] - d[i]) ** 2;
      }
    }
    const changed = weights.filter((t) => m.tensors.find((x) => x.name === t.name).shape[0] !== t.shape[0]).length;
    console.log(`| ${label} | ${((bytes * 8) / n).toFixed(4)} | ${(10 * Math.log10(sig / err)).toFixed(2)} | ${stored} (${(stored / n - 1).toFixed(3)}) | ${changed} |`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
