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

static void pad(double *s, double *b, int k) {
  if (k & 1) {
    s[k] = s[k - 1];
    b[k] = b[k - 1];
  }
}

static void store_sums(int s, v128_t sq, v128_t sqq, v128_t sqv) {
  double *o = &start_sums[3 * s];
  o[0] = wasm_f64x2_extract_lane(sq, 0);
  o[1] = wasm_f64x2_extract_lane(sqq, 0);
  o[2] = wasm_f64x2_extract_lane(sqv, 0);
  o[3] = wasm_f64x2_extract_lane(sq, 1);
  o[4] = wasm_f64x2_extract_lane(sqq, 1);
  o[5] = wasm_f64x2_extract_lane(sqv, 1);
}

/* FP4 nearest codes of the k starts over fit_values[0], [stride], ... below len: per start
   q = clamp(floor(y) + (y - floor(y) >= 0.5), -8, 7), y = (w - B) * (1 / S) (src/fit/joint.ts) */
void rank_fp4(int len, int stride, int k) {
  const v128_t half = wasm_f64x2_splat(0.5), one = wasm_f64x2_splat(1.0), lo = wasm_f64x2_splat(-8.0), hi = wasm_f64x2_splat(7.0);
  pad(start_scale, start_bias, k);
  for (int s = 0; s < k; s += 2) {
    v128_t B = wasm_v128_load(&start_bias[s]);
    v128_t inv = wasm_f64x2_div(one, wasm_v128_load(&start_scale[s]));
    v128_t sq = wasm_f64x2_splat(0.0), sqq = sq, sqv = sq;
    for (int i = 0; i < len; i += stride) {
      v128_t w = wasm_f64x2_splat(fit_values[i]);
      v128_t y = wasm_f64x2_mul(wasm_f64x2_sub(w, B), inv);
      v128_t f = wasm_f64x2_floor(y);
      v128_t q = wasm_f64x2_add(f, wasm_v128_and(wasm_f64x2_ge(wasm_f64x2_sub(y, f), half), one));
      q = wasm_f64x2_pmax(wasm_f64x2_pmin(q, hi), lo);
      sq = wasm_f64x2_add(sq, q);
      sqq = wasm_f64x2_add(sqq, wasm_f64x2_mul(q, q));
      sqv = wasm_f64x2_add(sqv, wasm_f64x2_mul(q, w));
    }
    store_sums(s, sq, sqq, sqv);
  }
}

/* T158 codes of the k starts: q = (c > tau) - (c < -tau), c = w - B, tau = 0.5 S */
void rank_t158(int len, int stride, int k) {
  const v128_t one = wasm_f64x2_splat(1.0);
  pad(start_scale, start_bias, k);
  for (int s = 0; s < k; s += 2) {
    v128_t B = wasm_v128_load(&start_bias[s]);
    v128_t tau = wasm_f64x2_mul(wasm_f64x2_splat(0.5), wasm_v128_load(&start_scale[s]));
    v128_t ntau = wasm_f64x2_neg(tau);
    v128_t sq = wasm_f64x2_splat(0.0), sqq = sq, sqv = sq;
    for (int i = 0; i < len; i += stride) {
      v128_t w = wasm_f64x2_splat(fit_values[i]);
      v128_t c = wasm_f64x2_sub(w, B);
      v128_t q = wasm_f64x2_sub(wasm_v128_and(wasm_f64x2_gt(c, tau), one), wasm_v128_and(wasm_f64x2_lt(c, ntau), one));
      sq = wasm_f64x2_add(sq, q);
      sqq = wasm_f64x2_add(sqq, wasm_f64x2_mul(q, q));
      sqv = wasm_f64x2_add(sqv, wasm_f64x2_mul(q, w));
    }
    store_sums(s, sq, sqq, sqv);
  }
}

/* The exact FP4 decode error of each pair (nearest codes, decoded fround(S q + B)), summed in index
   order; a pair whose partial error reaches stop_at may stop there (src/fit/polish.ts). */
