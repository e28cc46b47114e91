// The exact, record-by-record v2 parse: every check throws the detailed error, record by record
// in @sgfp4/format's order. parseReference runs it whole; the fast path (sgfp4_parse.cpp) runs it
// on the record it rejected, to name the fault.
#include <algorithm>
#include <vector>

#include "sgfp4_parse_internal.hpp"

namespace sgfp4 {
namespace detail {
namespace {

// A leaf's payload padding: `used` and `padded` are multiples of 4, so at most three words.
inline void requireZeroPadding(const uint8_t* bytes, uint64_t from, uint64_t to) {
  uint32_t any = 0;
  for (uint64_t o = from; o < to; o += 4) any |= rd32(bytes + o);
  if (any) requireZero(bytes, from, to, "a leaf's payload padding");
}

// Pre-order DFS (TL, TR, BL, BR); one map bit per node of size >= 8. Returns bits consumed.
// Depth is at most 5 and the node count at most 85, so recursion is bounded.
uint32_t walkSplitMap(const uint32_t map[3], uint32_t y, uint32_t x, uint32_t log2, uint32_t& bit, std::vector<Geo>& out) {
  if (log2 > 2) {
    const uint32_t k = bit++;
    if ((map[k >> 5] >> (k & 31)) & 1) {
      const uint32_t h = 1u << (log2 - 1);
      walkSplitMap(map, y, x, log2 - 1, bit, out);
      walkSplitMap(map, y, x + h, log2 - 1, bit, out);
      walkSplitMap(map, y + h, x, log2 - 1, bit, out);
      walkSplitMap(map, y + h, x + h, log2 - 1, bit, out);
      return bit;
    }
  }
  out.push_back(Geo{uint8_t(y), uint8_t(x), uint8_t(log2)});
  return bit;
}

const int kUniformLog2[6] = {6, 5, 4, 3, -1, 2};

struct UniformGeometry {
  std::vector<Geo> leaves[6];  // per layout, in storage (raster) order; MIXED (4) empty
  UniformGeometry() {
    for (uint32_t l = 0; l < 6; l++) {
      if (kUniformLog2[l] < 0) continue;
      const uint32_t log2 = uint32_t(kUniformLog2[l]), size = 1u << log2;
      for (uint32_t y = 0; y < kMacro; y += size)
        for (uint32_t x = 0; x < kMacro; x += size) leaves[l].push_back(Geo{uint8_t(y), uint8_t(x), uint8_t(log2)});
    }
  }
};
const UniformGeometry kUniform;  // built once, at load

}  // namespace

// Parses one record starting at `start` (< len). Returns the end of its last payload.
uint64_t parseRecord(const uint8_t* bytes, uint64_t len, uint64_t b, uint64_t start, Words& table, std::vector<Geo>& geo) {
  if (start + 4 > len) throw Failure("TRUNCATED", "stream ends inside the sb_header" + at(b, len));
  const uint32_t sb = rd32(bytes + start);
  if (sb >> 3) throw Failure("RESERVED_BITS", "sb_header reserved bits 3-31 are set (" + hex(sb) + ")" + at(b, start));
  const uint32_t layout = sb & 7;
  if (layout > 5) throw Failure("UNKNOWN_LAYOUT", "layout value " + str(layout) + at(b, start));
  geo.clear();
  const std::vector<Geo>* leaves = &geo;
  uint64_t headersAt = start + 4;
  if (layout == 4) {
    if (start + 16 > len) throw Failure("TRUNCATED", "stream ends inside the split map" + at(b, len));
    const uint32_t map[3] = {rd32(bytes + start + 4), rd32(bytes + start + 8), rd32(bytes + start + 12)};
    uint32_t bit = 0;
    const uint32_t used = walkSplitMap(map, 0, 0, 6, bit, geo);
    for (uint32_t k = used; k < 96; k++)
      if ((map[k >> 5] >> (k & 31)) & 1)
        throw Failure("NONZERO_PADDING", "split-map bit " + str(k) + " is set past the last bit the walk consumed (" + str(used) + ")" + at(b, start + 4 + (k >> 3)));
    headersAt = start + 16;
  } else {
    leaves = &kUniform.leaves[layout];
  }
  const Geo* g = leaves->data();
  const uint64_t n = leaves->size();
  const uint64_t headersEnd = headersAt + 4 * n;
  if (headersEnd > len) throw Failure("TRUNCATED", "stream ends inside the " + str(n) + " leaf headers" + at(b, len));
  const uint64_t payloadStart = align16(headersEnd);
  if (payloadStart > len) throw Failure("TRUNCATED", "stream ends inside the leaf-header pad" + at(b, len));
  requireZero(bytes, headersEnd, payloadStart, "the record header pad");

  const size_t firstLeaf = table.size() / SGFP4_LEAF_WORDS;
  table.resize(table.size() + n * SGFP4_LEAF_WORDS);
  uint32_t* leaf = table.data() + firstLeaf * SGFP4_LEAF_WORDS;
  uint64_t p = payloadStart;
  for (uint64_t i = 0; i < n; i++, leaf += SGFP4_LEAF_WORDS) {
    const uint32_t h = rd32(bytes + headersAt + 4 * i);
    const uint32_t flags = h & (SGFP4_V2_LEAF_MODE_MASK | SGFP4_V2_LEAF_RESERVED_MASK);
    if (flags & SGFP4_V2_LEAF_RESERVED_MASK) throw Failure("RESERVED_BITS", "leaf " + str(i) + " flag bits 1-3 set (flags " + hex(flags) + ")" + at(b, headersAt + 4 * i));
    const uint32_t mode = flags & SGFP4_V2_LEAF_MODE_MASK;
    const uint32_t used = sgfp4_leaf_payload_bytes(g[i].log2, mode);
    const uint64_t padded = align16(used);
    if (p + padded > len) throw Failure("TRUNCATED", "stream ends inside the payload of leaf " + str(i) + at(b, len));
    requireZeroPadding(bytes, p + used, p + padded);
    leaf[SGFP4_LEAF_WORD_BLOCK] = uint32_t(b);
    leaf[SGFP4_LEAF_WORD_GEOMETRY] = sgfp4_geometry_pack(g[i].y, g[i].x, g[i].log2, mode);
    leaf[SGFP4_LEAF_WORD_PARAMS] = sgfp4_v2_header_params(h);
    leaf[SGFP4_LEAF_WORD_PAYLOAD] = uint32_t(p);
    p += padded;
  }
  // Parameters are checked after the record's structure, as @sgfp4/format does.
  for (uint64_t i = 0; i < n; i++) checkParams(table[(firstLeaf + i) * SGFP4_LEAF_WORDS + SGFP4_LEAF_WORD_PARAMS], b, headersAt + 4 * i);
  return p;
}

// Record b's offset-table checks, then the record itself (parseRecord): the exact, throwing
// step of a sequential parse. The fast path (sgfp4_parse.cpp) falls back to it to name a fault.
void exactRecord(const uint8_t* bytes, uint64_t len, uint64_t base, uint64_t b, Words& table, std::vector<Geo>& geo) {
  const uint64_t rel = rd32(bytes + 16 + 4 * b);
  const int64_t prev = b == 0 ? -1 : int64_t(rd32(bytes + 16 + 4 * (b - 1)));
  if (rel % 16 != 0) throw Failure("MISALIGNED_OFFSET", "record offset " + str(rel) + " is not a multiple of 16" + at(b, 16 + 4 * b));
  if (int64_t(rel) <= prev)
    throw Failure("NONMONOTONIC_OFFSET", "record offset " + str(rel) + " is not greater than the previous one (" + std::to_string(prev) + ")" + at(b, 16 + 4 * b));
  const uint64_t start = base + rel;
  if (start >= len) throw Failure("OFFSET_OUT_OF_RANGE", "record starts at byte " + str(start) + ", at or past the end of the " + str(len) + "-byte stream" + at(b, 16 + 4 * b));
  parseRecord(bytes, len, b, start, table, geo);
}

// The sequential parse, record by record through exactRecord, its table growing as records are
// accepted. It is the reference the fast path must match (tests compare the two), and the path
// for streams the fast path does not size up front (records that overlap: see parseV2).
void parseV2Records(const uint8_t* bytes, uint64_t len, uint64_t base, Container& c) {
  const uint64_t B = c.blockCount;
  c.leafTable.clear();
  c.blockFirstLeaf.assign(B + 1, 0);
  // Reserve in proportion to the stream only: a leaf takes at least 20 bytes.
  c.leafTable.reserve(std::min<uint64_t>(B * 256, len / 20 + 16) * SGFP4_LEAF_WORDS);
  std::vector<Geo> geo;
  geo.reserve(256);
  for (uint64_t b = 0; b < B; b++) {
    c.blockFirstLeaf[b] = uint32_t(c.leafTable.size() / SGFP4_LEAF_WORDS);
    exactRecord(bytes, len, base, b, c.leafTable, geo);
  }
  c.blockFirstLeaf[B] = uint32_t(c.leafTable.size() / SGFP4_LEAF_WORDS);
}

}  // namespace detail
}  // namespace sgfp4
