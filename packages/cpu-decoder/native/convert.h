/*
 * Half-precision outputs (docs/decisions.md P10): each value is the IEEE round-to-nearest-even
 * conversion of the exact float32 result. f16 keeps subnormals and overflows to +-Inf; bf16 is RNE
 * of the f32 bits. Decoded values are always finite (|S * code + Bias| <= 8 * 65504 + 65504), NaN
 * is still mapped to a quiet NaN. The JS side expands a cache-sized band to f32 and converts it in
 * place before copying it out, so the output traffic is two bytes per weight.
 */

/* f32 bits (sign cleared) -> f16 magnitude bits, RNE (F. Giesen's float_to_half_fast3_rtne): below
 * 2^-14 the sum |x| + 0.5 rounds away the bits an f16 subnormal cannot hold (wasm keeps f32
 * subnormals and rounds to nearest even); above, the exponent is rebased and RNE is an add of
 * 0xfff plus the kept mantissa's lowest bit (a carry into the exponent is correct, up to Inf). */
static inline v128_t f16_magnitude(v128_t a) {
  const v128_t sub = wasm_i32x4_sub(wasm_f32x4_add(a, wasm_f32x4_splat(0.5f)), wasm_i32x4_splat(0x3f000000));
  const v128_t odd = wasm_v128_and(wasm_u32x4_shr(a, 13), wasm_i32x4_splat(1));
  const v128_t norm = wasm_u32x4_shr(wasm_i32x4_add(wasm_i32x4_add(a, wasm_i32x4_splat((int)0xc8000fffu)), odd), 13);
  const v128_t big = wasm_v128_bitselect(wasm_i32x4_splat(0x7e00), wasm_i32x4_splat(0x7c00), wasm_i32x4_gt(a, wasm_i32x4_splat(0x7f800000)));
  const v128_t finite = wasm_v128_bitselect(sub, norm, wasm_i32x4_lt(a, wasm_i32x4_splat(0x38800000)));
  return wasm_v128_bitselect(big, finite, wasm_i32x4_ge(a, wasm_i32x4_splat(0x47800000)));
}

static inline v128_t f16_of(v128_t x) {
  const v128_t sign = wasm_u32x4_shr(wasm_v128_and(x, wasm_i32x4_splat((int)0x80000000u)), 16);
  return wasm_v128_or(f16_magnitude(wasm_v128_and(x, wasm_i32x4_splat(0x7fffffff))), sign);
}

static inline v128_t bf16_of(v128_t x) {
  const v128_t odd = wasm_v128_and(wasm_u32x4_shr(x, 16), wasm_i32x4_splat(1));
  const v128_t rounded = wasm_u32x4_shr(wasm_i32x4_add(wasm_i32x4_add(x, wasm_i32x4_splat(0x7fff)), odd), 16);
  const v128_t nan = wasm_i32x4_gt(wasm_v128_and(x, wasm_i32x4_splat(0x7fffffff)), wasm_i32x4_splat(0x7f800000));
  return wasm_v128_bitselect(wasm_v128_or(wasm_u32x4_shr(x, 16), wasm_i32x4_splat(0x40)), rounded, nan);
}

/* n floats at src -> n halves at dst, 8 at a time; dst may equal src (each write lands behind the reads). */
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
#undef CONVERT_LOOP
