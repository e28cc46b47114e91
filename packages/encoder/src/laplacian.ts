/**
 * Laplacian-weighted error of a square error tile (size n = 4..64, a power of two).
 *
 * Pyramid (Haar / box filter): L_0 = e; L_{k+1}[i][j] = mean of the 2x2 cell (2i..2i+1, 2j..2j+1)
 * of L_k; band k is D_k = L_k - up(L_{k+1}) with nearest-neighbour upsampling, for
 * k = 0 .. K-1 where K = log2(n); L_K is the 1x1 low-pass residual (the tile's mean error).
 *
 *   LWE(e) = sum_k BAND_WEIGHTS[k] * mean(D_k^2) + LOWPASS_WEIGHT * L_K^2
 *
 * mean(D_k^2) is over the (n / 2^k)^2 samples of level k. Because the bands are orthogonal,
 * with every weight 1 this is exactly the mean squared error; the weights grow with the
 * band's spatial scale (2^k pixels) and the low-pass residual (a uniform offset over the whole
 * tile, what an error in the bias does) has the largest weight. Level k means the same spatial
 * scale in every tile size; the low-pass residual is the mean over the whole tile.
 */
export const LAPLACIAN_BAND_WEIGHTS: readonly number[] = [1, 1.25, 1.5, 1.75, 2, 2.25];
export const LAPLACIAN_LOWPASS_WEIGHT = 4;

/** Scratch for the pyramid (levels up to 32x32 below a 64x64 tile). */
const scratchA = new Float64Array(32 * 32);
const scratchB = new Float64Array(16 * 16);

/** Weighted error of `e` (row-major n x n, n a power of two in 1..64). Allocation-free. */
export function laplacianWeightedError(e: ArrayLike<number>, n: number): number {
  let total = 0;
  let cur: ArrayLike<number> = e;
  let k = 0;
  let next = scratchA;
  while (n > 1) {
    const m = n >> 1;
    // low-pass of the next level
    for (let i = 0; i < m; i++) {
      const r0 = 2 * i * n;
      const r1 = r0 + n;
      for (let j = 0; j < m; j++) {
        const c = 2 * j;
        next[i * m + j] = (cur[r0 + c]! + cur[r0 + c + 1]! + cur[r1 + c]! + cur[r1 + c + 1]!) * 0.25;
      }
    }
    // band energy: D_k = L_k - up(L_{k+1})
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const row = i * n;
      const lrow = (i >> 1) * m;
      for (let j = 0; j < n; j++) {
        const d = cur[row + j]! - next[lrow + (j >> 1)]!;
        sum += d * d;
      }
    }
    total += LAPLACIAN_BAND_WEIGHTS[k]! * (sum / (n * n));
    cur = next;
    next = next === scratchA ? scratchB : scratchA;
    // the next level is at most 16x16 once cur is scratchA (32x32), so the swap never overlaps
    n = m;
    k++;
  }
  const low = cur[0]!;
  return total + LAPLACIAN_LOWPASS_WEIGHT * low * low;
}