void polish_fp4(int n, int count, double stop_at) {
  const v128_t half = wasm_f64x2_splat(0.5), one = wasm_f64x2_splat(1.0), lo = wasm_f64x2_splat(-8.0), hi = wasm_f64x2_splat(7.0);
  const v128_t stop = wasm_f64x2_splat(stop_at);
  pad(pair_scale, pair_bias, count);
  for (int p = 0; p < count; p += 2) {
    v128_t S = wasm_v128_load(&pair_scale[p]);
    v128_t B = wasm_v128_load(&pair_bias[p]);
    v128_t inv = wasm_f64x2_div(one, S);
    v128_t e = wasm_f64x2_splat(0.0);
    for (int i0 = 0; i0 < n && wasm_v128_any_true(wasm_f64x2_lt(e, stop)); i0 += CHUNK) {
      int end = i0 + CHUNK < n ? i0 + CHUNK : n;
      for (int i = i0; i < end; i++) {
        v128_t w = wasm_f64x2_splat(fit_values[i]);
        v128_t y = wasm_f64x2_mul(wasm_f64x2_sub(w, B), inv);
        v128_t f = wasm_f64x2_floor(y);
        v128_t q = wasm_f64x2_add(f, wasm_v128_and(wasm_f64x2_ge(wasm_f64x2_sub(y, f), half), one));
        q = wasm_f64x2_pmax(wasm_f64x2_pmin(q, hi), lo);
        v128_t d = fround2(wasm_f64x2_add(wasm_f64x2_mul(S, q), B));
        v128_t r = wasm_f64x2_sub(w, d);
        e = wasm_f64x2_add(e, wasm_f64x2_mul(r, r));
      }
    }
    pair_error[p] = wasm_f64x2_extract_lane(e, 0);
    pair_error[p + 1] = wasm_f64x2_extract_lane(e, 1);
  }
}

/* one pass's codes and sums (src/fit/codes.ts assignFp4 / assignT158) */
signed char pass_codes[MAX_LEAF];
/* sse, max |e|, sum q, sum q^2, sum q w */
double pass_sums[5];

/* [x0, x1], [y0, y1] -> acc + [x0, y0] + [x1, y1], each lane's two additions in index order */
static inline v128_t add_ordered(v128_t acc, v128_t x, v128_t y) {
  acc = wasm_f64x2_add(acc, wasm_i64x2_shuffle(x, y, 0, 2));
  return wasm_f64x2_add(acc, wasm_i64x2_shuffle(x, y, 1, 3));
}

/* the codes (integers in [-8, 7]) of two weights as bytes: q + 1.5 * 2^52 holds q in its low bits */
static inline void store_codes(signed char *out, int i, v128_t q) {
  v128_t bits = wasm_f64x2_add(q, wasm_f64x2_splat(6755399441055744.0));
  /* two byte stores (pextrb): the shuffle's mask was rebuilt in every iteration by V8 */
  wasm_v128_store8_lane(&out[i], bits, 0);
  wasm_v128_store8_lane(&out[i + 1], bits, 8);
}

/* the codes of eight weights (four vectors, in order) as bytes: each q + 1.5 * 2^52 holds q in its low
   32 bits; those packed to 16 then 8 bits (no saturation: q is in [-8, 7]), one 8-byte store */
static inline void store_codes8(signed char *out, int i, v128_t q0, v128_t q1, v128_t q2, v128_t q3) {
  const v128_t m = wasm_f64x2_splat(6755399441055744.0);
  const v128_t a = wasm_i32x4_shuffle(wasm_f64x2_add(q0, m), wasm_f64x2_add(q1, m), 0, 2, 4, 6);
  const v128_t b = wasm_i32x4_shuffle(wasm_f64x2_add(q2, m), wasm_f64x2_add(q3, m), 0, 2, 4, 6);
  const v128_t h = wasm_i16x8_narrow_i32x4(a, b);
  wasm_v128_store64_lane(&out[i], wasm_i8x16_narrow_i16x8(h, h), 0);
}

