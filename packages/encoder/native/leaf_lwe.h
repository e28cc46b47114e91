/* The leaf error measurement of the encoder's WebAssembly kernel (included by native/fit.c, one
   translation unit, so one wasm module): leaf_lwe, and leaf_lwe_at with the leaf's decode. */
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
