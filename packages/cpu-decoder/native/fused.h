/*
 * One pass over a v2 stream: each record is validated and expanded at once, while its bytes are in
 * cache, with no whole-stream leaf table. Records of a uniform layout and MIXED records wholly
 * inside the tensor are expanded row by row across their leaves; edge records and UNIFORM_64 go
 * through a one-record leaf table (validate.h's v2_record) and the expander (expand.h).
 */
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
  const v128_t h = wasm_v128_load(headers);
  /* reserved header bits 1-3 set, or a non-finite scale or bias (exponent all ones) */
  v128_t bad = wasm_i32x4_const(0, 0, 0, 0), scales, biases;
  FOUR_SCALE_BIAS(h, scales, biases, bad);
  const v128_t modes = wasm_i32x4_sub(wasm_i32x4_const(0, 0, 0, 0), wasm_v128_and(h, wasm_i32x4_splat(1)));
  const v128_t v0 = wasm_v128_load(payload), v1 = wasm_v128_load(payload + 16);
  const v128_t v2 = wasm_v128_load(payload + 32), v3 = wasm_v128_load(payload + 48);
  /* where leaf i goes: side by side (4 floats apart) or TL, TR, BL, BR of an 8x8 node */
  float *const d1 = dst + 4, *const d2 = quad ? dst + 4 * cols : dst + 8, *const d3 = quad ? dst + 4 * cols + 4 : dst + 12;
  v128_t c0, c1, c2, c3;
  if (!wasm_v128_any_true(modes)) {
    /* all four FP4 (nearly every leaf the encoder writes): code 2i is the low nibble of byte i,
     * shifted to the top of a byte, code 2i+1 the high one, already there; no T158 decoding */
    const v128_t top = wasm_i8x16_splat((signed char)0xf0);
    bad = wasm_v128_or(bad, wasm_v128_and(wasm_v128_or(wasm_v128_or(v0, v1), wasm_v128_or(v2, v3)), pad_fp4));
    c0 = wasm_i8x16_shuffle(wasm_i16x8_shl(v0, 4), v0, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    c1 = wasm_i8x16_shuffle(wasm_i16x8_shl(v1, 4), v1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    c2 = wasm_i8x16_shuffle(wasm_i16x8_shl(v2, 4), v2, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    c3 = wasm_i8x16_shuffle(wasm_i16x8_shl(v3, 4), v3, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    /* each byte holds its code on top and another nibble below: clear that */
    c0 = wasm_v128_and(c0, top), c1 = wasm_v128_and(c1, top), c2 = wasm_v128_and(c2, top), c3 = wasm_v128_and(c3, top);
  } else {
    const v128_t m0 = wasm_i32x4_shuffle(modes, modes, 0, 0, 0, 0), m1 = wasm_i32x4_shuffle(modes, modes, 1, 1, 1, 1);
    const v128_t m2 = wasm_i32x4_shuffle(modes, modes, 2, 2, 2, 2), m3 = wasm_i32x4_shuffle(modes, modes, 3, 3, 3, 3);
    bad = wasm_v128_or(bad, wasm_v128_and(v0, wasm_v128_bitselect(pad_t158, pad_fp4, m0)));
    bad = wasm_v128_or(bad, wasm_v128_and(v1, wasm_v128_bitselect(pad_t158, pad_fp4, m1)));
    bad = wasm_v128_or(bad, wasm_v128_and(v2, wasm_v128_bitselect(pad_t158, pad_fp4, m2)));
    bad = wasm_v128_or(bad, wasm_v128_and(v3, wasm_v128_bitselect(pad_t158, pad_fp4, m3)));
    const v128_t n0 = small_nibbles(v0, 0), n1 = small_nibbles(v1, 0), n2 = small_nibbles(v2, 0), n3 = small_nibbles(v3, 0);
    c0 = wasm_v128_bitselect(t158_from_nibbles(n0, 0), fp4_from_nibbles(n0), m0);
    c1 = wasm_v128_bitselect(t158_from_nibbles(n1, 0), fp4_from_nibbles(n1), m1);
    c2 = wasm_v128_bitselect(t158_from_nibbles(n2, 0), fp4_from_nibbles(n2), m2);
    c3 = wasm_v128_bitselect(t158_from_nibbles(n3, 0), fp4_from_nibbles(n3), m3);
  }
  emit16(dst, dst + cols, dst + 2 * cols, dst + 3 * cols, c0, LEAF_LANE(scales, 0), LEAF_LANE(biases, 0));
  emit16(d1, d1 + cols, d1 + 2 * cols, d1 + 3 * cols, c1, LEAF_LANE(scales, 1), LEAF_LANE(biases, 1));
  emit16(d2, d2 + cols, d2 + 2 * cols, d2 + 3 * cols, c2, LEAF_LANE(scales, 2), LEAF_LANE(biases, 2));
  emit16(d3, d3 + cols, d3 + 2 * cols, d3 + 3 * cols, c3, LEAF_LANE(scales, 3), LEAF_LANE(biases, 3));
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
 * (Morton order, as validate.h's v2_record walks it), without a leaf table. The leaf count is known up front:
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
  /* map bits k..k+3 (they may straddle two words) */
#define MAP_BITS4(k) ((u32)(((k) < 32u ? map0 | (u64)map1 << 32 : (k) < 64u ? map1 | (u64)map2 << 32 : (u64)map2) >> ((k) & 31u)) & 15u)
  const u8 *header = in + start + 16u;
  u64 p = payload_at;
  u32 bit = 0, leaves = 0, m = 0, lg = 6, bad = 0;
  v128_t bad4 = wasm_i32x4_const(0, 0, 0, 0);
  for (;;) {
    u32 split;
    for (;;) { /* down through split nodes: the first child starts at the same cell */
      split = MAP_BIT(bit); /* lg > 2 here: 4x4 nodes only come as the four children below */
      bit++;
      if (!split || lg == 3u || (lg == 4u && MAP_BITS4(bit) == 0u)) break;
      lg--;
    }
    /* (descending in its own loop keeps V8 from computing, and spilling, every branch's row
     * addresses below once per tree node rather than once per leaf group) */
    float *leaf_dst = dst + (morton_compact(m >> 1) << 2) * cols + (morton_compact(m) << 2);
    if (split && lg == 4u) {
      /* a 16x16 node split into four 8x8 leaves (most of a heavy-tailed tree): their headers are
       * loaded, checked and converted together (all FP4: one test of the four mode bits, 4 x 32
       * payload bytes), one walk step for four leaves; rows 0-7 get TL | TR, rows 8-15 BL | BR,
       * 64 contiguous bytes a row */
      bit += 4u;
      if (leaves + 4u > n) return 0;
      const v128_t h4 = wasm_v128_load(header); /* leaves + 4 <= n: inside the n headers */
      if (!wasm_v128_any_true(wasm_v128_and(h4, wasm_i32x4_splat(SGFP4_V2_LEAF_MODE_MASK)))) {
        if (p + 128u > len) return 0;
        bad4 = four_8x8_fp4(h4, in + (u32)p, leaf_dst, leaf_dst + 8u * cols, cols, bad4);
        p += 128u;
      } else { /* T158 reads 16 bytes past its payload: inside the stream copy's slack */
        const u32 m0 = load32(header) & SGFP4_V2_LEAF_MODE_MASK, m1 = load32(header + 4) & SGFP4_V2_LEAF_MODE_MASK;
        const u32 m2 = load32(header + 8) & SGFP4_V2_LEAF_MODE_MASK, m3 = load32(header + 12) & SGFP4_V2_LEAF_MODE_MASK;
        /* an 8x8 payload is 32 bytes (FP4) or 16 (T158) */
        const u64 p1 = p + (32u >> m0), p2 = p1 + (32u >> m1), p3 = p2 + (32u >> m2), p_end = p3 + (32u >> m3);
        if (p_end > len) return 0;
        bad4 = pair_8x8(header, m0, m1, in + (u32)p, in + (u32)p1, leaf_dst, cols, bad4);
        bad4 = pair_8x8(header + 8, m2, m3, in + (u32)p2, in + (u32)p3, leaf_dst + 8u * cols, cols, bad4);
        p = p_end;
      }
      header += 16, leaves += 4, m += 16u;
    } else if (split) { /* a split 8x8 node: four 4x4 leaves, 16-byte payload chunks */
      if (leaves + 4u > n || p + 64u > len) return 0;
      bad4 = wasm_v128_or(bad4, four_4x4(header, in + (u32)p, leaf_dst, cols, 1));
      header += 16, p += 64, leaves += 4, m += 4u;
    } else if (lg == 3u && (m & 4u) == 0 && MAP_BIT(bit) == 0) {
      /* an 8x8 leaf that is a left child (TL or BL) whose right sibling, the next node, is an
       * 8x8 leaf too: both at once, 64 contiguous bytes per output row */
      bit++;
      if (leaves + 2u > n) return 0;
      const u32 ma = load32(header) & SGFP4_V2_LEAF_MODE_MASK, mb = load32(header + 4) & SGFP4_V2_LEAF_MODE_MASK;
      const u64 pb = p + sgfp4_leaf_payload_bytes(3, ma), p_end = pb + sgfp4_leaf_payload_bytes(3, mb);
      if (p_end > len) return 0;
      bad4 = pair_8x8(header, ma, mb, in + (u32)p, in + (u32)pb, leaf_dst, cols, bad4);
      header += 8, p = p_end, leaves += 2, m += 8u;
    } else {
      if (leaves + 1u > n) return 0;
      const u32 h = load32(header);
      bad |= (h & SGFP4_V2_LEAF_RESERVED_MASK) | half_nonfinite(sgfp4_params_scale_bits(h)) | half_nonfinite(sgfp4_params_bias_bits(h));
      const u32 mode = h & SGFP4_V2_LEAF_MODE_MASK;
      /* 8x8 and larger payloads are whole 16-byte chunks: no padding */
      const u32 used = sgfp4_leaf_payload_bytes(lg, mode);
      if (p + used > len) return 0;
      const u8 *payload = in + (u32)p;
      v128_t vscale, vbias;
      LEAF_SCALE_BIAS(sgfp4_v2_header_params(h), vscale, vbias);
      if (lg == 3u && !mode) {
        const v128_t top = wasm_i8x16_splat((signed char)0xf0), v0 = wasm_v128_load(payload), v1 = wasm_v128_load(payload + 16);
        const v128_t s0 = wasm_i16x8_shl(v0, 4), s1 = wasm_i16x8_shl(v1, 4);
        /* FP4 codes as in pair_8x8_fp4 */
        rows2_8x8(leaf_dst, cols, wasm_v128_and(wasm_i8x16_shuffle(s0, v0, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), top), vscale, vbias);
        rows2_8x8(leaf_dst + 2 * cols, cols, wasm_v128_and(wasm_i8x16_shuffle(s0, v0, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), top), vscale, vbias);
        rows2_8x8(leaf_dst + 4 * cols, cols, wasm_v128_and(wasm_i8x16_shuffle(s1, v1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), top), vscale, vbias);
        rows2_8x8(leaf_dst + 6 * cols, cols, wasm_v128_and(wasm_i8x16_shuffle(s1, v1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), top), vscale, vbias);
      } else if (lg == 3u) { /* T158 reads 16 bytes past its payload: inside the stream copy's slack */
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
  /* no set map bit past the walk's last one */
  const u32 rest = bit >= 96u ? 0u : bit >= 64u ? map2 >> (bit - 64u) : bit >= 32u ? (map1 >> (bit - 32u)) | map2 : (map0 >> bit) | map1 | map2;
  if (rest) return 0;
#undef MAP_BIT
#undef MAP_BITS4
  return leaves == n && !bad && !wasm_v128_any_true(bad4);
}

/*
 * A UNIFORM_8 record wholly inside the tensor, like full_4x4_record: two pairs of side-by-side
 * leaves (leaves 4j..4j+3, one leaf row's 32 columns; each output row gets 128 contiguous bytes)
 * a step. Where all four are FP4 (nearly every record the encoder writes) their headers are loaded,
 * checked and converted together (one 16-byte load, as mixed_record's four 8x8 children) and their
 * payloads are 4 x 32 bytes; otherwise each pair is taken alone with its modes. 8x8 payloads need
 * no padding (32 bytes FP4, 16 bytes T158); the FP4-sized load of a T158 leaf may read 16 bytes past
 * it, inside the stream copy or its INPUT_SLACK_BYTES. 1 = ok, 0 = not ok.
 */
static int uniform_8_record(const u8 *in, u32 len, u32 start, float *dst, u32 cols) {
  const u64 headers_at = (u64)start + 4u, payload_at = (headers_at + 256u + 15u) & ~15ull;
  if (payload_at > len) return 0;
  if (!all_zero(in, (u32)(headers_at + 256u), (u32)payload_at)) return 0;
  const u8 *headers = in + (u32)headers_at;
  u64 p = payload_at;
  v128_t bad = wasm_i32x4_const(0, 0, 0, 0);
  /* leaf i of the record sits at row 8 * (i / 8), column 8 * (i % 8): pair j = leaves 2j, 2j+1 */
  for (u32 pair = 0; pair < 32u; pair += 2u) {
    const v128_t h = wasm_v128_load(headers); /* inside the 256 header bytes: 16 steps of 16 */
    if (!wasm_v128_any_true(wasm_v128_and(h, wasm_i32x4_splat(SGFP4_V2_LEAF_MODE_MASK)))) {
      if (p + 128u > len) return 0;
      float *const d = dst + (pair >> 2) * 8u * cols + (pair & 3u) * 16u;
      bad = four_8x8_fp4(h, in + (u32)p, d, d + 16, cols, bad);
      headers += 16, p += 128u;
      continue;
    }
    for (u32 j = pair; j < pair + 2u; j++, headers += 8) { /* a T158 leaf among the four: pair by pair */
      const u32 mode_a = load32(headers) & SGFP4_V2_LEAF_MODE_MASK, mode_b = load32(headers + 4) & SGFP4_V2_LEAF_MODE_MASK;
      const u64 pa = p, pb = p + sgfp4_leaf_payload_bytes(3, mode_a);
      p = pb + sgfp4_leaf_payload_bytes(3, mode_b);
      if (p > len) return 0;
      bad = pair_8x8(headers, mode_a, mode_b, in + (u32)pa, in + (u32)pb, dst + (j >> 2) * 8u * cols + (j & 3u) * 16u, cols, bad);
    }
  }
  return !wasm_v128_any_true(bad);
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
    bad |= (h_ & SGFP4_V2_LEAF_RESERVED_MASK) | half_nonfinite(sgfp4_params_scale_bits(h_)) |                     \
           half_nonfinite(sgfp4_params_bias_bits(h_));                                                        \
    mode_j = h_ & 1u;                                                                                           \
    payload_j = in + (u32)p;                                                                                    \
    p += sgfp4_leaf_payload_bytes(lg, mode_j);                                                                  \
    LEAF_SCALE_BIAS(sgfp4_v2_header_params(h_), scale_j, bias_j);                                                         \
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
 * Validate and decode in one pass: each record is checked, its leaves are written to `scratch`
 * (room for 256 leaves, so it stays in L1 cache), and they are expanded into `out` at once, while
 * the record's bytes are still in cache. It saves a pass over the stream and the whole-stream leaf
 * table. `scratch` holds one record's leaf table (256 entries, 4 KiB). The price: on an invalid stream the records before the fault have already been written
 * to `out` (the caller documents that `out` is unspecified after an error). 0 = ok, -1 = not ok.
 */
/* Records b0..b1-1 of a stream whose header checks passed (base: its record region); prev: the
 * offset of record b0-1, or -1. Inner blocks go to `band` when chunk_blocks != 0, else straight to
 * `out`, a window of the output (element (r, c) at out[(r - row_base) * out_stride + c - col_base]);
 * edge blocks always go to `out`. With a band, out is the whole output (out_stride = cols, no
 * base). 0 ok, -1 not ok.
 * The offset table is read at `head`, the records' bytes [lo, avail) at `in` (byte k of the stream
 * at in + k - lo; lo a multiple of 16, so the records' 16-byte alignments are the same; each record
 * is judged as a stream of avail - lo bytes that starts at lo: the same checks shifted by lo, and
 * a record accepted against avail <= len is accepted against len with the same leaves). */
static int decode_records(const u8 *head, const u8 *in, u32 lo, u32 avail, u32 len, u32 base, u32 b0, u32 b1, long long prev,
                          u32 *scratch, float *out, u32 out_stride, u32 rows, u32 cols, u32 tiles_x, u32 row_base,
                          u32 col_base, float *band, u32 chunk_blocks) {
  if (avail > len || lo > avail || (lo & 15u)) return -1;
  const u32 wlen = avail - lo;
  /* chunk_blocks 0: no band, inner blocks are written straight to `out` (outputs that fit in cache) */
  const u32 banded = chunk_blocks != 0u, stride = banded ? chunk_blocks * 64u : out_stride;
  u32 chunk_by = b0 / tiles_x, chunk_bx0 = b0 - chunk_by * tiles_x, chunk_inside = 0; /* band: blocks chunk_bx0.. of row chunk_by */
  for (u32 b = b0; b < b1; b++) {
    const long long start_in_stream = v2_record_start(head, len, base, b, &prev);
    if (start_in_stream < 0 || (u64)start_in_stream < lo || (u64)start_in_stream + 4u > avail) return -1;
    const long long start = start_in_stream - lo; /* in the window, of wlen bytes */
    const u32 by = b / tiles_x, bx = b - by * tiles_x;
    if (banded && (by != chunk_by || bx - chunk_bx0 >= chunk_blocks)) { /* next chunk: copy out the previous one */
      flush_band(band, stride, out, cols, chunk_by, chunk_bx0, chunk_inside);
      chunk_by = by, chunk_bx0 = bx, chunk_inside = 0;
    }
    const int inside = by * 64u + 64u <= rows && bx * 64u + 64u <= cols && by < (1u << 25) && bx < (1u << 25);
    if (!inside) {
      /* addr_base = in: the payload addresses are absolute, as decode_leaves reads them */
      const int n = v2_record(in, wlen, (u32)start, b, scratch, 256u, (u32)in);
      if (n < 0) return -1;
      decode_leaves_window(scratch, (u32)n, out, out_stride, rows, cols, tiles_x, row_base, col_base);
      continue;
    }
    /* inside blocks of a row come first and contiguous: the band's copied width grows by one */
    chunk_inside = bx - chunk_bx0 + 1u;
    float *dst = banded ? band + (bx - chunk_bx0) * 64u : out + ((by * 64u - row_base) * out_stride + bx * 64u - col_base);
    int ok;
    switch (load32(in + start)) {
      case 1: ok = uniform_rows_record(in, wlen, (u32)start, dst, stride, 5); break;
      case 2: ok = uniform_rows_record(in, wlen, (u32)start, dst, stride, 4); break;
      case 3: ok = uniform_8_record(in, wlen, (u32)start, dst, stride); break;
      case 5: ok = full_4x4_record(in, wlen, (u32)start, dst, stride); break;
      case 4: ok = mixed_record(in, wlen, (u32)start, dst, stride); break;
      default: { /* UNIFORM_64, and anything v2_record rejects */
        const int n = v2_record(in, wlen, (u32)start, b, scratch, 256u, (u32)in);
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
  return decode_records(in, in, 0, len, len, base, 0, blocks, -1, scratch, out, cols, rows, cols, tiles_x, 0, 0, band, chunk_blocks);
}

/*
 * The same one pass over records b0..b1-1 only, written to a window of the output (element (r, c)
 * at out[(r - row_base) * stride + c - col_base]): decode() expands a band of macroblock rows, or a
 * run of macroblocks of one row for wide tensors, at a time into cache-sized scratch this way.
 * Records before b0 must have been accepted by earlier calls (their offsets order this one).
 */
__attribute__((export_name("validate_decode_v2_window"))) int validate_decode_v2_window(
    const u8 *in, u32 len, u32 blocks, u32 b0, u32 b1, u32 *scratch, float *out, u32 stride, u32 rows, u32 cols,
    u32 tiles_x, u32 row_base, u32 col_base) {
  const u32 base = v2_record_base(in, len, blocks);
  if (!base || b0 > b1 || b1 > blocks) return -1;
  const long long prev = b0 ? (long long)load32(in + 16u + 4u * (b0 - 1u)) : -1;
  return decode_records(in, in, 0, len, len, base, b0, b1, prev, scratch, out, stride, rows, cols, tiles_x, row_base, col_base, 0, 0);
}

/*
 * validate_decode_v2_window with the header and offset table at `head` (stream bytes [0, base))
 * and the records' bytes [lo, avail) at `window` (lo a multiple of 16 at or below record b0's
 * start): decode() copies each band's records into one reused window instead of the whole stream
 * (routes.ts). A record that needs bytes past avail < len is "not ok" here: the caller makes the
 * window hold 5152 bytes past the band's last record start (a valid record takes at most 5136,
 * and the expansion reads up to 16 past a payload).
 */
__attribute__((export_name("validate_decode_v2_stream_window"))) int validate_decode_v2_stream_window(
    const u8 *head, const u8 *window, u32 lo, u32 avail, u32 len, u32 blocks, u32 b0, u32 b1, u32 *scratch, float *out,
    u32 stride, u32 rows, u32 cols, u32 tiles_x, u32 row_base, u32 col_base) {
  const u32 base = v2_record_base(head, len, blocks);
  if (!base || b0 > b1 || b1 > blocks) return -1;
  const long long prev = b0 ? (long long)load32(head + 16u + 4u * (b0 - 1u)) : -1;
  return decode_records(head, window, lo, avail, len, base, b0, b1, prev, scratch, out, stride, rows, cols, tiles_x, row_base, col_base, 0, 0);
}

/*
 * validate_decode_v2 for a createOutput array, fed through a window: records b0..b1-1 with the
 * header and offset table at `head` and the records' bytes [lo, avail) at `window` (as
 * validate_decode_v2_stream_window), inner blocks through the output band as validate_decode_v2
 * places them (out: the whole output). decodeInto copies each band's records into one reused
 * window, in cache, instead of the whole stream first (arena.ts).
 */
__attribute__((export_name("validate_decode_v2_window_banded"))) int validate_decode_v2_window_banded(
    const u8 *head, const u8 *window, u32 lo, u32 avail, u32 len, u32 blocks, u32 b0, u32 b1, u32 *scratch, float *out,
    u32 rows, u32 cols, u32 tiles_x, float *band, u32 chunk_blocks) {
  const u32 base = v2_record_base(head, len, blocks);
  if (!base || b0 > b1 || b1 > blocks) return -1;
  const long long prev = b0 ? (long long)load32(head + 16u + 4u * (b0 - 1u)) : -1;
  return decode_records(head, window, lo, avail, len, base, b0, b1, prev, scratch, out, cols, rows, cols, tiles_x, 0, 0, band, chunk_blocks);
}
