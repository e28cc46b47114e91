/**
 * Model files: encode every 2-D (or reshaped higher-rank) float tensor of a safetensors / .npy
 * file to one container each, keep 1-D and small tensors in a passthrough safetensors file, and
 * write the manifest with both sha256 per tensor. Everything is written under a temporary
 * folder that is renamed at the end, so a failure leaves nothing partial.
 */
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  MANIFEST_FORMAT,
  MANIFEST_VERSION,
  Sgfp4Error,
  decodedSha256,
  parseManifest,
  serializeManifest,
  sha256Hex,
  verifyManifest,
  type Manifest,
  type ManifestTensor,
  type Profile,
  type Shape,
  type VerifyReport,
} from "@sgfp4/format";
import { WorkerPool } from "./parallel.js";
import { fromFloat32, isFloatDtype, readTensorBytes, readTensorIndex, toFloat32, writeSafetensors, type FloatDtype, type OutTensor, type TensorEntry } from "./safetensors.js";
import { analyzeTensor, encodeTensorWith, searchLambda, type EncodeOptions, type TensorAnalysis } from "./tensor.js";

export const ENCODER_NAME = "@sgfp4/encoder";
export const ENCODER_VERSION = "0.1.0";

export type DecodeFn = (bytes: Uint8Array, opts: { profile: Profile; shape: Shape }) => Promise<Float32Array> | Float32Array;

export interface ModelEncodeOptions {
  profile?: Profile;
  /** rate control over all encoded tensors together (v2) */
  bpw?: number;
  /** glob patterns over tensor names (`*` any run of characters, `?` one); default all */
  include?: string[];
  /** tensors matching these are kept unquantized in the passthrough file */
  exclude?: string[];
  /** tensors with fewer elements, or rank < 2, are kept unquantized; default 1024 */
  minElements?: number;
  /** worker threads (1: this thread) */
  threads?: number;
  fit?: EncodeOptions["fit"];
  quadtree?: EncodeOptions["quadtree"];
  /** see EncodeOptions: "rd" (default) or "spec" (the 22.7 policy) */
  policy?: EncodeOptions["policy"];
  /** rd policy: "mse" (default) or "lwe" */
  distortion?: EncodeOptions["distortion"];
  /** rd policy without bpw: one lambda for every tensor */
  lambda?: EncodeOptions["lambda"];
  /** progress in weights: (done, total, tensor name) */
  onProgress?: (done: number, total: number, name: string) => void;
}

export function globToRegExp(glob: string): RegExp {
  const esc = glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${esc}$`);
}

function matchesAny(name: string, globs: readonly string[] | undefined): boolean {
  return !!globs?.some((g) => globToRegExp(g).test(name));
}

const numel = (s: readonly number[]) => s.reduce((a, b) => a * b, 1);

/** File name for tensor i: index prefix (unique), then the name with unsafe characters replaced. */
export function containerFileName(i: number, name: string, profile: Profile): string {
  const safe = name.replace(/[^A-Za-z0-9_.-]/g, "_").replace(/\.{2,}/g, "_").slice(0, 120);
  return `tensors/${String(i).padStart(5, "0")}-${safe}.${profile === "v1" ? "fp4" : "sgfp4"}`;
}

async function prepareOut(outDir: string): Promise<string> {
  try {
    const s = await stat(outDir);
    if (!s.isDirectory() || (await readdir(outDir)).length > 0) throw new Sgfp4Error("INVALID_ARGUMENT", `${outDir} exists and is not an empty folder; choose a new output folder`);
    await rm(outDir, { recursive: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const tmp = `${outDir}.partial-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(join(tmp, "tensors"), { recursive: true });
  return tmp;
}

export interface ModelEncodeResult {
  manifest: Manifest;
  encoded: number;
  passthrough: number;
  bitsPerWeight: number;
}

