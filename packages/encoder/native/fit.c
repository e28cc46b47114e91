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
        v128_t d = wasm_f64x2_promote_low_f32x4(wasm_f32x4_demote_f64x2_zero(wasm_f64x2_add(wasm_f64x2_mul(S, q), B)));
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
static inline void store_codes(int i, v128_t q) {
  v128_t bits = wasm_f64x2_add(q, wasm_f64x2_splat(6755399441055744.0));
  wasm_v128_store16_lane(&pass_codes[i], wasm_i8x16_shuffle(bits, bits, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8), 0);
}

static void finish_pass(v128_t acc, v128_t maxv, v128_t sq, v128_t sqq) {
  double m0 = wasm_f64x2_extract_lane(maxv, 0), m1 = wasm_f64x2_extract_lane(maxv, 1);
  pass_sums[0] = wasm_f64x2_extract_lane(acc, 0);
  pass_sums[1] = m1 > m0 ? m1 : m0;
  /* sums of small integers: exact, so the lanes' order does not matter */
  pass_sums[2] = wasm_f64x2_extract_lane(sq, 0) + wasm_f64x2_extract_lane(sq, 1);
  pass_sums[3] = wasm_f64x2_extract_lane(sqq, 0) + wasm_f64x2_extract_lane(sqq, 1);
  pass_sums[4] = wasm_f64x2_extract_lane(acc, 1);
}

/* FP4 pass over fit_values[0 .. n), n even: two weights per vector; sse and sum q w added weight by
   weight in index order (add_ordered); stops at a chunk boundary once sse >= stop_at. Returns the
   weights passed (n unless stopped). */
int pass_fp4(int n, double S, double B, double stop_at) {
  const v128_t half = wasm_f64x2_splat(0.5), one = wasm_f64x2_splat(1.0), lo = wasm_f64x2_splat(-8.0), hi = wasm_f64x2_splat(7.0);
  const v128_t vs = wasm_f64x2_splat(S), vb = wasm_f64x2_splat(B), inv = wasm_f64x2_splat(1.0 / S);
  v128_t acc = wasm_f64x2_splat(0.0), maxv = acc, sq = acc, sqq = acc;
  int i0 = 0;
  for (; i0 < n && wasm_f64x2_extract_lane(acc, 0) < stop_at; i0 += CHUNK) {
    int end = i0 + CHUNK < n ? i0 + CHUNK : n;
    for (int i = i0; i < end; i += 2) {
      v128_t w = wasm_v128_load(&fit_values[i]);
      v128_t y = wasm_f64x2_mul(wasm_f64x2_sub(w, vb), inv);
      v128_t f = wasm_f64x2_floor(y);
      v128_t q = wasm_f64x2_add(f, wasm_v128_and(wasm_f64x2_ge(wasm_f64x2_sub(y, f), half), one));
      q = wasm_f64x2_pmax(wasm_f64x2_pmin(q, hi), lo);
      store_codes(i, q);
      v128_t d = wasm_f64x2_promote_low_f32x4(wasm_f32x4_demote_f64x2_zero(wasm_f64x2_add(wasm_f64x2_mul(vs, q), vb)));
      v128_t e = wasm_f64x2_sub(w, d);
      acc = add_ordered(acc, wasm_f64x2_mul(e, e), wasm_f64x2_mul(q, w));
      maxv = wasm_f64x2_pmax(maxv, wasm_f64x2_abs(e));
      sq = wasm_f64x2_add(sq, q);
      sqq = wasm_f64x2_add(sqq, wasm_f64x2_mul(q, q));
    }
  }
  finish_pass(acc, maxv, sq, sqq);
  return i0 < n ? i0 : n;
}

/* T158 pass: q = (c > tau) - (c < -tau), c = w - B, tau = 0.5 S; decoded fround(B - S), fround(B), fround(S + B) */
int pass_t158(int n, double S, double B, double stop_at) {
  const v128_t one = wasm_f64x2_splat(1.0), vb = wasm_f64x2_splat(B);
  const v128_t tau = wasm_f64x2_splat(S * 0.5), ntau = wasm_f64x2_neg(tau);
  const v128_t dm = wasm_f64x2_splat((double)(float)(B - S)), d0 = wasm_f64x2_splat((double)(float)B), dp = wasm_f64x2_splat((double)(float)(S + B));
  v128_t acc = wasm_f64x2_splat(0.0), maxv = acc, sq = acc, sqq = acc;
  int i0 = 0;
  for (; i0 < n && wasm_f64x2_extract_lane(acc, 0) < stop_at; i0 += CHUNK) {
    int end = i0 + CHUNK < n ? i0 + CHUNK : n;
    for (int i = i0; i < end; i += 2) {
      v128_t w = wasm_v128_load(&fit_values[i]);
      v128_t c = wasm_f64x2_sub(w, vb);
      v128_t gt = wasm_f64x2_gt(c, tau), lt = wasm_f64x2_lt(c, ntau);
      v128_t q = wasm_f64x2_sub(wasm_v128_and(gt, one), wasm_v128_and(lt, one));
      store_codes(i, q);
      v128_t d = wasm_v128_bitselect(dp, wasm_v128_bitselect(dm, d0, lt), gt);
      v128_t e = wasm_f64x2_sub(w, d);
      acc = add_ordered(acc, wasm_f64x2_mul(e, e), wasm_f64x2_mul(q, w));
      maxv = wasm_f64x2_pmax(maxv, wasm_f64x2_abs(e));
      sq = wasm_f64x2_add(sq, q);
      sqq = wasm_f64x2_add(sqq, wasm_f64x2_mul(q, q));
    }
  }
  finish_pass(acc, maxv, sq, sqq);
  return i0 < n ? i0 : n;
}
