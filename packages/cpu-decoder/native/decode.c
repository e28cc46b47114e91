/*
 * SGFP4 leaf expansion kernel (WebAssembly SIMD). It only expands leaves of a leaf table that
 * @sgfp4/format's parser has already validated; the JS side lays out linear memory:
 *   output floats | leaf table (4 u32 per leaf, word 3 rewritten to an absolute payload address) | payloads
 * Arithmetic is bit-exact with DECISIONS.md section 2: w = f32(S) * code + f32(Bias), one rounding.
 * The SIMD path computes (S * 2^-28) * (code * 2^28) + Bias: both products equal S * code exactly
 * (S*code has at most 15 significant bits and S * 2^-28 stays normal), so the bits are identical.
 * No stack or static data is used, so the whole memory belongs to the caller.
 */
#include <wasm_simd128.h>

typedef unsigned int u32;
typedef unsigned char u8;

static inline float float_from_bits(u32 bits) {
  union { u32 u; float f; } v = { bits };
  return v.f;
}

/* Exact FP16 -> FP32 with integer ops (subnormals kept, signed zero kept). */
static inline float half_to_float(u32 h) {
  u32 sign = (h & 0x8000u) << 16;
  u32 exp = (h >> 10) & 0x1fu;
  u32 mant = h & 0x3ffu;
  if (exp == 0x1fu) return float_from_bits(sign | 0x7f800000u | (mant << 13)); /* parser rejects these */
  if (exp != 0) return float_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return float_from_bits(sign);
  u32 shift = (u32)__builtin_clz(mant) - 21u; /* moves the leading 1 to bit 10 */
  return float_from_bits(sign | ((113u - shift) << 23) | (((mant << shift) & 0x3ffu) << 13));
}

/* 16 codes (bytes holding 16*q) -> 16 floats at four 4-float destinations. */
static inline __attribute__((always_inline)) void emit16(float *p0, float *p1, float *p2, float *p3, v128_t codes,
                                                          v128_t scale, v128_t bias) {
  const v128_t z = wasm_i32x4_const(0, 0, 0, 0);
  /* interleaving with zero puts each byte at the top of its lane: i32 = 16*q << 24 = q * 2^28 */
  v128_t lo = wasm_i8x16_shuffle(z, codes, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  v128_t hi = wasm_i8x16_shuffle(z, codes, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  v128_t a = wasm_i16x8_shuffle(z, lo, 0, 8, 1, 9, 2, 10, 3, 11);
  v128_t b = wasm_i16x8_shuffle(z, lo, 4, 12, 5, 13, 6, 14, 7, 15);
  v128_t c = wasm_i16x8_shuffle(z, hi, 0, 8, 1, 9, 2, 10, 3, 11);
  v128_t d = wasm_i16x8_shuffle(z, hi, 4, 12, 5, 13, 6, 14, 7, 15);
  wasm_v128_store(p0, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(a), scale), bias));
  wasm_v128_store(p1, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(b), scale), bias));
  wasm_v128_store(p2, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(c), scale), bias));
  wasm_v128_store(p3, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(d), scale), bias));
}

/* Place codes k..k+15 (row-major in a leaf of side 1 << lg) at their output rows. */
static inline __attribute__((always_inline)) void place16(float *dst, u32 cols, u32 lg, u32 k, v128_t codes, v128_t scale,
                                                           v128_t bias) {
  if (lg >= 4) {
    float *p = dst + (k >> lg) * cols + (k & ((1u << lg) - 1u));
    emit16(p, p + 4, p + 8, p + 12, codes, scale, bias);
  } else if (lg == 3) {
    float *p = dst + (k >> 3) * cols;
    emit16(p, p + 4, p + cols, p + cols + 4, codes, scale, bias);
  } else {
    float *p = dst + (k >> 2) * cols;
    emit16(p, p + cols, p + 2 * cols, p + 3 * cols, codes, scale, bias);
  }
}

