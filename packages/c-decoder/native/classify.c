/*
 * Naming the fault. The kernel's validators answer only "ok" or "not ok" (the WebAssembly decoder
 * asks @sgfp4/format's parse() for the code); here, after the kernel has refused a stream, the
 * stream is walked in parse()'s order to find the first rule it breaks, with the kernel's own
 * helpers (load32, all_zero, half_nonfinite) and contract (sgfp4_leaf_table.h). It never decides acceptance: a
 * stream the kernel refused and this walk finds nothing in is SGFP4_BACKEND_FAILURE (a bug).
 * Lengths are below 2^32 (checked by the API functions), offsets are summed in 64 bits.
 */
static sgfp4_status sgfp4__fail(sgfp4_error *err, sgfp4_status code, u32 block, const char *detail) {
  err->code = code;
  err->block = block;
  err->detail = detail;
  return code;
}

static sgfp4_status sgfp4__classify_v1(const u8 *in, u32 len, u32 blocks, sgfp4_error *err) {
  if ((u64)len != (u64)blocks * 2056u) return sgfp4__fail(err, SGFP4_SIZE_MISMATCH, SGFP4_NO_BLOCK, "v1 stream length is not 8*B + 2048*B");
  const u64 blob_len = 2048ull * blocks;
  for (u32 b = 0; b < blocks; b++) {
    const u32 header = load32(in + 4u * b), off_word = load32(in + 4u * blocks + 4u * b);
    const u32 flags = off_word & 0xfu, base = off_word & ~0xfu;
    if (flags & 0xcu) return sgfp4__fail(err, SGFP4_RESERVED_BITS, b, "offset flag bits 2-3 are set");
    if ((u64)base + 2048u > blob_len) return sgfp4__fail(err, SGFP4_OFFSET_OUT_OF_RANGE, b, "payload base + 2048 exceeds the payload blob");
    if (half_nonfinite(header >> 16)) return sgfp4__fail(err, SGFP4_NONFINITE_PARAMETER, b, "scale is FP16 Inf or NaN");
    if (half_nonfinite(header & 0xffffu)) return sgfp4__fail(err, SGFP4_NONFINITE_PARAMETER, b, "bias is FP16 Inf or NaN");
    const u32 payload = 8u * blocks + base;
    if ((flags & 1u) && !all_zero(in, payload + 1024u, payload + 2048u))
      return sgfp4__fail(err, SGFP4_NONZERO_PADDING, b, "T158 payload words 256..511 are not zero");
  }
  return SGFP4_OK;
}

/* The leaf sizes (log2, in geo[4 * i + 1]) of a MIXED split map in pre-order (TL, TR, BL, BR),
 * walked as the kernel's v2_record walks it (Morton index of the node's first 4x4 cell; the next
 * node's side from the trailing zero base-4 digits); the leaf count, or -1 when a map bit past
 * the last one the walk consumed is set. */
static int sgfp4__mixed_leaf_sizes(u32 map0, u32 map1, u32 map2, u32 *geo) {
  const u32 words[3] = {map0, map1, map2};
  u32 bit = 0, m = 0, lg = 6u, n = 0;
  for (;;) {
    if (lg > 2u && ((words[bit >> 5] >> (bit & 31u)) & 1u)) {
      bit++, lg--;
      continue;
    }
    if (lg > 2u) bit++;
    geo[4 * n++ + 1] = lg << 12;
    m += 1u << (2u * (lg - 2u));
    if (m >= 256u) break;
    lg = 2u + ((u32)__builtin_ctz(m) >> 1);
  }
  for (u32 k = bit; k < 96u; k++) if ((words[k >> 5] >> (k & 31u)) & 1u) return -1;
  return (int)n;
}

