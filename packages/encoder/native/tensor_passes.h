/* Tensor-level passes of the encoder's WebAssembly kernel (included by native/fit.c, one
   translation unit): PowerSum.add's squares and the rd policy's exponent counts, and encodeBlockRows'
   tile row (its copy in, the blocks copied out of it, the sums over its decode). */
/* ---- src/power.ts PowerSum.add's groups of eight (addSquares / addCappedSquares): a piece of the tensor
   in power_values (len a multiple of 8), element j of it in local partial j mod 8 (power_partials, two
   per vector), each square of the float32 as a double (exact) added in index order; capped: min(square,
   cap2) as Math.min (f64x2.min: NaN stays NaN, as there). */
float power_values[16384];
double power_partials[8];

static inline v128_t promote_high(v128_t a) {
  v128_t t = wasm_i32x4_shuffle(a, a, 2, 3, 2, 3);
  __asm__("" : "+r"(t));
  return wasm_f64x2_promote_low_f32x4(t);
}

static inline v128_t promote_low(v128_t a) {
  __asm__("" : "+r"(a));
  return wasm_f64x2_promote_low_f32x4(a);
}

/* with exponents: also each value's float32 exponent field counted into exponent_hist (src/power.ts
   ExponentCounts.add: exact integer counts, in any order) */
int exponent_hist[256];

void power_add(int len, double cap2, int capped, int exponents) {
  if (exponents) {
    for (int i = 0; i < len; i++) {
      unsigned int bits;
      __builtin_memcpy(&bits, &power_values[i], 4);
      exponent_hist[(bits >> 23) & 0xff]++;
    }
  }
  v128_t p01 = wasm_v128_load(&power_partials[0]), p23 = wasm_v128_load(&power_partials[2]);
  v128_t p45 = wasm_v128_load(&power_partials[4]), p67 = wasm_v128_load(&power_partials[6]);
  const v128_t cap = wasm_f64x2_splat(cap2);
  if (capped) {
    for (int i = 0; i < len; i += 8) {
      const v128_t a = wasm_v128_load(&power_values[i]), b = wasm_v128_load(&power_values[i + 4]);
      const v128_t a01 = promote_low(a), a23 = promote_high(a), b01 = promote_low(b), b23 = promote_high(b);
      p01 = wasm_f64x2_add(p01, wasm_f64x2_min(wasm_f64x2_mul(a01, a01), cap));
      p23 = wasm_f64x2_add(p23, wasm_f64x2_min(wasm_f64x2_mul(a23, a23), cap));
      p45 = wasm_f64x2_add(p45, wasm_f64x2_min(wasm_f64x2_mul(b01, b01), cap));
      p67 = wasm_f64x2_add(p67, wasm_f64x2_min(wasm_f64x2_mul(b23, b23), cap));
    }
  } else {
    for (int i = 0; i < len; i += 8) {
      const v128_t a = wasm_v128_load(&power_values[i]), b = wasm_v128_load(&power_values[i + 4]);
      const v128_t a01 = promote_low(a), a23 = promote_high(a), b01 = promote_low(b), b23 = promote_high(b);
      p01 = wasm_f64x2_add(p01, wasm_f64x2_mul(a01, a01));
      p23 = wasm_f64x2_add(p23, wasm_f64x2_mul(a23, a23));
      p45 = wasm_f64x2_add(p45, wasm_f64x2_mul(b01, b01));
      p67 = wasm_f64x2_add(p67, wasm_f64x2_mul(b23, b23));
    }
  }
  wasm_v128_store(&power_partials[0], p01);
  wasm_v128_store(&power_partials[2], p23);
  wasm_v128_store(&power_partials[4], p45);
  wasm_v128_store(&power_partials[6], p67);
}

/* ---- src/blocks.ts encodeBlockRows' tile row (tensors up to TILE_WIDTH columns, the macroblock rows
   padded to a multiple of 64): its real rows as read (tile_rows, row r at r * cols), each block copied out
   of them into block_values (load_block: tileRowToBlocks and the copy, the clip as Math.min(Math.max(w,
   low), high)), the chosen leaves' decode row-major (tile_decoded, row r at r * width; written by
   decodeLeaves in JavaScript), and tile_sums: the sums over the real weights in index order. */
