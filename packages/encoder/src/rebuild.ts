/**
 * An encoded folder back to a model: `verifyModel` checks every attestation; `decodeModel` writes
 * the source's layout (one safetensors file, the shards and their index, or the ONNX model) and
 * refuses exactly when verify would: every container and decode is checked before it is written,
 * and the unquantized files are checked against the manifest before anything is written.
 */
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve, sep } from "node:path";
import { Sgfp4Error, decodedSha256, parseManifest, sha256Hex, verifyManifest, type ManifestTensor, type Profile, type Shape, type VerifyReport } from "@sgfp4/format";
import { onnxInitializers, spliceOnnx } from "./onnx.js";
import { abandonOut, finishOut, prepareOut } from "./outdir.js";
import { fileSha256, fromFloat32, readTensorBytes, readTensorIndex, writeSafetensors, type FloatDtype, type OutTensor, type TensorEntry } from "./safetensors.js";
import type { ModelManifest } from "./shards.js";

export type DecodeFn = (bytes: Uint8Array, opts: { profile: Profile; shape: Shape }) => Promise<Float32Array> | Float32Array;
type Progress = (done: number, total: number, name: string) => void;

export async function readModelManifest(dir: string): Promise<ModelManifest> {
  return parseManifest(await readFile(join(dir, "manifest.json"), "utf8")) as ModelManifest;
}

export function insideDir(dir: string, rel: string): string {
  const root = resolve(dir);
  const p = resolve(root, rel);
  if (!p.startsWith(root + sep)) throw new Sgfp4Error("INVALID_MANIFEST", `file ${rel} is outside the manifest's folder`);
  return p;
}

interface Unquantized {
  /** passthrough tensors the manifest lists, by name (read from the checked file) */
  passthrough: Map<string, TensorEntry & { path: string }>;
  problems: { name: string; problem: string }[];
}

/**
 * The files besides the containers: the passthrough file (its sha256, and every tensor the
 * manifest lists in it), the ONNX skeleton (its sha256), and a source layout that names exactly
 * the manifest's tensors. Problems are returned, not thrown (verify reports them all).
 */
async function checkUnquantized(dir: string, m: ModelManifest): Promise<Unquantized> {
  const passthrough = new Map<string, TensorEntry & { path: string }>();
  const problems: Unquantized["problems"] = [];
  const checkHash = async (file: string, want: unknown): Promise<boolean> => {
    try {
      const got = await fileSha256(insideDir(dir, file));
      if (typeof want === "string" && got !== want) problems.push({ name: file, problem: `sha256 ${got} != manifest ${want}` });
      return typeof want !== "string" || got === want;
    } catch (e) {
      problems.push({ name: file, problem: (e as Error).message });
      return false;
    }
  };
  if (m.passthrough && (await checkHash(m.passthrough.file, m.stats?.passthroughSha256))) {
    const path = insideDir(dir, m.passthrough.file);
    const index = await readTensorIndex(path);
    for (const name of m.passthrough.tensors) {
      const e = index.tensors.find((t) => t.name === name);
      if (e) passthrough.set(name, { ...e, path });
      else problems.push({ name: m.passthrough.file, problem: `does not hold tensor ${name}, which the manifest lists` });
    }
  }
  const skeleton = m.source?.skeleton;
  if (skeleton && (await checkHash(skeleton.file, skeleton.sha256))) {
    // every encoded tensor has its place in the skeleton: a raw_data emptied by the encoder
    const emptied = new Set(onnxInitializers(await readFile(insideDir(dir, skeleton.file))).filter((t) => t.rawStart !== undefined && t.rawStart === t.rawEnd).map((t) => t.name));
    const homeless = m.tensors.find((t) => !emptied.has(t.name));
    if (homeless) problems.push({ name: skeleton.file, problem: `has no emptied raw_data initializer named ${homeless.name}` });
  }
  if (m.source?.format === "onnx" && !skeleton) problems.push({ name: "manifest.json", problem: "an ONNX source without its skeleton file" });
  if (m.source && m.source.format !== "onnx") {
    const laid = new Set(m.source.files.flatMap((f) => f.tensors));
    const listed = [...m.tensors.map((t) => t.name), ...(m.passthrough?.tensors ?? [])];
    const unlaid = listed.find((n) => !laid.has(n));
    const unknown = [...laid].find((n) => !listed.includes(n));
    if (unlaid !== undefined || unknown !== undefined || laid.size !== listed.length) problems.push({ name: "manifest.json", problem: `source layout and tensors disagree (${unlaid ?? unknown ?? "a tensor listed twice"})` });
  }
  return { passthrough, problems };
}