/* sum q and sum q^2 of the codes c[0 .. len): integer sums (exact, so any order gives the loops'
   numbers), four lanes of 16 codes at a time */
static void code_sums(const signed char *c, int len, double *sq, double *sqq) {
  v128_t s = wasm_i32x4_splat(0), ss = s;
  int i = 0;
  for (; i + 16 <= len; i += 16) {
    const v128_t v = wasm_v128_load(&c[i]);
    const v128_t lo = wasm_i16x8_extend_low_i8x16(v), hi = wasm_i16x8_extend_high_i8x16(v);
    ss = wasm_i32x4_add(ss, wasm_i32x4_add(wasm_i32x4_dot_i16x8(lo, lo), wasm_i32x4_dot_i16x8(hi, hi)));
    s = wasm_i32x4_add(s, wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_add(lo, hi)));
  }
  int a = wasm_i32x4_extract_lane(s, 0) + wasm_i32x4_extract_lane(s, 1) + wasm_i32x4_extract_lane(s, 2) + wasm_i32x4_extract_lane(s, 3);
  int b = wasm_i32x4_extract_lane(ss, 0) + wasm_i32x4_extract_lane(ss, 1) + wasm_i32x4_extract_lane(ss, 2) + wasm_i32x4_extract_lane(ss, 3);
  for (; i < len; i++) {
    a += c[i];
    b += c[i] * c[i];
  }
  *sq = a;
  *sqq = b;
}

/* the pass's sums: acc = (sse, sum q w), max |e| as the largest e and the least (maxv, minv: both
   from 0, so the result is max |e| exactly), sum q and sum q^2 of the codes out[0 .. len) */
static void finish_pass(v128_t acc, v128_t maxv, v128_t minv, const signed char *out, int len) {
  double m0 = wasm_f64x2_extract_lane(maxv, 0), m1 = wasm_f64x2_extract_lane(maxv, 1);
  double n0 = wasm_f64x2_extract_lane(minv, 0), n1 = wasm_f64x2_extract_lane(minv, 1);
  const double mx = m1 > m0 ? m1 : m0, mn = n1 < n0 ? n1 : n0;
  pass_sums[0] = wasm_f64x2_extract_lane(acc, 0);
  pass_sums[1] = -mn > mx ? -mn : mx;
  code_sums(out, len, &pass_sums[2], &pass_sums[3]);
  pass_sums[4] = wasm_f64x2_extract_lane(acc, 1);
}

/* A pass step's sums for weights w decoded as d from codes q: sse and sum q w in index order,
 * and the error's extremes. */
#define ADD_ERROR(w, d, q)                                                                              \
  do {                                                                                                  \
    v128_t e_ = wasm_f64x2_sub(w, d);                                                                   \
    acc = add_ordered(acc, wasm_f64x2_mul(e_, e_), wasm_f64x2_mul(q, w));                               \
    maxv = wasm_f64x2_pmax(maxv, e_);                                                                   \
    minv = wasm_f64x2_pmin(minv, e_);                                                                   \
  } while (0)

/* The body of a pass over n weights: STEP(i, q) handles weights i, i + 1 (one f64x2 of each
 * sum), codes stored eight at a time; it stops between chunks once the error sum reaches stop_at.
 * One macro for both modes so that the two passes stay the same loop. */
#define RUN_PASS(STEP)                                                                                  \
  int i0 = 0;                                                                                           \
  for (; i0 < n && wasm_f64x2_extract_lane(acc, 0) < stop_at; i0 += CHUNK) {                            \
    int end = i0 + CHUNK < n ? i0 + CHUNK : n;                                                          \
    int i = i0;                                                                                         \
    for (; i + 8 <= end; i += 8) {                                                                      \
      v128_t q0, q1, q2, q3;                                                                            \
      STEP(i, q0);                                                                                      \
      STEP(i + 2, q1);                                                                                  \
      STEP(i + 4, q2);                                                                                  \
      STEP(i + 6, q3);                                                                                  \
      store_codes8(out, i, q0, q1, q2, q3);                                                             \
    }                                                                                                   \
    for (; i < end; i += 2) {                                                                           \
      v128_t q;                                                                                         \
      STEP(i, q);                                                                                       \
      store_codes(out, i, q);                                                                           \
    }                                                                                                   \
  }                                                                                                     \
  const int passed = i0 < n ? i0 : n;                                                                   \
  finish_pass(acc, maxv, minv, out, passed);                                                            \
  return passed