#define TILE_WIDTH 4096
float tile_rows[64 * TILE_WIDTH];
float tile_decoded[64 * TILE_WIDTH];
/* tile_sums' sum w^2, sum (w - decoded)^2, max |w - decoded| (in: the job's so far), weights clipped */
double tile_sums_out[4];

#define CLIP_HIGH (7.0 * 65504.0)
#define CLIP_LOW (-8.0 * 65504.0)

void load_block(int bx, int cols, int rows, int clip) {
  const int c0 = bx * 64;
  const int cw = cols - c0 < 64 ? cols - c0 : 64;
  const v128_t lo = wasm_f64x2_splat(CLIP_LOW), hi = wasm_f64x2_splat(CLIP_HIGH), zero = wasm_f64x2_splat(0.0);
  for (int i = 0; i < 64; i++) {
    double *dst = &block_values[i * 64];
    int j = 0;
    if (i < rows) {
      const float *src = &tile_rows[i * cols + c0];
      for (; j + 2 <= cw; j += 2) {
        v128_t w = promote_low(wasm_v128_load64_zero(&src[j]));
        if (clip) w = wasm_f64x2_min(wasm_f64x2_max(w, lo), hi);
        wasm_v128_store(&dst[j], w);
      }
      for (; j < cw; j++) {
        v128_t w = wasm_f64x2_splat((double)src[j]);
        if (clip) w = wasm_f64x2_min(wasm_f64x2_max(w, lo), hi);
        dst[j] = wasm_f64x2_extract_lane(w, 0);
      }
    }
    for (; j < 64; j++) dst[j] = 0;
  }
}

void tile_sums(int rows, int cols, int width) {
  const v128_t lo = wasm_f64x2_splat(CLIP_LOW), hi = wasm_f64x2_splat(CLIP_HIGH);
  v128_t acc = wasm_f64x2_splat(0.0), mx = wasm_f64x2_splat(tile_sums_out[2]), clipped = wasm_i64x2_splat(0);
  for (int r = 0; r < rows; r++) {
    const float *wr = &tile_rows[r * cols], *vr = &tile_decoded[r * width];
    int j = 0;
    for (; j + 2 <= cols; j += 2) {
      const v128_t w = promote_low(wasm_v128_load64_zero(&wr[j]));
      const v128_t d = wasm_f64x2_sub(w, promote_low(wasm_v128_load64_zero(&vr[j])));
      /* lane 0: w0^2 then w1^2, lane 1: d0^2 then d1^2 */
      acc = add_ordered(acc, wasm_f64x2_mul(w, w), wasm_f64x2_mul(d, d));
      mx = wasm_f64x2_pmax(mx, wasm_f64x2_abs(d));
      clipped = wasm_i64x2_sub(clipped, wasm_v128_or(wasm_f64x2_gt(w, hi), wasm_f64x2_lt(w, lo)));
    }
    for (; j < cols; j++) {
      const double w = wr[j], v = vr[j], d = w - v;
      acc = wasm_f64x2_add(acc, wasm_f64x2_make(w * w, d * d));
      const v128_t a = wasm_f64x2_splat(__builtin_fabs(d));
      mx = wasm_f64x2_pmax(mx, a);
      if (w > CLIP_HIGH || w < CLIP_LOW) clipped = wasm_i64x2_sub(clipped, wasm_i64x2_make(-1, 0));
    }
  }
  const double m0 = wasm_f64x2_extract_lane(mx, 0), m1 = wasm_f64x2_extract_lane(mx, 1);
  tile_sums_out[0] = wasm_f64x2_extract_lane(acc, 0);
  tile_sums_out[1] = wasm_f64x2_extract_lane(acc, 1);
  tile_sums_out[2] = m1 > m0 ? m1 : m0;
  tile_sums_out[3] = (double)(wasm_i64x2_extract_lane(clipped, 0) + wasm_i64x2_extract_lane(clipped, 1));
}
