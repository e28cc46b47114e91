/*
 * Half-precision outputs (docs/decisions.md P10): each value is the IEEE round-to-nearest-even
 * conversion of the exact float32 result. f16 keeps subnormals and overflows to +-Inf; bf16 is RNE
 * of the f32 bits. Decoded values are always finite (|S * code + Bias| <= 8 * 65504 + 65504), NaN
 * is still mapped to a quiet NaN. v2 streams through a window (routes.ts) are converted by the
 * kernel one macroblock at a time while its f32 values are in L1 (validate_decode_v2_half_window);
 * other routes expand a band to f32 and convert it in place (convert_f16 / convert_bf16) before it
 * is copied out. Either way the output traffic is two bytes per weight.
 */

/* All ones in the lanes whose magnitude bits are a NaN's (above the infinity's 0x7f800000): an
 * arithmetic shift, not a compare (clang turns a compare of these non-negative values into an
 * unsigned one, which x86 has no instruction for). */
static inline v128_t nan_lanes(v128_t magnitude) {
  return wasm_i32x4_shr(wasm_i32x4_sub(wasm_i32x4_splat(0x7f800000), magnitude), 31);
}

/* f32 -> f16 bits, RNE, subnormals kept, overflow to +-Inf, NaN to a quiet NaN (0x7e00 | sign),
 * without a compare or a branch per range (after M. Dukhan's fp16_ieee_from_fp32_value, FP16
 * library). f16_finite_of(x, |x|) is right for every x but NaN: from 2^16 up every value is Inf,
 * so |x| is clamped there first; 4|x| (exact) added to the power of two 2^(e + 15) (e: the exponent
 * of |x|, at least -14: the f16 subnormals' scale) makes the f32 add round to nearest even at the
 * f16 mantissa's last place, and leaves the f16 exponent (bits 13.., mod 32) and mantissa (bits
 * 0..11, a carry included) in the sum. Checked on all 2^32 f32 inputs against the range-by-range
 * conversion this replaced (bench/convert-exhaustive.mjs). */
static inline v128_t f16_finite_of(v128_t x, v128_t magnitude) {
  const v128_t m = wasm_u32x4_min(magnitude, wasm_i32x4_splat(0x47800000)); /* 65536: Inf in f16 */
  const v128_t step = wasm_i32x4_add(wasm_u32x4_max(wasm_v128_and(m, wasm_i32x4_splat(0x7f800000)), wasm_i32x4_splat(0x38800000)), wasm_i32x4_splat(0x07800000));
  const v128_t sum = wasm_f32x4_add(step, wasm_f32x4_mul(m, wasm_f32x4_splat(4.0f)));
  const v128_t bits = wasm_i32x4_add(wasm_v128_and(wasm_u32x4_shr(sum, 13), wasm_i32x4_splat(0x7c00)), wasm_v128_and(sum, wasm_i32x4_splat(0x0fff)));
  return wasm_v128_or(bits, wasm_v128_and(wasm_u32x4_shr(x, 16), wasm_i32x4_splat(0x8000)));
}

static inline v128_t f16_of(v128_t x) {
  const v128_t magnitude = wasm_v128_and(x, wasm_i32x4_splat(0x7fffffff));
  const v128_t sign = wasm_v128_and(wasm_u32x4_shr(x, 16), wasm_i32x4_splat(0x8000));
  return wasm_v128_bitselect(wasm_v128_or(wasm_i32x4_splat(0x7e00), sign), f16_finite_of(x, magnitude), nan_lanes(magnitude));
}

/* The same for values known finite (decoded values: |S * code + Bias| <= 8 * 65504 + 65504): no NaN lanes. */
static inline v128_t f16_of_finite(v128_t x) { return f16_finite_of(x, wasm_v128_and(x, wasm_i32x4_splat(0x7fffffff))); }

/* f32 -> bf16 bits: RNE of the f32 bits (add 0x7fff plus the kept lowest bit), NaN to a quiet NaN;
 * bf16_of_finite for values known finite (no NaN lanes). */
