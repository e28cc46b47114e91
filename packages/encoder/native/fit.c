/* Hot loops of the leaf fits (src/fit/kernels.ts), as WebAssembly SIMD: each vector lane is one
   candidate (a start of the joint search, a polish pair) and runs over the weights in index order,
   so every lane's sums are the numbers the JavaScript loops compute (same operations, same order;
   -ffp-contract=off, and wasm has no fused multiply-add), two candidates per instruction.
   Build: node scripts/build-wasm.mjs (writes src/fit/wasm-bytes.generated.ts). */
#include <wasm_simd128.h>

#define MAX_LEAF 4096
#define MAX_STARTS 16
#define MAX_PAIRS 8
/* elements between the polish's early-exit checks (src/fit/polish.ts CHUNK) */
#define CHUNK 64

double fit_values[MAX_LEAF];
/* the starts (scale, bias) and, per start, sum q, sum q^2, sum q w over the ranked weights */
double start_scale[MAX_STARTS + 1];
double start_bias[MAX_STARTS + 1];
double start_sums[3 * (MAX_STARTS + 1)];
/* polish pairs (scale, bias values) and their errors */
double pair_scale[MAX_PAIRS + 1];
double pair_bias[MAX_PAIRS + 1];
double pair_error[MAX_PAIRS + 1];

/* fround of both lanes: f32x4.demote_f64x2_zero then f64x2.promote_low_f32x4 (the empty asm keeps
   clang 14 from folding the pair into two scalar lanes: 8 instructions in V8 instead of 2) */
static inline v128_t fround2(v128_t x) {
  v128_t t = wasm_f32x4_demote_f64x2_zero(x);
  __asm__("" : "+r"(t));
  return wasm_f64x2_promote_low_f32x4(t);
}

/* The starts' ranking, the polish pairs and the FP4 / T158 passes: native/code_passes.h, in this
   translation unit so that the one wasm module holds every kernel. */
#include "code_passes.h"

/* the macroblock (64 x 64, row-major) whose nodes load_node copies into fit_values */
double block_values[MAX_LEAF];
/* load_node's sum, sum of squares, min, max, sum |w - mean| and max |w - mean| of the node */
double node_stats[6];

/* Copies the size x size node at (y, x) of block_values into fit_values (row-major); with stats,
   its sums as src/quadtree.ts and src/fit/joint.ts leafSpread add them: sum w and sum w^2 weight
   by weight in index order, then mean = sum / n and sum |w - mean| in index order. size >= 4. */
void load_node(int y, int x, int size, int stats) {
  const int n = size * size;
  /* stats 2 (fit_node): the sum |w - mean| left to node_abs_dev (NaN here: only a T158 fit reads it), and
     max |w - mean| from the ends: w - mean rounds monotonically in w, so its largest magnitude is at the
     least or the largest weight (the same number the loop below finds) */
  v128_t acc = wasm_f64x2_splat(0.0);
  v128_t mn = wasm_f64x2_splat(__builtin_inf()), mx = wasm_f64x2_splat(-__builtin_inf());
  for (int i = 0; i < size; i++) {
    const double *row = &block_values[(y + i) * 64 + x];
    double *dst = &fit_values[i * size];
    if (!stats) {
      for (int j = 0; j < size; j += 2) wasm_v128_store(&dst[j], wasm_v128_load(&row[j]));
      continue;
    }
    for (int j = 0; j < size; j += 2) {
      v128_t w = wasm_v128_load(&row[j]);
      wasm_v128_store(&dst[j], w);
      acc = add_ordered(acc, w, wasm_f64x2_mul(w, w));
      mn = wasm_f64x2_pmin(mn, w);
      mx = wasm_f64x2_pmax(mx, w);
    }
  }
  if (!stats) return;
  const double sv = wasm_f64x2_extract_lane(acc, 0);
  const double mean = sv / n;
  if (stats == 2) {
    double mn0 = wasm_f64x2_extract_lane(mn, 0), mn1 = wasm_f64x2_extract_lane(mn, 1);
    double mx0 = wasm_f64x2_extract_lane(mx, 0), mx1 = wasm_f64x2_extract_lane(mx, 1);
    const double lo = mn1 < mn0 ? mn1 : mn0, hi = mx1 > mx0 ? mx1 : mx0;
    const double a0 = __builtin_fabs(lo - mean), a1 = __builtin_fabs(hi - mean);
    node_stats[0] = sv;
    node_stats[1] = wasm_f64x2_extract_lane(acc, 1);
    node_stats[2] = lo;
    node_stats[3] = hi;
    node_stats[4] = __builtin_nan("");
    node_stats[5] = a1 > a0 ? a1 : a0;
    return;
  }
  const v128_t vm = wasm_f64x2_splat(mean);
  v128_t dev = wasm_f64x2_splat(0.0), amax = dev;
  for (int i = 0; i < n; i += 2) {
    v128_t a = wasm_f64x2_abs(wasm_f64x2_sub(wasm_v128_load(&fit_values[i]), vm));
    dev = add_ordered(dev, a, a);
    amax = wasm_f64x2_pmax(amax, a);
  }
  double mn0 = wasm_f64x2_extract_lane(mn, 0), mn1 = wasm_f64x2_extract_lane(mn, 1);
  double mx0 = wasm_f64x2_extract_lane(mx, 0), mx1 = wasm_f64x2_extract_lane(mx, 1);
  double a0 = wasm_f64x2_extract_lane(amax, 0), a1 = wasm_f64x2_extract_lane(amax, 1);
  node_stats[0] = sv;
  node_stats[1] = wasm_f64x2_extract_lane(acc, 1);
  node_stats[2] = mn1 < mn0 ? mn1 : mn0;
  node_stats[3] = mx1 > mx0 ? mx1 : mx0;
  node_stats[4] = wasm_f64x2_extract_lane(dev, 0);
  node_stats[5] = a1 > a0 ? a1 : a0;
}

