/**
 * ONNX models, read and written at the protobuf wire level: the tensors of initializers and of
 * Constant nodes (in the main graph and in If/Loop subgraphs) with the byte range of their raw_data, and a writer that splices
 * new raw_data into a model, every other byte kept as it was (only the length prefixes of the
 * enclosing messages change). No protobuf schema library: the six fields walked are listed below.
 */
import { Sgfp4Error } from "@sgfp4/format";

/** Fields walked (onnx.proto): messages that may hold initializers, and the tensor's own fields. */
const MODEL_GRAPH = 7;
const GRAPH_NODE = 1;
const GRAPH_INITIALIZER = 5;
const NODE_NAME = 3;
const NODE_ATTRIBUTE = 5;
const ATTR_NAME = 1;
const ATTR_TENSOR = 5;
const ATTR_GRAPH = 6;
const ATTR_GRAPHS = 11;
const TENSOR_DIMS = 1;
const TENSOR_DATA_TYPE = 2;
const TENSOR_NAME = 8;
const TENSOR_RAW_DATA = 9;
const TENSOR_DATA_LOCATION = 14;
/** TensorProto.DataType FLOAT */
export const ONNX_FLOAT = 1;

type Kind = "model" | "graph" | "node" | "attribute" | "tensor";
/** Which length-delimited fields of a message are messages that can contain initializers. */
const CHILDREN: Record<Kind, Partial<Record<number, Kind>>> = {
  model: { [MODEL_GRAPH]: "graph" },
  graph: { [GRAPH_NODE]: "node", [GRAPH_INITIALIZER]: "tensor" },
  node: { [NODE_ATTRIBUTE]: "attribute" },
  attribute: { [ATTR_TENSOR]: "tensor", [ATTR_GRAPH]: "graph", [ATTR_GRAPHS]: "graph" },
  tensor: {},
};

interface Field {
  field: number;
  wire: number;
  /** where the field's key starts */
  keyStart: number;
  /** where its value (after the length prefix for wire type 2) starts and ends */
  start: number;
  end: number;
  /** varint value (wire type 0) */
  value?: bigint;
}

const bad = (why: string): never => {
  throw new Sgfp4Error("INVALID_ARGUMENT", `ONNX: ${why}`);
};

function varint(buf: Uint8Array, pos: number, end: number): [bigint, number] {
  let result = 0n;
  for (let shift = 0n; shift < 70n; shift += 7n) {
    if (pos >= end) bad(`truncated varint at byte ${pos}`);
    const b = buf[pos++]!;
    result |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [result, pos];
  }
  return bad(`varint too long at byte ${pos}`);
}

/** The fields of the message in buf[start, end). */
function* fields(buf: Uint8Array, start: number, end: number): Generator<Field> {
  let pos = start;
  while (pos < end) {
    const keyStart = pos;
    const [key, p] = varint(buf, pos, end);
    pos = p;
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      const [value, q] = varint(buf, pos, end);
      yield { field, wire, keyStart, start: pos, end: q, value };
      pos = q;
    } else if (wire === 2) {
      const [len, q] = varint(buf, pos, end);
      if (len > BigInt(end - q)) bad(`field ${field} at byte ${keyStart} runs past its message`);
      yield { field, wire, keyStart, start: q, end: q + Number(len) };
      pos = q + Number(len);
    } else if (wire === 1 || wire === 5) {
      const n = wire === 1 ? 8 : 4;
      if (pos + n > end) bad(`field ${field} at byte ${keyStart} runs past its message`);
      yield { field, wire, keyStart, start: pos, end: pos + n };
      pos += n;
    } else bad(`unsupported wire type ${wire} at byte ${keyStart}`);
  }
}

const utf8 = new TextDecoder();

export interface OnnxInitializer {
  /**
   * unique name: the subgraph path ("node.attr/") and the initializer's name (a Constant node's
   * tensor: "node.value"), "#k" added for the k-th repeat
   */
  name: string;
  dims: number[];
  dataType: number;
  /** raw_data's byte range in the file; absent when the values are elsewhere (typed fields, external data) */
  rawStart?: number;
  rawEnd?: number;
  /** the values are in an external file (data_location EXTERNAL) */
  external?: boolean;
}

