// Minimal ONNX reader: float32 tensors (graph initializers, Constant-node tensors, and those of
// subgraphs inside If/Loop nodes), read with a small protobuf wire-format decoder. No
// dependencies; enough for extracting trained weights for the quality benchmark.

function reader(buf) {
  let pos = 0;
  const varint = () => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buf.length) throw new Error("truncated varint");
      const b = buf[pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
    }
  };
  return {
    /** yields [field, wireType, value] where value is a bigint (varint), or a Uint8Array (bytes) */
    *fields() {
      while (pos < buf.length) {
        const key = Number(varint());
        const field = key >>> 3;
        const wt = key & 7;
        if (wt === 0) yield [field, wt, varint()];
        else if (wt === 2) {
          const len = Number(varint());
          if (pos + len > buf.length) throw new Error("truncated field");
          yield [field, wt, buf.subarray(pos, pos + len)];
          pos += len;
        } else if (wt === 1) { yield [field, wt, buf.subarray(pos, pos + 8)]; pos += 8; }
        else if (wt === 5) { yield [field, wt, buf.subarray(pos, pos + 4)]; pos += 4; }
        else throw new Error(`unsupported wire type ${wt}`);
      }
    },
  };
}

function readVarints(bytes) {
  const out = [];
  let pos = 0;
  while (pos < bytes.length) {
    let r = 0n, s = 0n;
    for (;;) { const b = bytes[pos++]; r |= BigInt(b & 0x7f) << s; if (!(b & 0x80)) break; s += 7n; }
    out.push(Number(r));
  }
  return out;
}

/** TensorProto -> { name, dims, data } for FLOAT (data_type 1), else null. */
function tensor(bytes) {
  let name = "";
  const dims = [];
  let type = 0;
  let raw = null;
  const floats = [];
  for (const [f, wt, v] of reader(bytes).fields()) {
    if (f === 1) wt === 0 ? dims.push(Number(v)) : dims.push(...readVarints(v));
    else if (f === 2) type = Number(v);
    else if (f === 4) {
      if (wt === 2) { const dv = new DataView(v.buffer, v.byteOffset, v.byteLength); for (let i = 0; i + 4 <= v.length; i += 4) floats.push(dv.getFloat32(i, true)); }
      else floats.push(new DataView(v.buffer, v.byteOffset, 4).getFloat32(0, true));
    } else if (f === 8) name = new TextDecoder().decode(v);
    else if (f === 9) raw = v;
  }
  if (type !== 1) return null;
  let data;
  if (raw) { data = new Float32Array(raw.length / 4); const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength); for (let i = 0; i < data.length; i++) data[i] = dv.getFloat32(4 * i, true); }
  else data = Float32Array.from(floats);
  return { name, dims, data };
}

function graph(bytes, prefix, out) {
  for (const [f, , v] of reader(bytes).fields()) {
    if (f === 5) { const t = tensor(v); if (t) out.push({ ...t, name: prefix + t.name }); } // initializer
    else if (f === 1) node(v, prefix, out);
  }
}

function node(bytes, prefix, out) {
  let nodeName = "";
  const attrs = [];
  for (const [f, , v] of reader(bytes).fields()) {
    if (f === 3) nodeName = new TextDecoder().decode(v);
    else if (f === 5) attrs.push(v);
  }
  for (const a of attrs) {
    let attrName = "";
    for (const [f, , v] of reader(a).fields()) {
      if (f === 1) attrName = new TextDecoder().decode(v);
      else if (f === 5) { const t = tensor(v); if (t) out.push({ ...t, name: `${prefix}${nodeName}.${attrName}` }); } // Constant
      else if (f === 6) graph(v, `${prefix}${nodeName}.${attrName}/`, out); // subgraph
      else if (f === 11) graph(v, `${prefix}${nodeName}.${attrName}[]/`, out);
    }
  }
}

/** All float32 tensors of an ONNX model file's bytes. */
export function onnxFloatTensors(bytes) {
  const out = [];
  for (const [f, , v] of reader(bytes).fields()) if (f === 7) graph(v, "", out);
  return out;
}

/**
 * The weight matrices the benchmarks encode: float32 tensors of rank >= 2 with at least 4096
 * values, each as a 2-D [dims[0], rest] tensor (as `sgfp4 encode` reshapes them).
 */
export function onnxWeightTensors(bytes) {
  return onnxFloatTensors(bytes)
    .filter((t) => t.dims.length >= 2 && t.data.length >= 4096)
    .map((t) => ({ ...t, shape: [t.dims[0], t.data.length / t.dims[0]] }));
}