/* load_node's sum |w - mean| (node_stats[4]) of the node in fit_values, mean = node_stats[0] / n: the same
   operations in the same order */
double node_abs_dev(int n) {
  const v128_t vm = wasm_f64x2_splat(node_stats[0] / n);
  v128_t dev = wasm_f64x2_splat(0.0);
  for (int i = 0; i < n; i += 2) {
    v128_t a = wasm_f64x2_abs(wasm_f64x2_sub(wasm_v128_load(&fit_values[i]), vm));
    dev = add_ordered(dev, a, a);
  }
  return node_stats[4] = wasm_f64x2_extract_lane(dev, 0);
}

/* src/fit/t158-bound.ts t158SseLowerBound, the same operations in the same order (the split loop's
   d for two splits per vector; the least of them is the same number in any order) */
signed char bound_codes[MAX_LEAF];
static double bound_pn[17], bound_ps[17], bound_pss[17];
/* t158_bound's high group per split: n and sum (two past the last split: NaN padding) */
static double bound_hn[18], bound_hs[18];

#define SUM_SLACK 1e-9
#define LEVEL_SLACK (1.0 / 1048576.0)

static double t158_bound_of(const signed char *codes, int n, double S, double B, double sseF) {
  if (!(S > 0) || !(sseF < __builtin_inf())) return 0;
  int count[32];
  for (int q = 0; q < 32; q++) count[q] = 0;
  int i = 0;
  for (; i + 1 < n; i += 2) {
    count[codes[i] + 8]++;
    count[codes[i + 1] + 24]++;
  }
  if (i < n) count[codes[i] + 8]++;
  double *pn = bound_pn, *ps = bound_ps, *pss = bound_pss;
  int m = 0;
  double maxAbs = 0, lo = __builtin_inf(), hi = -__builtin_inf();
  pn[0] = 0;
  ps[0] = 0;
  pss[0] = 0;
  for (int q = 0; q < 16; q++) {
    double c = count[q] + count[q + 16];
    if (c == 0) continue;
    double w = (double)(float)(S * (double)(q - 8) + B);
    double p = w - B;
    pn[m + 1] = pn[m] + c;
    ps[m + 1] = ps[m] + c * p;
    pss[m + 1] = pss[m] + c * p * p;
    m++;
    double aw = __builtin_fabs(w);
    if (aw > maxAbs) maxAbs = aw;
    if (w < lo) lo = w;
    if (w > hi) hi = w;
  }
  const double N = pn[m], SY = ps[m], SYY = pss[m];
  const double total = SYY - (SY * SY) / N;
  /* d = total - x, x = num^2 / (N den) >= 0 for a split with den > 0; the subtraction is monotone,
     so the least d (d3, from total: every point in the middle group) is total - (the largest x),
     and a split without den > 0 may count as x = 0. (nl = nh = 0, skipped by the JavaScript
     loop, has den = 0.) The high group's n and sum of each split j (N - pn[j], SY - ps[j], as the
     loop computes them) are made once; past m, NaN (den NaN: not > 0). */
  double *hn = bound_hn, *hs = bound_hs;
  for (int j = 0; j <= m; j++) {
    hn[j] = N - pn[j];
    hs[j] = SY - ps[j];
  }
  hn[m + 1] = __builtin_nan("");
  hs[m + 1] = __builtin_nan("");
  const v128_t vN = wasm_f64x2_splat(N), vSY = wasm_f64x2_splat(SY), zero = wasm_f64x2_splat(0.0);
  v128_t xmax = zero;
  for (int a = 0; a <= m; a++) {
    const v128_t nl = wasm_f64x2_splat(pn[a]), sl = wasm_f64x2_splat(ps[a]);
    for (int j = a; j <= m; j += 2) {
      /* splits j and j + 1 (j + 1 past m: NaN) */
      v128_t nh = wasm_v128_load(&hn[j]), sh = wasm_v128_load(&hs[j]);
      v128_t sx = wasm_f64x2_sub(nh, nl);
      v128_t den = wasm_f64x2_sub(wasm_f64x2_mul(vN, wasm_f64x2_add(nh, nl)), wasm_f64x2_mul(sx, sx));
      v128_t num = wasm_f64x2_sub(wasm_f64x2_mul(vN, wasm_f64x2_sub(sh, sl)), wasm_f64x2_mul(sx, vSY));
      v128_t x = wasm_f64x2_div(wasm_f64x2_mul(num, num), wasm_f64x2_mul(vN, den));
      x = wasm_v128_and(x, wasm_f64x2_gt(den, zero));
      /* pmax: xmax < x ? x : xmax (a NaN x, were there one, is skipped as d < d3 skips a NaN d) */
      xmax = wasm_f64x2_pmax(xmax, x);
    }
  }
  double x0 = wasm_f64x2_extract_lane(xmax, 0), x1 = wasm_f64x2_extract_lane(xmax, 1);
  const double best = total - (x1 > x0 ? x1 : x0);
  const double d3Low = best - SUM_SLACK * SYY;
  if (!(d3Low > 0)) return 0;
  const double rootN = __builtin_sqrt((double)n);
  const double magnitude = maxAbs + __builtin_sqrt(sseF) + rootN * (hi - lo);
  const double root = __builtin_sqrt(d3Low) - __builtin_sqrt(sseF) * (1 + SUM_SLACK) - rootN * LEVEL_SLACK * magnitude;
  return root > 0 ? root * root * (1 - SUM_SLACK) : 0;
}