function readTensor(buf: Uint8Array, start: number, end: number): Omit<OnnxInitializer, "name"> & { localName: string } {
  const dims: number[] = [];
  let dataType = 0;
  let localName = "";
  let raw: [number, number] | undefined;
  let external = false;
  for (const f of fields(buf, start, end)) {
    if (f.field === TENSOR_DIMS) {
      if (f.wire === 0) dims.push(Number(f.value));
      else for (let p = f.start; p < f.end; ) { const [v, q] = varint(buf, p, f.end); dims.push(Number(v)); p = q; } // packed
    } else if (f.field === TENSOR_DATA_TYPE) dataType = Number(f.value);
    else if (f.field === TENSOR_NAME) localName = utf8.decode(buf.subarray(f.start, f.end));
    else if (f.field === TENSOR_RAW_DATA) raw = [f.start, f.end];
    else if (f.field === TENSOR_DATA_LOCATION) external = f.value === 1n;
  }
  return { localName, dims, dataType, ...(raw && !external ? { rawStart: raw[0], rawEnd: raw[1] } : {}), ...(external ? { external } : {}) };
}

/** Every initializer and Constant tensor of the model, in file order (subgraphs where their node is). */
export function onnxInitializers(buf: Uint8Array): OnnxInitializer[] {
  const out: OnnxInitializer[] = [];
  const seen = new Map<string, number>();
  const walk = (kind: Kind, start: number, end: number, prefix: string): void => {
    let nodeName = "";
    let attrName = "";
    for (const f of fields(buf, start, end)) {
      if (kind === "node" && f.field === NODE_NAME) nodeName = utf8.decode(buf.subarray(f.start, f.end));
      if (kind === "attribute" && f.field === ATTR_NAME) attrName = utf8.decode(buf.subarray(f.start, f.end));
      const child = f.wire === 2 ? CHILDREN[kind][f.field] : undefined;
      if (child === "tensor") {
        const { localName, ...t } = readTensor(buf, f.start, f.end);
        // a Constant node's tensor is named after its node and attribute ("node.value")
        const base = kind === "attribute" ? prefix + attrName : prefix + localName;
        const k = seen.get(base) ?? 0;
        seen.set(base, k + 1);
        out.push({ name: k ? `${base}#${k}` : base, ...t });
      } else if (child === "attribute") walk(child, f.start, f.end, `${prefix}${nodeName}.`);
      else if (child === "graph") walk(child, f.start, f.end, kind === "attribute" ? `${prefix}${attrName}${f.field === ATTR_GRAPHS ? "[]" : ""}/` : prefix);
      else if (child) walk(child, f.start, f.end, prefix);
    }
  };
  walk("model", 0, buf.length, "");
  if (!out.length && ![...fields(buf, 0, buf.length)].some((f) => f.field === MODEL_GRAPH)) bad("no graph (not an ONNX model?)");
  return out;
}

/** A cheap sniff for a file given without the .onnx extension: ModelProto starts with ir_version. */
export function looksLikeOnnx(head: Uint8Array): boolean {
  return head[0] === 0x08; // ModelProto.ir_version, always written first
}

function encodeVarint(n: number): Uint8Array {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return Uint8Array.from(out);
}

/**
 * The model with the raw_data at each given start offset (an initializer's rawStart) replaced by
 * new bytes, as chunks to write in order. Everything else is the input's bytes.
 */
export function spliceOnnx(buf: Uint8Array, replace: ReadonlyMap<number, Uint8Array>): Uint8Array[] {
  const starts = [...replace.keys()].sort((a, b) => a - b);
  const touches = (s: number, e: number): boolean => {
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]! < s) lo = mid + 1;
      else hi = mid;
    }
    return lo < starts.length && starts[lo]! < e + 1;
  };
  const rebuild = (kind: Kind, start: number, end: number): { chunks: Uint8Array[]; length: number } => {
    const chunks: Uint8Array[] = [];
    let length = 0;
    const push = (c: Uint8Array) => {
      chunks.push(c);
      length += c.length;
    };
    let copyFrom = start;
    const flush = (to: number) => {
      if (to > copyFrom) push(buf.subarray(copyFrom, to));
    };
    for (const f of fields(buf, start, end)) {
      const child = f.wire === 2 ? CHILDREN[kind][f.field] : undefined;
      const isRaw = kind === "tensor" && f.field === TENSOR_RAW_DATA && f.wire === 2 && replace.has(f.start);
      if (!isRaw && !(child && touches(f.start, f.end))) continue;
      flush(f.keyStart);
      const key = buf.subarray(f.keyStart, varint(buf, f.keyStart, f.end)[1]);
      const inner = isRaw ? { chunks: [replace.get(f.start)!], length: replace.get(f.start)!.length } : rebuild(child!, f.start, f.end);
      push(key);
      push(encodeVarint(inner.length));
      for (const c of inner.chunks) push(c);
      copyFrom = f.end;
    }
    flush(end);
    return { chunks, length };
  };
  return rebuild("model", 0, buf.length).chunks;
}
