/**
 * A minimal ONNX reader: the float32 tensors of a model (graph initializers, Constant-node
 * tensors, and those of If/Loop subgraphs), read with a small protobuf wire-format decoder, and
 * a writer that puts new values into a copy of the file. No dependencies.
 */

/** A float32 tensor of an ONNX file. */
export interface OnnxTensor {
  /** initializer name; inside a subgraph prefixed `node.attribute/` (names repeat across branches) */
  name: string;
  dims: number[];
  data: Float32Array;
  /** byte offset in the file of the contiguous little-endian float32 payload (raw_data or packed float_data), -1 if scattered */
  offset: number;
}

/** A weight matrix as the benchmarks encode it: `data` read as row-major [dims[0], rest]. */
export interface OnnxWeight extends OnnxTensor {
  shape: [number, number];
}

type Field = [field: number, wireType: number, value: bigint | Uint8Array];

function* fields(buf: Uint8Array): Generator<Field> {
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buf.length) throw new Error("ONNX: truncated varint");
      const b = buf[pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
    }
  };
  const take = (len: number): Uint8Array => {
    if (pos + len > buf.length) throw new Error("ONNX: truncated field");
    const v = buf.subarray(pos, pos + len);
    pos += len;
    return v;
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const field = key >>> 3;
    const wt = key & 7;
    if (wt === 0) yield [field, wt, varint()];
    else if (wt === 2) yield [field, wt, take(Number(varint()))];
    else if (wt === 1) yield [field, wt, take(8)];
    else if (wt === 5) yield [field, wt, take(4)];
    else throw new Error(`ONNX: unsupported wire type ${wt}`);
  }
}

function packedVarints(bytes: Uint8Array): number[] {
  const out: number[] = [];
  let value = 0;
  let scale = 1;
  for (const b of bytes) {
    value += (b & 0x7f) * scale; // dims fit in a double; no 32-bit shifts
    scale *= 128;
    if (!(b & 0x80)) {
      out.push(value);
      value = 0;
      scale = 1;
    }
  }
  return out;
}

const utf8 = new TextDecoder();
const FLOAT = 1;

/** TensorProto -> OnnxTensor for FLOAT (data_type 1), else null. */
function tensor(bytes: Uint8Array, file: Uint8Array): OnnxTensor | null {
  let name = "";
  const dims: number[] = [];
  let type = 0;
  let payload: Uint8Array | null = null; // raw_data or packed float_data: little-endian float32s
  const scattered: number[] = [];
  for (const [f, wt, v] of fields(bytes)) {
    if (f === 1) dims.push(...(typeof v === "bigint" ? [Number(v)] : packedVarints(v)));
    else if (f === 2) type = Number(v);
    else if (f === 4 && typeof v !== "bigint") {
      if (wt === 2) payload = v;
      else scattered.push(new DataView(v.buffer, v.byteOffset, 4).getFloat32(0, true));
    } else if (f === 8 && typeof v !== "bigint") name = utf8.decode(v);
    else if (f === 9 && typeof v !== "bigint") payload = v;
  }
  if (type !== FLOAT) return null;
  if (!payload) return { name, dims, data: Float32Array.from(scattered), offset: -1 };
  const data = new Float32Array(payload.length >>> 2);
  const dv = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  for (let i = 0; i < data.length; i++) data[i] = dv.getFloat32(4 * i, true);
  return { name, dims, data, offset: payload.byteOffset - file.byteOffset };
}

function graph(bytes: Uint8Array, prefix: string, file: Uint8Array, out: OnnxTensor[]): void {
  for (const [f, , v] of fields(bytes)) {
    if (typeof v === "bigint") continue;
    if (f === 5) {
      const t = tensor(v, file); // initializer
      if (t) out.push({ ...t, name: prefix + t.name });
    } else if (f === 1) node(v, prefix, file, out);
  }
}

function node(bytes: Uint8Array, prefix: string, file: Uint8Array, out: OnnxTensor[]): void {
  let nodeName = "";
  const attrs: Uint8Array[] = [];
  for (const [f, , v] of fields(bytes)) {
    if (typeof v === "bigint") continue;
    if (f === 3) nodeName = utf8.decode(v);
    else if (f === 5) attrs.push(v);
  }
  for (const a of attrs) {
    let attrName = "";
    for (const [f, , v] of fields(a)) {
      if (typeof v === "bigint") continue;
      if (f === 1) attrName = utf8.decode(v);
      else if (f === 5) {
        const t = tensor(v, file); // a Constant node's value
        if (t) out.push({ ...t, name: `${prefix}${nodeName}.${attrName}` });
      } else if (f === 6) graph(v, `${prefix}${nodeName}.${attrName}/`, file, out);
      else if (f === 11) graph(v, `${prefix}${nodeName}.${attrName}[]/`, file, out);
    }
  }
}

/** All float32 tensors of an ONNX model file's bytes, in file order. */
export function onnxFloatTensors(file: Uint8Array): OnnxTensor[] {
  const out: OnnxTensor[] = [];
  for (const [f, , v] of fields(file)) if (f === 7 && typeof v !== "bigint") graph(v, "", file, out);
  return out;
}

/**
 * The weight matrices the benchmarks encode: float32 tensors of rank >= 2 with at least 4096
 * values, each as a 2-D [dims[0], rest] tensor (as `sgfp4 encode` reshapes them).
 */
export function onnxWeightTensors(file: Uint8Array): OnnxWeight[] {
  return onnxFloatTensors(file)
    .filter((t) => t.dims.length >= 2 && t.data.length >= 4096)
    .map((t) => ({ ...t, shape: [t.dims[0]!, t.data.length / t.dims[0]!] }));
}

/**
 * A copy of an ONNX file with new values for some of its tensors (same element count; the
 * payload is overwritten in place, so the protobuf framing does not change). Throws for a tensor
 * whose values are not stored contiguously.
 */
export function replaceOnnxTensors(file: Uint8Array, replacements: { tensor: OnnxTensor; data: Float32Array }[]): Uint8Array {
  const out = file.slice();
  const dv = new DataView(out.buffer, out.byteOffset, out.byteLength);
  for (const { tensor: t, data } of replacements) {
    if (t.offset < 0) throw new Error(`ONNX: tensor ${t.name} is not stored contiguously`);
    if (data.length !== t.data.length) throw new Error(`ONNX: tensor ${t.name} has ${t.data.length} values, got ${data.length}`);
    for (let i = 0; i < data.length; i++) dv.setFloat32(t.offset + 4 * i, data[i]!, true);
  }
  return out;
}
