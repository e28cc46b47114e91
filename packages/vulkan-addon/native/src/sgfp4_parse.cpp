#include "sgfp4_parse.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "work_pool.hpp"

namespace sgfp4 {
namespace {

constexpr uint64_t kMacro = SGFP4_MACROBLOCK;
constexpr uint64_t kV1Payload = SGFP4_V1_PAYLOAD_BYTES;

std::string str(uint64_t v) { return std::to_string(v); }
std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%x", v);
  return b;
}
std::string at(uint64_t record, uint64_t offset) { return " (at record " + str(record) + ", byte offset " + str(offset) + ")"; }

uint32_t rd32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }

// The checks below run per leaf: the test is inline, the message is built only on a fault.
[[noreturn]] void nonFinite(uint32_t header, uint64_t record, uint64_t offset) {
  const uint32_t scale = sgfp4_params_scale_bits(header), bias = sgfp4_params_bias_bits(header);
  if (sgfp4_half_nonfinite(scale)) throw Failure("NONFINITE_PARAMETER", "scale " + hex(scale) + " is Inf or NaN" + at(record, offset));
  throw Failure("NONFINITE_PARAMETER", "bias " + hex(bias) + " is Inf or NaN" + at(record, offset));
}

inline void checkParams(uint32_t header, uint64_t record, uint64_t offset) {
  if (sgfp4_half_nonfinite(sgfp4_params_scale_bits(header)) || sgfp4_half_nonfinite(sgfp4_params_bias_bits(header))) nonFinite(header, record, offset);
}

void requireZero(const uint8_t* bytes, uint64_t from, uint64_t to, const char* what) {
  for (uint64_t o = from; o < to; o++)
    if (bytes[o] != 0) throw Failure("NONZERO_PADDING", std::string("nonzero byte in ") + what + " (at byte offset " + str(o) + ")");
}

// A leaf's payload padding: `used` and `padded` are multiples of 4, so at most three words.
inline void requireZeroPadding(const uint8_t* bytes, uint64_t from, uint64_t to) {
  uint32_t any = 0;
  for (uint64_t o = from; o < to; o += 4) any |= rd32(bytes + o);
  if (any) requireZero(bytes, from, to, "a leaf's payload padding");
}

uint64_t align16(uint64_t n) { return (n + SGFP4_PAYLOAD_ALIGN - 1) & ~uint64_t(SGFP4_PAYLOAD_ALIGN - 1); }

// Runs f(begin, end) over [0, n) split into `ranges` contiguous ranges on the shared pool (in
// order on the caller's thread when ranges is 1). The first range's failure wins, which is the
// failure a sequential pass over [0, n) meets first: every range stops at its own first one.
void forRanges(uint64_t n, unsigned ranges, const std::function<void(uint64_t, uint64_t)>& f) {
  if (ranges <= 1 || n < 2) {
    f(0, n);
    return;
  }
  const uint64_t k = std::min<uint64_t>(ranges, n), step = (n + k - 1) / k;
  WorkPool::shared().run(size_t(k), [&](size_t r) {
    const uint64_t b = r * step, e = std::min(n, b + step);
    if (b < e) f(b, e);
  });
}

