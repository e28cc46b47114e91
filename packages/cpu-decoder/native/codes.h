/*
 * From payload bytes to output floats, in SIMD: FP4 nibbles and T158 symbols become bytes holding
 * 16 * code, interleaving with zero puts each code at the top of an i32 lane (code * 2^28), then
 * convert, multiply by S * 2^-28 and add Bias (exact: see kernel.c), and store rows of a leaf.
 * Used by the table expander (expand.h) and the one-pass record decoders (fused.h).
 */
static inline __attribute__((always_inline)) void emit16(float *p0, float *p1, float *p2, float *p3, v128_t codes,
                                                          v128_t scale, v128_t bias) {
  const v128_t z = wasm_i32x4_const(0, 0, 0, 0);
  /* interleaving with zero puts each byte at the top of its lane: i32 = 16*q << 24 = q * 2^28.
   * Each vector is stored as soon as it is made: V8 has 16 xmm registers, and values kept live
   * across a leaf get spilled (or their constants rebuilt), which costs more than the math. */
  const v128_t lo = wasm_i8x16_shuffle(z, codes, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  wasm_v128_store(p0, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i16x8_shuffle(z, lo, 0, 8, 1, 9, 2, 10, 3, 11)), scale), bias));
  wasm_v128_store(p1, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i16x8_shuffle(z, lo, 4, 12, 5, 13, 6, 14, 7, 15)), scale), bias));
  const v128_t hi = wasm_i8x16_shuffle(z, codes, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  wasm_v128_store(p2, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i16x8_shuffle(z, hi, 0, 8, 1, 9, 2, 10, 3, 11)), scale), bias));
  wasm_v128_store(p3, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i16x8_shuffle(z, hi, 4, 12, 5, 13, 6, 14, 7, 15)), scale), bias));
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
/* A leaf cut by the tensor edge: scalar, only the kept rows x cols. */
static void leaf_cropped(const u8 *src, float *dst, u32 cols, u32 lg, u32 mode, u32 keep_rows, u32 keep_cols, float scale,
                         float bias) {
  for (u32 i = 0; i < keep_rows; i++) {
    for (u32 j = 0; j < keep_cols; j++) {
      u32 idx = (i << lg) + j;
      const int code = mode ? sgfp4_t158_code(src[idx >> 2] >> ((idx & 3u) * 2u)) : sgfp4_fp4_code(src[idx >> 1] >> ((idx & 1u) * 4u));
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


/* 16 codes (rows 2r, 2r+1 of an 8x8 leaf) to their 2 x 8 floats at p. */
static inline __attribute__((always_inline)) void rows2_8x8(float *p, u32 cols, v128_t codes, v128_t scale, v128_t bias) {
  emit16(p, p + 4, p + cols, p + cols + 4, codes, scale, bias);
}

/* Scale * 2^-28 and bias of two consecutive v2 leaf headers (8 bytes at h), splatted, as
 * LEAF_SCALE_BIAS does for one (flag bits masked off the biases); and their reserved bits and
 * non-finite halves as nonzero lanes of `bad` (OR-ed in: judged once per record). */
#define PAIR_SCALE_BIAS(h, sa, ba, sb, bb, bad)                                                                  \
  do {                                                                                                           \
    const v128_t hh_ = wasm_v128_load64_zero(h);                                                                \
    const v128_t exp_ = wasm_i16x8_splat(SGFP4_HALF_EXPONENT_MASK);                                              \
    bad = wasm_v128_or(bad, wasm_v128_or(wasm_v128_and(hh_, wasm_i32x4_splat(SGFP4_V2_LEAF_RESERVED_MASK)),      \
                                         wasm_i16x8_eq(wasm_v128_and(hh_, exp_), exp_)));                        \
    const v128_t halves_ = wasm_u32x4_extend_low_u16x8(hh_); /* bias a, scale a, bias b, scale b */              \
    const v128_t magnitude_ = wasm_i32x4_shl(wasm_v128_and(halves_, wasm_i32x4_const(0x7ff0, 0x7fff, 0x7ff0, 0x7fff)), 13); \
    const v128_t sign_ = wasm_i32x4_shl(wasm_v128_and(halves_, wasm_i32x4_splat(0x8000)), 16);                 \
    const v128_t both_ =                                                                                         \
        wasm_v128_or(wasm_f32x4_mul(magnitude_, wasm_f32x4_const(0x1p112f, 0x1p84f, 0x1p112f, 0x1p84f)), sign_); \
    sa = wasm_i32x4_shuffle(both_, both_, 1, 1, 1, 1);                                                            \
    ba = wasm_i32x4_shuffle(both_, both_, 0, 0, 0, 0);                                                            \
    sb = wasm_i32x4_shuffle(both_, both_, 3, 3, 3, 3);                                                            \
    bb = wasm_i32x4_shuffle(both_, both_, 2, 2, 2, 2);                                                            \
  } while (0)

/* The same for four consecutive headers (16 bytes at h): scales and biases hold the four leaves'
 * scale * 2^-28 and bias, lane i for leaf i (splat one with LEAF_LANE). */
#define FOUR_SCALE_BIAS(h, scales, biases, bad)                                                                  \
  do {                                                                                                           \
    const v128_t exp_ = wasm_i16x8_splat(SGFP4_HALF_EXPONENT_MASK);                                              \
    bad = wasm_v128_or(bad, wasm_v128_or(wasm_v128_and(h, wasm_i32x4_splat(SGFP4_V2_LEAF_RESERVED_MASK)),        \
                                         wasm_i16x8_eq(wasm_v128_and(h, exp_), exp_)));                          \
    const v128_t scale_half_ = wasm_u32x4_shr(h, 16), bias_half_ = wasm_v128_and(h, wasm_i32x4_splat(SGFP4_V2_BIAS_MASK)); \
    scales = wasm_v128_or(                                                                                       \
        wasm_f32x4_mul(wasm_i32x4_shl(wasm_v128_and(scale_half_, wasm_i32x4_splat(0x7fff)), 13), wasm_f32x4_splat(0x1p84f)), \
        wasm_i32x4_shl(wasm_v128_and(scale_half_, wasm_i32x4_splat(0x8000)), 16));                             \
    biases = wasm_v128_or(                                                                                       \
        wasm_f32x4_mul(wasm_i32x4_shl(wasm_v128_and(bias_half_, wasm_i32x4_splat(0x7fff)), 13), wasm_f32x4_splat(0x1p112f)), \
        wasm_i32x4_shl(wasm_v128_and(bias_half_, wasm_i32x4_splat(0x8000)), 16));                              \
  } while (0)
#define LEAF_LANE(v, i) wasm_i32x4_shuffle(v, v, i, i, i, i)

/* Two side-by-side FP4 8x8 leaves (payloads pa, pb: 32 bytes each) expanded: 64 contiguous bytes
 * per output row. Code 2i is the low nibble of byte i, shifted to the top of a byte, code 2i+1 the
 * high one, already there; one AND clears what lies below them. No T158 decoding, no select. */
static inline __attribute__((always_inline)) void pair_8x8_fp4(const u8 *pa, const u8 *pb, float *q, u32 cols, v128_t sa,
                                                                v128_t ba, v128_t sb, v128_t bb) {
  const v128_t top = wasm_i8x16_splat((signed char)0xf0);
  /* a rolled loop, one pair of rows a turn: unrolled, V8 computes all 8 rows' addresses up front
   * and spills them (the guard: @sgfp4/c-decoder compiles these parts with other compilers too) */
#ifdef __clang__
#pragma clang loop unroll(disable)
#endif
  for (u32 r = 0; r < 4u; r++, pa += 8, pb += 8, q += 2 * cols) {
    const v128_t va = wasm_v128_load64_zero(pa), vb = wasm_v128_load64_zero(pb);
    rows2_8x8(q, cols, wasm_v128_and(wasm_i8x16_shuffle(wasm_i16x8_shl(va, 4), va, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), top), sa, ba);
    rows2_8x8(q + 8, cols, wasm_v128_and(wasm_i8x16_shuffle(wasm_i16x8_shl(vb, 4), vb, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), top), sb, bb);
  }
}

/* Four FP4 8x8 leaves with consecutive headers h (one 16-byte load) and 4 x 32 payload bytes at p:
 * leaves 0 and 1 side by side at d01, leaves 2 and 3 at d23 (UNIFORM_8: the next 16 columns; a
 * split 16x16 node: 8 rows down). Header faults are OR-ed into `bad`. */
static inline __attribute__((always_inline)) v128_t four_8x8_fp4(v128_t h, const u8 *p, float *d01, float *d23, u32 cols, v128_t bad) {
  v128_t scales, biases;
  FOUR_SCALE_BIAS(h, scales, biases, bad);
  pair_8x8_fp4(p, p + 32, d01, cols, LEAF_LANE(scales, 0), LEAF_LANE(biases, 0), LEAF_LANE(scales, 1), LEAF_LANE(biases, 1));
  pair_8x8_fp4(p + 64, p + 96, d23, cols, LEAF_LANE(scales, 2), LEAF_LANE(biases, 2), LEAF_LANE(scales, 3), LEAF_LANE(biases, 3));
  return bad;
}

/* Two side-by-side 8x8 leaves (headers at h, mode bits ma, mb; payloads pa, pb) expanded: 64
 * contiguous bytes per output row. Header faults are OR-ed into `bad`. The FP4-sized load of a
 * T158 payload reads 16 bytes past it: the caller keeps that inside the stream copy or its
 * INPUT_SLACK_BYTES. */
static inline __attribute__((always_inline)) v128_t pair_8x8(const u8 *h, u32 ma, u32 mb, const u8 *pa, const u8 *pb, float *q,
                                                              u32 cols, v128_t bad) {
  v128_t sa, ba, sb, bb;
  PAIR_SCALE_BIAS(h, sa, ba, sb, bb, bad);
  if (!(ma | mb)) {
    pair_8x8_fp4(pa, pb, q, cols, sa, ba, sb, bb);
    return bad;
  }
  v128_t ka0, ka1, ka2, ka3, kb0, kb1, kb2, kb3;
  CODES_8x8(pa, ma, ka0, ka1, ka2, ka3);
  CODES_8x8(pb, mb, kb0, kb1, kb2, kb3);
  ROWS_PAIR_8x8(q, cols, ka0, sa, ba, kb0, sb, bb);
  ROWS_PAIR_8x8(q + 2 * cols, cols, ka1, sa, ba, kb1, sb, bb);
  ROWS_PAIR_8x8(q + 4 * cols, cols, ka2, sa, ba, kb2, sb, bb);
  ROWS_PAIR_8x8(q + 6 * cols, cols, ka3, sa, ba, kb3, sb, bb);
  return bad;
}
