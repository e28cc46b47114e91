/**
 * Encoding a model: every 2-D (or reshaped higher-rank) float tensor of a safetensors file, a
 * sharded checkpoint, an .npy file or an ONNX model to one container each; the rest kept as it was
 * (a passthrough safetensors file, or the ONNX model without the encoded raw_data); the manifest
 * with both sha256 per tensor and the source layout. Written whole or not at all (outdir.ts).
 */
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  MANIFEST_FORMAT,
  MANIFEST_VERSION,
  Sgfp4Error,
  serializeManifest,
  sha256Hex,
  type ManifestTensor,
  type Profile,
  type Shape,
} from "@sgfp4/format";
import { spliceOnnx } from "./onnx.js";
import { abandonOut, finishOut, prepareOut } from "./outdir.js";
import { encoderPackage } from "./package-info.js";
import { WorkerPool } from "./parallel.js";
import { bandedRows, type RowSource, type TensorRows } from "./bands.js";
import { tilesOf } from "./blocks.js";
import { fileSha256, float32LeBytes, isFloatDtype, readTensorBytes, withTensorRows, writeSafetensors, type TensorEntry } from "./safetensors.js";
import { PART_FILE, PART_FORMAT, PART_VERSION, assembleManifest, assignShards, round4, type ManifestPart, type ModelManifest } from "./shards.js";
import { openModelSource, type ModelSource, type SourceLayout, type SourceTensor } from "./source.js";
import { LAMBDA_MAX, analyzeRows, bytesAtLambda, encodeRows, searchLambda, type EncodeOptions, type EncodedTensorBands, type TensorAnalysis } from "./tensor.js";


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
  /** [i, N]: encode only shard i of N (weight-balanced) and write manifest.part.json; default [0, 1] */
  shard?: [number, number];
  /** see EncodeOptions: "rd" (default) or "spec" (the 22.7 policy) */
  policy?: EncodeOptions["policy"];
  /** rd policy: "mse" (default) or "lwe" */
  distortion?: EncodeOptions["distortion"];
  /** rd policy without bpw: one lambda for every tensor */
  lambda?: EncodeOptions["lambda"];
  /**
   * store every tensor as [dims[0], rest], never with rows joined (encodedShape); for readers
   * that take the manifest's shape as the tensor's and ignore originalShape
   */
  keepRows?: boolean;
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

export interface ModelEncodeResult {
  /** the manifest; for one shard of several, the part's tensors only (the merge writes the manifest) */
  manifest: ModelManifest;
  /** tensors encoded (by this shard) and kept unquantized (in the whole model) */
  encoded: number;
  passthrough: number;
  bitsPerWeight: number;
  /** set when --shard i/N with N > 1: the partial manifest written as manifest.part.json */
  part?: ManifestPart;
}

/** Tensors to encode and to keep, in model order; include globs that match nothing are an error. */
export function planTensors(source: ModelSource, opts: ModelEncodeOptions): { toEncode: SourceTensor[]; toPass: SourceTensor[] } {
  const minElements = opts.minElements ?? 1024;
  for (const g of opts.include ?? []) if (!source.tensors.some((t) => globToRegExp(g).test(t.name))) throw new Sgfp4Error("INVALID_ARGUMENT", `--include ${g} matches no tensor of the model`);
  const toEncode: SourceTensor[] = [];
  const toPass: SourceTensor[] = [];
  for (const t of source.tensors) {
    if (t.name === "") throw new Sgfp4Error("INVALID_ARGUMENT", `${t.path}: a tensor has the empty name ""`);
    const selected = (!opts.include?.length || matchesAny(t.name, opts.include)) && !matchesAny(t.name, opts.exclude);
    const quantizable = t.shape.length >= 2 && numel(t.shape) >= minElements && t.shape.every((d) => d > 0);
    if (selected && quantizable) {
      if (!isFloatDtype(t.dtype)) throw new Sgfp4Error("INVALID_ARGUMENT", `tensor ${t.name}: unsupported dtype ${t.dtype} (F32, F16 or BF16 can be encoded; --exclude it to keep it unquantized)`);
      toEncode.push(t);
    } else toPass.push(t);
  }
  return { toEncode, toPass };
}