void parseV1(const uint8_t* bytes, size_t len, Container& c, unsigned ranges) {
  const uint64_t B = c.blockCount;
  const uint64_t expected = (8 + kV1Payload) * B;
  if (uint64_t(len) != expected)
    throw Failure("SIZE_MISMATCH", "v1 stream of " + str(len) + " bytes, expected 8*B + 2048*B = " + str(expected) + " for B = " + str(B));
  if (len > 0xffffffffull) throw Failure("LIMIT_EXCEEDED", "stream over 4 GiB: payload offsets do not fit the 32-bit leaf table");
  const uint64_t blobBase = 8 * B, blobLen = kV1Payload * B;
  c.leafTable.resize(B * SGFP4_LEAF_WORDS);
  c.blockFirstLeaf.resize(B + 1);
  forRanges(B, ranges, [&](uint64_t b0, uint64_t b1) {
    for (uint64_t b = b0; b < b1; b++) {
      const uint32_t header = rd32(bytes + 4 * b);
      const uint32_t offWord = rd32(bytes + 4 * B + 4 * b);
      const uint32_t flags = offWord & SGFP4_V1_FLAGS_MASK;
      const uint64_t base = offWord & ~SGFP4_V1_FLAGS_MASK;
      if (flags & SGFP4_V1_FLAG_RESERVED_MASK) throw Failure("RESERVED_BITS", "v1 offset flag bits 2-3 set (flags " + hex(flags) + ")" + at(b, 4 * B + 4 * b));
      if (base + kV1Payload > blobLen)
        throw Failure("OFFSET_OUT_OF_RANGE", "payload base " + str(base) + " + 2048 exceeds the " + str(blobLen) + "-byte payload blob" + at(b, 4 * B + 4 * b));
      checkParams(header, b, 4 * b);
      const uint32_t mode = flags & SGFP4_V1_FLAG_MODE_MASK;
      const uint64_t payload = blobBase + base;
      if (mode == SGFP4_MODE_T158) {
        for (uint64_t o = payload + SGFP4_V1_T158_BYTES; o < payload + kV1Payload; o += 4)
          if (rd32(bytes + o) != 0) throw Failure("NONZERO_PADDING", "v1 T158 payload upper half (words 256..511) is nonzero" + at(b, o));
      }
      uint32_t* leaf = &c.leafTable[b * SGFP4_LEAF_WORDS];
      leaf[SGFP4_LEAF_WORD_BLOCK] = uint32_t(b);
      leaf[SGFP4_LEAF_WORD_GEOMETRY] = sgfp4_geometry_pack(0, 0, SGFP4_MAX_LEAF_LOG2, mode);
      leaf[SGFP4_LEAF_WORD_PARAMS] = header;
      leaf[SGFP4_LEAF_WORD_PAYLOAD] = uint32_t(payload);
      c.blockFirstLeaf[b] = uint32_t(b);
    }
  });
  c.blockFirstLeaf[B] = uint32_t(B);
}

struct Geo {
  uint8_t y, x, log2;
};

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

void parseV2(const uint8_t* bytes, size_t len64, Container& c, unsigned ranges) {
  const uint64_t len = len64;
  static const uint8_t magic[4] = {0x53, 0x47, 0x46, 0x34};
  for (uint64_t i = 0; i < 4; i++) {
    if (i >= len) throw Failure("TRUNCATED", "stream of " + str(len) + " bytes ends inside the magic");
    if (bytes[i] != magic[i]) throw Failure("BAD_MAGIC", "stream does not start with 'SGF4'");
  }
  if (len < 5) throw Failure("TRUNCATED", "stream ends before the version byte");
  if (bytes[4] != 0x02) throw Failure("BAD_VERSION", "version byte is " + hex(bytes[4]) + ", expected 0x2");
  if (len < 16) throw Failure("TRUNCATED", "stream of " + str(len) + " bytes ends inside the 16-byte fixed header");
  if (len > 0xffffffffull) throw Failure("LIMIT_EXCEEDED", "stream over 4 GiB: payload offsets do not fit the 32-bit leaf table");
  const uint64_t B = rd32(bytes + 5);
  if (B != c.blockCount)
    throw Failure("RECORD_COUNT_MISMATCH", "stream declares B = " + str(B) + " records, the shape needs " + str(c.tilesY) + "*" + str(c.tilesX) + " = " + str(c.blockCount));
  requireZero(bytes, 9, 16, "the fixed-header pad");
  const uint64_t tableEnd = 16 + 4 * B;
  const uint64_t base = align16(tableEnd);
  if (len < tableEnd) throw Failure("TRUNCATED", "stream ends inside the " + str(B) + "-entry record offset table");
  if (len < base) throw Failure("TRUNCATED", "stream ends inside the offset-table pad");
  requireZero(bytes, tableEnd, base, "the offset-table pad");

  c.blockFirstLeaf.resize(B + 1);
  // Records [b0, b1) into `table`; blockFirstLeaf[b] relative to the table's start.
  auto records = [&](uint64_t b0, uint64_t b1, Words& table) {
    std::vector<Geo> geo;
    geo.reserve(256);
    for (uint64_t b = b0; b < b1; b++) {
      const uint64_t rel = rd32(bytes + 16 + 4 * b);
      const int64_t prev = b == 0 ? -1 : int64_t(rd32(bytes + 16 + 4 * (b - 1)));
      if (rel % 16 != 0) throw Failure("MISALIGNED_OFFSET", "record offset " + str(rel) + " is not a multiple of 16" + at(b, 16 + 4 * b));
      if (int64_t(rel) <= prev)
        throw Failure("NONMONOTONIC_OFFSET", "record offset " + str(rel) + " is not greater than the previous one (" + std::to_string(prev) + ")" + at(b, 16 + 4 * b));
      const uint64_t start = base + rel;
      if (start >= len) throw Failure("OFFSET_OUT_OF_RANGE", "record starts at byte " + str(start) + ", at or past the end of the " + str(len) + "-byte stream" + at(b, 16 + 4 * b));
      c.blockFirstLeaf[b] = uint32_t(table.size() / SGFP4_LEAF_WORDS);
      parseRecord(bytes, len, b, start, table, geo);
    }
  };
  // Reserve in proportion to the stream only: a leaf takes at least 20 bytes.
  const uint64_t reserveLeaves = std::min<uint64_t>(B * 16, len / 20 + 16);
  if (ranges <= 1 || B < 2) {
    c.leafTable.reserve(reserveLeaves * SGFP4_LEAF_WORDS);
    records(0, B, c.leafTable);
  } else {
    // Each range parses into its own table; then the tables are joined in order and each
    // range's block index shifted by the leaves before it.
    const uint64_t k = std::min<uint64_t>(ranges, B), step = (B + k - 1) / k;
    std::vector<Words> parts(k);
    forRanges(B, unsigned(k), [&](uint64_t b0, uint64_t b1) {
      Words& part = parts[b0 / step];
      part.reserve(reserveLeaves / k * SGFP4_LEAF_WORDS);
      records(b0, b1, part);
    });
    std::vector<uint64_t> before(k + 1, 0);
    for (uint64_t r = 0; r < k; r++) before[r + 1] = before[r] + parts[r].size();
    c.leafTable.resize(before[k]);
    forRanges(B, unsigned(k), [&](uint64_t b0, uint64_t b1) {
      const uint64_t r = b0 / step;
      if (!parts[r].empty()) std::memcpy(c.leafTable.data() + before[r], parts[r].data(), parts[r].size() * 4);
      const uint32_t shift = uint32_t(before[r] / SGFP4_LEAF_WORDS);
      for (uint64_t b = b0; b < b1; b++) c.blockFirstLeaf[b] += shift;
      Words().swap(parts[r]);
    });
  }
  c.blockFirstLeaf[B] = uint32_t(c.leafTable.size() / SGFP4_LEAF_WORDS);
}

}  // namespace

