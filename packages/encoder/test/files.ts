/** Model files built by hand for the tests (no writer under test involved). */

/** A safetensors file: tensors in the order given, optionally with __metadata__. */
export function safetensors(tensors: { name: string; dtype?: string; shape: number[]; data: Uint8Array }[], metadata?: Record<string, string>): Uint8Array {
  const header: Record<string, unknown> = metadata ? { __metadata__: metadata } : {};
  let at = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: t.dtype ?? "F32", shape: t.shape, data_offsets: [at, at + t.data.length] };
    at += t.data.length;
  }
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([len, json, ...tensors.map((t) => Buffer.from(t.data))]);
}

export const f32 = (a: Float32Array): Uint8Array => new Uint8Array(a.buffer.slice(0));
