/*
 * Validating parsers: every reject rule of DECISIONS.md section 3, and the leaf table exactly as
 * @sgfp4/format's parse() builds it (word 3 = addr_base + stream offset). They answer only
 * "ok" (the leaf count) or "not ok" (-1); the JS side then calls parse() for the exact error.
 * The stream is hostile: every read is checked against len first, offsets are computed in 64 bits
 * (no wrap-around), and at most table_cap leaves are written.
 * block_first[b] receives the first leaf of block b, block_first[B] the leaf count.
 */

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