void checkShape(double rows, double cols, uint64_t maxOutputBytes) {
  const double maxSafe = 9007199254740991.0;
  for (double d : {rows, cols})
    if (!(d >= 1 && d <= maxSafe && std::floor(d) == d)) throw Failure("INVALID_ARGUMENT", "shape dimensions must be integers >= 1");
  if (maxOutputBytes > kHardMaxOutputBytes) maxOutputBytes = kHardMaxOutputBytes;
  const uint64_t r = uint64_t(rows), c = uint64_t(cols);
  // r * c * 4 <= max, without overflow
  if (r > maxOutputBytes / 4 || c > maxOutputBytes / 4 / r)
    throw Failure("LIMIT_EXCEEDED", "output of " + str(r) + "x" + str(c) + " float32 is over the limit of " + str(maxOutputBytes) + " bytes (raise maxOutputBytes)");
}

Container parse(const uint8_t* bytes, size_t len, Profile profile, double rows, double cols, uint64_t maxOutputBytes, unsigned ranges) {
  checkShape(rows, cols, maxOutputBytes);
  if (bytes == nullptr && len != 0) throw Failure("INVALID_ARGUMENT", "stream is null");
  Container c;
  c.profile = profile;
  c.rows = uint64_t(rows);
  c.cols = uint64_t(cols);
  c.tilesY = (c.rows + kMacro - 1) / kMacro;
  c.tilesX = (c.cols + kMacro - 1) / kMacro;
  c.blockCount = c.tilesY * c.tilesX;
  // Twice as many ranges as threads: records differ in size, so the ranges do in time.
  // v1 reads 8 bytes per block (and 1 KiB per T158 block), 4 ns a block on the H200: the pool's
  // wake-up costs more than that below kParallelParseMinV1Blocks.
  const bool large = profile == Profile::V1 ? c.blockCount >= kParallelParseMinV1Blocks : len >= kParallelParseMinBytes;
  if (ranges == 0) ranges = large ? unsigned(2 * WorkPool::shared().threads()) : 1;
  if (profile == Profile::V1) parseV1(bytes, len, c, ranges);
  else parseV2(bytes, len, c, ranges);
  return c;
}

}  // namespace sgfp4