/** The first value of a band (starting at value `first` of the tensor) that is not finite, named by file, tensor, index, row and column. */
function checkFinite(t: SourceTensor, data: Float32Array, cols: number, first: number): void {
  for (let j = 0; j < data.length; j++) {
    const v = data[j]!;
    const i = first + j;
    if (v - v !== 0) throw new Sgfp4Error("INVALID_ARGUMENT", `${t.path}: tensor ${t.name}: value ${i} (row ${Math.floor(i / cols)}, column ${i % cols}) is ${v}; only finite weights can be encoded (--exclude the tensor to keep it as it is)`);
  }
}

/** The decode shape of a tensor: encodedShape, or [dims[0], rest] with keepRows. */
const shapeOf = (t: TensorEntry, keepRows = false): Shape => (keepRows ? [t.shape[0]!, numel(t.shape) / t.shape[0]!] : encodedShape(t.shape));

/** Macroblocks of a decode shape: v2 (and v1) store whole 64x64 blocks. */
const macroblocksOf = (rows: number, cols: number): number => {
  const { tilesY, tilesX } = tilesOf([rows, cols]);
  return tilesY * tilesX;
};

/**
 * The 2-D view a model tensor is encoded as: [dims[0], rest], or, where that leaves less of the
 * last macroblocks empty, k consecutive rows of it side by side ([dims[0] / k, k * rest], the
 * smallest k with the least padded area). The values keep their row-major order, so the decode
 * is the tensor whatever the view (the manifest records the source shape as originalShape).
 * Every padded weight costs at least 2 bits (there is no empty leaf), so a 240x25 depthwise
 * kernel (a 256x64 area for 6000 weights) costs over twice its bits as 120x50 (128x64). Measured
 * on the quality benchmark's real models at --bpw 4.5: PP-OCRv4 17.61 -> 18.48 dB, Silero VAD
 * 21.25 -> 21.39 dB. Rows are only joined, never split: splitting rows (130x128 as 260x64) lost
 * 0.2-0.5 dB on Silero VAD.
 */
export function encodedShape(shape: readonly number[]): Shape {
  const rows = shape[0]!;
  const cols = numel(shape) / rows;
  let best: Shape = [rows, cols];
  let blocks = macroblocksOf(rows, cols);
  for (let k = 2; k <= rows; k++) {
    if (rows % k !== 0) continue;
    const a = macroblocksOf(rows / k, cols * k);
    if (a < blocks) {
      best = [rows / k, cols * k];
      blocks = a;
    }
  }
  return best;
}

/**
 * use(rows) with the tensor read from its file band by band (each band checked finite), so that
 * no pass holds more than a few bands of it.
 */
function withRows<T>(t: SourceTensor, keepRows: boolean, use: (rows: TensorRows) => Promise<T>): Promise<T> {
  const shape = shapeOf(t, keepRows);
  return withTensorRows(t.path, t, shape[1], (read) => {
    const checked: RowSource = async (row0, n) => {
      const band = await read(row0, n);
      checkFinite(t, band, shape[1], row0 * shape[1]);
      return band;
    };
    return use(bandedRows(checked, shape));
  });
}

