/**
 * safetensors and .npy reading by byte ranges (the header first, then each tensor's bytes when
 * it is needed), so a model never has to fit in memory twice; and a streaming safetensors writer.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { basename } from "node:path";
import { Sgfp4Error, bitsToFloat32, floatBitsToHalfBits, float32Bits, halfToFloat } from "@sgfp4/format";

export type FloatDtype = "F32" | "F16" | "BF16";
export const DTYPE_BYTES: Readonly<Record<string, number>> = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U64: 8, U32: 4, U16: 2, U8: 1, BOOL: 1, F8_E4M3: 1, F8_E5M2: 1 };
const FLOAT_DTYPES = new Set(["F32", "F16", "BF16"]);
export const isFloatDtype = (d: string): d is FloatDtype => FLOAT_DTYPES.has(d);

/** Largest safetensors JSON header we read (the format's own readers cap it at 100 MB). */
export const MAX_HEADER_BYTES = 100 * 1024 * 1024;

export interface TensorEntry {
  name: string;
  dtype: string;
  shape: number[];
  /** absolute byte range in the file */
  start: number;
  end: number;
}

export interface TensorFile {
  path: string;
  kind: "safetensors" | "npy";
  tensors: TensorEntry[];
  metadata?: Record<string, string>;
}

const bad = (path: string, why: string): never => {
  throw new Sgfp4Error("INVALID_ARGUMENT", `${path}: ${why}`);
};

/** Fills `into` with the file's bytes from `position` (in reads of at most 1 GiB, the most one read takes). */
async function readInto(fh: FileHandle, into: Uint8Array, position: number, path: string): Promise<void> {
  for (let got = 0; got < into.length; ) {
    const { bytesRead } = await fh.read(into, got, Math.min(into.length - got, 1 << 30), position + got);
    if (bytesRead === 0) bad(path, `file ends at byte ${position + got}, expected ${into.length} bytes from ${position}`);
    got += bytesRead;
  }
}

async function readExactly(fh: FileHandle, length: number, position: number, path: string): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  await readInto(fh, buf, position, path);
  return buf;
}

