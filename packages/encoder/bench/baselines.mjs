// Baseline quantizers for the quality benchmark, written from their published definitions
// (ggml's reference quantizers quantize_row_q4_0_ref, quantize_row_q4_1_ref,
// quantize_row_q4_K_ref and make_qkx2_quants, and plain per-group affine 4/3/2-bit codes), so
// that the encoder's SNR is compared with them on the same inputs in the same run.
// Blocks run over a tensor's row-major values: along each row when the row length is a multiple
// of the block (as ggml quantizes rows), across rows otherwise (so that every baseline stays at
// its nominal bits per weight on real shapes); a short last block is fitted on the values it
// has and costs a whole block's bits.
import { floatToHalf, halfToFloat } from "@sgfp4/format";

/** The value stored as IEEE half (round to nearest even from float32, as GGML_FP32_TO_FP16). */
export const fp16 = (x) => halfToFloat(floatToHalf(x));
const f32 = Math.fround;

/** ggml's nearest_int: round to nearest, ties to even (the float magic-number trick). */
export function nearestInt(x) {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * ggml make_qkx2_quants: an affine fit `x ~ scale * L + min` (min <= 0, L in 0..nmax) by trying
 * nstep+1 inverse scales `(rmin + rdelta*is + nmax) / (max - min)`, each followed by a weighted
 * least-squares (scale, min) for its codes; the least weighted squared error wins (the min-max
 * fit first). Returns { scale, min } (ggml returns -min as `the_min`).
 */
export function makeQkx2(x, weights, nmax, rmin = -1, rdelta = 0.1, nstep = 20) {
  const n = x.length;
  let min = x[0];
  let max = x[0];
  let sumW = weights[0];
  let sumX = sumW * x[0];
  for (let i = 1; i < n; i++) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    sumW += weights[i];
    sumX += weights[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max === min) return { scale: 0, min };
  let iscale = nmax / (max - min);
  let scale = 1 / iscale;
  let best = 0;
  for (let i = 0; i < n; i++) {
    const l = Math.max(0, Math.min(nmax, nearestInt(iscale * (x[i] - min))));
    const diff = scale * l + min - x[i];
    best += weights[i] * diff * diff;
  }
  const laux = new Uint8Array(n);
  for (let is = 0; is <= nstep; is++) {
    iscale = (rmin + rdelta * is + nmax) / (max - min);
    let sumL = 0, sumL2 = 0, sumXL = 0;
    for (let i = 0; i < n; i++) {
      const l = Math.max(0, Math.min(nmax, nearestInt(iscale * (x[i] - min))));
      laux[i] = l;
      sumL += weights[i] * l;
      sumL2 += weights[i] * l * l;
      sumXL += weights[i] * l * x[i];
    }
    const D = sumW * sumL2 - sumL * sumL;
    if (D <= 0) continue;
    let thisScale = (sumW * sumXL - sumX * sumL) / D;
    let thisMin = (sumL2 * sumX - sumL * sumXL) / D;
    if (thisMin > 0) {
      thisMin = 0;
      thisScale = sumXL / sumL2;
    }
    let err = 0;
    for (let i = 0; i < n; i++) {
      const diff = thisScale * laux[i] + thisMin - x[i];
      err += weights[i] * diff * diff;
    }
    if (err < best) {
      best = err;
      scale = thisScale;
      min = thisMin;
    }
  }
  return { scale, min };
}

/** Codes `clip(nearest((x - min) / d), 0, nmax)` for the stored d and min, written decoded into out. */
function affineCodes(x, d, min, nmax, out) {
  const id = d ? 1 / d : 0;
  for (let i = 0; i < x.length; i++) out[i] = f32(d * Math.max(0, Math.min(nmax, nearestInt((x[i] - min) * id))) + min);
}

/** ggml Q4_0: blocks of 32, one FP16 scale d = (the value of largest magnitude) / -8; codes 0..15 mean (q - 8) * d. */
export const Q4_0 = {
  name: "ggml Q4_0",
  block: 32,
  blockBits: 16 + 32 * 4,
  encodeBlock(x, out) {
    let amax = 0;
    let max = 0;
    for (const v of x) if (Math.abs(v) > amax) { amax = Math.abs(v); max = v; }
    const d = f32(max / -8);
    const id = d ? 1 / d : 0; // in double: ggml's float 1/d overflows for subnormal d (pruned weights), giving NaN codes
    const dq = fp16(d);
    for (let i = 0; i < x.length; i++) out[i] = f32((Math.min(15, Math.trunc(f32(f32(x[i] * id) + 8.5))) - 8) * dq);
  },
};

/** ggml Q4_1: blocks of 32, FP16 d = (max - min) / 15 and FP16 m = min; codes 0..15 mean q * d + m. */
export const Q4_1 = {
  name: "ggml Q4_1",
  block: 32,
  blockBits: 2 * 16 + 32 * 4,
  encodeBlock(x, out) {
    let min = Infinity, max = -Infinity;
    for (const v of x) { if (v < min) min = v; if (v > max) max = v; }
    const d = f32((max - min) / 15);
    const id = d ? 1 / d : 0; // in double, as in Q4_0
    const dq = fp16(d), mq = fp16(min);
    for (let i = 0; i < x.length; i++) out[i] = f32(Math.min(15, Math.trunc(f32(f32((x[i] - min) * id) + 0.5))) * dq + mq);
  },
};

/**
 * ggml Q4_K: super-blocks of 256 = 8 sub-blocks of 32; FP16 d and dmin per super-block, 6-bit
 * scale and min per sub-block (fitted by make_qkx2_quants with weights av_x + |x|, then
 * quantized against the largest), 4-bit codes: q * d * sc - dmin * m. 144 bytes per 256 weights.
 */
export const Q4_K = {
  name: "ggml Q4_K",
  block: 256,
  blockBits: 2 * 16 + 8 * (6 + 6) + 256 * 4,
  encodeBlock(x, out) {
    const subs = [];
    for (let j = 0; j * 32 < x.length; j++) {
      const xs = x.subarray(32 * j, 32 * j + 32);
      let sumX2 = 0;
      for (const v of xs) sumX2 += v * v;
      const avX = Math.sqrt(sumX2 / xs.length);
      const { scale, min } = makeQkx2(xs, Array.from(xs, (v) => avX + Math.abs(v)), 15);
      subs.push({ xs, scale, min: -min });
    }
    const maxScale = Math.max(0, ...subs.map((s) => s.scale));
    const maxMin = Math.max(0, ...subs.map((s) => s.min));
    const invScale = maxScale > 0 ? 63 / maxScale : 0;
    const invMin = maxMin > 0 ? 63 / maxMin : 0;
    const d = fp16(maxScale / 63);
    const dmin = fp16(maxMin / 63);
    subs.forEach(({ xs, scale, min }, j) => {
      const sc = Math.min(63, nearestInt(invScale * scale));
      const m = Math.min(63, nearestInt(invMin * min));
      const dj = f32(d * sc);
      const dm = f32(dmin * m);
      // a sub-block whose scale is 0 decodes to -dm whatever its codes
      if (!dj) out.fill(-dm, 32 * j, 32 * j + xs.length);
      else affineCodes(xs, dj, -dm, 15, out.subarray(32 * j, 32 * j + xs.length));
    });
  },
};

/** b-bit groups of g: FP16 scale (max - min) / (2^b - 1) and FP16 min, codes rounded to nearest. */
export function groupMinMax(bits, group) {
  const nmax = (1 << bits) - 1;
  return {
    name: `${bits}-bit g${group} min-max`,
    block: group,
    blockBits: 2 * 16 + group * bits,
    encodeBlock(x, out) {
      let min = Infinity, max = -Infinity;
      for (const v of x) { if (v < min) min = v; if (v > max) max = v; }
      affineCodes(x, fp16((max - min) / nmax), fp16(min), nmax, out);
    },
  };
}

/** b-bit groups of g: FP16 scale and min searched by make_qkx2_quants (unweighted: MSE), codes reassigned for the stored values. */
export function groupSearched(bits, group) {
  const nmax = (1 << bits) - 1;
  return {
    name: `${bits}-bit g${group} searched`,
    block: group,
    blockBits: 2 * 16 + group * bits,
    encodeBlock(x, out) {
      const { scale, min } = makeQkx2(x, new Float32Array(x.length).fill(1), nmax);
      affineCodes(x, fp16(scale), fp16(min), nmax, out);
    },
  };
}

/** Every baseline of the benchmark, in table order. */
export const BASELINES = [
  Q4_0,
  Q4_1,
  Q4_K,
  ...[32, 64, 128].map((g) => groupMinMax(4, g)),
  ...[32, 64, 128].map((g) => groupSearched(4, g)),
  ...[32, 64, 128].map((g) => groupSearched(3, g)),
  ...[32, 64, 128].map((g) => groupSearched(2, g)),
];

/** A tensor's row-major values through one baseline: the decoded values and the storage size in bits. */
export function quantize(baseline, data) {
  const decoded = new Float32Array(data.length);
  for (let c = 0; c < data.length; c += baseline.block) {
    const end = Math.min(data.length, c + baseline.block);
    baseline.encodeBlock(data.subarray(c, end), decoded.subarray(c, end));
  }
  return { decoded, bits: Math.ceil(data.length / baseline.block) * baseline.blockBits };
}
