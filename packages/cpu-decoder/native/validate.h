/*
 * Validating parsers: every reject rule of DECISIONS.md section 3, and the leaf table exactly as
 * @sgfp4/format's parse() builds it (word 3 = addr_base + stream offset). They answer only
 * "ok" (the leaf count) or "not ok" (-1); the JS side then calls parse() for the exact error.
 * The stream is hostile: every read is checked against len first, offsets are computed in 64 bits
 * (no wrap-around), and at most table_cap leaves are written.
 * block_first[b] receives the first leaf of block b, block_first[B] the leaf count.
 */

/* The padding of a payload of `used` bytes lies in its last 16-byte chunk (it is under 16 bytes):
 * bytes (used & 15)..15 of that chunk must be zero; none when used is a multiple of 16. Returns
 * those bytes (all zero when valid). Branch-free, since FP4 and T158 leaves alternate at random. */
static inline v128_t padding_bytes(const u8 *last_chunk, u32 used) {
  const v128_t iota = wasm_i8x16_const(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const u32 first_pad = (used & 15u) ? (used & 15u) : 16u;
  const v128_t pad = wasm_u8x16_ge(iota, wasm_i8x16_splat((signed char)first_pad));
  return wasm_v128_and(wasm_v128_load(last_chunk), pad);
}

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

/* One leaf of a record: header i checked (reserved bits, non-finite halves and nonzero padding
 * gathered branch-free in bad / bad_padding, judged once per record: valid streams are the fast
 * case; only the bound check, which keeps every read inside the stream, branches), its entry
 * written to t[i]. */
#define V2_LEAF(i, y, x, lg)                                                                                      \
  do {                                                                                                          \
    const u32 h_ = load32(in + headers_at + 4u * (i));                                                          \
    bad |= (h_ & SGFP4_V2_LEAF_RESERVED_MASK) | (u32)half_nonfinite(sgfp4_params_scale_bits(h_)) |              \
           (u32)half_nonfinite(h_ & SGFP4_V2_BIAS_MASK);                                                        \
    const u32 mode_ = h_ & SGFP4_V2_LEAF_MODE_MASK, used_ = sgfp4_leaf_payload_bytes(lg, mode_);                \
    const u32 padded_ = (used_ + 15u) & ~15u;                                                                   \
    if (p + padded_ > len) return -1;                                                                           \
    bad_padding = wasm_v128_or(bad_padding, padding_bytes(in + (u32)p + padded_ - 16u, used_));                 \
    t[4 * (i)] = b;                                                                                             \
    t[4 * (i) + 1] = sgfp4_geometry_pack(y, x, lg, mode_);                                                      \
    t[4 * (i) + 2] = sgfp4_v2_header_params(h_);                                                                \
    t[4 * (i) + 3] = (u32)p + addr_base;                                                                        \
    p += padded_;                                                                                               \
  } while (0)

/* Validate the record at `start` (block b) and write its leaves to t (at most cap); the leaf
 * count, or -1 for "not ok". Uniform layouts place leaf i row-major; a MIXED record's split map
 * is walked in pre-order (TL, TR, BL, BR) without a stack, one leaf per step, as its headers are
 * checked. The walk keeps the Morton index m of the current node's first 4x4 cell (x in the even
 * bits, y in the odd ones: child order TL, TR, BL, BR is Morton order). After a leaf of side
 * 2^lg, the next node in pre-order starts at m + 4^(lg-2), and its side is fixed by how many
 * base-4 digits of that index are zero (the carry stopped at the first ancestor that was not a
 * last child). Each split turns one node into four, so a map whose set bits are all reached has
 * 1 + 3 * popcount leaves: that count places the payloads before the walk, and a map with set
 * bits the walk does not reach is rejected after it. */
static inline __attribute__((always_inline)) int v2_record(const u8 *in, u32 len, u32 start, u32 b, u32 *t, u32 cap,
                                                           u32 addr_base) {
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
  u32 bad = 0;
  v128_t bad_padding = wasm_i32x4_const(0, 0, 0, 0);
  if (layout != 4u) {
    const u32 row_shift = 6u - lg, per_row = 64u >> lg; /* per_row is a power of two: shifts, not divisions */
    for (u32 i = 0; i < n; i++) V2_LEAF(i, (i >> row_shift) << lg, (i & (per_row - 1u)) << lg, lg);
  } else {
    /* three words as scalars: a local array would need a stack, and this module has none */
#define MAP_BIT(k) ((((k) < 32u ? map0 : (k) < 64u ? map1 : map2) >> ((k) & 31u)) & 1u)
    u32 bit = 0, m = 0, i = 0;
    for (;;) {
      if (lg > 2u && MAP_BIT(bit)) { /* split: the first child starts at the same cell */
        bit++, lg--;
        continue;
      }
      if (lg > 2u) bit++;
      if (i >= n) return -1; /* cannot happen (each leaf past the first takes a set bit); kept for t's bound */
      V2_LEAF(i, morton_compact(m >> 1) << 2, morton_compact(m) << 2, lg);
      i++;
      m += 1u << (2u * (lg - 2u));
      if (m >= 256u) break;
      lg = 2u + ((u32)__builtin_ctz(m) >> 1);
    }
    for (u32 k = bit; k < 96u; k++) if (MAP_BIT(k)) return -1;
#undef MAP_BIT
    if (i != n) return -1;
  }
  return bad || wasm_v128_any_true(bad_padding) ? -1 : (int)n;
}
#undef V2_LEAF

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