export async function encodeModel(input: string, outDir: string, opts: ModelEncodeOptions = {}): Promise<ModelEncodeResult> {
  const profile = opts.profile ?? "v2";
  const [shardIndex, shardCount] = opts.shard ?? [0, 1];
  if (opts.bpw !== undefined && profile !== "v2") throw new Sgfp4Error("INVALID_ARGUMENT", "--bpw needs the v2 profile");
  if (opts.bpw !== undefined && !(opts.bpw > 0)) throw new Sgfp4Error("INVALID_ARGUMENT", `bpw must be > 0`);
  if (opts.bpw !== undefined && shardCount > 1) throw new Sgfp4Error("INVALID_ARGUMENT", "--bpw needs every tensor in one process (its rate control spans the model); with --shard use --threshold-scale");
  if (!(Number.isInteger(shardIndex) && Number.isInteger(shardCount) && shardIndex >= 0 && shardIndex < shardCount)) throw new Sgfp4Error("INVALID_ARGUMENT", `shard must be i/N with 0 <= i < N`);
  const source = await openModelSource(input);
  const { toEncode, toPass } = planTensors(source, opts);
  const minElements = opts.minElements ?? 1024;
  const settings = { profile, policy: opts.policy ?? "rd", ...(opts.distortion ? { distortion: opts.distortion } : {}), ...(opts.lambda !== undefined ? { lambda: opts.lambda } : {}), ...(opts.bpw !== undefined ? { bpw: opts.bpw } : {}), fit: opts.fit ?? {}, quadtree: opts.quadtree ?? {}, minElements, ...(opts.keepRows ? { keepRows: true } : {}) };
  const total = toEncode.reduce((s, t) => s + numel(t.shape), 0);
  const shardOf = assignShards(toEncode.map((t) => numel(t.shape)), shardCount);
  const mine = toEncode.map((t, index) => ({ t, index })).filter(({ index }) => shardOf[index] === shardIndex);
  const work = await prepareOut(outDir, ["tensors"]); // before any worker starts: a refused folder leaves nothing running
  const threads = Math.max(1, Math.floor(opts.threads ?? 1));
  let pool: WorkerPool | undefined;
  // rate control's statistics, each in a file of the partial folder until its tensor is encoded
  const analysesOpen = new Map<string, TensorAnalysis>();
  try {
    pool = threads > 1 ? new WorkerPool(threads) : undefined;
    const { policy, distortion, lambda: givenLambda } = opts;
    const rdOptions = { ...(policy ? { policy } : {}), ...(distortion ? { distortion } : {}), ...(givenLambda !== undefined ? { lambda: givenLambda } : {}) };
    const encOpts: EncodeOptions = { profile, ...rdOptions, ...(opts.fit ? { fit: opts.fit } : {}), ...(opts.quadtree ? { quadtree: opts.quadtree } : {}), ...(pool ? { pool } : {}) };
    const { lambda, analyses } = opts.bpw !== undefined ? await rateControl(toEncode, opts.bpw, total, { ...encOpts, spillDir: work.tmp }, opts.onProgress, analysesOpen, !!opts.keepRows) : { lambda: undefined, analyses: new Map<string, TensorAnalysis>() };
    const partTotal = mine.reduce((s, { t }) => s + numel(t.shape), 0);
    const tensors: ManifestPart["tensors"] = [];
    let bytesTotal = 0;
    let done = 0;
    for (const { t, index } of mine) {
      const shape = shapeOf(t, opts.keepRows);
      const base = lambda !== undefined ? partTotal / 2 : 0;
      const scale = lambda !== undefined ? 0.5 : 1;
      // the decode is hashed band by band (the manifest's sha256.decoded), never held whole
      const decoded = createHash("sha256");
      const tensorOpts = { ...encOpts, onProgress: (d: number, n: number) => opts.onProgress?.(base + scale * (done + (numel(t.shape) * d) / n), partTotal, t.name) };
      const r = await withRows(t, !!opts.keepRows, (rows) => encodeRows(rows, tensorOpts, lambda, analyses.get(t.name), undefined, (_row0, values) => decoded.update(float32LeBytes(values))));
      analyses.get(t.name)?.stats.close();
      analyses.delete(t.name);
      const rel = containerFileName(index, t.name, profile);
      await writeFile(join(work.tmp, rel), r.container);
      bytesTotal += r.stats.bytes;
      done += numel(t.shape);
      tensors.push({ index, entry: manifestEntry(t, rel, profile, shape, r, decoded.digest("hex")) });
    }
    const part: ManifestPart = {
      format: PART_FORMAT,
      version: PART_VERSION,
      shard: { index: shardIndex, count: shardCount },
      plan: sha256Hex(new TextEncoder().encode(JSON.stringify([settings, source.layout, toEncode.map((t) => [t.name, t.dtype, t.shape])]))),
      encoder: { ...encoderPackage(), settings: { ...settings, ...(lambda !== undefined ? { lambda } : {}) } },
      totalTensors: toEncode.length,
      totalWeights: total,
      tensors,
      containerBytes: bytesTotal,
    };
    if (shardIndex === 0) await writeUnquantized(source, input, work.tmp, toEncode, toPass, part);
    let manifest: ModelManifest;
    if (shardCount === 1) {
      manifest = assembleManifest([part]);
      await writeFile(join(work.tmp, "manifest.json"), serializeManifest(manifest));
    } else {
      manifest = { format: MANIFEST_FORMAT, version: MANIFEST_VERSION, encoder: part.encoder, tensors: tensors.map((t) => t.entry) };
      await writeFile(join(work.tmp, PART_FILE), JSON.stringify(part, null, 2) + "\n");
    }
    await finishOut(work);
    return {
      manifest,
      encoded: mine.length,
      passthrough: toPass.length,
      bitsPerWeight: partTotal ? round4((bytesTotal * 8) / partTotal) : 0,
      ...(shardCount > 1 ? { part } : {}),
    };
  } catch (e) {
    for (const a of analysesOpen.values()) a.stats.close();
    await abandonOut(work);
    throw e;
  } finally {
    await pool?.close();
  }
}