/* FP4 pass over fit_values[0 .. n), n even: two weights per vector; sse and sum q w added weight by
   weight in index order (add_ordered); stops at a chunk boundary once sse >= stop_at. Returns the
   weights passed (n unless stopped). */
static int pass_fp4_into(int n, double S, double B, double stop_at, signed char *out) {
  const v128_t half = wasm_f64x2_splat(0.5), one = wasm_f64x2_splat(1.0), lo = wasm_f64x2_splat(-8.0), hi = wasm_f64x2_splat(7.0);
  const v128_t vs = wasm_f64x2_splat(S), vb = wasm_f64x2_splat(B), inv = wasm_f64x2_splat(1.0 / S);
  v128_t acc = wasm_f64x2_splat(0.0), maxv = acc, minv = acc;
  /* weights i, i + 1: their codes into Q, their terms added in order */
#define FP4_STEP(i, Q)                                                                                  \
  do {                                                                                                  \
    v128_t w = wasm_v128_load(&fit_values[i]);                                                          \
    v128_t y = wasm_f64x2_mul(wasm_f64x2_sub(w, vb), inv);                                              \
    v128_t f = wasm_f64x2_floor(y);                                                                     \
    v128_t q = wasm_f64x2_add(f, wasm_v128_and(wasm_f64x2_ge(wasm_f64x2_sub(y, f), half), one));        \
    q = wasm_f64x2_pmax(wasm_f64x2_pmin(q, hi), lo);                                                    \
    v128_t d = fround2(wasm_f64x2_add(wasm_f64x2_mul(vs, q), vb));                                      \
    ADD_ERROR(w, d, q);                                                                                 \
    Q = q;                                                                                              \
  } while (0)
  RUN_PASS(FP4_STEP);
#undef FP4_STEP
}

/* T158 pass: q = (c > tau) - (c < -tau), c = w - B, tau = 0.5 S; decoded fround(B - S), fround(B), fround(S + B) */
static int pass_t158_into(int n, double S, double B, double stop_at, signed char *out) {
  const v128_t one = wasm_f64x2_splat(1.0), vb = wasm_f64x2_splat(B);
  const v128_t tau = wasm_f64x2_splat(S * 0.5), ntau = wasm_f64x2_neg(tau);
  const v128_t dm = wasm_f64x2_splat((double)(float)(B - S)), d0 = wasm_f64x2_splat((double)(float)B), dp = wasm_f64x2_splat((double)(float)(S + B));
  v128_t acc = wasm_f64x2_splat(0.0), maxv = acc, minv = acc;
#define T158_STEP(i, Q)                                                                                 \
  do {                                                                                                  \
    v128_t w = wasm_v128_load(&fit_values[i]);                                                          \
    v128_t c = wasm_f64x2_sub(w, vb);                                                                   \
    v128_t gt = wasm_f64x2_gt(c, tau), lt = wasm_f64x2_lt(c, ntau);                                     \
    v128_t q = wasm_f64x2_sub(wasm_v128_and(gt, one), wasm_v128_and(lt, one));                          \
    v128_t d = wasm_v128_bitselect(dp, wasm_v128_bitselect(dm, d0, lt), gt);                            \
    ADD_ERROR(w, d, q);                                                                                 \
    Q = q;                                                                                              \
  } while (0)
  RUN_PASS(T158_STEP);
#undef T158_STEP
}

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

/* ---- The whole joint fit of one mode (src/fit/joint.ts jointCandidate from its ranking on, and
   src/fit/refit.ts refit): start ranking, the best start's pass, the refit rounds. The FP16
   roundings are src/half.ts's, operation for operation; their rare cases outside the normal
   range call back into JavaScript (nearestHalfBits, halfToFloat). */