/* Full (uncropped) FP4 leaf. Payloads are padded to 16 bytes, so whole-vector loads stay inside them. */
static inline __attribute__((always_inline)) void leaf_fp4(const u8 *src, float *dst, u32 cols, u32 lg, v128_t scale,
                                                            v128_t bias) {
  const u32 area = 1u << (2 * lg);
  const v128_t top = wasm_i8x16_splat((signed char)0xf0);
  for (u32 k = 0; k < area; k += 32, src += 16) {
    v128_t v = wasm_v128_load(src);
    v128_t odd = wasm_v128_and(v, top);                        /* code 2i+1 = high nibble, already on top */
    v128_t even = wasm_v128_and(wasm_i16x8_shl(v, 4), top);    /* code 2i = low nibble, moved to the top */
    v128_t c0 = wasm_i8x16_shuffle(even, odd, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    place16(dst, cols, lg, k, c0, scale, bias);
    if (area > 16) {
      v128_t c1 = wasm_i8x16_shuffle(even, odd, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      place16(dst, cols, lg, k + 16, c1, scale, bias);
    }
  }
}

/* Full (uncropped) T158 leaf: 2-bit symbols 00 -> 0, 01 -> +1, 10 -> -1, 11 -> 0. */
static inline __attribute__((always_inline)) void leaf_t158(const u8 *src, float *dst, u32 cols, u32 lg, v128_t scale,
                                                             v128_t bias) {
  const u32 area = 1u << (2 * lg);
  /* a nibble holds two symbols; first_of[n] is 16*code of its low symbol, second_of[n] of its high one */
  const v128_t first_of = wasm_i8x16_const(0, 16, -16, 0, 0, 16, -16, 0, 0, 16, -16, 0, 0, 16, -16, 0);
  const v128_t second_of = wasm_i8x16_const(0, 0, 0, 0, 16, 16, 16, 16, -16, -16, -16, -16, 0, 0, 0, 0);
  const v128_t low4 = wasm_i8x16_splat(0x0f);
  for (u32 k = 0; k < area; k += 64, src += 16) {
    v128_t v = wasm_v128_load(src);
    v128_t lo = wasm_v128_and(v, low4);
    v128_t hi = wasm_v128_and(wasm_u16x8_shr(v, 4), low4);
    v128_t s0 = wasm_i8x16_swizzle(first_of, lo);
    v128_t s1 = wasm_i8x16_swizzle(second_of, lo);
    v128_t s2 = wasm_i8x16_swizzle(first_of, hi);
    v128_t s3 = wasm_i8x16_swizzle(second_of, hi);
    v128_t p01 = wasm_i8x16_shuffle(s0, s1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    v128_t p23 = wasm_i8x16_shuffle(s2, s3, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    place16(dst, cols, lg, k, wasm_i16x8_shuffle(p01, p23, 0, 8, 1, 9, 2, 10, 3, 11), scale, bias);
    if (area > 16) {
      place16(dst, cols, lg, k + 16, wasm_i16x8_shuffle(p01, p23, 4, 12, 5, 13, 6, 14, 7, 15), scale, bias);
      v128_t q01 = wasm_i8x16_shuffle(s0, s1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      v128_t q23 = wasm_i8x16_shuffle(s2, s3, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      place16(dst, cols, lg, k + 32, wasm_i16x8_shuffle(q01, q23, 0, 8, 1, 9, 2, 10, 3, 11), scale, bias);
      place16(dst, cols, lg, k + 48, wasm_i16x8_shuffle(q01, q23, 4, 12, 5, 13, 6, 14, 7, 15), scale, bias);
    }
  }
}

/* A full leaf of side 16, 32 or 64 (lg 4-6), one mode: a constant side per call, so each loop is unrolled for it. */
static inline __attribute__((always_inline)) void big_leaf(const u8 *payload, float *dst, u32 cols, u32 lg, u32 mode,
                                                            v128_t scale, v128_t bias) {
  if (mode) {
    switch (lg) {
      case 4: leaf_t158(payload, dst, cols, 4, scale, bias); break;
      case 5: leaf_t158(payload, dst, cols, 5, scale, bias); break;
      default: leaf_t158(payload, dst, cols, 6, scale, bias); break;
    }
  } else {
    switch (lg) {
      case 4: leaf_fp4(payload, dst, cols, 4, scale, bias); break;
      case 5: leaf_fp4(payload, dst, cols, 5, scale, bias); break;
      default: leaf_fp4(payload, dst, cols, 6, scale, bias); break;
    }
  }
}

/* The first 16 codes (as 16*q bytes) of an FP4 payload chunk and of a T158 one. */
static inline v128_t fp4_first16(v128_t v) {
  const v128_t top = wasm_i8x16_splat((signed char)0xf0);
  v128_t odd = wasm_v128_and(v, top), even = wasm_v128_and(wasm_i16x8_shl(v, 4), top);
  return wasm_i8x16_shuffle(even, odd, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
}
static inline v128_t t158_first16(v128_t v) {
  const v128_t first_of = wasm_i8x16_const(0, 16, -16, 0, 0, 16, -16, 0, 0, 16, -16, 0, 0, 16, -16, 0);
  const v128_t second_of = wasm_i8x16_const(0, 0, 0, 0, 16, 16, 16, 16, -16, -16, -16, -16, 0, 0, 0, 0);
  const v128_t low4 = wasm_i8x16_splat(0x0f);
  v128_t lo = wasm_v128_and(v, low4), hi = wasm_v128_and(wasm_u16x8_shr(v, 4), low4);
  v128_t p01 = wasm_i8x16_shuffle(wasm_i8x16_swizzle(first_of, lo), wasm_i8x16_swizzle(second_of, lo), 0, 16, 1, 17, 2, 18, 3,
                                  19, 4, 20, 5, 21, 6, 22, 7, 23);
  v128_t p23 = wasm_i8x16_shuffle(wasm_i8x16_swizzle(first_of, hi), wasm_i8x16_swizzle(second_of, hi), 0, 16, 1, 17, 2, 18, 3,
                                  19, 4, 20, 5, 21, 6, 22, 7, 23);
  return wasm_i16x8_shuffle(p01, p23, 0, 8, 1, 9, 2, 10, 3, 11);
}

/* A leaf cut by the tensor edge: scalar, only the kept rows x cols. */
static void leaf_cropped(const u8 *src, float *dst, u32 cols, u32 lg, u32 mode, u32 keep_rows, u32 keep_cols, float scale,
                         float bias) {
  for (u32 i = 0; i < keep_rows; i++) {
    for (u32 j = 0; j < keep_cols; j++) {
      u32 idx = (i << lg) + j;
      int code;
      if (mode) {
        u32 sym = (src[idx >> 2] >> ((idx & 3u) * 2u)) & 3u;
        code = sym == 1u ? 1 : sym == 2u ? -1 : 0;
      } else {
        code = (int)((src[idx >> 1] >> ((idx & 1u) * 4u)) & 15u);
        code -= (code & 8) << 1;
      }
      dst[i * cols + j] = scale * (float)code + bias;
    }
  }
}

/* Scale * 2^-28 and bias of a leaf from its header word (S << 16 | Bias), splatted. Both FP16 halves at
 * once, branch-free: (h & 0x7fff) << 13 read as f32 is |h| * 2^-112 exactly (FP16 subnormals land on
 * f32 subnormals, kept by wasm), so * 2^112 gives |bias| and * 2^84 gives |scale| * 2^-28, both
 * exact; the sign bit is ORed back. Non-finite halves are rejected by the validator. */
#define LEAF_SCALE_BIAS(params, vscale, vbias)                                                                     \
  do {                                                                                                           \
    const v128_t halves_ = wasm_u32x4_extend_low_u16x8(wasm_i32x4_splat((int)(params))); /* bias, scale, .. */  \
    const v128_t magnitude_ = wasm_i32x4_shl(wasm_v128_and(halves_, wasm_i32x4_splat(0x7fff)), 13);            \
    const v128_t sign_ = wasm_i32x4_shl(wasm_v128_and(halves_, wasm_i32x4_splat(0x8000)), 16);                 \
    const v128_t both_ =                                                                                         \
        wasm_v128_or(wasm_f32x4_mul(magnitude_, wasm_f32x4_const(0x1p112f, 0x1p84f, 0x1p112f, 0x1p84f)), sign_); \
    vscale = wasm_i32x4_shuffle(both_, both_, 1, 1, 1, 1);                                                        \
    vbias = wasm_i32x4_shuffle(both_, both_, 0, 0, 0, 0);                                                         \
  } while (0)

/* The 16 codes (as 16*q bytes) of a 4x4 leaf, both decodings computed, selected by mode (no branch:
 * modes alternate unpredictably). Both start from the payload's nibbles in order (nibble 2i = low
 * half of byte i): an FP4 code is one nibble; a T158 nibble holds two symbols, so each nibble is
 * repeated (unpack with itself) and the even copy masked with 0x03, the odd one with 0x0c, which
 * leaves symbol s as index s or 4*s of a 16*code table. */
static inline __attribute__((always_inline)) v128_t small_nibbles(v128_t v, int high_half) {
  const v128_t low4 = wasm_i8x16_splat(0x0f);
  const v128_t lo = wasm_v128_and(v, low4), hi = wasm_v128_and(wasm_u16x8_shr(v, 4), low4);
  return high_half ? wasm_i8x16_shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31)
                   : wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
}
/* T158 codes of nibbles 0..7 (high_half = 0) or 8..15 of nib. */
static inline __attribute__((always_inline)) v128_t t158_from_nibbles(v128_t nib, int high_half) {
  const v128_t t158_of = wasm_i8x16_const(0, 16, -16, 0, 16, 0, 0, 0, -16, 0, 0, 0, 0, 0, 0, 0);
  const v128_t pick = wasm_i16x8_splat(0x0c03);
  const v128_t twice = high_half ? wasm_i8x16_shuffle(nib, nib, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31)
                                 : wasm_i8x16_shuffle(nib, nib, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  return wasm_i8x16_swizzle(t158_of, wasm_v128_and(twice, pick));
}
/* 16*nibble: nibbles are < 16, so the 16-bit shift carries nothing into the next byte. */
static inline __attribute__((always_inline)) v128_t fp4_from_nibbles(v128_t nib) { return wasm_i16x8_shl(nib, 4); }

/* Codes k..k+31 of a leaf of side 1 << lg (4 or 5) to its rows at leaf_dst: 32 ternary codes come
 * from 8 payload bytes, 32 FP4 codes from 16. Used to expand side-by-side leaves row by row. */
static inline __attribute__((always_inline)) void step32(const u8 *payload, u32 mode, u32 k, float *leaf_dst, u32 cols, u32 lg,
                                                          v128_t scale, v128_t bias) {
  v128_t c0, c1;
  if (mode) {
    const v128_t nib = small_nibbles(wasm_v128_load64_zero(payload + (k >> 2)), 0);
    c0 = t158_from_nibbles(nib, 0);
    c1 = t158_from_nibbles(nib, 1);
  } else {
    const v128_t v = wasm_v128_load(payload + (k >> 1));
    c0 = fp4_from_nibbles(small_nibbles(v, 0));
    c1 = fp4_from_nibbles(small_nibbles(v, 1));
  }
  place16(leaf_dst, cols, lg, k, c0, scale, bias);
  place16(leaf_dst, cols, lg, k + 16, c1, scale, bias);
}

static inline __attribute__((always_inline)) v128_t codes_4x4(const u8 *payload, u32 mode) {
  const v128_t nib = small_nibbles(wasm_v128_load(payload), 0);
  return wasm_v128_bitselect(t158_from_nibbles(nib, 0), fp4_from_nibbles(nib), wasm_i8x16_splat(mode ? -1 : 0));
}

/* The 4 rows (4 floats each) of a 4x4 leaf from its codes. */
#define ROWS_4x4(codes, vscale, vbias, row0, row1, row2, row3)                                                     \
  do {                                                                                                           \
    const v128_t z_ = wasm_i32x4_const(0, 0, 0, 0);                                                              \
    const v128_t lo_ = wasm_i8x16_shuffle(z_, codes, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);      \
    const v128_t hi_ = wasm_i8x16_shuffle(z_, codes, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31); \
    row0 = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i16x8_shuffle(z_, lo_, 0, 8, 1, 9, 2, 10, 3, 11)), vscale), vbias); \
    row1 = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i16x8_shuffle(z_, lo_, 4, 12, 5, 13, 6, 14, 7, 15)), vscale), vbias); \
    row2 = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i16x8_shuffle(z_, hi_, 0, 8, 1, 9, 2, 10, 3, 11)), vscale), vbias); \
    row3 = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i16x8_shuffle(z_, hi_, 4, 12, 5, 13, 6, 14, 7, 15)), vscale), vbias); \
  } while (0)