/* One v2 record at `start` (< len). geo: scratch for 256 leaf-table entries (word 1 used). */
static sgfp4_status sgfp4__classify_record(const u8 *in, u32 len, u32 b, u32 start, u32 *geo, sgfp4_error *err) {
  if ((u64)start + 4u > len) return sgfp4__fail(err, SGFP4_TRUNCATED, b, "stream ends inside the sb_header");
  const u32 sb = load32(in + start);
  if (sb >> 3) return sgfp4__fail(err, SGFP4_RESERVED_BITS, b, "sb_header bits 3-31 are set");
  const u32 layout = sb & 7u;
  if (layout > 5u) return sgfp4__fail(err, SGFP4_UNKNOWN_LAYOUT, b, "layout 6 or 7");
  u32 n;
  u64 headers_at;
  if (layout == 4u) {
    if ((u64)start + 16u > len) return sgfp4__fail(err, SGFP4_TRUNCATED, b, "stream ends inside the split map");
    const int walked = sgfp4__mixed_leaf_sizes(load32(in + start + 4u), load32(in + start + 8u), load32(in + start + 12u), geo);
    if (walked < 0) return sgfp4__fail(err, SGFP4_NONZERO_PADDING, b, "a split-map bit is set past the last one the walk consumed");
    n = (u32)walked;
    headers_at = (u64)start + 16u;
  } else {
    const u32 lg = layout == 5u ? 2u : 6u - layout;
    n = (64u >> lg) * (64u >> lg);
    for (u32 i = 0; i < n; i++) geo[4 * i + 1] = lg << 12;
    headers_at = (u64)start + 4u;
  }
  const u64 headers_end = headers_at + 4u * n, payload_at = (headers_end + 15u) & ~15ull;
  if (headers_end > len) return sgfp4__fail(err, SGFP4_TRUNCATED, b, "stream ends inside the leaf headers");
  if (payload_at > len) return sgfp4__fail(err, SGFP4_TRUNCATED, b, "stream ends inside the leaf-header pad");
  if (!all_zero(in, (u32)headers_end, (u32)payload_at)) return sgfp4__fail(err, SGFP4_NONZERO_PADDING, b, "nonzero byte in the leaf-header pad");
  u64 p = payload_at;
  for (u32 i = 0; i < n; i++) {
    const u32 h = load32(in + (u32)headers_at + 4u * i), lg = (geo[4 * i + 1] >> 12) & 7u;
    if (h & 0xeu) return sgfp4__fail(err, SGFP4_RESERVED_BITS, b, "leaf flag bits 1-3 are set");
    const u32 used = (h & 1u) ? (1u << (2u * lg)) >> 2 : (1u << (2u * lg)) >> 1, padded = (used + 15u) & ~15u;
    if (p + padded > len) return sgfp4__fail(err, SGFP4_TRUNCATED, b, "stream ends inside a leaf payload");
    if (!all_zero(in, (u32)p + used, (u32)p + padded)) return sgfp4__fail(err, SGFP4_NONZERO_PADDING, b, "nonzero byte in a leaf's payload padding");
    p += padded;
  }
  for (u32 i = 0; i < n; i++) {
    const u32 h = load32(in + (u32)headers_at + 4u * i);
    if (half_nonfinite(h >> 16)) return sgfp4__fail(err, SGFP4_NONFINITE_PARAMETER, b, "a leaf scale is FP16 Inf or NaN");
    if (half_nonfinite(h & 0xfff0u)) return sgfp4__fail(err, SGFP4_NONFINITE_PARAMETER, b, "a leaf bias is FP16 Inf or NaN");
  }
  return SGFP4_OK;
}

static sgfp4_status sgfp4__classify_v2(const u8 *in, u32 len, u32 blocks, u32 *geo, sgfp4_error *err) {
  const u8 magic[4] = {0x53, 0x47, 0x46, 0x34}; /* 'SGF4' */
  for (u32 i = 0; i < 4u; i++) {
    if (i >= len) return sgfp4__fail(err, SGFP4_TRUNCATED, SGFP4_NO_BLOCK, "stream ends inside the magic");
    if (in[i] != magic[i]) return sgfp4__fail(err, SGFP4_BAD_MAGIC, SGFP4_NO_BLOCK, "stream does not start with 'SGF4'");
  }
  if (len < 5u) return sgfp4__fail(err, SGFP4_TRUNCATED, SGFP4_NO_BLOCK, "stream ends before the version byte");
  if (in[4] != 0x02) return sgfp4__fail(err, SGFP4_BAD_VERSION, SGFP4_NO_BLOCK, "version byte is not 0x02");
  if (len < 16u) return sgfp4__fail(err, SGFP4_TRUNCATED, SGFP4_NO_BLOCK, "stream ends inside the 16-byte fixed header");
  if (load32(in + 5) != blocks) return sgfp4__fail(err, SGFP4_RECORD_COUNT_MISMATCH, SGFP4_NO_BLOCK, "record count != ceil(O/64) * ceil(I/64)");
  if (!all_zero(in, 9, 16)) return sgfp4__fail(err, SGFP4_NONZERO_PADDING, SGFP4_NO_BLOCK, "nonzero byte in the fixed-header pad");
  const u64 table_end = 16ull + 4ull * blocks, base = (table_end + 15u) & ~15ull;
  if (table_end > len) return sgfp4__fail(err, SGFP4_TRUNCATED, SGFP4_NO_BLOCK, "stream ends inside the record offset table");
  if (base > len) return sgfp4__fail(err, SGFP4_TRUNCATED, SGFP4_NO_BLOCK, "stream ends inside the offset-table pad");
  if (!all_zero(in, (u32)table_end, (u32)base)) return sgfp4__fail(err, SGFP4_NONZERO_PADDING, SGFP4_NO_BLOCK, "nonzero byte in the offset-table pad");
  long long prev = -1;
  for (u32 b = 0; b < blocks; b++) {
    const u32 rel = load32(in + 16u + 4u * b);
    if (rel & 15u) return sgfp4__fail(err, SGFP4_MISALIGNED_OFFSET, b, "record offset is not a multiple of 16");
    if ((long long)rel <= prev) return sgfp4__fail(err, SGFP4_NONMONOTONIC_OFFSET, b, "record offset is not greater than the one before it");
    prev = rel;
    if (base + rel >= len) return sgfp4__fail(err, SGFP4_OFFSET_OUT_OF_RANGE, b, "record starts at or past the end of the stream");
    const sgfp4_status s = sgfp4__classify_record(in, len, b, (u32)(base + rel), geo, err);
    if (s != SGFP4_OK) return s;
  }
  return SGFP4_OK;
}