__attribute__((import_module("env"), import_name("nearest_half_bits"))) int js_nearest_half_bits(double x, int quantum);
__attribute__((import_module("env"), import_name("half_to_float"))) double js_half_to_float(int bits);

#define HALF_MAX 65504.0
#define MIN_NORMAL_HALF (1.0 / 16384.0)

/* 2^k, k in [-1022, 1023] (exact) */
static inline double pow2(int k) {
  return __builtin_bit_cast(double, (unsigned long long)(k + 1023) << 52);
}
static inline int exponent_of(double a) {
  return (int)((__builtin_bit_cast(unsigned long long, a) >> 52) & 0x7ff) - 1023;
}

static int scale_to_half_bits(double s) {
  if (!(s >= MIN_NORMAL_HALF && s <= HALF_MAX)) return s > 0 ? js_nearest_half_bits(s, 1) : 0;
  const int e = exponent_of(s);
  const double f = s * pow2(10 - e);
  const double floorF = __builtin_floor(f);
  const double frac = f - floorF;
  const double r = frac > 0.5 || (frac == 0.5 && ((int)floorF & 1) == 1) ? floorF + 1 : floorF;
  const int bits = ((e + 15) << 10) + ((int)r - 1024);
  return bits > 0x7bff ? 0x7bff : bits;
}

static int bias_to_half_bits(double b, int v2) {
  const double a = b < 0 ? -b : b;
  if (!(a >= MIN_NORMAL_HALF && a <= HALF_MAX)) return js_nearest_half_bits(b, v2 ? 16 : 1);
  const int e = exponent_of(a);
  const double f = a * pow2((v2 ? 6 : 10) - e);
  const double floorF = __builtin_floor(f);
  const double frac = f - floorF;
  const double r = frac > 0.5 || (frac == 0.5 && ((int)floorF & 1) == 1) ? floorF + 1 : floorF;
  int bits = ((e + 15) << 10) + ((v2 ? (int)r * 16 : (int)r) - 1024);
  const int maxBits = v2 ? 0x7bf0 : 0x7bff;
  if (bits > maxBits) bits = maxBits;
  return b < 0 ? (0x8000 | bits) : bits;
}

static double half_value(int bits) {
  const int exponent = (bits >> 10) & 0x1f;
  if (exponent == 0x1f) return js_half_to_float(bits);
  const int mantissa = bits & 0x3ff;
  const double magnitude = exponent == 0 ? mantissa * pow2(-24) : (1024 + mantissa) * pow2(exponent - 25);
  return bits & 0x8000 ? -magnitude : magnitude;
}

/* src/fit/joint.ts cannotBeat */
static int cannot_beat(double n, double S, double sq, double sqq, double sqv, double sv, double svv, double den, double bestErr) {
  if (!(bestErr < __builtin_inf())) return 0;
  const double asq = sq < 0 ? -sq : sq;
  const double asv = sv < 0 ? -sv : sv;
  const double asqv = sqv < 0 ? -sqv : sqv;
  const double explained = (n * sqv * sqv + 2 * asq * asv * asqv + sqq * sv * sv) / den;
  const double fStar = svv - (n * sqv * sqv - 2 * sq * sv * sqv + sqq * sv * sv) / den;
  const double sMax = S * (1 + 1.0 / 1024) + 1.0 / 16777216;
  const double bMax = ((asv + sMax * asq) / n) * (1 + 1.0 / 64) + 1.0 / 1048576;
  const double terms = svv + 2 * sMax * asqv + 2 * bMax * asv + sMax * sMax * sqq + 2 * sMax * bMax * asq + n * bMax * bMax;
  return fStar - 1e-12 * (svv + explained + terms) >= bestErr;
}

static int ls_scale_bits, ls_bias_bits;