export async function encodeModel(input: string, outDir: string, opts: ModelEncodeOptions = {}): Promise<ModelEncodeResult> {
  const profile = opts.profile ?? "v2";
  if (opts.bpw !== undefined && profile !== "v2") throw new Sgfp4Error("INVALID_ARGUMENT", "--bpw needs the v2 profile");
  const file = await readTensorIndex(input);
  const minElements = opts.minElements ?? 1024;
  const toEncode: TensorEntry[] = [];
  const toPass: TensorEntry[] = [];
  for (const t of file.tensors) {
    const selected = (!opts.include?.length || matchesAny(t.name, opts.include)) && !matchesAny(t.name, opts.exclude);
    const quantizable = t.shape.length >= 2 && numel(t.shape) >= minElements && t.shape.every((d) => d > 0);
    if (selected && quantizable) {
      if (!isFloatDtype(t.dtype)) throw new Sgfp4Error("INVALID_ARGUMENT", `tensor ${t.name}: unsupported dtype ${t.dtype} (F32, F16 or BF16 can be encoded; --exclude it to keep it unquantized)`);
      toEncode.push(t);
    } else toPass.push(t);
  }
  const total = toEncode.reduce((s, t) => s + numel(t.shape), 0);
  const threads = Math.max(1, Math.floor(opts.threads ?? 1));
  const pool = threads > 1 ? new WorkerPool(threads) : undefined;
  const tmp = await prepareOut(outDir);
  try {
    const shapeOf = (t: TensorEntry): Shape => [t.shape[0]!, numel(t.shape) / t.shape[0]!];
    const load = async (t: TensorEntry) => toFloat32(await readTensorBytes(file.path, t), t.dtype, t.name);
    const { policy, distortion, lambda: givenLambda } = opts;
    const rdOptions = { ...(policy ? { policy } : {}), ...(distortion ? { distortion } : {}), ...(givenLambda !== undefined ? { lambda: givenLambda } : {}) };
    const encOpts: EncodeOptions = { profile, ...rdOptions, ...(opts.fit ? { fit: opts.fit } : {}), ...(opts.quadtree ? { quadtree: opts.quadtree } : {}), ...(pool ? { pool } : {}) };

    // Model-level rate control: one lambda for all tensors (errors relative to each tensor's power).
    let lambda: number | undefined;
    const analyses = new Map<string, TensorAnalysis>();
    if (opts.bpw !== undefined) {
      if (!(opts.bpw > 0)) throw new Sgfp4Error("INVALID_ARGUMENT", `bpw must be > 0`);
      let done = 0;
      for (const t of toEncode) {
        analyses.set(t.name, await analyzeTensor(await load(t), shapeOf(t), encOpts));
        done += numel(t.shape);
        opts.onProgress?.(done / 2, total, t.name);
      }
      lambda = searchLambda([...analyses.values()], opts.bpw * total);
    }

    const tensors: ManifestTensor[] = [];
    let bytesTotal = 0;
    let done = 0;
    for (const [i, t] of toEncode.entries()) {
      const shape = shapeOf(t);
      const data = await load(t);
      const base = lambda !== undefined ? total / 2 : 0;
      const scale = lambda !== undefined ? 0.5 : 1;
      const r = await encodeTensorWith(data, shape, { ...encOpts, onProgress: (d, n) => opts.onProgress?.(base + scale * (done + (numel(t.shape) * d) / n), total, t.name) }, lambda, analyses.get(t.name));
      analyses.delete(t.name);
      const rel = containerFileName(i, t.name, profile);
      await writeFile(join(tmp, rel), r.bytes);
      bytesTotal += r.bytes.length;
      done += numel(t.shape);
      const s = r.stats;
      tensors.push({
        name: t.name,
        file: rel,
        profile,
        shape: [shape[0], shape[1]],
        ...(t.shape.length !== 2 ? { originalShape: [...t.shape] } : {}),
        dtype: t.dtype,
        sha256: { container: sha256Hex(r.bytes), decoded: decodedSha256(r.decoded) },
        stats: {
          bitsPerWeight: round4(s.bitsPerWeight),
          snrDb: round4(s.snrDb),
          lwe: Number(s.lwe.toPrecision(6)),
          t158Fraction: round4(s.modeWeights[1] / (s.modeWeights[0] + s.modeWeights[1])),
          layouts: JSON.stringify(s.layouts),
        },
      });
    }
    let passthrough: Manifest["passthrough"];
    const stats: Record<string, number | string> = { encodedWeights: total, bitsPerWeight: total ? round4((bytesTotal * 8) / total) : 0 };
    if (toPass.length) {
      const rel = "passthrough.safetensors";
      await writeSafetensors(
        join(tmp, rel),
        toPass.map((t) => ({ name: t.name, dtype: t.dtype, shape: t.shape, byteLength: t.end - t.start, bytes: () => readTensorBytes(file.path, t) })),
      );
      passthrough = { file: rel, tensors: toPass.map((t) => t.name) };
      stats.passthroughSha256 = sha256Hex(await readFile(join(tmp, rel)));
    }
    const manifest: Manifest = {
      format: MANIFEST_FORMAT,
      version: MANIFEST_VERSION,
      encoder: {
        name: ENCODER_NAME,
        version: ENCODER_VERSION,
        settings: { profile, ...rdOptions, policy: policy ?? "rd", ...(opts.bpw !== undefined ? { bpw: opts.bpw, lambda } : {}), fit: opts.fit ?? {}, quadtree: opts.quadtree ?? {}, minElements },
      },
      tensors,
      ...(passthrough ? { passthrough } : {}),
      stats,
    };
    await writeFile(join(tmp, "manifest.json"), serializeManifest(manifest));
    await rename(tmp, outDir);
    return { manifest, encoded: toEncode.length, passthrough: toPass.length, bitsPerWeight: Number(stats.bitsPerWeight) };
  } catch (e) {
    await rm(tmp, { recursive: true, force: true });
    throw e;
  } finally {
    await pool?.close();
  }
}

