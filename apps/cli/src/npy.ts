/** NumPy .npy (format 1.0) header for a little-endian float32 C-order array. */
export function npyHeader(shape: readonly number[]): Uint8Array {
  const dict = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(", ")}${shape.length === 1 ? "," : ""}), }`;
  // magic(6) + version(2) + header length(2) + dict + padding + "\n", total a multiple of 64
  const unpadded = 10 + dict.length + 1;
  const total = Math.ceil(unpadded / 64) * 64;
  const text = dict + " ".repeat(total - unpadded) + "\n";
  const out = new Uint8Array(total);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  new DataView(out.buffer).setUint16(8, text.length, true);
  for (let i = 0; i < text.length; i++) out[10 + i] = text.charCodeAt(i);
  return out;
}
