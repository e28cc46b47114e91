/* The FP4 assignment pass of src/fit.ts (assignFp4) in three WebAssembly forms, for bench/pass-kernels/run.mjs:
   plain scalar; two weights per SIMD vector with every sum still added in index order (the same numbers as
   the JavaScript); and two weights per vector with per-lane sums (a different order: different bytes). */
#include <wasm_simd128.h>

double v[4096];
signed char out[4096];
double sums[5]; /* sse, max |e|, sum q, sum q^2, sum q*w */

void fp4_scalar(int n, double S, double B) {
  double sse = 0, maxAbs = 0, sq = 0, sqq = 0, sqv = 0, inv = 1.0 / S;
  for (int i = 0; i < n; i++) {
    double w = v[i], y = (w - B) * inv, f = __builtin_floor(y), q = f + (double)(y - f >= 0.5);
    if (q > 7) q = 7; else if (q < -8) q = -8;
    out[i] = (signed char)q;
    double e = w - (double)(float)(S * q + B);
    sse += e * e;
    double a = __builtin_fabs(e);
    if (a > maxAbs) maxAbs = a;
    sq += q; sqq += q * q; sqv += q * w;
  }
  sums[0] = sse; sums[1] = maxAbs; sums[2] = sq; sums[3] = sqq; sums[4] = sqv;
}

/* The codes and decode errors of two weights (w) for scale S and bias B, as the scalar loop computes them. */
static inline void fp4_pair(v128_t w, double S, double B, v128_t *q_out, v128_t *e_out) {
  v128_t y = wasm_f64x2_mul(wasm_f64x2_sub(w, wasm_f64x2_splat(B)), wasm_f64x2_splat(1.0 / S));
  v128_t f = wasm_f64x2_floor(y);
  v128_t q = wasm_f64x2_add(f, wasm_v128_and(wasm_f64x2_ge(wasm_f64x2_sub(y, f), wasm_f64x2_splat(0.5)), wasm_f64x2_splat(1.0)));
  q = wasm_f64x2_pmin(wasm_f64x2_pmax(q, wasm_f64x2_splat(-8.0)), wasm_f64x2_splat(7.0));
  v128_t d = wasm_f64x2_promote_low_f32x4(wasm_f32x4_demote_f64x2_zero(wasm_f64x2_add(wasm_f64x2_mul(wasm_f64x2_splat(S), q), wasm_f64x2_splat(B))));
  *q_out = q;
  *e_out = wasm_f64x2_sub(w, d);
}

/* n even */
void fp4_simd_ordered(int n, double S, double B) {
  double sse = 0, sqv = 0; int sq = 0, sqq = 0;
  v128_t vmax = wasm_f64x2_splat(0.0);
  for (int i = 0; i < n; i += 2) {
    v128_t w = wasm_v128_load(&v[i]), q, e;
    fp4_pair(w, S, B, &q, &e);
    v128_t e2 = wasm_f64x2_mul(e, e), qw = wasm_f64x2_mul(q, w);
    vmax = wasm_f64x2_pmax(vmax, wasm_f64x2_abs(e));
    sse += wasm_f64x2_extract_lane(e2, 0); sse += wasm_f64x2_extract_lane(e2, 1);
    sqv += wasm_f64x2_extract_lane(qw, 0); sqv += wasm_f64x2_extract_lane(qw, 1);
    v128_t qi = wasm_i32x4_trunc_sat_f64x2_zero(q);
    int q0 = wasm_i32x4_extract_lane(qi, 0), q1 = wasm_i32x4_extract_lane(qi, 1);
    out[i] = (signed char)q0; out[i + 1] = (signed char)q1;
    sq += q0 + q1; sqq += q0 * q0 + q1 * q1;
  }
  double m0 = wasm_f64x2_extract_lane(vmax, 0), m1 = wasm_f64x2_extract_lane(vmax, 1);
  sums[0] = sse; sums[1] = m0 > m1 ? m0 : m1; sums[2] = sq; sums[3] = sqq; sums[4] = sqv;
}

/* n even; sums per lane, added at the end */
void fp4_simd_lanes(int n, double S, double B) {
  v128_t zero = wasm_f64x2_splat(0.0), vmax = zero, vsse = zero, vsqv = zero, vsq = zero, vsqq = zero;
  for (int i = 0; i < n; i += 2) {
    v128_t w = wasm_v128_load(&v[i]), q, e;
    fp4_pair(w, S, B, &q, &e);
    vsse = wasm_f64x2_add(vsse, wasm_f64x2_mul(e, e));
    vmax = wasm_f64x2_pmax(vmax, wasm_f64x2_abs(e));
    vsqv = wasm_f64x2_add(vsqv, wasm_f64x2_mul(q, w));
    vsq = wasm_f64x2_add(vsq, q);
    vsqq = wasm_f64x2_add(vsqq, wasm_f64x2_mul(q, q));
    v128_t qi = wasm_i32x4_trunc_sat_f64x2_zero(q);
    out[i] = (signed char)wasm_i32x4_extract_lane(qi, 0); out[i + 1] = (signed char)wasm_i32x4_extract_lane(qi, 1);
  }
  double m0 = wasm_f64x2_extract_lane(vmax, 0), m1 = wasm_f64x2_extract_lane(vmax, 1);
  sums[0] = wasm_f64x2_extract_lane(vsse, 0) + wasm_f64x2_extract_lane(vsse, 1); sums[1] = m0 > m1 ? m0 : m1;
  sums[2] = wasm_f64x2_extract_lane(vsq, 0) + wasm_f64x2_extract_lane(vsq, 1);
  sums[3] = wasm_f64x2_extract_lane(vsqq, 0) + wasm_f64x2_extract_lane(vsqq, 1);
  sums[4] = wasm_f64x2_extract_lane(vsqv, 0) + wasm_f64x2_extract_lane(vsqv, 1);
}