/* src/fit/joint.ts leastSquaresOfSums */
static double least_squares_of_sums(double n, double sq, double sqq, double sqv, double sv, double svv, int v2, double bestErr) {
  const double den = n * sqq - sq * sq;
  if (!(den > 0)) return __builtin_inf();
  const double S = (n * sqv - sq * sv) / den;
  if (!(S > 0)) return __builtin_inf();
  if (cannot_beat(n, S, sq, sqq, sqv, sv, svv, den, bestErr)) return __builtin_inf();
  ls_scale_bits = scale_to_half_bits(S);
  const double s = half_value(ls_scale_bits);
  ls_bias_bits = bias_to_half_bits((sv - s * sq) / n, v2);
  const double b = half_value(ls_bias_bits);
  return svv - 2 * s * sqv - 2 * b * sv + s * s * sqq + 2 * s * b * sq + n * b * b;
}

/* codes of the refit rounds (src/fit/workspace.ts roundCodesA / B) */
signed char round_codes[2][MAX_LEAF];

/* src/fit/codes.ts assignZero: every code 0 */
static void pass_zero(int n, double B, signed char *out) {
  double sse = 0, maxAbs = 0;
  const double w0 = (double)(float)B;
  for (int i = 0; i < n; i++) {
    out[i] = 0;
    const double e = fit_values[i] - w0;
    sse += e * e;
    const double a = __builtin_fabs(e);
    if (a > maxAbs) maxAbs = a;
  }
  pass_sums[0] = sse;
  pass_sums[1] = maxAbs;
  pass_sums[2] = 0;
  pass_sums[3] = 0;
  pass_sums[4] = 0;
}


/* src/fit/codes.ts pass into round_codes[buf] */
static void pass_into(int n, int fp4, int scaleBits, int biasBits, int buf, double stop_at) {
  const double S = half_value(scaleBits), B = half_value(biasBits);
  if (!(S > 0)) pass_zero(n, B, round_codes[buf]);
  else if (fp4) pass_fp4_into(n, S, B, stop_at, round_codes[buf]);
  else pass_t158_into(n, S, B, stop_at, round_codes[buf]);
}

/* joint_fit's result: scale bits, bias bits, sse, max |e|, sum q, sum q^2, sum q w, the codes' buffer
   (0 / 1), and whether any start was ranked finite (0: the caller fits the flat leaf) */
double fit_result[10];

/* jointCandidate after its starts (in start_scale / start_bias) are set: ranking over values[0],
   [stride], ... below n (rn weights whose sum and sum of squares are rsv, rsvv), the best start's
   pass and `refit` (sv: the leaf's index-order sum). n even. */
void joint_fit(int n, int stride, int k, int fp4, int v2, int maxIterations, double sv, double rn, double rsv, double rsvv) {
  if (fp4) rank_fp4(n, stride, k);
  else rank_t158(n, stride, k);
  double bestErr = __builtin_inf();
  int bestScaleBits = 0, bestBiasBits = 0;
  for (int s = 0; s < k; s++) {
    const double err = least_squares_of_sums(rn, start_sums[3 * s], start_sums[3 * s + 1], start_sums[3 * s + 2], rsv, rsvv, v2, bestErr);
    if (err < bestErr) {
      bestErr = err;
      bestScaleBits = ls_scale_bits;
      bestBiasBits = ls_bias_bits;
    }
  }
  if (!(bestErr < __builtin_inf())) {
    fit_result[8] = 0;
    return;
  }
  fit_result[8] = 1;
  const double dn = n;
  pass_into(n, fp4, bestScaleBits, bestBiasBits, 0, __builtin_inf());
  int buf = 0, scaleBits = bestScaleBits, biasBits = bestBiasBits;
  double sse = pass_sums[0], maxAbs = pass_sums[1], sq = pass_sums[2], sqq = pass_sums[3], sqv = pass_sums[4];
  for (int it = 0; it < maxIterations; it++) {
    const double den = dn * sqq - sq * sq;
    if (!(den > 0)) break;
    const double S = (dn * sqv - sq * sv) / den;
    if (!(S > 0)) break;
    const int nextScaleBits = scale_to_half_bits(S);
    const int nextBiasBits = bias_to_half_bits((sv - half_value(nextScaleBits) * sq) / dn, v2);
    if (nextScaleBits == scaleBits && nextBiasBits == biasBits) break;
    pass_into(n, fp4, nextScaleBits, nextBiasBits, 1 - buf, sse);
    if (!(pass_sums[0] < sse)) break;
    buf = 1 - buf;
    scaleBits = nextScaleBits;
    biasBits = nextBiasBits;
    sse = pass_sums[0];
    maxAbs = pass_sums[1];
    sq = pass_sums[2];
    sqq = pass_sums[3];
    sqv = pass_sums[4];
  }
  fit_result[0] = scaleBits;
  fit_result[1] = biasBits;
  fit_result[2] = sse;
  fit_result[3] = maxAbs;
  fit_result[4] = sq;
  fit_result[5] = sqq;
  fit_result[6] = sqv;
  fit_result[7] = buf;
}