static inline v128_t bf16_of_finite(v128_t x) {
  const v128_t odd = wasm_v128_and(wasm_u32x4_shr(x, 16), wasm_i32x4_splat(1));
  return wasm_u32x4_shr(wasm_i32x4_add(wasm_i32x4_add(x, wasm_i32x4_splat(0x7fff)), odd), 16);
}

static inline v128_t bf16_of(v128_t x) {
  const v128_t rounded = bf16_of_finite(x);
  const v128_t nan = wasm_i32x4_gt(wasm_v128_and(x, wasm_i32x4_splat(0x7fffffff)), wasm_i32x4_splat(0x7f800000));
  return wasm_v128_bitselect(wasm_v128_or(wasm_u32x4_shr(x, 16), wasm_i32x4_splat(0x40)), rounded, nan);
}

/* n floats at src -> n halves at dst, 8 at a time, then one at a time; dst may equal src (each write lands behind the reads). */
#define CONVERT_LOOP(of)                                                                                       \
  do {                                                                                                         \
    u32 i = 0;                                                                                                 \
    for (; i + 8u <= n; i += 8u) {                                                                             \
      const v128_t lo = of(wasm_v128_load(src + i)), hi = of(wasm_v128_load(src + i + 4u));                   \
      wasm_v128_store(dst + i, wasm_u16x8_narrow_i32x4(lo, hi));                                               \
    }                                                                                                          \
    for (; i < n; i++) dst[i] = (u16)wasm_u32x4_extract_lane(of(wasm_v128_load32_zero(src + i)), 0);           \
  } while (0)

__attribute__((export_name("convert_f16"))) void convert_f16(const float *src, u16 *dst, u32 n) { CONVERT_LOOP(f16_of); }
__attribute__((export_name("convert_bf16"))) void convert_bf16(const float *src, u16 *dst, u32 n) { CONVERT_LOOP(bf16_of); }
/* Decoded (finite) values: the NaN lanes' handling left out, same bits for every finite value. */
static inline __attribute__((always_inline)) void convert_run(const float *src, u16 *dst, u32 n, u32 bf16) {
  if (bf16) CONVERT_LOOP(bf16_of_finite);
  else CONVERT_LOOP(f16_of_finite);
}
#undef CONVERT_LOOP

/*
 * validate_decode_v2_stream_window for f16 / bf16 outputs (bf16 != 0: bf16): each record is
 * validated and expanded as decode_records does, into `block` (one macroblock of f32, 64 x 64,
 * 16 KiB, so it stays in L1 cache), and converted from there into `out`, a window of the u16
 * output (element (r, c) at out[(r - row_base) * stride + c - col_base]). The f32 values never
 * leave the cache and the band holds two bytes per weight; the values are the same f32 values
 * converted by the same functions as convert_f16 / convert_bf16. 0 ok, -1 not ok.
 */
__attribute__((export_name("validate_decode_v2_half_window"))) int validate_decode_v2_half_window(
    const u8 *head, const u8 *window, u32 lo, u32 avail, u32 len, u32 blocks, u32 b0, u32 b1, u32 *scratch, float *block,
    u16 *out, u32 stride, u32 rows, u32 cols, u32 tiles_x, u32 row_base, u32 col_base, u32 bf16) {
  const u32 base = v2_record_base(head, len, blocks);
  if (!base || b0 > b1 || b1 > blocks) return -1;
  for (u32 b = b0; b < b1; b++) {
    const long long prev = b ? (long long)load32(head + 16u + 4u * (b - 1u)) : -1;
    const u32 by = b / tiles_x, bx = b - by * tiles_x;
    if (decode_records(head, window, lo, avail, len, base, b, b + 1u, prev, scratch, block, 64u, rows, cols, tiles_x, by * 64u,
                       bx * 64u, 0, 0))
      return -1;
    const u32 kept_rows = rows - by * 64u < 64u ? rows - by * 64u : 64u, kept_cols = cols - bx * 64u < 64u ? cols - bx * 64u : 64u;
    u16 *dst = out + ((by * 64u - row_base) * stride + bx * 64u - col_base);
    for (u32 r = 0; r < kept_rows; r++) convert_run(block + r * 64u, dst + r * stride, kept_cols, bf16);
  }
  return 0;
}