/** Check every container and decoded hash, and the unquantized files. */
export async function verifyModel(dir: string, opts: { decode: DecodeFn; onProgress?: Progress }): Promise<VerifyReport> {
  const m = await readModelManifest(dir);
  const report = await verifyManifest(m, (f) => readFile(insideDir(dir, f)), opts.decode, opts.onProgress);
  const { problems } = await checkUnquantized(dir, m);
  if (m.passthrough && !problems.some((p) => p.name === m.passthrough!.file)) report.tensors.push({ name: m.passthrough.file, ok: true });
  for (const p of problems) report.tensors.push({ name: p.name, ok: false, problem: p.problem });
  report.ok = report.ok && !problems.length;
  return report;
}

export interface ModelDecodeOptions {
  /** dtype of the decoded tensors; "source" (default): each tensor's dtype in the source model */
  dtype?: "source" | "f32" | "f16" | "bf16";
  decode: DecodeFn;
  onProgress?: Progress;
}

const DTYPES = { f32: "F32", f16: "F16", bf16: "BF16" } as const;

/**
 * Rebuild the model at `out`: a .safetensors file, a folder of shards and their index (sharded
 * sources), or an .onnx file (ONNX sources). Tensors are decoded and written one at a time.
 */
export async function decodeModel(dir: string, out: string, opts: ModelDecodeOptions): Promise<{ tensors: number; files: string[] }> {
  const m = await readModelManifest(dir);
  const want = opts.dtype ?? "source";
  if (want !== "source" && !(want in DTYPES)) throw new Sgfp4Error("INVALID_ARGUMENT", `dtype must be source, f32, f16 or bf16, got ${String(want)}`);
  const { passthrough, problems } = await checkUnquantized(dir, m);
  if (problems.length) throw new Sgfp4Error("INVALID_MANIFEST", `${problems[0]!.name}: ${problems[0]!.problem}`);
  const quantized = new Map(m.tensors.map((t) => [t.name, t]));
  let done = 0;
  const decodedBytes = async (t: ManifestTensor, dtype: FloatDtype): Promise<Uint8Array> => {
    opts.onProgress?.(done++, m.tensors.length, t.name);
    const bytes = await readFile(insideDir(dir, t.file));
    const got = sha256Hex(bytes);
    if (got !== t.sha256.container) throw new Sgfp4Error("INVALID_MANIFEST", `tensor ${t.name}: container sha256 ${got} != manifest ${t.sha256.container}`);
    const values = await opts.decode(bytes, { profile: t.profile, shape: t.shape });
    const dec = decodedSha256(values);
    if (dec !== t.sha256.decoded) throw new Sgfp4Error("INVALID_MANIFEST", `tensor ${t.name}: decoded sha256 ${dec} != manifest ${t.sha256.decoded}`);
    return fromFloat32(values, dtype);
  };
  const outTensor = (name: string): OutTensor => {
    const t = quantized.get(name);
    if (t) {
      const dtype = want === "source" ? (t.dtype as FloatDtype) : DTYPES[want];
      return { name, dtype, shape: t.originalShape ?? [...t.shape], byteLength: t.shape[0] * t.shape[1] * (dtype === "F32" ? 4 : 2), bytes: () => decodedBytes(t, dtype) };
    }
    const p = passthrough.get(name)!;
    return { name, dtype: p.dtype, shape: p.shape, byteLength: p.end - p.start, bytes: () => readTensorBytes(p.path, p) };
  };
  const source = m.source;
  if (source?.format === "safetensors-sharded" && out.endsWith(".safetensors")) throw new Sgfp4Error("INVALID_ARGUMENT", `the model is sharded (${source.files.length} files and an index): give -o a folder, not ${out}`);
  let files: string[];
  if (source?.format === "onnx") files = await writeOnnx(dir, m, out, want, decodedBytes);
  else if (source?.format === "safetensors-sharded") files = await writeShards(m, out, outTensor);
  else {
    const names = source ? source.files[0]!.tensors : [...m.tensors.map((t) => t.name), ...(m.passthrough?.tensors ?? [])];
    await writeAtomically(out, (tmp) => writeSafetensors(tmp, names.map(outTensor), source?.files[0]!.metadata));
    files = [out];
  }
  opts.onProgress?.(m.tensors.length, m.tensors.length, "");
  return { tensors: m.tensors.length + passthrough.size, files };
}

