/* The code-assignment passes of the encoder's WebAssembly kernel (included by native/fit.c, one
   translation unit, so the one wasm module holds every kernel): the starts' ranking, the polish's
   pair errors, and the FP4 / T158 passes' codes and sums (pass_fp4_into, pass_t158_into). */
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
