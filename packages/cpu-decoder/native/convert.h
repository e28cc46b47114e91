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
 * Half outputs by table: a leaf's values are S * code + Bias for at most 16 codes, so its 16
 * possible f32 values are computed as the expansion computes each (code * 2^28 converted, times
 * S * 2^-28, plus Bias: the same f32) and converted once; each weight is then looked up by its
 * code with i8x16.swizzle (low and high bytes of the patterns in two tables). One conversion per
 * code value instead of one per weight (an 8x8 leaf: 16 instead of 64).
 */
/* The patterns of codes 0..7, -8..-1 (index code & 15) of a leaf: low bytes in *lo, high bytes in *hi. */
static inline __attribute__((always_inline)) void leaf_lut(u32 params, u32 bf16, v128_t *lo, v128_t *hi) {
  v128_t vs, vb;
  LEAF_SCALE_BIAS(params, vs, vb);
  const v128_t f0 = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_const(0, 1 << 28, 2 << 28, 3 << 28)), vs), vb);
  const v128_t f1 = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_const(4 << 28, 5 << 28, 6 << 28, 7 << 28)), vs), vb);
  const v128_t f2 = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_const((int)0x80000000u, (int)0x90000000u, (int)0xa0000000u, (int)0xb0000000u)), vs), vb);
  const v128_t f3 = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_const((int)0xc0000000u, (int)0xd0000000u, (int)0xe0000000u, (int)0xf0000000u)), vs), vb);
  v128_t n0, n1;
  if (bf16) {
    n0 = wasm_u16x8_narrow_i32x4(bf16_of_finite(f0), bf16_of_finite(f1));
    n1 = wasm_u16x8_narrow_i32x4(bf16_of_finite(f2), bf16_of_finite(f3));
  } else {
    n0 = wasm_u16x8_narrow_i32x4(f16_of_finite(f0), f16_of_finite(f1));
    n1 = wasm_u16x8_narrow_i32x4(f16_of_finite(f2), f16_of_finite(f3));
  }
  *lo = wasm_i8x16_shuffle(n0, n1, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  *hi = wasm_i8x16_shuffle(n0, n1, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
}

/* 16 codes (bytes 16 * code, as the code helpers of codes.h give them) -> their patterns: the first
 * 8 in *a, the last 8 in *b. (16 * code) >> 4 & 15 = code & 15, the table index. */
static inline __attribute__((always_inline)) void lut16(v128_t codes, v128_t lo, v128_t hi, v128_t *a, v128_t *b) {
  const v128_t idx = wasm_v128_and(wasm_u16x8_shr(codes, 4), wasm_i8x16_splat(0x0f));
  const v128_t l = wasm_i8x16_swizzle(lo, idx), h = wasm_i8x16_swizzle(hi, idx);
  *a = wasm_i8x16_shuffle(l, h, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  *b = wasm_i8x16_shuffle(l, h, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
}

/* Codes k..k+15 of a leaf of side 2^lg >= 16 (16 of one row) stored as patterns. */
static inline __attribute__((always_inline)) void put16(u16 *dst, u32 stride, u32 lg, u32 k, v128_t codes, v128_t lo, v128_t hi) {
  v128_t a, b;
  lut16(codes, lo, hi, &a, &b);
  u16 *p = dst + (k >> lg) * stride + (k & ((1u << lg) - 1u));
  wasm_v128_store(p, a);
  wasm_v128_store(p + 8, b);
}

/*
 * One whole leaf (a leaf table entry of validate.h's v2_record: geometry, params, payload
 * address) of a macroblock whose patterns start at `block` (row stride `stride`), by table.
 * Payload reads as in codes.h: 4x4 chunks are 16 bytes; the FP4-sized read of an 8x8 T158 leaf
 * goes 16 bytes past it (inside the stream window or its INPUT_SLACK_BYTES).
 */
static inline __attribute__((always_inline)) void half_leaf(const u32 *table, u16 *block, u32 stride, u32 bf16) {
  const u32 geometry = table[1], lg = sgfp4_geometry_log2(geometry), mode = sgfp4_geometry_mode(geometry);
  const u8 *payload = (const u8 *)table[3];
  u16 *dst = block + sgfp4_geometry_y(geometry) * stride + sgfp4_geometry_x(geometry);
  v128_t lo, hi, a, b;
  leaf_lut(table[2], bf16, &lo, &hi);
  if (lg == 2u) {
    lut16(codes_4x4(payload, mode), lo, hi, &a, &b);
    wasm_v128_store64_lane(dst, a, 0);
    wasm_v128_store64_lane(dst + stride, a, 1);
    wasm_v128_store64_lane(dst + 2u * stride, b, 0);
    wasm_v128_store64_lane(dst + 3u * stride, b, 1);
  } else if (lg == 3u) {
    v128_t k0, k1, k2, k3;
    CODES_8x8(payload, mode, k0, k1, k2, k3);
    lut16(k0, lo, hi, &a, &b), wasm_v128_store(dst, a), wasm_v128_store(dst + stride, b);
    lut16(k1, lo, hi, &a, &b), wasm_v128_store(dst + 2u * stride, a), wasm_v128_store(dst + 3u * stride, b);
    lut16(k2, lo, hi, &a, &b), wasm_v128_store(dst + 4u * stride, a), wasm_v128_store(dst + 5u * stride, b);
    lut16(k3, lo, hi, &a, &b), wasm_v128_store(dst + 6u * stride, a), wasm_v128_store(dst + 7u * stride, b);
  } else if (!mode) { /* FP4, side 16-64: 32 codes per 16 payload bytes, as leaf_fp4 */
    const u32 area = 1u << (2 * lg);
    const v128_t top = wasm_i8x16_splat((signed char)0xf0);
    for (u32 k = 0; k < area; k += 32, payload += 16) {
      const v128_t v = wasm_v128_load(payload);
      const v128_t odd = wasm_v128_and(v, top), even = wasm_v128_and(wasm_i16x8_shl(v, 4), top);
      put16(dst, stride, lg, k, wasm_i8x16_shuffle(even, odd, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), lo, hi);
      put16(dst, stride, lg, k + 16, wasm_i8x16_shuffle(even, odd, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), lo, hi);
    }
  } else { /* T158, side 16-64: 64 codes per 16 payload bytes, as leaf_t158 */
    const u32 area = 1u << (2 * lg);
    const v128_t first_of = wasm_i8x16_const(0, 16, -16, 0, 0, 16, -16, 0, 0, 16, -16, 0, 0, 16, -16, 0);
    const v128_t second_of = wasm_i8x16_const(0, 0, 0, 0, 16, 16, 16, 16, -16, -16, -16, -16, 0, 0, 0, 0);
    const v128_t low4 = wasm_i8x16_splat(0x0f);
    for (u32 k = 0; k < area; k += 64, payload += 16) {
      const v128_t v = wasm_v128_load(payload);
      const v128_t l4 = wasm_v128_and(v, low4), h4 = wasm_v128_and(wasm_u16x8_shr(v, 4), low4);
      const v128_t s0 = wasm_i8x16_swizzle(first_of, l4), s1 = wasm_i8x16_swizzle(second_of, l4);
      const v128_t s2 = wasm_i8x16_swizzle(first_of, h4), s3 = wasm_i8x16_swizzle(second_of, h4);
      const v128_t p01 = wasm_i8x16_shuffle(s0, s1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      const v128_t p23 = wasm_i8x16_shuffle(s2, s3, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      const v128_t q01 = wasm_i8x16_shuffle(s0, s1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      const v128_t q23 = wasm_i8x16_shuffle(s2, s3, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      put16(dst, stride, lg, k, wasm_i16x8_shuffle(p01, p23, 0, 8, 1, 9, 2, 10, 3, 11), lo, hi);
      put16(dst, stride, lg, k + 16, wasm_i16x8_shuffle(p01, p23, 4, 12, 5, 13, 6, 14, 7, 15), lo, hi);
      put16(dst, stride, lg, k + 32, wasm_i16x8_shuffle(q01, q23, 0, 8, 1, 9, 2, 10, 3, 11), lo, hi);
      put16(dst, stride, lg, k + 48, wasm_i16x8_shuffle(q01, q23, 4, 12, 5, 13, 6, 14, 7, 15), lo, hi);
    }
  }
}

/*
 * validate_decode_v2_stream_window for f16 / bf16 outputs (bf16 != 0: bf16), into `out`, a window
 * of the u16 output (element (r, c) at out[(r - row_base) * stride + c - col_base]). A record wholly
 * inside the tensor is validated by v2_record (validate.h: its leaf table in `scratch`) and each leaf
 * expanded by table (half_leaf); an edge record is validated and expanded as decode_records does,
 * into `block` (one macroblock of f32, 64 x 64, 16 KiB: in L1 cache), and converted from there.
 * Either way each value is the conversion of the f32 value the f32 output gets. 0 ok, -1 not ok.
 */
__attribute__((export_name("validate_decode_v2_half_window"))) int validate_decode_v2_half_window(
    const u8 *head, const u8 *window, u32 lo, u32 avail, u32 len, u32 blocks, u32 b0, u32 b1, u32 *scratch, float *block,
    u16 *out, u32 stride, u32 rows, u32 cols, u32 tiles_x, u32 row_base, u32 col_base, u32 bf16) {
  const u32 base = v2_record_base(head, len, blocks);
  if (!base || b0 > b1 || b1 > blocks || avail > len || lo > avail || (lo & 15u)) return -1;
  for (u32 b = b0; b < b1; b++) {
    const long long prev_offset = b ? (long long)load32(head + 16u + 4u * (b - 1u)) : -1;
    const u32 by = b / tiles_x, bx = b - by * tiles_x;
    u16 *dst = out + ((by * 64u - row_base) * stride + bx * 64u - col_base);
    const int inside = by * 64u + 64u <= rows && bx * 64u + 64u <= cols && by < (1u << 25) && bx < (1u << 25);
    if (inside) {
      long long prev = prev_offset;
      const long long start = v2_record_start(head, len, base, b, &prev);
      if (start < 0 || (u64)start < lo || (u64)start + 4u > avail) return -1;
      /* addr_base = the window's address: the payload addresses in the table are absolute */
      const u8 *in = window;
      const int n = v2_record(in, avail - lo, (u32)start - lo, b, scratch, 256u, (u32)in);
      if (n < 0) return -1;
      for (u32 i = 0; i < (u32)n; i++) half_leaf(scratch + 4u * i, dst, stride, bf16);
      continue;
    }
    if (decode_records(head, window, lo, avail, len, base, b, b + 1u, prev_offset, scratch, block, 64u, rows, cols, tiles_x,
                       by * 64u, bx * 64u, 0, 0))
      return -1;
    const u32 kept_rows = rows - by * 64u < 64u ? rows - by * 64u : 64u, kept_cols = cols - bx * 64u < 64u ? cols - bx * 64u : 64u;
    for (u32 r = 0; r < kept_rows; r++) convert_run(block + r * 64u, dst + r * stride, kept_cols, bf16);
  }
  return 0;
}

/*
 * decode_leaves_window for f16 / bf16 outputs (bf16 != 0: bf16): the leaves of a validated table
 * (validate_v1's: one 64x64 leaf per block) into `out`, a window of the u16 output (element (r, c)
 * at out[(r - row_base) * stride + c - col_base]). A leaf wholly inside the tensor is expanded by
 * table (half_leaf); a leaf cut by its edge is expanded as decode_leaves_window does into `block`
 * (one f32 macroblock, 16 KiB) and its kept part converted from there.
 */
__attribute__((export_name("decode_leaves_half_window"))) void decode_leaves_half_window(const u32 *table, u32 count, float *block,
                                                                                       u16 *out, u32 stride, u32 rows, u32 cols,
                                                                                       u32 tiles_x, u32 row_base, u32 col_base,
                                                                                       u32 bf16) {
  for (u32 n = 0; n < count; n++, table += 4) {
    const u32 by = table[0] / tiles_x, bx = table[0] - by * tiles_x, geometry = table[1];
    const u32 lg = sgfp4_geometry_log2(geometry), y = sgfp4_geometry_y(geometry), x = sgfp4_geometry_x(geometry);
    if (lg < 2u || lg > 6u) continue; /* the validators never emit these; never index with them */
    const u32 size = 1u << lg;
    u16 *dst = out + ((by * 64u - row_base) * stride + bx * 64u - col_base);
    if (by * 64u + y + size <= rows && bx * 64u + x + size <= cols && by < (1u << 25) && bx < (1u << 25) && y + size <= 64u && x + size <= 64u) {
      half_leaf(table, dst, stride, bf16);
      continue;
    }
    if (by * 64u + y >= rows || bx * 64u + x >= cols) continue; /* wholly outside: nothing kept */
    decode_leaves_window(table, 1u, block, 64u, rows, cols, tiles_x, by * 64u, bx * 64u);
    const u32 keep_rows = rows - (by * 64u + y) < size ? rows - (by * 64u + y) : size;
    const u32 keep_cols = cols - (bx * 64u + x) < size ? cols - (bx * 64u + x) : size;
    for (u32 r = y; r < y + keep_rows; r++) convert_run(block + r * 64u + x, dst + r * stride + x, keep_cols, bf16);
  }
}