int pass_fp4(int n, double S, double B, double stop_at) {
  return pass_fp4_into(n, S, B, stop_at, pass_codes);
}

int pass_t158(int n, double S, double B, double stop_at) {
  return pass_t158_into(n, S, B, stop_at, pass_codes);
}

/* ---- src/fit/polish.ts polishStored, whole: the rounds, their pairs (seen ones skipped), the pair
   errors (polish_fp4's loop for FP4, a pass each for T158), the winner's pass. */

static int step_half(int bits, int steps) {
  const int key = (bits & 0x8000 ? -(bits & 0x7fff) : bits) + steps;
  const int magnitude = key < 0 ? -key : key;
  if (magnitude >= 0x7c00) return -1;
  return key < 0 ? (0x8000 | magnitude) : magnitude;
}

/* polish_stored's result: fit_result as joint_fit's (scale bits, bias bits, sse, max |e|, sum q, sum q^2,
   sum q w, codes buffer), fit_result[8] = 1 if it moved (else the start is kept as it is) */
void polish_stored(int n, int fp4, int v2, int startScaleBits, int startBiasBits, double startSse) {
  const int biasStep = v2 ? 16 : 1;
  int seen[32];
  int seenCount = 1;
  seen[0] = (startScaleBits << 16) | startBiasBits;
  int cs[8], cb[8];
  double err[8];
  int scaleBits = startScaleBits, biasBits = startBiasBits, buf = -1;
  double sse = startSse;
  int moved = 0;
  for (int round = 0; round < 3; round++) {
    const int s0 = scaleBits, b0 = biasBits;
    int count = 0;
    for (int ds = -1; ds <= 1; ds++) {
      const int sb = ds == 0 ? s0 : step_half(s0, ds);
      if (sb <= 0 || (sb & 0x8000)) continue;
      for (int db = -1; db <= 1; db++) {
        if (ds == 0 && db == 0) continue;
        const int bb = db == 0 ? b0 : step_half(b0, db * biasStep);
        if (bb < 0) continue;
        const int key = (sb << 16) | bb;
        int measured = 0;
        for (int j = 0; j < seenCount; j++) {
          if (seen[j] == key) {
            measured = 1;
            break;
          }
        }
        if (measured) continue;
        seen[seenCount++] = key;
        cs[count] = sb;
        cb[count] = bb;
        count++;
      }
    }
    const double stop = sse;
    const int spare = buf == 0 ? 1 : 0;
    if (fp4) {
      if (count > 0) {
        for (int k = 0; k < count; k++) {
          pair_scale[k] = half_value(cs[k]);
          pair_bias[k] = half_value(cb[k]);
        }
        polish_fp4(n, count, stop);
        for (int k = 0; k < count; k++) err[k] = pair_error[k];
      }
    } else {
      for (int k = 0; k < count; k++) {
        pass_into(n, 0, cs[k], cb[k], spare, stop);
        err[k] = pass_sums[0];
      }
    }
    int win = -1;
    double winErr = stop;
    for (int k = 0; k < count; k++) {
      if (err[k] < winErr) {
        winErr = err[k];
        win = k;
      }
    }
    if (win < 0) break;
    pass_into(n, fp4, cs[win], cb[win], spare, __builtin_inf());
    scaleBits = cs[win];
    biasBits = cb[win];
    buf = spare;
    sse = pass_sums[0];
    moved = 1;
    fit_result[2] = pass_sums[0];
    fit_result[3] = pass_sums[1];
    fit_result[4] = pass_sums[2];
    fit_result[5] = pass_sums[3];
    fit_result[6] = pass_sums[4];
  }
  fit_result[0] = scaleBits;
  fit_result[1] = biasBits;
  fit_result[7] = buf;
  fit_result[8] = moved;
}