/* Four 4x4 leaves' codes (16 per vector) expanded and stored: side by side (quad = 0: rows 0-3 get
 * leaf 0 | 1 | 2 | 3, 64 contiguous bytes a row) or as a split 8x8 node's TL, TR, BL, BR children
 * (quad = 1: rows 0-3 get leaf 0 | 1, rows 4-7 leaf 2 | 3). */
static inline __attribute__((always_inline)) void store_four_4x4(v128_t c0, v128_t c1, v128_t c2, v128_t c3, v128_t s0,
                                                                  v128_t b0, v128_t s1, v128_t b1, v128_t s2, v128_t b2,
                                                                  v128_t s3, v128_t b3, float *p, u32 cols, int quad) {
  v128_t a0, a1, a2, a3, e0, e1, e2, e3, k0, k1, k2, k3, h0, h1, h2, h3;
  ROWS_4x4(c0, s0, b0, a0, a1, a2, a3);
  ROWS_4x4(c1, s1, b1, e0, e1, e2, e3);
  ROWS_4x4(c2, s2, b2, k0, k1, k2, k3);
  ROWS_4x4(c3, s3, b3, h0, h1, h2, h3);
  if (!quad) {
    wasm_v128_store(p, a0), wasm_v128_store(p + 4, e0), wasm_v128_store(p + 8, k0), wasm_v128_store(p + 12, h0), p += cols;
    wasm_v128_store(p, a1), wasm_v128_store(p + 4, e1), wasm_v128_store(p + 8, k1), wasm_v128_store(p + 12, h1), p += cols;
    wasm_v128_store(p, a2), wasm_v128_store(p + 4, e2), wasm_v128_store(p + 8, k2), wasm_v128_store(p + 12, h2), p += cols;
    wasm_v128_store(p, a3), wasm_v128_store(p + 4, e3), wasm_v128_store(p + 8, k3), wasm_v128_store(p + 12, h3);
  } else {
    wasm_v128_store(p, a0), wasm_v128_store(p + 4, e0), p += cols;
    wasm_v128_store(p, a1), wasm_v128_store(p + 4, e1), p += cols;
    wasm_v128_store(p, a2), wasm_v128_store(p + 4, e2), p += cols;
    wasm_v128_store(p, a3), wasm_v128_store(p + 4, e3), p += cols;
    wasm_v128_store(p, k0), wasm_v128_store(p + 4, h0), p += cols;
    wasm_v128_store(p, k1), wasm_v128_store(p + 4, h1), p += cols;
    wasm_v128_store(p, k2), wasm_v128_store(p + 4, h2), p += cols;
    wasm_v128_store(p, k3), wasm_v128_store(p + 4, h3);
  }
}

/* The 64 codes of an 8x8 leaf as four 16-code vectors (rows 0-1, 2-3, 4-5, 6-7), like codes_4x4.
 * FP4 uses 32 bytes, T158 16: the second load of a T158 leaf may lie past the stream copy; the JS
 * side reserves 16 bytes of slack there (INPUT_SLACK_BYTES). */
#define CODES_8x8(payload, mode, k0, k1, k2, k3)                                                                  \
  do {                                                                                                           \
    const v128_t sel_ = wasm_i8x16_splat((mode) ? -1 : 0);                                                        \
    const v128_t v0_ = wasm_v128_load(payload), v1_ = wasm_v128_load((payload) + 16);                              \
    const v128_t n0_ = small_nibbles(v0_, 0), n1_ = small_nibbles(v0_, 1);                                       \
    k0 = wasm_v128_bitselect(t158_from_nibbles(n0_, 0), fp4_from_nibbles(n0_), sel_);                             \
    k1 = wasm_v128_bitselect(t158_from_nibbles(n0_, 1), fp4_from_nibbles(n1_), sel_);                             \
    k2 = wasm_v128_bitselect(t158_from_nibbles(n1_, 0), fp4_from_nibbles(small_nibbles(v1_, 0)), sel_);           \
    k3 = wasm_v128_bitselect(t158_from_nibbles(n1_, 1), fp4_from_nibbles(small_nibbles(v1_, 1)), sel_);           \
  } while (0)

/* Two rows of two side-by-side 8x8 leaves from their 16-code vectors: 64 contiguous bytes a row. */
#define ROWS_PAIR_8x8(p, cols, ka, sa, ba, kb, sb, bb)                                                            \
  do {                                                                                                           \
    v128_t a0_, a1_, a2_, a3_, e0_, e1_, e2_, e3_;                                                               \
    ROWS_4x4(ka, sa, ba, a0_, a1_, a2_, a3_);                                                                    \
    ROWS_4x4(kb, sb, bb, e0_, e1_, e2_, e3_);                                                                    \
    wasm_v128_store(p, a0_), wasm_v128_store((p) + 4, a1_), wasm_v128_store((p) + 8, e0_), wasm_v128_store((p) + 12, e1_); \
    wasm_v128_store((p) + (cols), a2_), wasm_v128_store((p) + (cols) + 4, a3_);                                  \
    wasm_v128_store((p) + (cols) + 8, e2_), wasm_v128_store((p) + (cols) + 12, e3_);                             \
  } while (0)

/*
 * Expand `count` leaves. Output element (r, c) goes to out[(r - row_base) * cols + c], which lets
 * the caller decode a band of macroblock rows into a small buffer.
 */
