/** Colour maps, as ABGR words for a Uint32Array view of ImageData (little-endian). */

export const rgb = (r: number, g: number, b: number): number => (0xff000000 | (b << 16) | (g << 8) | r) >>> 0;
export const css = (abgr: number): string => `rgb(${abgr & 255},${(abgr >>> 8) & 255},${(abgr >>> 16) & 255})`;

export const MODE_COLORS = [rgb(76, 145, 230), rgb(240, 150, 50)]; // FP4, T158
export const SIZE_COLORS: Record<number, number> = { 4: rgb(215, 48, 39), 8: rgb(244, 165, 80), 16: rgb(230, 220, 120), 32: rgb(120, 190, 140), 64: rgb(50, 110, 180) };
export const PADDING_DIM = 0.35;

function lut(stops: [number, number, number][]): Uint32Array {
  const out = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    const t = (i / 255) * (stops.length - 1);
    const k = Math.min(stops.length - 2, Math.floor(t));
    const f = t - k;
    const a = stops[k]!;
    const b = stops[k + 1]!;
    out[i] = rgb(Math.round(a[0] + (b[0] - a[0]) * f), Math.round(a[1] + (b[1] - a[1]) * f), Math.round(a[2] + (b[2] - a[2]) * f));
  }
  return out;
}

/** Sequential (dark blue -> yellow), for magnitudes: bits per weight, error. */
export const SEQUENTIAL = lut([
  [13, 8, 135],
  [126, 3, 168],
  [204, 71, 120],
  [248, 149, 64],
  [240, 249, 33],
]);
/** Diverging (blue - white - red), for signed weights. */
export const DIVERGING = lut([
  [33, 102, 172],
  [146, 197, 222],
  [247, 247, 247],
  [244, 165, 130],
  [178, 24, 43],
]);

export function dim(abgr: number, f: number): number {
  const r = (abgr & 255) * f;
  const g = ((abgr >>> 8) & 255) * f;
  const b = ((abgr >>> 16) & 255) * f;
  return rgb(r | 0, g | 0, b | 0);
}

/** CSS gradient text for a legend bar. */
export function gradientCss(table: Uint32Array): string {
  const stops = [0, 64, 128, 192, 255].map((i) => `${css(table[i]!)} ${((i / 255) * 100).toFixed(0)}%`);
  return `linear-gradient(to right, ${stops.join(", ")})`;
}