function numel(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/**
 * The top-level keys of a JSON object's text, in order, duplicates kept (JSON.parse keeps only the
 * last of two equal keys, which would silently drop a tensor). The text must already parse.
 */
export function topLevelKeys(text: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    else if (c === '"') {
      const start = i;
      for (i++; text[i] !== '"'; i++) if (text[i] === "\\") i++;
      let j = i + 1;
      while (text[j] === " " || text[j] === "\n" || text[j] === "\r" || text[j] === "\t") j++;
      if (depth === 1 && text[j] === ":") keys.push(JSON.parse(text.slice(start, i + 1)) as string);
    }
  }
  return keys;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** What a file that is not a safetensors file probably is, and what to do instead. */
function notSafetensorsHint(first: Buffer): string {
  if (first[0] === 0x7b) return "it looks like JSON: for a sharded checkpoint pass its folder or model.safetensors.index.json";
  if (first[0] === 0x08) return "it looks like an ONNX model: name it .onnx (sgfp4 encode reads ONNX initializers)";
  return "sgfp4 encode reads .safetensors, a sharded folder or its model.safetensors.index.json, .onnx and .npy";
}

/**
 * The header of a safetensors file, checked: UTF-8 JSON object with unique, non-empty tensor
 * names, known dtypes, shapes matching their byte ranges, ranges inside the data section and not
 * overlapping (gaps are allowed). Tensors come back in data order.
 */
export async function readTensorIndex(path: string): Promise<TensorFile> {
  if (path.endsWith(".npy")) return readNpyIndex(path);
  const fh = await open(path, "r");
  try {
    const size = (await fh.stat()).size;
    if (size < 8) bad(path, `not a safetensors file (${size} bytes, no 8-byte header length)`);
    const first = await readExactly(fh, 8, 0, path);
    const n = first.readBigUInt64LE(0);
    if (n > BigInt(MAX_HEADER_BYTES) || n > BigInt(size - 8)) bad(path, `not a safetensors file: header length ${n} is larger than the file or the ${MAX_HEADER_BYTES}-byte limit (${notSafetensorsHint(first)})`);
    const headerLen = Number(n);
    let text = "";
    let header: unknown;
    try {
      text = strictUtf8.decode(await readExactly(fh, headerLen, 8, path));
    } catch {
      bad(path, "safetensors header is not valid UTF-8");
    }
    try {
      header = JSON.parse(text);
    } catch (e) {
      bad(path, `safetensors header is not JSON (${(e as Error).message})`);
    }
    if (typeof header !== "object" || header === null || Array.isArray(header)) bad(path, "safetensors header is not a JSON object");
    const keys = topLevelKeys(text);
    const dup = keys.find((k, i) => keys.indexOf(k) !== i);
    if (dup !== undefined) bad(path, `safetensors header names ${JSON.stringify(dup)} twice (a JSON reader would silently keep one)`);
    const base = 8 + headerLen;
    const dataLen = size - base;
    const tensors: TensorEntry[] = [];
    let metadata: Record<string, string> | undefined;
    for (const [name, raw] of Object.entries(header as Record<string, unknown>)) {
      if (name === "__metadata__") {
        metadata = raw as Record<string, string>;
        continue;
      }
      if (name === "") bad(path, "a tensor has the empty name \"\"");
      const e = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
      if (typeof e !== "object" || e === null) bad(path, `tensor ${name}: entry is not an object`);
      if (typeof e.dtype !== "string" || !(e.dtype in DTYPE_BYTES)) bad(path, `tensor ${name}: unknown dtype ${JSON.stringify(e.dtype)}`);
      if (!Array.isArray(e.shape) || !e.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) bad(path, `tensor ${name}: shape must be an array of non-negative integers`);
      const off = e.data_offsets;
      if (!Array.isArray(off) || off.length !== 2 || !off.every((d) => Number.isSafeInteger(d) && d >= 0) || off[0] > off[1]) bad(path, `tensor ${name}: data_offsets must be [begin, end] with begin <= end`);
      const [b, eEnd] = off as [number, number];
      if (eEnd > dataLen) bad(path, `tensor ${name}: data_offsets end ${eEnd} is past the ${dataLen}-byte data section`);
      const want = numel(e.shape as number[]) * DTYPE_BYTES[e.dtype as string]!;
      if (eEnd - b !== want) bad(path, `tensor ${name}: ${eEnd - b} data bytes, shape [${(e.shape as number[]).join(", ")}] of ${e.dtype} needs ${want} (shape mismatch)`);
      tensors.push({ name, dtype: e.dtype as string, shape: e.shape as number[], start: base + b, end: base + eEnd });
    }
    tensors.sort((x, y) => x.start - y.start || x.end - y.end || (x.name < y.name ? -1 : 1));
    for (let i = 1; i < tensors.length; i++) {
      const [p, t] = [tensors[i - 1]!, tensors[i]!];
      if (t.start < p.end) bad(path, `tensors ${p.name} and ${t.name} overlap (data bytes ${t.start - base}..${Math.min(p.end, t.end) - base})`);
    }
    if (metadata !== undefined && (typeof metadata !== "object" || metadata === null || Array.isArray(metadata) || !Object.values(metadata).every((v) => typeof v === "string"))) bad(path, "__metadata__ must be an object of strings");
    return { path, kind: "safetensors", tensors, ...(metadata ? { metadata } : {}) };
  } finally {
    await fh.close();
  }
}

async function readNpyIndex(path: string): Promise<TensorFile> {
  const fh = await open(path, "r");
  try {
    const size = (await fh.stat()).size;
    if (size < 10) bad(path, "not a .npy file (too short)");
    const pre = await readExactly(fh, 12 > size ? 10 : 12, 0, path);
    if (pre[0] !== 0x93 || pre.toString("latin1", 1, 6) !== "NUMPY") bad(path, "not a .npy file (bad magic)");
    const major = pre[6]!;
    if (major < 1 || major > 3) bad(path, `.npy version ${major} is not supported`);
    const hlen = major === 1 ? pre.readUInt16LE(8) : pre.readUInt32LE(8);
    const hstart = major === 1 ? 10 : 12;
    if (hstart + hlen > size || hlen > MAX_HEADER_BYTES) bad(path, ".npy header runs past the end of the file");
    const h = (await readExactly(fh, hlen, hstart, path)).toString("latin1");
    const descr = /'descr'\s*:\s*'([^']*)'/.exec(h)?.[1];
    const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(h)?.[1];
    const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(h)?.[1];
    if (descr === undefined || fortran === undefined || shapeText === undefined) bad(path, `.npy header is malformed: ${h.trim()}`);
    if (fortran === "True") bad(path, ".npy arrays in Fortran order are not supported (save with C order)");
    const dtype = descr === "<f4" || descr === "=f4" ? "F32" : descr === "<f2" || descr === "=f2" ? "F16" : bad(path, `.npy dtype ${descr} is not supported (little-endian float32 or float16 only)`);
    const shape = shapeText!.split(",").map((s) => s.trim()).filter((s) => s.length > 0).map((s) => (/^\d+$/.test(s) ? Number(s) : bad(path, `.npy shape entry ${s} is not an integer`)));
    const start = hstart + hlen;
    const end = start + numel(shape) * DTYPE_BYTES[dtype]!;
    if (end > size) bad(path, `.npy data needs ${end - start} bytes, the file has ${size - start} (shape mismatch)`);
    return { path, kind: "npy", tensors: [{ name: basename(path).replace(/\.npy$/, ""), dtype, shape, start, end }] };
  } finally {
    await fh.close();
  }
}

/** One tensor's raw bytes (only its own byte range is read). */
export async function readTensorBytes(path: string, t: TensorEntry): Promise<Uint8Array> {
  const fh = await open(path, "r");
  try {
    const buf = await readExactly(fh, t.end - t.start, t.start, path);
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  } finally {
    await fh.close();
  }
}

const littleEndianHost = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Reads a float tensor of `cols` columns by rows: use(read) gets read(row0, rowCount, reuse?),
 * which reads only those rows' bytes and gives them as float32 values: in `reuse` (a band the
 * caller is done with, if long enough), else a new array. F32 on a little-endian host is read
 * straight into it; F16 / BF16 / big-endian through one byte buffer kept for the next band.
 */
