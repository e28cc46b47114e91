/**
 * Colour scale for tensor values. Real weights are heavy-tailed: a linear map over a robust
 * range (the 99.9th percentile of |v|) still puts the median weight a few percent away from the
 * centre, so the map looks white. The scale here is symmetric and logarithmic beyond a knee at
 * the median |v|: position(v) = sign(v) asinh(|v| / knee) / asinh(limit / knee), linear near 0
 * and log-like in the tails, so typical weights land about a third of the way out and the
 * outliers still saturate only beyond the 99.9th percentile.
 */

export interface ValueScale {
  /** |v| that maps to the ends of the ramp: the 99.9th percentile of |v| */
  limit: number;
  /** the median nonzero |v|: where the scale turns from linear to logarithmic */
  knee: number;
  /** largest finite |v| (shown in the legend when it lies beyond `limit`) */
  max: number;
}

/** From a sample of at most 2^20 values; NaN and Inf are ignored. */
export function valueScale(data: Float32Array): ValueScale {
  const step = Math.max(1, Math.floor(data.length / 2 ** 20));
  const sample: number[] = [];
  for (let i = 0; i < data.length; i += step) {
    const v = Math.abs(data[i]!);
    if (Number.isFinite(v)) sample.push(v);
  }
  let max = 0;
  for (let i = 0; i < data.length; i++) {
    const v = Math.abs(data[i]!);
    if (v > max && v !== Infinity) max = v;
  }
  const sorted = Float64Array.from(sample).sort();
  const p999 = sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.999))]! : 0;
  const limit = p999 > 0 ? p999 : max;
  const firstNonzero = sorted.findIndex((v) => v > 0);
  const median = firstNonzero < 0 ? 0 : sorted[firstNonzero + ((sorted.length - firstNonzero) >> 1)]!;
  return { limit, knee: median > 0 ? Math.min(median, limit) : limit, max };
}

/** Position of v on the ramp, -1 .. 1 (0 = centre); saturates beyond +-limit. NaN gives NaN. */
export function scalePosition(v: number, s: ValueScale): number {
  if (!(s.limit > 0)) return v !== v ? NaN : 0;
  const t = Math.asinh(Math.abs(v) / s.knee) / Math.asinh(s.limit / s.knee);
  return Math.sign(v) * Math.min(1, t);
}