double t158_bound(int n, double S, double B, double sseF) {
  return t158_bound_of(bound_codes, n, S, B, sseF);
}

/* The FP16 roundings, joint_fit and polish_stored: native/joint_fit.h (one wasm module). */
#include "joint_fit.h"

/* The leaf's LWE (leaf_lwe, leaf_lwe_at): native/leaf_lwe.h (one wasm module). */
#include "leaf_lwe.h"

/* ---- src/quadtree.ts MacroblockFitter.fitOrBound's node fit under the rd policy's lazy fits (src/fit/leaf.ts
   fitLeafCandidates with a finite t158Gap, the joint search with refit), its FP4 part whole: the node's copy
   and statistics (load_node), jointCandidate's FP4 starts and ranking sample (src/fit/joint.ts, the same
   operations), joint_fit, and t158SseLowerBound of its result (fit_result[9]). Returns 0 where the leaf is
   flat (jointCandidate's `flat`, no start) or joint_fit ranked no start: the caller then goes on as before
   from the loaded node (values and node_stats). */

static int ranking_stride(int n) {
  return n >= 4096 ? 13 : n >= 1024 ? 5 : 1;
}

static int add_start(int k, double S, double B) {
  if (!(S > 0)) return k;
  start_scale[k] = S;
  start_bias[k] = B;
  return k + 1;
}

static const double RANGE_STEPS_SMALL[5] = {-1, -0.5, 0, 0.5, 1};
static const double RANGE_STEPS_LARGE[5] = {0, 0.5, 1, 1.5, 2.5};

int fit_node(int y, int x, int size, int v2, int maxIterations) {
  const int n = size * size;
  load_node(y, x, size, 2);
  const double sv = node_stats[0], svv = node_stats[1], min = node_stats[2], max = node_stats[3], absMax = node_stats[5];
  const double mean = sv / n;
  if (!(max > min) || !(max - min < __builtin_inf())) return 0;
  const int large = n >= 256;
  const double *steps = large ? RANGE_STEPS_LARGE : RANGE_STEPS_SMALL;
  int k = 0;
  for (int i = 0; i < 5; i++) {
    const double S = (max - min) / (15 + steps[i]);
    k = add_start(k, S, min + 8 * S);
  }
  if (large) k = add_start(k, (absMax / 7) * 0.7, mean);
  k = add_start(k, (absMax / 7) * 0.85, mean);
  const double S = (absMax / 7) * 0.85;
  k = add_start(k, S, mean + 0.5 * S);
  k = add_start(k, S, mean - 0.5 * S);
  const int stride = v2 ? ranking_stride(n) : 1;
  double rn = n, rsv = sv, rsvv = svv;
  if (stride > 1) {
    rn = 0;
    rsv = 0;
    rsvv = 0;
    for (int i = 0; i < n; i += stride, rn++) {
      const double w = fit_values[i];
      rsv += w;
      rsvv += w * w;
    }
  }
  joint_fit(n, stride, k, 1, v2, maxIterations, sv, rn, rsv, rsvv);
  if (!fit_result[8]) return 0;
  fit_result[9] = t158_bound_of(round_codes[(int)fit_result[7]], n, half_value((int)fit_result[0]), half_value((int)fit_result[1]), fit_result[2]);
  return 1;
}

/* The tensor-level passes (power sums, the tile row's copies and sums): native/tensor_passes.h,
   in this translation unit so that the one wasm module holds every kernel. */
#include "tensor_passes.h"