export async function withTensorRows<T>(path: string, t: TensorEntry, cols: number, use: (read: (row0: number, rowCount: number, reuse?: Float32Array) => Promise<Float32Array>) => Promise<T>): Promise<T> {
  const elementBytes = DTYPE_BYTES[t.dtype]!;
  if (!isFloatDtype(t.dtype)) bad(path, `tensor ${t.name}: unsupported dtype ${t.dtype}`);
  const fh = await open(path, "r");
  let raw = new Uint8Array(0);
  try {
    return await use(async (row0, rowCount, reuse) => {
      const position = t.start + row0 * cols * elementBytes;
      const values = rowCount * cols;
      const length = values * elementBytes;
      if (position + length > t.end) throw new RangeError(`rows ${row0}..${row0 + rowCount} of tensor ${t.name} are past its data`);
      const out = reuse && reuse.length >= values ? reuse.subarray(0, values) : new Float32Array(values);
      if (t.dtype === "F32" && littleEndianHost) {
        await readInto(fh, new Uint8Array(out.buffer, out.byteOffset, out.byteLength), position, path);
        return out;
      }
      if (raw.length < length) raw = new Uint8Array(length);
      const bytes = raw.subarray(0, length);
      await readInto(fh, bytes, position, path);
      return toFloat32(bytes, t.dtype, t.name, out);
    });
  } finally {
    await fh.close();
  }
}

/** float32 values as little-endian bytes: a view on a little-endian host, else a converted copy. */
export function float32LeBytes(values: Float32Array): Uint8Array {
  return littleEndianHost ? new Uint8Array(values.buffer, values.byteOffset, values.byteLength) : fromFloat32(values, "F32");
}

/** sha256 of a file, read in chunks (a passthrough file can be large). */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 22 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** F32 / F16 / BF16 little-endian bytes to float32 values (into `into` when given: as many values as the bytes hold). */
export function toFloat32(bytes: Uint8Array, dtype: string, name = "tensor", into?: Float32Array): Float32Array {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dtype === "F32") {
    const out = into ?? new Float32Array(bytes.length / 4);
    for (let i = 0; i < out.length; i++) out[i] = dv.getFloat32(4 * i, true);
    return out;
  }
  if (dtype === "F16") {
    const out = into ?? new Float32Array(bytes.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = halfToFloat(dv.getUint16(2 * i, true));
    return out;
  }
  if (dtype === "BF16") {
    const out = into ?? new Float32Array(bytes.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = bitsToFloat32(dv.getUint16(2 * i, true) << 16);
    return out;
  }
  return bad(name, `unsupported dtype ${dtype} (F32, F16 or BF16 can be encoded; exclude the tensor to keep it unquantized)`);
}

/** float32 values to the output dtype's little-endian bytes (F16/BF16: round to nearest even). */
export function fromFloat32(values: Float32Array, dtype: FloatDtype): Uint8Array {
  const out = new Uint8Array(values.length * (dtype === "F32" ? 4 : 2));
  const dv = new DataView(out.buffer);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (dtype === "F32") dv.setFloat32(4 * i, v, true);
    else if (dtype === "F16") dv.setUint16(2 * i, floatBitsToHalfBits(float32Bits(v)), true);
    else {
      const b = float32Bits(v);
      const rounded = (b + 0x7fff + ((b >>> 16) & 1)) >>> 16; // round to nearest even (values are finite)
      dv.setUint16(2 * i, rounded & 0xffff, true);
    }
  }
  return out;
}

export interface OutTensor {
  name: string;
  dtype: string;
  shape: number[];
  byteLength: number;
  /** produces the bytes when the writer gets to this tensor */
  bytes: () => Promise<Uint8Array>;
}

/** Write a safetensors file tensor by tensor (header first; sizes must be known up front). */
export async function writeSafetensors(path: string, tensors: readonly OutTensor[], metadata?: Record<string, string>): Promise<void> {
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  let at = 0;
  for (const t of tensors) {
    // a JSON header keeps one entry per name: a second one would silently drop a tensor
    if (Object.hasOwn(header, t.name)) throw new Sgfp4Error("INVALID_ARGUMENT", `${path}: two tensors are named ${JSON.stringify(t.name)}`);
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [at, at + t.byteLength] };
    at += t.byteLength;
  }
  let json = JSON.stringify(header);
  json += " ".repeat((8 - ((8 + Buffer.byteLength(json)) % 8)) % 8); // data section 8-byte aligned
  const jsonBytes = Buffer.from(json, "utf8");
  const fh = await open(path, "w");
  try {
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(jsonBytes.length));
    await fh.write(len);
    await fh.write(jsonBytes);
    for (const t of tensors) {
      const b = await t.bytes();
      if (b.length !== t.byteLength) throw new Sgfp4Error("INVALID_ARGUMENT", `tensor ${t.name}: ${b.length} bytes, declared ${t.byteLength}`);
      await fh.write(b);
    }
  } finally {
    await fh.close();
  }
}
