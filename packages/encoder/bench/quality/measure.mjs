// One row of the benchmark: an input through the encoder at one setting, or through one
// baseline quantizer. Every container the encoder writes is validated strictly and decoded by
// @sgfp4/cpu-decoder; the SNR comes from that decode, not from the encoder's statistics.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decode } from "@sgfp4/cpu-decoder";
import { validate } from "@sgfp4/format";
import { encodeModel, encodeTensor, readModelManifest, verifyModel, writeSafetensors } from "../../dist/internal.js";
import { quantize } from "../baselines.mjs";

/** The encoder settings: rate control at these targets, then the defaults. */
export const BPW_POINTS = [3, 3.5, 4, 4.25, 4.5, 5];
export const SETTINGS = [...BPW_POINTS.map((bpw) => ({ name: `--bpw ${bpw}`, bpw })), { name: "default" }];

/** Signal and error power of decodes, summed over an input's tensors. */
function snrDb(tensors, decoded) {
  let signal = 0, error = 0;
  tensors.forEach(({ data }, k) => {
    const d = decoded[k];
    for (let i = 0; i < data.length; i++) {
      signal += data[i] * data[i];
      error += (data[i] - d[i]) ** 2;
    }
  });
  return error > 0 ? 10 * Math.log10(signal / error) : Infinity;
}

const weightsOf = (input) => input.tensors.reduce((s, t) => s + t.data.length, 0);

/** A synthetic tensor: `encodeTensor`, its bytes decoded and compared with its own reconstruction. */
async function encodeOne(input, opts) {
  const [t] = input.tensors;
  const enc = await encodeTensor(t.data, t.shape, opts);
  const decoded = decode(enc.bytes, { profile: "v2", shape: t.shape });
  return { containers: [{ bytes: enc.bytes, shape: t.shape }], decoded: [decoded], mismatched: sameBits(decoded, enc.decoded) ? 0 : 1 };
}

/**
 * A model: its weight matrices as a safetensors file through `encodeModel` (one rate-control
 * lambda for all tensors, as `sgfp4 encode --bpw` does); `verifyModel` checks every container's
 * CPU decode against the manifest's sha256 of the encoder's reconstruction.
 */
async function encodeAll(input, opts) {
  const dir = mkdtempSync(join(tmpdir(), "sgfp4-quality-"));
  try {
    const file = join(dir, "weights.safetensors");
    await writeSafetensors(file, input.tensors.map((t) => ({ name: t.name, dtype: "F32", shape: t.shape, byteLength: t.data.byteLength, bytes: async () => new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength) })));
    await encodeModel(file, join(dir, "out"), { ...opts, threads: 1, minElements: 1 });
    const manifest = await readModelManifest(join(dir, "out"));
    const byName = new Map(manifest.tensors.map((m) => [m.name, m]));
    // the manifest's decode shape: encodeModel may store a tensor with rows joined (encodedShape); same row-major values
    const containers = input.tensors.map((t) => ({ bytes: new Uint8Array(readFileSync(join(dir, "out", byName.get(t.name).file))), shape: byName.get(t.name).shape }));
    const report = await verifyModel(join(dir, "out"), { decode });
    return {
      containers,
      decoded: containers.map((c) => decode(c.bytes, { profile: "v2", shape: c.shape })),
      mismatched: report.tensors.filter((r) => !r.ok).length + (report.tensors.length === input.tensors.length ? 0 : 1),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The encoder on an input at one setting, with `variant.options` merged into the encoder's
 * options (`variant.label` names them in the row): the row (with `invalid` / `mismatched`
 * counts, 0 when all is well) and the decodes.
 */
export async function measureEncoder(input, setting, variant = { label: "", options: {} }) {
  const opts = { profile: "v2", ...variant.options, ...(setting.bpw ? { bpw: setting.bpw } : {}) };
  const { containers, decoded, mismatched } = await (input.model ? encodeAll : encodeOne)(input, opts);
  const invalid = containers.filter((c) => !validate(c.bytes, { profile: "v2", shape: c.shape, strict: true }).ok).length;
  const bytes = containers.reduce((s, c) => s + c.bytes.length, 0);
  const row = {
    input: input.name,
    method: "sgfp4",
    name: `sgfp4 v2 ${setting.name}${variant.label}`,
    setting: setting.name,
    bpw: (8 * bytes) / weightsOf(input),
    snrDb: snrDb(input.tensors, decoded),
    containers: containers.length,
    invalid,
    mismatched,
  };
  return { row, decoded };
}

/** One baseline on every tensor of an input. */
export function measureBaseline(input, baseline) {
  const qs = input.tensors.map((t) => quantize(baseline, t.data));
  const bits = qs.reduce((s, q) => s + q.bits, 0);
  const decoded = qs.map((q) => q.decoded);
  return { row: { input: input.name, method: "baseline", name: baseline.name, setting: baseline.name, bpw: bits / weightsOf(input), snrDb: snrDb(input.tensors, decoded) }, decoded };
}

function sameBits(a, b) {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