const round4 = (x: number) => (Number.isFinite(x) ? Math.round(x * 1e4) / 1e4 : x > 0 ? 999 : -999);

export async function readModelManifest(dir: string): Promise<Manifest> {
  return parseManifest(await readFile(join(dir, "manifest.json"), "utf8"));
}

function insideDir(dir: string, rel: string): string {
  const p = join(dir, rel);
  if (!p.startsWith(join(dir, "/").slice(0, -1))) throw new Sgfp4Error("INVALID_MANIFEST", `file ${rel} is outside the manifest's folder`);
  return p;
}

export interface ModelDecodeOptions {
  dtype?: "f32" | "f16" | "bf16";
  decode: DecodeFn;
  onProgress?: (done: number, total: number, name: string) => void;
}

/**
 * Rebuild a safetensors file: original names and shapes, each decoded tensor checked against
 * the manifest's decoded sha256 before it is written. Passthrough tensors keep their dtype.
 */
export async function decodeModel(dir: string, outFile: string, opts: ModelDecodeOptions): Promise<{ tensors: number }> {
  const m = await readModelManifest(dir);
  const dtype = ({ f32: "F32", f16: "F16", bf16: "BF16" } as const)[opts.dtype ?? "f32"] as FloatDtype | undefined;
  if (!dtype) throw new Sgfp4Error("INVALID_ARGUMENT", `dtype must be f32, f16 or bf16, got ${String(opts.dtype)}`);
  const width = dtype === "F32" ? 4 : 2;
  const out: OutTensor[] = m.tensors.map((t, i) => ({
    name: t.name,
    dtype,
    shape: t.originalShape ?? [...t.shape],
    byteLength: t.shape[0] * t.shape[1] * width,
    bytes: async () => {
      opts.onProgress?.(i, m.tensors.length, t.name);
      const bytes = await readFile(insideDir(dir, t.file));
      const got = sha256Hex(bytes);
      if (got !== t.sha256.container) throw new Sgfp4Error("INVALID_MANIFEST", `tensor ${t.name}: container sha256 ${got} != manifest ${t.sha256.container}`);
      const values = await opts.decode(bytes, { profile: t.profile, shape: t.shape });
      const dec = decodedSha256(values);
      if (dec !== t.sha256.decoded) throw new Sgfp4Error("INVALID_MANIFEST", `tensor ${t.name}: decoded sha256 ${dec} != manifest ${t.sha256.decoded}`);
      return fromFloat32(values, dtype);
    },
  }));
  if (m.passthrough) {
    const ptPath = insideDir(dir, m.passthrough.file);
    const pt = await readTensorIndex(ptPath);
    for (const e of pt.tensors) out.push({ name: e.name, dtype: e.dtype, shape: e.shape, byteLength: e.end - e.start, bytes: () => readTensorBytes(ptPath, e) });
  }
  await mkdir(dirname(outFile), { recursive: true });
  const tmp = `${outFile}.partial-${process.pid}`;
  try {
    await writeSafetensors(tmp, out, { format: "pt", decodedBy: ENCODER_NAME });
    await rename(tmp, outFile);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  opts.onProgress?.(m.tensors.length, m.tensors.length, "");
  return { tensors: out.length };
}

/** Check every container and decoded hash, and the passthrough file's hash. */
export async function verifyModel(dir: string, opts: { decode: DecodeFn; onProgress?: (done: number, total: number, name: string) => void }): Promise<VerifyReport> {
  const m = await readModelManifest(dir);
  const report = await verifyManifest(m, (f) => readFile(insideDir(dir, f)), opts.decode, opts.onProgress);
  if (m.passthrough) {
    const want = m.stats?.passthroughSha256;
    let problem: string | undefined;
    try {
      const got = sha256Hex(await readFile(insideDir(dir, m.passthrough.file)));
      if (typeof want === "string" && got !== want) problem = `passthrough sha256 ${got} != manifest ${want}`;
    } catch (e) {
      problem = (e as Error).message;
    }
    report.tensors.push(problem ? { name: m.passthrough.file, ok: false, problem } : { name: m.passthrough.file, ok: true });
    report.ok = report.ok && !problem;
  }
  return report;
}