function piecesSha256(pieces: readonly Uint8Array[]): string {
  const h = createHash("sha256");
  for (const p of pieces) h.update(p);
  return h.digest("hex");
}

function manifestEntry(t: SourceTensor, rel: string, profile: Profile, shape: Shape, r: EncodedTensorBands, decodedSha256: string): ManifestTensor {
  const s = r.stats;
  return {
    name: t.name,
    file: rel,
    profile,
    shape: [shape[0], shape[1]],
    ...(t.shape.length !== 2 || t.shape[0] !== shape[0] ? { originalShape: [...t.shape] } : {}),
    dtype: t.dtype,
    sha256: { container: piecesSha256(r.container), decoded: decodedSha256 },
    stats: {
      bitsPerWeight: round4(s.bitsPerWeight),
      snrDb: round4(s.snrDb),
      lwe: Number(s.lwe.toPrecision(6)),
      t158Fraction: round4(s.modeWeights[1] / (s.modeWeights[0] + s.modeWeights[1])),
      layouts: JSON.stringify(s.layouts),
      // weights the fit clipped to the code range (encoder statistic; 0 from encoders without it)
      clipped: (s as { clipped?: number }).clipped ?? 0,
    },
  };
}

/**
 * Model-level rate control: one lambda for all tensors (errors relative to each tensor's power).
 * A target below what the tensors can reach is refused, naming the reachable minimum.
 */
async function rateControl(
  toEncode: readonly SourceTensor[],
  bpw: number,
  total: number,
  encOpts: EncodeOptions,
  onProgress: ModelEncodeOptions["onProgress"],
  analyses: Map<string, TensorAnalysis>,
  keepRows: boolean,
): Promise<{ lambda: number; analyses: Map<string, TensorAnalysis> }> {
  let done = 0;
  for (const t of toEncode) {
    analyses.set(t.name, await withRows(t, keepRows, (rows) => analyzeRows(rows, encOpts)));
    done += numel(t.shape);
    onProgress?.(done / 2, total, t.name);
  }
  const floor = (bytesAtLambda([...analyses.values()], LAMBDA_MAX) * 8) / total;
  if (bpw < floor) throw new Sgfp4Error("INVALID_ARGUMENT", `--bpw ${bpw} is below the smallest size these tensors can reach, ${Math.ceil(floor * 100) / 100} bits per weight; ask for at least that`);
  return { lambda: searchLambda([...analyses.values()], bpw * total), analyses };
}

/**
 * Shard 0's share: what stays unquantized (a passthrough safetensors file, or for ONNX the model
 * without the encoded raw_data) and the source layout, recorded in the part.
 */
async function writeUnquantized(source: ModelSource, input: string, dir: string, toEncode: readonly SourceTensor[], toPass: readonly SourceTensor[], part: ManifestPart): Promise<void> {
  const layout: SourceLayout = { ...source.layout };
  if (source.format === "onnx") layout.skeleton = await writeOnnxSkeleton(input, dir, toEncode);
  else if (toPass.length) {
    const rel = "passthrough.safetensors";
    await writeSafetensors(join(dir, rel), toPass.map((t) => ({ name: t.name, dtype: t.dtype, shape: t.shape, byteLength: t.end - t.start, bytes: () => readTensorBytes(t.path, t) })));
    part.passthrough = { file: rel, tensors: toPass.map((t) => t.name) };
    part.passthroughSha256 = await fileSha256(join(dir, rel));
  }
  part.source = layout;
}

/** ONNX: the model with every encoded initializer's raw_data emptied (decode-model puts it back). */
async function writeOnnxSkeleton(input: string, dir: string, encoded: readonly SourceTensor[]): Promise<{ file: string; sha256: string }> {
  const empty = new Uint8Array(0);
  const chunks = spliceOnnx(await readFile(input), new Map(encoded.map((t) => [t.start, empty])));
  const file = "skeleton.onnx";
  await writeFile(join(dir, file), chunks);
  return { file, sha256: await fileSha256(join(dir, file)) };
}