__attribute__((export_name("decode_leaves"))) void decode_leaves(const u32 *table, u32 count, float *out, u32 rows,
                                                                   u32 cols, u32 tiles_x, u32 row_base) {
  u32 cached_block = ~0u, by = 0, bx = 0, block_offset = 0, block_inside = 0;
  for (u32 n = 0; n < count; n++, table += 4) {
    const u32 block = table[0], geometry = table[1], params = table[2];
    const u8 *payload = (const u8 *)table[3];
    if (block != cached_block) { /* leaves of a block are contiguous: one division per block */
      cached_block = block;
      by = block / tiles_x;
      bx = block - by * tiles_x;
      /* a block wholly inside the tensor needs no per-leaf crop checks */
      block_inside = by * 64u + 64u <= rows && bx * 64u + 64u <= cols && by < (1u << 25) && bx < (1u << 25);
      block_offset = (by * 64u - row_base) * cols + bx * 64u;
    }
    u32 lg = (geometry >> 12) & 7u;
    if (lg < 2u || lg > 6u) continue; /* the parser never emits these; never index with them */
    const u32 size = 1u << lg, mode = (geometry >> 15) & 1u;
    const u32 y = geometry & 63u, x = (geometry >> 6) & 63u;
    float *dst;
    if (block_inside && y + size <= 64u && x + size <= 64u) {
      dst = out + (block_offset + y * cols + x); /* same u32 sum as the general path below */
    } else {
      const u32 r0 = by * 64u + y, c0 = bx * 64u + x;
      if (r0 >= rows || c0 >= cols) continue;
      dst = out + ((r0 - row_base) * cols + c0);
      const u32 keep_rows = rows - r0 < size ? rows - r0 : size;
      const u32 keep_cols = cols - c0 < size ? cols - c0 : size;
      if (keep_rows != size || keep_cols != size) {
        leaf_cropped(payload, dst, cols, lg, mode, keep_rows, keep_cols, half_to_float(params >> 16),
                     half_to_float(params & 0xffffu));
        continue;
      }
    }
    /* Four 4x4 leaves decoded together, either side by side (FULL_4x4 stores them so: each output
     * row gets 64 contiguous bytes, one cache line) or as the TL, TR, BL, BR children of a split
     * 8x8 node of a MIXED tree (two leaves share each row: 32 contiguous bytes). One 4x4 leaf alone
     * writes 16 bytes into each of 4 lines, which costs ~3x more per leaf once the output is
     * bigger than the cache. */
    if (lg == 2u && count - n > 3u && block_inside && table[4] == block && table[8] == block && table[12] == block) {
      const u32 g = geometry & 0x7fffu, g1 = table[5] & 0x7fffu, g2 = table[9] & 0x7fffu, g3 = table[13] & 0x7fffu;
      const int side_by_side = (x & 15u) == 0 && g1 == g + (4u << 6) && g2 == g + (8u << 6) && g3 == g + (12u << 6);
      const int quad = ((x | y) & 7u) == 0 && g1 == g + (4u << 6) && g2 == g + 4u && g3 == g + 4u + (4u << 6);
      if (side_by_side || quad) {
        v128_t s0, b0, s1, b1, s2, b2, s3, b3;
        LEAF_SCALE_BIAS(params, s0, b0);
        LEAF_SCALE_BIAS(table[6], s1, b1);
        LEAF_SCALE_BIAS(table[10], s2, b2);
        LEAF_SCALE_BIAS(table[14], s3, b3);
        const v128_t c0 = codes_4x4(payload, mode), c1 = codes_4x4((const u8 *)table[7], (table[5] >> 15) & 1u);
        const v128_t c2 = codes_4x4((const u8 *)table[11], (table[9] >> 15) & 1u);
        const v128_t c3 = codes_4x4((const u8 *)table[15], (table[13] >> 15) & 1u);
        store_four_4x4(c0, c1, c2, c3, s0, b0, s1, b1, s2, b2, s3, b3, dst, cols, quad);
        n += 3u;
        table += 12;
        continue;
      }
    }
    /* Two side-by-side 8x8 leaves (UNIFORM_8 stores them so), for the same reason: whole lines. */
    if (lg == 3u && (x & 15u) == 0 && count - n > 1u && block_inside && y + 8u <= 64u && table[4] == block &&
        (table[5] & 0x7fffu) == (geometry & 0x7fffu) + (8u << 6)) {
      v128_t sa, ba, sb, bb, ka0, ka1, ka2, ka3, kb0, kb1, kb2, kb3;
      LEAF_SCALE_BIAS(params, sa, ba);
      LEAF_SCALE_BIAS(table[6], sb, bb);
      CODES_8x8(payload, mode, ka0, ka1, ka2, ka3);
      CODES_8x8((const u8 *)table[7], (table[5] >> 15) & 1u, kb0, kb1, kb2, kb3);
      ROWS_PAIR_8x8(dst, cols, ka0, sa, ba, kb0, sb, bb);
      ROWS_PAIR_8x8(dst + 2 * cols, cols, ka1, sa, ba, kb1, sb, bb);
      ROWS_PAIR_8x8(dst + 4 * cols, cols, ka2, sa, ba, kb2, sb, bb);
      ROWS_PAIR_8x8(dst + 6 * cols, cols, ka3, sa, ba, kb3, sb, bb);
      n += 1u;
      table += 4;
      continue;
    }
    v128_t vscale, vbias;
    LEAF_SCALE_BIAS(params, vscale, vbias);
    /* 4x4 and 8x8 leaves (most leaves of fine layouts): both decodings, select by mode; no branch
     * on the mode, which alternates unpredictably. Both start from the payload's nibbles in order
     * (nibble 2i = low half of byte i): an FP4 code is one nibble, a T158 nibble holds two symbols. */
    if (lg <= 3u) {
      const v128_t is_t158 = wasm_i8x16_splat(mode ? -1 : 0);
      const v128_t low4 = wasm_i8x16_splat(0x0f);
      /* T158: each nibble appears twice (unpack with itself); masking the even copy with 0x03 and
       * the odd one with 0x0c leaves symbol s as index s or 4*s of this 16*code table */
      const v128_t t158_of = wasm_i8x16_const(0, 16, -16, 0, 16, 0, 0, 0, -16, 0, 0, 0, 0, 0, 0, 0);
      const v128_t pick = wasm_i16x8_splat(0x0c03);
      const v128_t v0 = wasm_v128_load(payload);
      const v128_t lo0 = wasm_v128_and(v0, low4), hi0 = wasm_v128_and(wasm_u16x8_shr(v0, 4), low4);
      const v128_t nib0 = wasm_i8x16_shuffle(lo0, hi0, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      /* 16*nibble: nibbles are < 16, so the 16-bit shift carries nothing into the next byte */
      const v128_t f0 = wasm_i16x8_shl(nib0, 4);
      const v128_t t0 = wasm_i8x16_swizzle(
          t158_of, wasm_v128_and(wasm_i8x16_shuffle(nib0, nib0, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), pick));
      if (lg == 2u) {
        place16(dst, cols, 2, 0, wasm_v128_bitselect(t0, f0, is_t158), vscale, vbias);
        continue;
      }
      /* 8x8: FP4 uses 32 bytes, T158 16. The second chunk of a T158 leaf may lie past the stream
       * copy; the JS side reserves 16 bytes of slack there (INPUT_SLACK_BYTES). */
      const v128_t v1 = wasm_v128_load(payload + 16);
      const v128_t nib1 = wasm_i8x16_shuffle(lo0, hi0, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      const v128_t lo1 = wasm_v128_and(v1, low4), hi1 = wasm_v128_and(wasm_u16x8_shr(v1, 4), low4);
      const v128_t nib2 = wasm_i8x16_shuffle(lo1, hi1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      const v128_t nib3 = wasm_i8x16_shuffle(lo1, hi1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      const v128_t t1 = wasm_i8x16_swizzle(
          t158_of, wasm_v128_and(wasm_i8x16_shuffle(nib0, nib0, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), pick));
      const v128_t t2 = wasm_i8x16_swizzle(
          t158_of, wasm_v128_and(wasm_i8x16_shuffle(nib1, nib1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), pick));
      const v128_t t3 = wasm_i8x16_swizzle(
          t158_of, wasm_v128_and(wasm_i8x16_shuffle(nib1, nib1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), pick));
      place16(dst, cols, 3, 0, wasm_v128_bitselect(t0, f0, is_t158), vscale, vbias);
      place16(dst, cols, 3, 16, wasm_v128_bitselect(t1, wasm_i16x8_shl(nib1, 4), is_t158), vscale, vbias);
      place16(dst, cols, 3, 32, wasm_v128_bitselect(t2, wasm_i16x8_shl(nib2, 4), is_t158), vscale, vbias);
      place16(dst, cols, 3, 48, wasm_v128_bitselect(t3, wasm_i16x8_shl(nib3, 4), is_t158), vscale, vbias);
      continue;
    }
    big_leaf(payload, dst, cols, lg, mode, vscale, vbias);
  }
}

/*
 * Validating parsers: every reject rule of DECISIONS.md section 3, and the leaf table exactly as
 * @sgfp4/format's parse() builds it (word 3 = addr_base + stream offset). They answer only
 * "ok" (the leaf count) or "not ok" (-1); the JS side then calls parse() for the exact error.
 * The stream is hostile: every read is checked against len first, offsets are computed in 64 bits
 * (no wrap-around), and at most table_cap leaves are written.
 * block_first[b] receives the first leaf of block b, block_first[B] the leaf count.
 */
typedef unsigned long long u64;
typedef u32 __attribute__((aligned(1))) unaligned_u32;

static inline u32 load32(const u8 *p) { return *(const unaligned_u32 *)p; }
static inline int half_nonfinite(u32 h) { return (h & 0x7c00u) == 0x7c00u; }

/* Bytes [from, to) of the stream are zero (from and to within len, checked by the caller). */
static int all_zero(const u8 *in, u32 from, u32 to) {
  u32 any = 0;
  for (; from < to && (from & 3u); from++) any |= in[from];
  for (; from + 4 <= to; from += 4) any |= load32(in + from);
  for (; from < to; from++) any |= in[from];
  return any == 0;
}

/* The padding of a payload of `used` bytes lies in its last 16-byte chunk (it is under 16 bytes):
 * bytes (used & 15)..15 of that chunk must be zero; none when used is a multiple of 16. Branch-free,
 * since FP4 and T158 leaves alternate at random. */
static inline int padding_zero(const u8 *last_chunk, u32 used) {
  const v128_t iota = wasm_i8x16_const(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const u32 first_pad = (used & 15u) ? (used & 15u) : 16u;
  const v128_t pad = wasm_u8x16_ge(iota, wasm_i8x16_splat((signed char)first_pad));
  return !wasm_v128_any_true(wasm_v128_and(wasm_v128_load(last_chunk), pad));
}

__attribute__((export_name("validate_v1"))) int validate_v1(const u8 *in, u32 len, u32 blocks, u32 *table, u32 table_cap,
                                                            u32 addr_base, u32 *block_first) {
  if ((u64)len != (u64)blocks * 2056u || blocks > table_cap) return -1;
  const u64 blob_base = 8ull * blocks, blob_len = 2048ull * blocks;
  for (u32 b = 0; b < blocks; b++) {
    const u32 header = load32(in + 4u * b);
    const u32 off_word = load32(in + 4u * blocks + 4u * b);
    const u32 flags = off_word & 0xfu, base = off_word & ~0xfu;
    if (flags & 0xcu) return -1;
    if ((u64)base + 2048u > blob_len) return -1;
    if (half_nonfinite(header >> 16) || half_nonfinite(header & 0xffffu)) return -1;
    const u32 mode = flags & 1u;
    const u32 payload = (u32)(blob_base + base); /* + 2048 <= len, checked above */
    if (mode && !all_zero(in, payload + 1024u, payload + 2048u)) return -1;
    table[4 * b] = b;
    table[4 * b + 1] = (6u << 12) | (mode << 15);
    table[4 * b + 2] = header;
    table[4 * b + 3] = payload + addr_base;
    block_first[b] = b;
  }
  block_first[blocks] = blocks;
  return (int)blocks;
}

/* The 4 bits at even positions of an 8-bit value, packed (x or y of a Morton index). */
static inline u32 morton_compact(u32 m) {
  m &= 0x55u;
  m = (m | (m >> 1)) & 0x33u;
  return (m | (m >> 2)) & 0x0fu;
}

/* Leaf geometry of a MIXED split map in pre-order DFS (TL, TR, BL, BR), without a stack.
 * Writes word 1 (y | x << 6 | log2 << 12) of each leaf to geo[4 * i + 1]; returns the leaf count,
 * or -1 if more than cap leaves or a set map bit past the last one consumed.
 * The walk keeps the Morton index m of the current node's first 4x4 cell (x in the even bits, y in
 * the odd ones: child order TL, TR, BL, BR is Morton order). After a leaf of side 2^lg, the next
 * node in pre-order starts at m + 4^(lg-2), and its side is fixed by how many base-4 digits of
 * that index are zero (the carry stopped at the first ancestor that was not a last child). This
 * replaces a climb loop whose trip count the branch predictor could not guess. */
static int walk_split_map(u32 map0, u32 map1, u32 map2, u32 *geo, u32 cap) {
  /* three words as scalars: a local array would need a stack, and this module has none */
#define MAP_BIT(k) ((((k) < 32u ? map0 : (k) < 64u ? map1 : map2) >> ((k) & 31u)) & 1u)
  u32 bit = 0, n = 0, m = 0, lg = 6;
  for (;;) {
    if (lg > 2u) {
      const u32 k = bit++;
      if (MAP_BIT(k)) { lg--; continue; } /* split: the first child starts at the same cell */
    }
    if (n >= cap) return -1;
    geo[4 * n + 1] = (morton_compact(m >> 1) << 2) | (morton_compact(m) << 8) | (lg << 12);
    n++;
    m += 1u << (2u * (lg - 2u));
    if (m >= 256u) break;
    lg = 2u + ((u32)__builtin_ctz(m) >> 1);
  }
  for (u32 k = bit; k < 96u; k++) if (MAP_BIT(k)) return -1;
#undef MAP_BIT
  return (int)n;
}

/* Header checks common to validate_v2 and validate_decode_v2; the record region's base, or 0 for "not ok"
 * (a valid base is at least 16). */
static inline u32 v2_record_base(const u8 *in, u32 len, u32 blocks) {
  if (len < 16) return 0;
  if (in[0] != 0x53 || in[1] != 0x47 || in[2] != 0x46 || in[3] != 0x34 || in[4] != 0x02) return 0;
  if (load32(in + 5) != blocks) return 0;
  if (!all_zero(in, 9, 16)) return 0;
  const u64 table_end = 16ull + 4ull * blocks, base = (table_end + 15u) & ~15ull;
  if (base > len) return 0;
  if (!all_zero(in, (u32)table_end, (u32)base)) return 0;
  return (u32)base;
}

/* Where record b starts (offsets must rise: *prev holds the previous one), with its 4-byte layout
 * word inside the stream; -1 for "not ok". */
static inline long long v2_record_start(const u8 *in, u32 len, u32 base, u32 b, long long *prev) {
  const u32 rel = load32(in + 16u + 4u * b);
  if (rel & 15u) return -1;
  if ((long long)rel <= *prev) return -1;
  *prev = rel;
  const u64 start64 = (u64)base + rel;
  if (start64 + 4u > len) return -1;
  return (long long)start64;
}

/* Validate the record at `start` (block b) and write its leaves to t (at most cap); the leaf
 * count, or -1 for "not ok". */
static inline __attribute__((always_inline)) int v2_record(const u8 *in, u32 len, u32 start, u32 b, u32 *t, u32 cap,
                                                           u32 addr_base) {
  const u32 sb = load32(in + start);
  if (sb >> 3) return -1;
  const u32 layout = sb & 7u;
  if (layout > 5u) return -1;
  u32 n, headers_at = start + 4u;
  if (layout == 4u) {
    if ((u64)start + 16u > len) return -1;
    const int walked = walk_split_map(load32(in + start + 4u), load32(in + start + 8u), load32(in + start + 12u), t, cap);
    if (walked < 0) return -1;
    n = (u32)walked;
    headers_at = start + 16u;
  } else {
    const u32 lg = layout == 5u ? 2u : 6u - layout;
    const u32 per_row = 64u >> lg;
    n = per_row * per_row;
    if (n > cap) return -1;
    const u32 row_shift = 6u - lg; /* per_row is a power of two: shifts, not divisions */
    for (u32 i = 0; i < n; i++) t[4 * i + 1] = ((i >> row_shift) << lg) | ((i & (per_row - 1u)) << (lg + 6u)) | (lg << 12);
  }
  const u64 headers_end = (u64)headers_at + 4u * n;
  if (headers_end > len) return -1;
  const u64 payload_start = (headers_end + 15u) & ~15ull;
  if (payload_start > len) return -1;
  if (!all_zero(in, (u32)headers_end, (u32)payload_start)) return -1;
  u64 p = payload_start;
  for (u32 i = 0; i < n; i++) {
    const u32 h = load32(in + headers_at + 4u * i);
    if (h & 0xeu) return -1;
    if (half_nonfinite(h >> 16) || half_nonfinite(h & 0xfff0u)) return -1;
    const u32 mode = h & 1u, g = t[4 * i + 1], lg = g >> 12;
    const u32 used = mode ? (1u << (2u * lg)) >> 2 : (1u << (2u * lg)) >> 1;
    const u32 padded = (used + 15u) & ~15u;
    if (p + padded > len) return -1;
    if (!padding_zero(in + (u32)p + padded - 16u, used)) return -1;
    t[4 * i] = b;
    t[4 * i + 1] = g | (mode << 15);
    t[4 * i + 2] = h & 0xfffffff0u;
    t[4 * i + 3] = (u32)p + addr_base;
    p += padded;
  }
  return (int)n;
}

__attribute__((export_name("validate_v2"))) int validate_v2(const u8 *in, u32 len, u32 blocks, u32 *table, u32 table_cap,
                                                            u32 addr_base, u32 *block_first) {
  const u32 base = v2_record_base(in, len, blocks);
  if (!base) return -1;
  u32 count = 0;
  long long prev = -1;
  for (u32 b = 0; b < blocks; b++) {
    const long long start = v2_record_start(in, len, base, b, &prev);
    if (start < 0) return -1;
    const int n = v2_record(in, len, (u32)start, b, table + 4ull * count, table_cap - count, addr_base);
    if (n < 0) return -1;
    block_first[b] = count;
    count += (u32)n;
  }
  block_first[blocks] = count;
  return (int)count;
}

/* Two side-by-side 8x8 leaves (headers ha, hb; payloads pa, pb) expanded: 64 contiguous bytes
 * per output row. The FP4-sized load of a T158 payload reads 16 bytes past it: the caller keeps
 * that inside the stream copy or its INPUT_SLACK_BYTES. */
static inline __attribute__((always_inline)) void pair_8x8(u32 ha, u32 hb, const u8 *pa, const u8 *pb, float *q, u32 cols) {
  v128_t sa, ba, sb, bb, ka0, ka1, ka2, ka3, kb0, kb1, kb2, kb3;
  LEAF_SCALE_BIAS(ha & 0xfffffff0u, sa, ba);
  LEAF_SCALE_BIAS(hb & 0xfffffff0u, sb, bb);
  CODES_8x8(pa, ha & 1u, ka0, ka1, ka2, ka3);
  CODES_8x8(pb, hb & 1u, kb0, kb1, kb2, kb3);
  ROWS_PAIR_8x8(q, cols, ka0, sa, ba, kb0, sb, bb);
  ROWS_PAIR_8x8(q + 2 * cols, cols, ka1, sa, ba, kb1, sb, bb);
  ROWS_PAIR_8x8(q + 4 * cols, cols, ka2, sa, ba, kb2, sb, bb);
  ROWS_PAIR_8x8(q + 6 * cols, cols, ka3, sa, ba, kb3, sb, bb);
}

/*
 * Four 4x4 leaves with consecutive headers and 16-byte payload chunks, validated (reserved header
 * bits, non-finite scale or bias, nonzero padding: any set bit of the result) and expanded:
 * side by side at dst (quad = 0: each output row gets 64 contiguous bytes, one cache line) or as
 * the TL, TR, BL, BR children of a split 8x8 node (quad = 1: 32 contiguous bytes a row).
 */
static inline __attribute__((always_inline)) v128_t four_4x4(const u8 *headers, const u8 *payload, float *dst, u32 cols,
                                                              int quad) {
  /* bytes a payload chunk must leave zero: 8..15 for FP4 (8 bytes used), 4..15 for T158 (4 used) */
  const v128_t pad_fp4 = wasm_i32x4_const(0, 0, -1, -1), pad_t158 = wasm_i32x4_const(0, -1, -1, -1);
  const v128_t exponent = wasm_i16x8_splat(0x7c00);
  const v128_t h = wasm_v128_load(headers);
  /* reserved header bits 1-3 set, or a non-finite scale or bias (exponent all ones) */
  v128_t bad = wasm_v128_or(wasm_v128_and(h, wasm_i32x4_splat(0xe)), wasm_i16x8_eq(wasm_v128_and(h, exponent), exponent));
  const v128_t modes = wasm_i32x4_sub(wasm_i32x4_const(0, 0, 0, 0), wasm_v128_and(h, wasm_i32x4_splat(1)));
  /* scale * 2^-28 and bias of the four leaves at once, as LEAF_SCALE_BIAS does for one */
  const v128_t scale_half = wasm_u32x4_shr(h, 16), bias_half = wasm_v128_and(h, wasm_i32x4_splat(0xfff0));
  const v128_t scales = wasm_v128_or(
      wasm_f32x4_mul(wasm_i32x4_shl(wasm_v128_and(scale_half, wasm_i32x4_splat(0x7fff)), 13), wasm_f32x4_splat(0x1p84f)),
      wasm_i32x4_shl(wasm_v128_and(scale_half, wasm_i32x4_splat(0x8000)), 16));
  const v128_t biases = wasm_v128_or(
      wasm_f32x4_mul(wasm_i32x4_shl(wasm_v128_and(bias_half, wasm_i32x4_splat(0x7fff)), 13), wasm_f32x4_splat(0x1p112f)),
      wasm_i32x4_shl(wasm_v128_and(bias_half, wasm_i32x4_splat(0x8000)), 16));
  const v128_t v0 = wasm_v128_load(payload), v1 = wasm_v128_load(payload + 16);
  const v128_t v2 = wasm_v128_load(payload + 32), v3 = wasm_v128_load(payload + 48);
  const v128_t m0 = wasm_i32x4_shuffle(modes, modes, 0, 0, 0, 0), m1 = wasm_i32x4_shuffle(modes, modes, 1, 1, 1, 1);
  const v128_t m2 = wasm_i32x4_shuffle(modes, modes, 2, 2, 2, 2), m3 = wasm_i32x4_shuffle(modes, modes, 3, 3, 3, 3);
  bad = wasm_v128_or(bad, wasm_v128_and(v0, wasm_v128_bitselect(pad_t158, pad_fp4, m0)));
  bad = wasm_v128_or(bad, wasm_v128_and(v1, wasm_v128_bitselect(pad_t158, pad_fp4, m1)));
  bad = wasm_v128_or(bad, wasm_v128_and(v2, wasm_v128_bitselect(pad_t158, pad_fp4, m2)));
  bad = wasm_v128_or(bad, wasm_v128_and(v3, wasm_v128_bitselect(pad_t158, pad_fp4, m3)));
  const v128_t n0 = small_nibbles(v0, 0), n1 = small_nibbles(v1, 0), n2 = small_nibbles(v2, 0), n3 = small_nibbles(v3, 0);
  const v128_t c0 = wasm_v128_bitselect(t158_from_nibbles(n0, 0), fp4_from_nibbles(n0), m0);
  const v128_t c1 = wasm_v128_bitselect(t158_from_nibbles(n1, 0), fp4_from_nibbles(n1), m1);
  const v128_t c2 = wasm_v128_bitselect(t158_from_nibbles(n2, 0), fp4_from_nibbles(n2), m2);
  const v128_t c3 = wasm_v128_bitselect(t158_from_nibbles(n3, 0), fp4_from_nibbles(n3), m3);
  const v128_t s0 = wasm_i32x4_shuffle(scales, scales, 0, 0, 0, 0), b0 = wasm_i32x4_shuffle(biases, biases, 0, 0, 0, 0);
  const v128_t s1 = wasm_i32x4_shuffle(scales, scales, 1, 1, 1, 1), b1 = wasm_i32x4_shuffle(biases, biases, 1, 1, 1, 1);
  const v128_t s2 = wasm_i32x4_shuffle(scales, scales, 2, 2, 2, 2), b2 = wasm_i32x4_shuffle(biases, biases, 2, 2, 2, 2);
  const v128_t s3 = wasm_i32x4_shuffle(scales, scales, 3, 3, 3, 3), b3 = wasm_i32x4_shuffle(biases, biases, 3, 3, 3, 3);
  store_four_4x4(c0, c1, c2, c3, s0, b0, s1, b1, s2, b2, s3, b3, dst, cols, quad);
  return bad;
}

/*
 * A FULL_4x4 record wholly inside the tensor, validated and expanded without a leaf table, four
 * side-by-side leaves at a time (one 16-byte load of their headers, checked together).
 * 1 = ok, 0 = not ok.
 */
static int full_4x4_record(const u8 *in, u32 len, u32 start, float *dst, u32 cols) {
  const u64 headers_at = (u64)start + 4u, payload_at = (headers_at + 1024u + 15u) & ~15ull;
  if (payload_at + 256u * 16u > len) return 0;
  if (!all_zero(in, (u32)(headers_at + 1024u), (u32)payload_at)) return 0;
  const u8 *headers = in + (u32)headers_at, *payload = in + (u32)payload_at;
  v128_t bad = wasm_i32x4_const(0, 0, 0, 0);
  for (u32 group = 0; group < 64u; group++, headers += 16, payload += 64) {
    /* leaf i of the record sits at row 4 * (i / 16), column 4 * (i % 16): group g = leaves 4g..4g+3 */
    bad = wasm_v128_or(bad, four_4x4(headers, payload, dst + (group >> 2) * 4u * cols + (group & 3u) * 16u, cols, 0));
  }
  return !wasm_v128_any_true(bad);
}

/*
 * A MIXED record wholly inside the tensor, validated and expanded while its split map is walked
 * (Morton order, as walk_split_map), without a leaf table. The leaf count is known up front:
 * each split turns one node into four, so n = 1 + 3 * (set bits of the map) for a valid map, which
 * places the payloads; a map with set bits the walk does not reach is rejected at the end. The
 * four 4x4 children of a split 8x8 node are expanded together. 1 = ok, 0 = not ok.
 */
static int mixed_record(const u8 *in, u32 len, u32 start, float *dst, u32 cols) {
  if ((u64)start + 16u > len) return 0;
  const u32 map0 = load32(in + start + 4u), map1 = load32(in + start + 8u), map2 = load32(in + start + 12u);
  const u32 n = 1u + 3u * (u32)(__builtin_popcount(map0) + __builtin_popcount(map1) + __builtin_popcount(map2));
  if (n > 256u) return 0;
  const u64 headers_end = (u64)start + 16u + 4u * n, payload_at = (headers_end + 15u) & ~15ull;
  if (payload_at > len) return 0;
  if (!all_zero(in, (u32)headers_end, (u32)payload_at)) return 0;
#define MAP_BIT(k) ((((k) < 32u ? map0 : (k) < 64u ? map1 : map2) >> ((k) & 31u)) & 1u)
  const u8 *header = in + start + 16u;
  u64 p = payload_at;
  u32 bit = 0, leaves = 0, m = 0, lg = 6, bad = 0;
  v128_t bad4 = wasm_i32x4_const(0, 0, 0, 0);
  for (;;) {
    float *leaf_dst = dst + (morton_compact(m >> 1) << 2) * cols + (morton_compact(m) << 2);
    const u32 split = MAP_BIT(bit); /* lg > 2 here: 4x4 nodes only come as the four children below */
    bit++;
    if (split && lg > 3u) { lg--; continue; } /* the first child starts at the same cell */
    if (split) { /* a split 8x8 node: four 4x4 leaves, 16-byte payload chunks */
      if (leaves + 4u > n || p + 64u > len) return 0;
      bad4 = wasm_v128_or(bad4, four_4x4(header, in + (u32)p, leaf_dst, cols, 1));
      header += 16, p += 64, leaves += 4, m += 4u;
    } else if (lg == 3u && (m & 4u) == 0 && MAP_BIT(bit) == 0) {
      /* an 8x8 leaf that is a left child (TL or BL) whose right sibling, the next node, is an
       * 8x8 leaf too: both at once, 64 contiguous bytes per output row */
      bit++;
      if (leaves + 2u > n) return 0;
      const u32 ha = load32(header), hb = load32(header + 4);
      bad |= ((ha | hb) & 0xeu) | half_nonfinite(ha >> 16) | half_nonfinite(ha & 0xffffu) | half_nonfinite(hb >> 16) |
             half_nonfinite(hb & 0xffffu);
      const u64 pb = p + ((ha & 1u) ? 16u : 32u), p_end = pb + ((hb & 1u) ? 16u : 32u);
      if (p_end > len) return 0;
      pair_8x8(ha, hb, in + (u32)p, in + (u32)pb, leaf_dst, cols);
      header += 8, p = p_end, leaves += 2, m += 8u;
    } else {
      if (leaves + 1u > n) return 0;
      const u32 h = load32(header);
      bad |= (h & 0xeu) | half_nonfinite(h >> 16) | half_nonfinite(h & 0xffffu);
      const u32 mode = h & 1u;
      /* 8x8 and larger payloads are whole 16-byte chunks: no padding */
      const u32 used = mode ? (1u << (2u * lg)) >> 2 : (1u << (2u * lg)) >> 1;
      if (p + used > len) return 0;
      const u8 *payload = in + (u32)p;
      v128_t vscale, vbias;
      LEAF_SCALE_BIAS(h & 0xfffffff0u, vscale, vbias);
      if (lg == 3u) { /* T158 reads 16 bytes past its payload: inside the stream copy's slack */
        v128_t k0, k1, k2, k3;
        CODES_8x8(payload, mode, k0, k1, k2, k3);
        place16(leaf_dst, cols, 3, 0, k0, vscale, vbias);
        place16(leaf_dst, cols, 3, 16, k1, vscale, vbias);
        place16(leaf_dst, cols, 3, 32, k2, vscale, vbias);
        place16(leaf_dst, cols, 3, 48, k3, vscale, vbias);
      } else {
        big_leaf(payload, leaf_dst, cols, lg, mode, vscale, vbias);
      }
      header += 4, p += used, leaves += 1, m += 1u << (2u * (lg - 2u));
    }
    if (m >= 256u) break;
    lg = 2u + ((u32)__builtin_ctz(m) >> 1); /* the next node in pre-order: m's trailing zero digits */
  }
  for (u32 k = bit; k < 96u; k++) if (MAP_BIT(k)) return 0;
#undef MAP_BIT
  return leaves == n && !bad && !wasm_v128_any_true(bad4);
}

/*
 * A UNIFORM_8 record wholly inside the tensor, like full_4x4_record: two side-by-side leaves at
 * a time (64 contiguous bytes per output row). 8x8 payloads need no padding (32 bytes FP4, 16
 * bytes T158); the FP4-sized load of a T158 leaf may read 16 bytes past it, inside the stream copy
 * or its INPUT_SLACK_BYTES. 1 = ok, 0 = not ok.
 */
static int uniform_8_record(const u8 *in, u32 len, u32 start, float *dst, u32 cols) {
  const u64 headers_at = (u64)start + 4u, payload_at = (headers_at + 256u + 15u) & ~15ull;
  if (payload_at > len) return 0;
  if (!all_zero(in, (u32)(headers_at + 256u), (u32)payload_at)) return 0;
  const u8 *headers = in + (u32)headers_at;
  u64 p = payload_at;
  u32 bad = 0;
  for (u32 pair = 0; pair < 32u; pair++, headers += 8) {
    const u32 ha = load32(headers), hb = load32(headers + 4);
    bad |= (ha | hb) & 0xeu;
    bad |= half_nonfinite(ha >> 16) | half_nonfinite(ha & 0xffffu) | half_nonfinite(hb >> 16) | half_nonfinite(hb & 0xffffu);
    const u32 mode_a = ha & 1u, mode_b = hb & 1u;
    const u64 pa = p, pb = p + (mode_a ? 16u : 32u);
    p = pb + (mode_b ? 16u : 32u);
    if (p > len) return 0;
    /* leaf i of the record sits at row 8 * (i / 8), column 8 * (i % 8): pair j = leaves 2j, 2j+1 */
    pair_8x8(ha, hb, in + (u32)pa, in + (u32)pb, dst + (pair >> 2) * 8u * cols + (pair & 3u) * 16u, cols);
  }
  return !bad;
}

/*
 * A UNIFORM_16 or UNIFORM_32 record (lg = 4 or 5) wholly inside the tensor: the leaves of one row
 * of leaves (4 or 2 of them) are expanded together, 32 codes of each in turn, so every output row
 * is written as 256 contiguous bytes (one leaf at a time would write 64 or 128 bytes to each of
 * 16 or 32 rows, 4 KiB apart for 1024 columns). Payloads need no padding at these sizes.
 * Four named leaf slots, not arrays: this module has no stack. 1 = ok, 0 = not ok.
 */
#define ROW_LEAF_START(j, mode_j, payload_j, scale_j, bias_j)                                                   \
  do {                                                                                                         \
    const u32 h_ = load32(in + (u32)headers_at + 4u * (leaf_row * across + (j)));                              \
    bad |= (h_ & 0xeu) | half_nonfinite(h_ >> 16) | half_nonfinite(h_ & 0xffffu);                               \
    mode_j = h_ & 1u;                                                                                           \
    payload_j = in + (u32)p;                                                                                    \
    p += mode_j ? area >> 2 : area >> 1;                                                                        \
    LEAF_SCALE_BIAS(h_ & 0xfffffff0u, scale_j, bias_j);                                                         \
  } while (0)
#define ROW_LEAF_STEP(j, mode_j, payload_j, scale_j, bias_j) step32(payload_j, mode_j, k, row + ((j) << lg), cols, lg, scale_j, bias_j)
static inline __attribute__((always_inline)) int uniform_rows_record(const u8 *in, u32 len, u32 start, float *dst,
                                                                     u32 cols, u32 lg) {
  const u32 across = 64u >> lg, leaves = across * across, area = 1u << (2 * lg);
  const u64 headers_at = (u64)start + 4u, payload_at = (headers_at + 4u * leaves + 15u) & ~15ull;
  if (payload_at > len) return 0;
  if (!all_zero(in, (u32)(headers_at + 4u * leaves), (u32)payload_at)) return 0;
  u64 p = payload_at;
  u32 bad = 0;
  for (u32 leaf_row = 0; leaf_row < across; leaf_row++) {
    const u8 *pa, *pb, *pc = 0, *pd = 0;
    u32 ma, mb, mc = 0, md = 0;
    v128_t sa, ba, sb, bb, sc = wasm_f32x4_splat(0), bc = sc, sd = sc, bd = sc;
    ROW_LEAF_START(0, ma, pa, sa, ba);
    ROW_LEAF_START(1, mb, pb, sb, bb);
    if (across == 4u) {
      ROW_LEAF_START(2, mc, pc, sc, bc);
      ROW_LEAF_START(3, md, pd, sd, bd);
    }
    if (p > len) return 0;
    float *row = dst + leaf_row * (1u << lg) * cols;
    for (u32 k = 0; k < area; k += 32) {
      ROW_LEAF_STEP(0, ma, pa, sa, ba);
      ROW_LEAF_STEP(1, mb, pb, sb, bb);
      if (across == 4u) {
        ROW_LEAF_STEP(2, mc, pc, sc, bc);
        ROW_LEAF_STEP(3, md, pd, sd, bd);
      }
    }
  }
  return !bad;
}
#undef ROW_LEAF_START
#undef ROW_LEAF_STEP

/*
 * Output bands. Writing each leaf straight into a large output sends 64 to 256 bytes to each of
 * many rows (4 KiB apart for 1024 columns); measured on pure stores, that pattern costs ~1.7x
 * (64 MiB) to ~2x (16 MiB) a sequential write of the same bytes. So leaves wholly inside the tensor
 * are expanded into a band of 64 rows x up to `chunk_blocks` macroblocks (cache-sized), which is
 * then copied out with memory.copy: one contiguous run when the band spans the whole row width,
 * else one run per row. Edge macroblocks (cropped) are written straight to the output.
 */
static inline void flush_band(const float *band, u32 stride, float *out, u32 cols, u32 by, u32 bx0, u32 inside_blocks) {
  if (!inside_blocks) return;
  float *dst = out + (by * 64u) * cols + bx0 * 64u;
  if (bx0 == 0 && inside_blocks * 64u == cols && stride == cols) {
    __builtin_memcpy(dst, band, 64u * cols * 4u);
    return;
  }
  for (u32 r = 0; r < 64u; r++, dst += cols, band += stride) __builtin_memcpy(dst, band, inside_blocks * 256u);
}

/* Leaf table entries of one macroblock (block index in word 0 ignored) into a 64x64 area at dst, row stride `stride`. */
static inline void decode_block_at(const u32 *table, u32 count, float *dst, u32 stride) {
  /* decode_leaves places block `table[0]` at row (table[0] * 64 - row_base): row_base cancels it,
   * and `rows` = that row + 64 marks the block as wholly inside (no crop checks) */
  const u32 block_row = table[0] * 64u;
  decode_leaves(table, count, dst, block_row + 64u, stride, 1, block_row);
}

/*
 * Validate and decode in one pass: each record is checked, its leaves are written to `scratch`
 * (room for 256 leaves, so it stays in L1 cache), and they are expanded into `out` at once, while
 * the record's bytes are still in cache. It saves a pass over the stream and the whole-stream leaf
 * table. `scratch` holds one record's leaf table (256 entries, 4 KiB). The price: on an invalid stream the records before the fault have already been written
 * to `out` (the caller documents that `out` is unspecified after an error). 0 = ok, -1 = not ok.
 */
/* Records b0..b1-1 of a stream whose header checks passed (base: its record region); prev: the
 * offset of record b0-1, or -1. Inner blocks go to `band` when chunk_blocks != 0, else straight to
 * `out`, which holds output rows from row_base on; edge blocks always go to `out`. 0 ok, -1 not ok. */
static int decode_records(const u8 *in, u32 len, u32 base, u32 b0, u32 b1, long long prev, u32 *scratch, float *out,
                          u32 rows, u32 cols, u32 tiles_x, u32 row_base, float *band, u32 chunk_blocks) {
  /* chunk_blocks 0: no band, inner blocks are written straight to `out` (outputs that fit in cache) */
  const u32 banded = chunk_blocks != 0u, stride = banded ? chunk_blocks * 64u : cols;
  u32 chunk_by = b0 / tiles_x, chunk_bx0 = b0 - chunk_by * tiles_x, chunk_inside = 0; /* band: blocks chunk_bx0.. of row chunk_by */
  for (u32 b = b0; b < b1; b++) {
    const long long start = v2_record_start(in, len, base, b, &prev);
    if (start < 0) return -1;
    const u32 by = b / tiles_x, bx = b - by * tiles_x;
    if (banded && (by != chunk_by || bx - chunk_bx0 >= chunk_blocks)) { /* next chunk: copy out the previous one */
      flush_band(band, stride, out, cols, chunk_by, chunk_bx0, chunk_inside);
      chunk_by = by, chunk_bx0 = bx, chunk_inside = 0;
    }
    const int inside = by * 64u + 64u <= rows && bx * 64u + 64u <= cols && by < (1u << 25) && bx < (1u << 25);
    if (!inside) {
      /* addr_base = in: the payload addresses are absolute, as decode_leaves reads them */
      const int n = v2_record(in, len, (u32)start, b, scratch, 256u, (u32)in);
      if (n < 0) return -1;
      decode_leaves(scratch, (u32)n, out, rows, cols, tiles_x, row_base);
      continue;
    }
    /* inside blocks of a row come first and contiguous: the band's copied width grows by one */
    chunk_inside = bx - chunk_bx0 + 1u;
    float *dst = banded ? band + (bx - chunk_bx0) * 64u : out + ((by * 64u - row_base) * cols + bx * 64u);
    int ok;
    switch (load32(in + start)) {
      case 1: ok = uniform_rows_record(in, len, (u32)start, dst, stride, 5); break;
      case 2: ok = uniform_rows_record(in, len, (u32)start, dst, stride, 4); break;
      case 3: ok = uniform_8_record(in, len, (u32)start, dst, stride); break;
      case 5: ok = full_4x4_record(in, len, (u32)start, dst, stride); break;
      case 4: ok = mixed_record(in, len, (u32)start, dst, stride); break;
      default: { /* UNIFORM_64, and anything v2_record rejects */
        const int n = v2_record(in, len, (u32)start, b, scratch, 256u, (u32)in);
        ok = n >= 0;
        if (ok) decode_block_at(scratch, (u32)n, dst, stride);
      }
    }
    if (!ok) return -1;
  }
  if (banded) flush_band(band, stride, out, cols, chunk_by, chunk_bx0, chunk_inside);
  return 0;
}

__attribute__((export_name("validate_decode_v2"))) int validate_decode_v2(const u8 *in, u32 len, u32 blocks, u32 *scratch,
                                                                          float *out, u32 rows, u32 cols, u32 tiles_x,
                                                                          float *band, u32 chunk_blocks) {
  const u32 base = v2_record_base(in, len, blocks);
  if (!base) return -1;
  return decode_records(in, len, base, 0, blocks, -1, scratch, out, rows, cols, tiles_x, 0, band, chunk_blocks);
}

/*
 * The same one pass over records b0..b1-1 only, written to `out` holding output rows from row_base
 * on: decode() expands a band of macroblock rows at a time into cache-sized scratch this way.
 * Records before b0 must have been accepted by earlier calls (their offsets order this one).
 */
__attribute__((export_name("validate_decode_v2_rows"))) int validate_decode_v2_rows(const u8 *in, u32 len, u32 blocks, u32 b0,
                                                                                    u32 b1, u32 *scratch, float *out,
                                                                                    u32 rows, u32 cols, u32 tiles_x,
                                                                                    u32 row_base) {
  const u32 base = v2_record_base(in, len, blocks);
  if (!base || b0 > b1 || b1 > blocks) return -1;
  const long long prev = b0 ? (long long)load32(in + 16u + 4u * (b0 - 1u)) : -1;
  return decode_records(in, len, base, b0, b1, prev, scratch, out, rows, cols, tiles_x, row_base, 0, 0);
}

/*
 * v1 leaves of an already validated stream (validate_v1's table: one 64x64 leaf per block, in
 * block order), through the output band like validate_decode_v2.
 */
__attribute__((export_name("decode_v1_banded"))) void decode_v1_banded(const u32 *table, u32 blocks, float *out, u32 rows,
                                                                        u32 cols, u32 tiles_x, float *band, u32 chunk_blocks) {
  const u32 stride = chunk_blocks * 64u;
  u32 chunk_by = 0, chunk_bx0 = 0, chunk_inside = 0;
  for (u32 b = 0; b < blocks; b++, table += 4) {
    const u32 by = b / tiles_x, bx = b - by * tiles_x;
    if (by != chunk_by || bx - chunk_bx0 >= chunk_blocks) {
      flush_band(band, stride, out, cols, chunk_by, chunk_bx0, chunk_inside);
      chunk_by = by, chunk_bx0 = bx, chunk_inside = 0;
    }
    if (by * 64u + 64u <= rows && bx * 64u + 64u <= cols && by < (1u << 25) && bx < (1u << 25)) {
      chunk_inside = bx - chunk_bx0 + 1u;
      decode_block_at(table, 1, band + (bx - chunk_bx0) * 64u, stride);
    } else {
      decode_leaves(table, 1, out, rows, cols, tiles_x, 0);
    }
  }
  flush_band(band, stride, out, cols, chunk_by, chunk_bx0, chunk_inside);
}