/* ---- src/fit/leaf.ts withLwe: the exact decode errors of codes (in bound_codes) with scale S and
   bias B over fit_values, and src/laplacian.ts laplacianWeightedError of them, operation for
   operation (each band's sum in index order). */
static double lwe_errors[MAX_LEAF];
static double lwe_scratch_a[32 * 32];
static double lwe_scratch_b[16 * 16];
static const double LWE_BAND_WEIGHTS[6] = {1, 1.25, 1.5, 1.75, 2, 2.25};

extern float tile_decoded[];

/* with dec not null, also the leaf's decode as float32 rows at dec (row r at dec + r * stride) */
static double leaf_lwe_of(int size, double S, double B, float *dec, int stride) {
  const int count = size * size;
  /* size is a power of two: the row and column of weight i by shift and mask (a division per pair was slow) */
  const int shift = __builtin_ctz(size);
  const v128_t vs = wasm_f64x2_splat(S), vb = wasm_f64x2_splat(B);
  /* count is even (size >= 2); two weights per vector (fround2: clang 14 scalarised the plain loop) */
  for (int i = 0; i < count; i += 2) {
    v128_t q = wasm_f64x2_make((double)bound_codes[i], (double)bound_codes[i + 1]);
    v128_t d = fround2(wasm_f64x2_add(wasm_f64x2_mul(vs, q), vb));
    wasm_v128_store(&lwe_errors[i], wasm_f64x2_sub(wasm_v128_load(&fit_values[i]), d));
    /* d holds float32 values: demoted exactly (the decoders' float32 of S q + B; i, i + 1 share a row) */
    if (dec) wasm_v128_store64_lane(&dec[(i >> shift) * stride + (i & (size - 1))], wasm_f32x4_demote_f64x2_zero(d), 0);
  }
  double total = 0;
  const double *cur = lwe_errors;
  double *next = lwe_scratch_a;
  int n = size, k = 0;
  while (n > 1) {
    const int m = n >> 1;
    for (int i = 0; i < m; i++) {
      const int r0 = 2 * i * n, r1 = r0 + n;
      for (int j = 0; j < m; j++) {
        const int c = 2 * j;
        next[i * m + j] = (cur[r0 + c] + cur[r0 + c + 1] + cur[r1 + c] + cur[r1 + c + 1]) * 0.25;
      }
    }
    double sum = 0;
    for (int i = 0; i < n; i++) {
      const int row = i * n, lrow = (i >> 1) * m;
      for (int j = 0; j < n; j++) {
        const double d = cur[row + j] - next[lrow + (j >> 1)];
        sum += d * d;
      }
    }
    total += LWE_BAND_WEIGHTS[k] * (sum / (double)(n * n));
    cur = next;
    next = next == lwe_scratch_a ? lwe_scratch_b : lwe_scratch_a;
    n = m;
    k++;
  }
  const double low = cur[0];
  return total + 4 * low * low;
}

double leaf_lwe(int size, double S, double B) {
  return leaf_lwe_of(size, S, B, 0, 0);
}

/* leaf_lwe, and the leaf's decode written to tile_decoded at `at` (rows `stride` apart) */
double leaf_lwe_at(int size, double S, double B, int at, int stride) {
  return leaf_lwe_of(size, S, B, &tile_decoded[at], stride);
}

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