async function writeAtomically(file: string, write: (tmp: string) => Promise<void>): Promise<void> {
  const tmp = `${file}.partial-${process.pid}`;
  try {
    await mkdir(dirname(resolve(file)), { recursive: true });
    await write(tmp);
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/** The shards with their original names and tensor order, and the index (weight_map sorted by name). */
async function writeShards(m: ModelManifest, outDir: string, outTensor: (name: string) => OutTensor): Promise<string[]> {
  const source = m.source!;
  const work = await prepareOut(outDir);
  try {
    const weightMap: Record<string, string> = {};
    let totalSize = 0;
    for (const f of source.files) {
      const tensors = f.tensors.map(outTensor);
      await writeSafetensors(join(work.tmp, safeName(f.file)), tensors, f.metadata);
      for (const t of tensors) {
        weightMap[t.name] = f.file;
        totalSize += t.byteLength;
      }
    }
    const metadata = { ...source.index?.metadata, ...(source.index?.metadata && "total_size" in source.index.metadata ? { total_size: totalSize } : {}) };
    const sorted = Object.fromEntries(Object.keys(weightMap).sort().map((k) => [k, weightMap[k]!]));
    const indexFile = safeName(source.index?.file ?? "model.safetensors.index.json");
    await writeFile(join(work.tmp, indexFile), JSON.stringify({ metadata, weight_map: sorted }, null, 2) + "\n");
    await finishOut(work);
    return [...source.files.map((f) => join(outDir, f.file)), join(outDir, indexFile)];
  } catch (e) {
    await abandonOut(work);
    throw e;
  }
}

/** A file name from the manifest, refused when it is a path. */
function safeName(file: string): string {
  if (basename(file) !== file || file === "." || file === "..") throw new Sgfp4Error("INVALID_MANIFEST", `source file name ${JSON.stringify(file)} is not a plain file name`);
  return file;
}

/** The ONNX skeleton with each encoded initializer's raw_data put back (float32, as in the source). */
async function writeOnnx(dir: string, m: ModelManifest, out: string, want: string, decodedBytes: (t: ManifestTensor, dtype: FloatDtype) => Promise<Uint8Array>): Promise<string[]> {
  if (want !== "source" && want !== "f32") throw new Sgfp4Error("INVALID_ARGUMENT", `an ONNX model is rebuilt with its float32 initializers (--dtype f32 or source), not ${want}`);
  const skeleton = await readFile(insideDir(dir, m.source!.skeleton!.file));
  const at = new Map(onnxInitializers(skeleton).map((t) => [t.name, t.rawStart!]));
  const replace = new Map<number, Uint8Array>();
  for (const t of m.tensors) replace.set(at.get(t.name)!, await decodedBytes(t, "F32")); // places checked with the skeleton's hash
  await writeAtomically(out, (tmp) => writeFile(tmp, spliceOnnx(skeleton, replace)));
  return [out];
}
