/**
 * Readers for an original float tensor to compare against: .npy (v1-v3, little-endian f4, f2,
 * f8, C order) and safetensors (F32, F16, BF16, F64). Everything is bounds-checked: the file
 * is user input. N-D tensors are viewed as [shape[0], product of the rest].
 */
import { halfToFloat } from "@sgfp4/format";

export interface OriginalTensor {
  name: string;
  shape: number[];
  /** as [rows, cols] */
  rows: number;
  cols: number;
  data: Float32Array;
}

export class OriginalError extends Error {}

function as2d(shape: number[]): [number, number] {
  if (shape.length === 0) return [1, 1];
  const rows = shape[0]!;
  return [rows, shape.slice(1).reduce((a, b) => a * b, 1)];
}

function checkShape(shape: unknown): number[] {
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) throw new OriginalError(`bad shape ${JSON.stringify(shape)}`);
  const n = shape.reduce((a: number, b: number) => a * b, 1);
  if (!Number.isSafeInteger(n) || n > 2 ** 29) throw new OriginalError(`tensor of ${n} elements is too large to compare here`);
  return shape as number[];
}

function convert(bytes: Uint8Array, dtype: string, count: number): Float32Array {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(count);
  const width = { F32: 4, F16: 2, BF16: 2, F64: 8 }[dtype];
  if (!width) throw new OriginalError(`dtype ${dtype} is not supported (F32, F16, BF16, F64)`);
  if (bytes.length < count * width) throw new OriginalError(`data of ${bytes.length} bytes, ${count} ${dtype} elements need ${count * width}`);
  for (let i = 0; i < count; i++) {
    if (dtype === "F32") out[i] = dv.getFloat32(4 * i, true);
    else if (dtype === "F16") out[i] = halfToFloat(dv.getUint16(2 * i, true));
    else if (dtype === "BF16") {
      out[i] = bf16(dv.getUint16(2 * i, true));
    } else out[i] = dv.getFloat64(8 * i, true);
  }
  return out;
}

const bfScratch = new DataView(new ArrayBuffer(4));
function bf16(bits: number): number {
  bfScratch.setUint32(0, bits << 16);
  return bfScratch.getFloat32(0);
}

export function readNpy(bytes: Uint8Array, name: string): OriginalTensor {
  const magic = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];
  if (bytes.length < 10 || magic.some((m, i) => bytes[i] !== m)) throw new OriginalError("not a .npy file (magic \\x93NUMPY missing)");
  const major = bytes[6]!;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLen = major === 1 ? dv.getUint16(8, true) : bytes.length >= 12 ? dv.getUint32(8, true) : -1;
  const headerStart = major === 1 ? 10 : 12;
  if (major < 1 || major > 3 || headerLen < 0 || headerStart + headerLen > bytes.length) throw new OriginalError(`unsupported or truncated .npy header (version ${major})`);
  const header = new TextDecoder().decode(bytes.subarray(headerStart, headerStart + headerLen));
  const descr = /'descr':\s*'([^']*)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || !fortran || shapeText === undefined) throw new OriginalError(`cannot read the .npy header: ${header.slice(0, 120)}`);
  if (fortran === "True") throw new OriginalError("Fortran-order .npy is not supported; save with C order");
  const dtype = { "<f4": "F32", "<f2": "F16", "<f8": "F64", "|f4": "F32" }[descr];
  if (!dtype) throw new OriginalError(`.npy dtype ${descr} is not supported (little-endian f2, f4, f8)`);
  const shape = checkShape(shapeText.split(",").map((s) => s.trim()).filter(Boolean).map(Number));
  const [rows, cols] = as2d(shape);
  const data = convert(bytes.subarray(headerStart + headerLen), dtype, rows * cols);
  return { name, shape, rows, cols, data };
}

export interface SafetensorsEntry {
  name: string;
  dtype: string;
  shape: number[];
  begin: number;
  end: number;
}

/** List a safetensors file's tensors without reading their data. */
export function listSafetensors(bytes: Uint8Array): { entries: SafetensorsEntry[]; dataStart: number } {
  if (bytes.length < 8) throw new OriginalError("not a safetensors file (shorter than 8 bytes)");
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(dv.getBigUint64(0, true));
  if (n > bytes.length - 8 || n > 100 * 2 ** 20) throw new OriginalError(`safetensors header of ${n} bytes does not fit the file`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  } catch (e) {
    throw new OriginalError(`safetensors header is not JSON: ${(e as Error).message}`);
  }
  const dataStart = 8 + n;
  const entries: SafetensorsEntry[] = [];
  for (const [name, v] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    const e = v as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    const off = e.data_offsets as [number, number] | undefined;
    if (typeof e.dtype !== "string" || !Array.isArray(off) || off.length !== 2 || !off.every((x) => Number.isSafeInteger(x) && x >= 0) || off[0] > off[1] || dataStart + off[1] > bytes.length) {
      throw new OriginalError(`safetensors entry ${name} is malformed or points outside the file`);
    }
    entries.push({ name, dtype: e.dtype, shape: checkShape(e.shape), begin: off[0], end: off[1] });
  }
  return { entries, dataStart };
}

export function readSafetensorsTensor(bytes: Uint8Array, entry: SafetensorsEntry, dataStart: number): OriginalTensor {
  const [rows, cols] = as2d(entry.shape);
  const data = convert(bytes.subarray(dataStart + entry.begin, dataStart + entry.end), entry.dtype, rows * cols);
  return { name: entry.name, shape: entry.shape, rows, cols, data };
}

export interface ErrorStats {
  /** 10 log10(sum x^2 / sum (x - y)^2), Infinity when equal */
  snrDb: number;
  maxAbsError: number;
  meanAbsError: number;
  errors: Float32Array;
}

export function compareToOriginal(original: Float32Array, decoded: Float32Array): ErrorStats {
  const n = Math.min(original.length, decoded.length);
  const errors = new Float32Array(n);
  let signal = 0;
  let noise = 0;
  let maxAbs = 0;
  let sumAbs = 0;
  for (let i = 0; i < n; i++) {
    const x = original[i]!;
    const d = x - decoded[i]!;
    const a = Math.abs(d);
    errors[i] = a;
    signal += x * x;
    noise += d * d;
    sumAbs += a;
    if (a > maxAbs) maxAbs = a;
  }
  return { snrDb: noise === 0 ? Infinity : 10 * Math.log10(signal / noise), maxAbsError: maxAbs, meanAbsError: n ? sumAbs / n : 0, errors };
}
