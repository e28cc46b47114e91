/*
 * Validating parsers: every reject rule of DECISIONS.md section 3, and the leaf table exactly as
 * @sgfp4/format's parse() builds it (word 3 = addr_base + stream offset). They answer only
 * "ok" (the leaf count) or "not ok" (-1); the JS side then calls parse() for the exact error.
 * The stream is hostile: every read is checked against len first, offsets are computed in 64 bits
 * (no wrap-around), and at most table_cap leaves are written.
 * block_first[b] receives the first leaf of block b, block_first[B] the leaf count.
 */

__attribute__((export_name("validate_v1"))) int validate_v1(const u8 *in, u32 len, u32 blocks, u32 *table, u32 table_cap,
                                                            u32 addr_base, u32 *block_first) {
  if ((u64)len != (u64)blocks * (8u + SGFP4_V1_PAYLOAD_BYTES) || blocks > table_cap) return -1; /* header + offset word + slot */
  const u64 blob_base = 8ull * blocks, blob_len = (u64)SGFP4_V1_PAYLOAD_BYTES * blocks;
  for (u32 b = 0; b < blocks; b++) {
    const u32 header = load32(in + 4u * b);
    const u32 off_word = load32(in + 4u * blocks + 4u * b);
    const u32 flags = off_word & SGFP4_V1_FLAGS_MASK, base = off_word & ~SGFP4_V1_FLAGS_MASK;
    if (flags & SGFP4_V1_FLAG_RESERVED_MASK) return -1;
    if ((u64)base + SGFP4_V1_PAYLOAD_BYTES > blob_len) return -1;
    if (half_nonfinite(sgfp4_params_scale_bits(header)) || half_nonfinite(sgfp4_params_bias_bits(header))) return -1;
    const u32 mode = flags & SGFP4_V1_FLAG_MODE_MASK;
    const u32 payload = (u32)(blob_base + base); /* + 2048 <= len, checked above */
    if (mode && !all_zero(in, payload + SGFP4_V1_T158_BYTES, payload + SGFP4_V1_PAYLOAD_BYTES)) return -1;
    table[4 * b] = b;
    table[4 * b + 1] = sgfp4_geometry_pack(0, 0, SGFP4_MAX_LEAF_LOG2, mode);
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

/* One leaf of side 8 or more, header at `hdr`: checked (reserved bits and non-finite halves
 * gathered branch-free in bad, judged once per record: valid streams are the fast case), its entry
 * written to t[0..3], t and hdr advanced. Payloads of these sizes are whole 16-byte chunks (no
 * padding), so none is read here: the bound check keeps the offsets inside the stream. */
#define V2_LEAF(y, x, lg)                                                                                        \
  do {                                                                                                          \
    const u32 h_ = load32(in + hdr);                                                                            \
    bad |= (h_ & SGFP4_V2_LEAF_RESERVED_MASK) | (u32)half_nonfinite(sgfp4_params_scale_bits(h_)) |              \
           (u32)half_nonfinite(h_ & SGFP4_V2_BIAS_MASK);                                                        \
    const u32 mode_ = h_ & SGFP4_V2_LEAF_MODE_MASK, used_ = sgfp4_leaf_payload_bytes(lg, mode_);                \
    if (p + used_ > len) return -1;                                                                             \
    t[0] = b, t[1] = sgfp4_geometry_pack(y, x, lg, mode_), t[2] = sgfp4_v2_header_params(h_), t[3] = (u32)p + addr_base; \
    t += 4, hdr += 4u, p += used_;                                                                              \
  } while (0)

/*
 * Four leaves of side 2^lg with consecutive headers at `hdr` and payloads from p (geo: their
 * geometry words without the mode bit), at once: headers checked together (bits set in *bad for a
 * reject), payload offsets from a prefix sum of their sizes, four table entries written with v128
 * stores. 4x4 payloads take 16 bytes each, whose padding is checked here: the caller bounds
 * p + 64 <= len first. Larger payloads (whole 16-byte chunks) are not read: the caller bounds the
 * returned offset. Returns the payload offset after the four.
 */
static inline __attribute__((always_inline)) u64 four_leaves(const u8 *in, u32 hdr, u64 p, u32 lg, v128_t geo, u32 b,
                                                             u32 addr_base, u32 *t, v128_t *bad) {
  const v128_t exponent = wasm_i16x8_splat(SGFP4_HALF_EXPONENT_MASK);
  const v128_t h = wasm_v128_load(in + hdr);
  v128_t wrong = wasm_v128_or(wasm_v128_and(h, wasm_i32x4_splat(SGFP4_V2_LEAF_RESERVED_MASK)), wasm_i16x8_eq(wasm_v128_and(h, exponent), exponent));
  const v128_t mode = wasm_v128_and(h, wasm_i32x4_splat(SGFP4_V2_LEAF_MODE_MASK));
  v128_t size;
  if (lg == 2u) {
    /* FP4 uses bytes 0..7 of its 16, T158 0..3: the rest must be zero */
    const v128_t pad_fp4 = wasm_i32x4_const(0, 0, -1, -1), pad_t158 = wasm_i32x4_const(0, -1, -1, -1);
    const v128_t t158 = wasm_i32x4_sub(wasm_i32x4_const(0, 0, 0, 0), mode);
    const u8 *q = in + (u32)p;
    wrong = wasm_v128_or(wrong, wasm_v128_and(wasm_v128_load(q), wasm_v128_bitselect(pad_t158, pad_fp4, wasm_i32x4_shuffle(t158, t158, 0, 0, 0, 0))));
    wrong = wasm_v128_or(wrong, wasm_v128_and(wasm_v128_load(q + 16), wasm_v128_bitselect(pad_t158, pad_fp4, wasm_i32x4_shuffle(t158, t158, 1, 1, 1, 1))));
    wrong = wasm_v128_or(wrong, wasm_v128_and(wasm_v128_load(q + 32), wasm_v128_bitselect(pad_t158, pad_fp4, wasm_i32x4_shuffle(t158, t158, 2, 2, 2, 2))));
    wrong = wasm_v128_or(wrong, wasm_v128_and(wasm_v128_load(q + 48), wasm_v128_bitselect(pad_t158, pad_fp4, wasm_i32x4_shuffle(t158, t158, 3, 3, 3, 3))));
    size = wasm_i32x4_splat(16);
  } else {
    /* FP4 size^2 / 2 bytes, T158 half that: no padding at these sizes */
    size = wasm_i32x4_sub(wasm_i32x4_splat((int)(1u << (2u * lg - 1u))), wasm_i32x4_shl(mode, 2u * lg - 2u));
  }
  *bad = wasm_v128_or(*bad, wrong);
  const v128_t zero = wasm_i32x4_const(0, 0, 0, 0);
  const v128_t run = wasm_i32x4_add(size, wasm_i32x4_shuffle(zero, size, 0, 4, 5, 6));   /* s0, s0+s1, s1+s2, s2+s3 */
  const v128_t upto = wasm_i32x4_add(run, wasm_i32x4_shuffle(zero, run, 0, 1, 4, 5));    /* inclusive prefix sums */
  const v128_t addr = wasm_i32x4_add(wasm_i32x4_splat((int)((u32)p + addr_base)), wasm_i32x4_sub(upto, size));
  const v128_t geom = wasm_v128_or(geo, wasm_i32x4_shl(mode, 15));
  const v128_t params = wasm_v128_and(h, wasm_i32x4_splat((int)SGFP4_V2_LEAF_PARAMS_MASK));
  const v128_t block = wasm_i32x4_splat((int)b);
  /* transpose [block | geom | params | addr] into four entries */
  const v128_t bg_lo = wasm_i32x4_shuffle(block, geom, 0, 4, 1, 5), pa_lo = wasm_i32x4_shuffle(params, addr, 0, 4, 1, 5);
  const v128_t bg_hi = wasm_i32x4_shuffle(block, geom, 2, 6, 3, 7), pa_hi = wasm_i32x4_shuffle(params, addr, 2, 6, 3, 7);
  wasm_v128_store(t, wasm_i32x4_shuffle(bg_lo, pa_lo, 0, 1, 4, 5));
  wasm_v128_store(t + 4, wasm_i32x4_shuffle(bg_lo, pa_lo, 2, 3, 6, 7));
  wasm_v128_store(t + 8, wasm_i32x4_shuffle(bg_hi, pa_hi, 0, 1, 4, 5));
  wasm_v128_store(t + 12, wasm_i32x4_shuffle(bg_hi, pa_hi, 2, 3, 6, 7));
  return p + (u32)wasm_i32x4_extract_lane(upto, 3);
}

/*
 * The leaves of a uniform layout of side 2^lg (2 to 5), row-major, four at a time (four_leaves);
 * returns the payload offset after them, or more than len when they do not fit (4x4 payloads are
 * read: each group is bounded first; larger ones are not, the caller bounds the result).
 */
static inline __attribute__((always_inline)) u64 uniform_leaves(const u8 *in, u32 len, u32 hdr, u64 p, u32 lg, u32 b,
                                                                u32 addr_base, u32 *t, v128_t *bad) {
  const u32 per_row = 64u >> lg, n = per_row * per_row, size = 1u << lg;
  for (u32 i = 0; i < n; i += 4u, t += 16, hdr += 16u) {
    if (lg == 2u && p + 64u > len) return (u64)len + 1u; /* 4x4 padding is read */
    /* leaf i at row i / per_row, column i % per_row; four consecutive leaves share a row when per_row >= 4 */
    const v128_t geo = per_row >= 4u
                           ? wasm_i32x4_add(wasm_i32x4_splat((int)sgfp4_geometry_pack((i / per_row) * size, (i % per_row) * size, lg, 0)),
                                            wasm_i32x4_make(0, (int)(size << 6), (int)(2u * size << 6), (int)(3u * size << 6)))
                           : wasm_i32x4_make((int)sgfp4_geometry_pack(0, 0, lg, 0), (int)sgfp4_geometry_pack(0, size, lg, 0),
                                             (int)sgfp4_geometry_pack(size, 0, lg, 0), (int)sgfp4_geometry_pack(size, size, lg, 0));
    p = four_leaves(in, hdr, p, lg, geo, b, addr_base, t, bad);
  }
  return p;
}

/* Bits k.. of a MIXED split map held as lo (bits 0..63) and hi (bits 64..95); k <= 95. */
static inline u64 map_from(u64 lo, u64 hi, u32 k) {
  return k < 64u ? (lo >> k) | ((hi << 1) << (63u - k)) : hi >> (k - 64u);
}

/* Geometry words (no mode bit) of the four children of the node of side 2^(lg+1) at (y, x), of side 2^lg, in TL, TR, BL, BR order. */
static inline v128_t children_geometry(u32 y, u32 x, u32 lg) {
  const int s = (int)(1u << lg);
  return wasm_i32x4_add(wasm_i32x4_splat((int)sgfp4_geometry_pack(y, x, lg, 0)), wasm_i32x4_make(0, s << 6, s, s + (s << 6)));
}

/* Validate the record at `start` (block b) and write its leaves to t (at most cap); the leaf
 * count, or -1 for "not ok". Uniform layouts place leaf i row-major, four at a time; a MIXED
 * record's split map is walked in pre-order (TL, TR, BL, BR) by nested loops over its levels,
 * reading the map bit by bit in the same order (one bit per node of side 8 and up that the walk
 * reaches). A 16x16 node split into four 8x8 leaves, and an 8x8 node split into four 4x4 leaves,
 * take four_leaves; other leaves one at a time. Each split turns one node into four, so a map whose
 * set bits are all reached has 1 + 3 * popcount leaves: that count places the payloads before the
 * walk (and bounds what it writes), and a map with set bits the walk does not reach is rejected
 * after it. */
static __attribute__((noinline)) int v2_record(const u8 *in, u32 len, u32 start, u32 b, u32 *t, u32 cap, u32 addr_base) {
  const u32 sb = load32(in + start);
  if (sb >> 3) return -1;
  const u32 layout = sb & 7u;
  if (layout > 5u) return -1;
  u32 map0 = 0, map1 = 0, map2 = 0, n, headers_at = start + 4u, lg = 6u;
  if (layout == 4u) {
    if ((u64)start + 16u > len) return -1;
    map0 = load32(in + start + 4u), map1 = load32(in + start + 8u), map2 = load32(in + start + 12u);
    n = 1u + 3u * (u32)(__builtin_popcount(map0) + __builtin_popcount(map1) + __builtin_popcount(map2));
    headers_at = start + 16u;
  } else {
    lg = layout == 5u ? 2u : 6u - layout;
    n = (64u >> lg) * (64u >> lg);
  }
  if (n > cap) return -1;
  const u64 headers_end = (u64)headers_at + 4u * n;
  if (headers_end > len) return -1;
  const u64 payload_start = (headers_end + 15u) & ~15ull;
  if (payload_start > len) return -1;
  if (!all_zero(in, (u32)headers_end, (u32)payload_start)) return -1;
  u64 p = payload_start;
  u32 bad = 0, hdr = headers_at;
  v128_t bad4 = wasm_i32x4_const(0, 0, 0, 0);
  if (layout != 4u && n == 1u) {
    V2_LEAF(0u, 0u, 6u);
  } else if (layout != 4u) {
    /* one copy of the loop per leaf size, lg a constant in each: a SIMD shift by a run-time count
     * that clang hoists out of the loop is lowered to four scalar shifts per use */
    switch (lg) {
      case 2u: p = uniform_leaves(in, len, hdr, p, 2u, b, addr_base, t, &bad4); break;
      case 3u: p = uniform_leaves(in, len, hdr, p, 3u, b, addr_base, t, &bad4); break;
      case 4u: p = uniform_leaves(in, len, hdr, p, 4u, b, addr_base, t, &bad4); break;
      default: p = uniform_leaves(in, len, hdr, p, 5u, b, addr_base, t, &bad4); break;
    }
    if (p > len) return -1;
  } else {
    const u64 lo = (u64)map0 | ((u64)map1 << 32), hi = map2;
    u32 bit = 1;
    if (!(map0 & 1u)) {
      V2_LEAF(0u, 0u, 6u);
    } else {
      for (u32 q32 = 0; q32 < 4u; q32++) {
        const u32 y32 = (q32 >> 1) * 32u, x32 = (q32 & 1u) * 32u;
        if (!(map_from(lo, hi, bit++) & 1u)) {
          V2_LEAF(y32, x32, 5u);
          continue;
        }
        for (u32 q16 = 0; q16 < 4u; q16++) {
          const u32 y16 = y32 + (q16 >> 1) * 16u, x16 = x32 + (q16 & 1u) * 16u;
          const u64 bits = map_from(lo, hi, bit);
          if (!(bits & 1u)) {
            bit++;
            V2_LEAF(y16, x16, 4u);
            continue;
          }
          const u32 splits = (u32)(bits >> 1) & 15u; /* the four 8x8 children's bits */
          bit += 5u;
          if (!splits) {
            p = four_leaves(in, hdr, p, 3u, children_geometry(y16, x16, 3u), b, addr_base, t, &bad4);
            t += 16, hdr += 16u;
            if (p > len) return -1;
            continue;
          }
          for (u32 q8 = 0; q8 < 4u; q8++) {
            const u32 y8 = y16 + (q8 >> 1) * 8u, x8 = x16 + (q8 & 1u) * 8u;
            if (!((splits >> q8) & 1u)) {
              V2_LEAF(y8, x8, 3u);
              continue;
            }
            if (p + 64u > len) return -1;
            p = four_leaves(in, hdr, p, 2u, children_geometry(y8, x8, 2u), b, addr_base, t, &bad4);
            t += 16, hdr += 16u;
          }
        }
      }
    }
    /* set bits past the last one the walk read (never reached) */
    if ((bit < 64u ? lo >> bit : 0u) | (bit <= 64u ? hi : hi >> (bit - 64u))) return -1;
    if ((hdr - headers_at) >> 2 != n) return -1;
  }
  return bad || wasm_v128_any_true(bad4) ? -1 : (int)n;
}
#undef V2_LEAF

/*
 * validate_v2 over a stream whose first `avail` bytes (of len) have been copied so far, from record
 * b on (the JS side copies the stream in slices and validates each while it is in cache). Returns
 * the record it stopped at, blocks when done (block_first[blocks] = the leaf count), or -1 for "not
 * ok". A record is judged against avail: every check is "some end > limit", so a record accepted
 * against avail is accepted against len with the same leaves, and one rejected while avail < len
 * is retried once more bytes are in (a stop, not a verdict). block_first[b] holds the leaves
 * before record b when it stops there; records before b were accepted by earlier calls.
 *
 * The header and record offset table are read at `head` (their first head_avail bytes present),
 * the records' bytes [lo, avail) at `window` (byte k of the stream at window + k - lo; lo a
 * multiple of 16 at or below the start of record b). v2_record sees the window as a stream that
 * starts at lo: its checks compare ends, so they are shifted by lo alike; its 16-byte alignments
 * are the same because lo is a multiple of 16; the payload addresses get lo back through addr_base.
 */
/* (noinline here and on v2_record: one copy each in the module instead of one per caller, ~27 KB
 * less wasm, no measurable cost: a call per slice, a call per record) */
static __attribute__((noinline)) int v2_records(const u8 *head, u32 head_avail, const u8 *window, u32 lo, u32 len,
                                                u32 avail, u32 blocks, u32 b, u32 *table, u32 table_cap, u32 addr_base,
                                                u32 *block_first) {
  if (avail > len || b > blocks || lo > avail || (lo & 15u)) return -1;
  const u32 base = v2_record_base(head, head_avail, blocks);
  if (!base) return head_avail < len ? (int)b : -1;
  u32 count = b ? block_first[b] : 0u;
  long long prev = b ? (long long)load32(head + 16u + 4u * (b - 1u)) : -1;
  for (; b < blocks; b++) {
    const long long start = v2_record_start(head, len, base, b, &prev);
    if (start < 0) return -1;
    block_first[b] = count;
    if ((u64)start + 16u > avail && avail < len) return (int)b;
    if ((u64)start < lo) return -1; /* never when the caller resumes at a record start (offsets rise) */
    const int n = v2_record(window, avail - lo, (u32)start - lo, b, table + 4ull * count, table_cap - count, addr_base + lo);
    if (n < 0) return avail < len ? (int)b : -1;
    count += (u32)n;
  }
  block_first[blocks] = count;
  return (int)blocks;
}

__attribute__((export_name("validate_v2_from"))) int validate_v2_from(const u8 *in, u32 len, u32 avail, u32 blocks, u32 b,
                                                                      u32 *table, u32 table_cap, u32 addr_base,
                                                                      u32 *block_first) {
  return v2_records(in, avail, in, 0, len, avail, blocks, b, table, table_cap, addr_base, block_first);
}

/*
 * The same over a window that slides along the stream (validate.ts, buildLeafTable): the header
 * and offset table (stream bytes [0, base)) are copied once to `head`, then stream bytes [lo, avail)
 * to `window`, reused for every slice (so the copy and the reads stay in cache); after a stop at
 * record b the caller copies again from that record's start.
 */
__attribute__((export_name("validate_v2_window"))) int validate_v2_window(const u8 *head, const u8 *window, u32 lo, u32 len,
                                                                          u32 avail, u32 blocks, u32 b, u32 *table,
                                                                          u32 table_cap, u32 addr_base, u32 *block_first) {
  return v2_records(head, len, window, lo, len, avail, blocks, b, table, table_cap, addr_base, block_first);
}

/* The whole stream at once: the leaf count, or -1. */
__attribute__((export_name("validate_v2"))) int validate_v2(const u8 *in, u32 len, u32 blocks, u32 *table, u32 table_cap,
                                                            u32 addr_base, u32 *block_first) {
  return validate_v2_from(in, len, len, blocks, 0, table, table_cap, addr_base, block_first) < 0 ? -1 : (int)block_first[blocks];
}
