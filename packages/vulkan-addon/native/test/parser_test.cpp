// Unit tests of the native parser: hand-built streams whose leaf tables and error codes are
// known from construction. Built with -fsanitize=address,undefined by scripts/native-tests.mjs.
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "../src/sgfp4_parse.hpp"

using namespace sgfp4;
using Bytes = std::vector<uint8_t>;

static int passed = 0, failed = 0;
#define EXPECT(cond, what)                                                   \
  do {                                                                       \
    if (cond) passed++;                                                      \
    else {                                                                   \
      failed++;                                                              \
      std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, std::string(what).c_str()); \
    }                                                                        \
  } while (0)

static void put32(Bytes& b, size_t at, uint32_t v) {
  if (b.size() < at + 4) b.resize(at + 4);
  for (int i = 0; i < 4; i++) b[at + i] = uint8_t(v >> (8 * i));
}

static std::string codeOf(const Bytes& b, Profile p, double rows, double cols, uint64_t max = kDefaultMaxOutputBytes) {
  try {
    parse(b.data(), b.size(), p, rows, cols, max);
    return "OK";
  } catch (const Failure& f) {
    return f.code;
  }
}

// v1 with B blocks: header[b], offsets[b] = slot*2048 | flags, payload filled with `fill`.
static Bytes v1(uint32_t B, std::function<uint32_t(uint32_t)> header, std::function<uint32_t(uint32_t)> off, uint8_t fill = 0) {
  Bytes b(B * 2056, 0);
  for (uint32_t i = 0; i < B; i++) {
    put32(b, 4 * i, header(i));
    put32(b, 4 * B + 4 * i, off(i));
  }
  std::memset(b.data() + 8 * B, fill, B * 2048);
  return b;
}

struct Rec {
  uint32_t sb;
  std::vector<uint32_t> map;      // MIXED only (3 words)
  std::vector<uint32_t> headers;  // leaf headers
  std::vector<uint32_t> payloadBytes;
};

// v2 stream from records placed back to back (canonical).
static Bytes v2(const std::vector<Rec>& recs) {
  const uint32_t B = uint32_t(recs.size());
  Bytes b(16, 0);
  b[0] = 'S', b[1] = 'G', b[2] = 'F', b[3] = '4', b[4] = 2;
  put32(b, 5, B);
  const size_t base = (16 + 4 * B + 15) / 16 * 16;
  b.resize(base, 0);
  for (uint32_t r = 0; r < B; r++) {
    const size_t start = b.size();
    put32(b, 16 + 4 * r, uint32_t(start - base));
    put32(b, start, recs[r].sb);
    size_t at = start + 4;
    for (uint32_t w : recs[r].map) put32(b, at, w), at += 4;
    for (uint32_t h : recs[r].headers) put32(b, at, h), at += 4;
    b.resize((at + 15) / 16 * 16, 0);
    for (uint32_t n : recs[r].payloadBytes) b.resize(b.size() + (n + 15) / 16 * 16, 0x11);
    // padding bytes must be zero: rewrite the tails
    size_t p = (at + 15) / 16 * 16;
    for (uint32_t n : recs[r].payloadBytes) {
      const size_t padded = (n + 15) / 16 * 16;
      for (size_t k = p + n; k < p + padded; k++) b[k] = 0;
      p += padded;
    }
  }
  return b;
}

static Rec uniform64(uint32_t header = 0x3c000000) { return Rec{0, {}, {header}, {2048}}; }

int main() {
  // FP16 -> float32 bits, from the IEEE definitions.
  EXPECT(sgfp4_half_to_float_bits(0x0001) == 0x33800000u, "smallest subnormal is 2^-24");
  EXPECT(sgfp4_half_to_float_bits(0x03ff) == 0x387fc000u, "largest subnormal is 1023 * 2^-24");
  EXPECT(sgfp4_half_to_float_bits(0x8001) == 0xb3800000u, "negative subnormal");
  EXPECT(sgfp4_half_to_float_bits(0x8000) == 0x80000000u, "-0 stays -0");
  EXPECT(sgfp4_half_to_float_bits(0x3c00) == 0x3f800000u, "1.0");
  EXPECT(sgfp4_half_to_float_bits(0x7bff) == 0x477fe000u, "65504");
  EXPECT(sgfp4_half_to_float_bits(0x0400) == 0x38800000u, "smallest normal 2^-14");

  // Shape checks.
  Bytes one = v1(1, [](uint32_t) { return 0x3c000000u; }, [](uint32_t) { return 0u; });
  EXPECT(codeOf(one, Profile::V1, 0, 1) == "INVALID_ARGUMENT", "rows 0");
  EXPECT(codeOf(one, Profile::V1, 1.5, 1) == "INVALID_ARGUMENT", "fractional rows");
  EXPECT(codeOf(one, Profile::V1, 1e300, 1) == "INVALID_ARGUMENT", "rows past 2^53");
  EXPECT(codeOf(one, Profile::V1, 65536, 65536) == "LIMIT_EXCEEDED", "2^32 floats over the default limit");
  EXPECT(codeOf(one, Profile::V1, 64, 64, 64 * 64 * 4 - 1) == "LIMIT_EXCEEDED", "one byte over a caller limit");

  // v1: a valid single block; the leaf table from construction.
  {
    Container c = parse(one.data(), one.size(), Profile::V1, 1, 1);
    EXPECT(c.leafCount() == 1 && c.leafTable[0] == 0 && c.leafTable[1] == (6u << 12) && c.leafTable[2] == 0x3c000000u && c.leafTable[3] == 8,
           "v1 one-block leaf table");
    EXPECT(c.blockFirstLeaf.size() == 2 && c.blockFirstLeaf[0] == 0 && c.blockFirstLeaf[1] == 1, "v1 block index");
  }
  // v1: 2x2 blocks, slots reversed, T158 on odd blocks, ERROR_HINT (informational) on block 0.
  {
    Bytes b = v1(4, [](uint32_t i) { return 0x40000000u | i; }, [](uint32_t i) { return (3 - i) * 2048 | (i & 1) | (i == 0 ? 2 : 0); });
    for (uint32_t i = 0; i < 4; i++)
      if (i & 1) std::memset(b.data() + 32 + (3 - i) * 2048 + 1024, 0, 1024);
    Container c = parse(b.data(), b.size(), Profile::V1, 100, 128);
    bool ok = c.leafCount() == 4;
    for (uint32_t i = 0; ok && i < 4; i++)
      ok = c.leafTable[4 * i] == i && c.leafTable[4 * i + 1] == ((6u << 12) | ((i & 1) << 15)) && c.leafTable[4 * i + 2] == (0x40000000u | i) &&
           c.leafTable[4 * i + 3] == 32 + (3 - i) * 2048;
    EXPECT(ok, "v1 2x2 permuted slots, modes, error hint");
  }
  EXPECT(codeOf(Bytes(one.begin(), one.end() - 1), Profile::V1, 1, 1) == "SIZE_MISMATCH", "v1 one byte short");
  EXPECT(codeOf(one, Profile::V1, 65, 1) == "SIZE_MISMATCH", "v1 shape needs 2 blocks");
  EXPECT(codeOf(v1(1, [](uint32_t) { return 0u; }, [](uint32_t) { return 4u; }), Profile::V1, 1, 1) == "RESERVED_BITS", "v1 flag bit 2");
  EXPECT(codeOf(v1(1, [](uint32_t) { return 0u; }, [](uint32_t) { return 8u; }), Profile::V1, 1, 1) == "RESERVED_BITS", "v1 flag bit 3");
  EXPECT(codeOf(v1(1, [](uint32_t) { return 0u; }, [](uint32_t) { return 2048u; }), Profile::V1, 1, 1) == "OFFSET_OUT_OF_RANGE", "v1 base + 2048 past the blob");
  EXPECT(codeOf(v1(1, [](uint32_t) { return 0u; }, [](uint32_t) { return 0xfffffff0u; }), Profile::V1, 1, 1) == "OFFSET_OUT_OF_RANGE", "v1 base near 2^32");
  EXPECT(codeOf(v1(2, [](uint32_t) { return 0u; }, [](uint32_t i) { return i ? 2048u + 16 : 0u; }), Profile::V1, 1, 65) == "OFFSET_OUT_OF_RANGE",
         "v1 unaligned slot overlapping the end");
  EXPECT(codeOf(v1(1, [](uint32_t) { return 0x7c000000u; }, [](uint32_t) { return 0u; }), Profile::V1, 1, 1) == "NONFINITE_PARAMETER", "v1 scale Inf");
  EXPECT(codeOf(v1(1, [](uint32_t) { return 0x00007e01u; }, [](uint32_t) { return 0u; }), Profile::V1, 1, 1) == "NONFINITE_PARAMETER", "v1 bias NaN");
  EXPECT(codeOf(v1(1, [](uint32_t) { return 0u; }, [](uint32_t) { return 1u; }, 0x55), Profile::V1, 1, 1) == "NONZERO_PADDING", "v1 T158 upper half nonzero");
  {
    Bytes b = v1(1, [](uint32_t) { return 0u; }, [](uint32_t) { return 1u; }, 0xff);
    std::memset(b.data() + 8 + 1024, 0, 1024);
    EXPECT(codeOf(b, Profile::V1, 1, 1) == "OK", "v1 T158 all reserved symbols is valid");
  }

  // v2: uniform and MIXED geometry.
  {
    Rec r32{1, {}, {0x3c000000, 0x3c000001, 0x3c000000, 0x3c000001}, {512, 256, 512, 256}};
    Bytes b = v2({r32});
    Container c = parse(b.data(), b.size(), Profile::V2, 64, 64);
    const uint32_t pay0 = 32 + 32;  // base 32 (16 + 4 -> 32), sb + 4 headers = 20 -> 32
    bool ok = c.leafCount() == 4;
    const uint32_t ys[4] = {0, 0, 32, 32}, xs[4] = {0, 32, 0, 32}, pays[4] = {pay0, pay0 + 512, pay0 + 768, pay0 + 1280};
    for (uint32_t i = 0; ok && i < 4; i++)
      ok = c.leafTable[4 * i + 1] == (ys[i] | xs[i] << 6 | 5u << 12 | (i & 1) << 15) && c.leafTable[4 * i + 2] == 0x3c000000u && c.leafTable[4 * i + 3] == pays[i];
    EXPECT(ok, "v2 UNIFORM_32 raster leaves, modes, masked headers, payload offsets");
  }
  {
    // Root split; TL split into four 16x16; TR, BL, BR leaves. Bits: root=1, TL=1, 4x(16: 0), TR=0, BL=0, BR=0.
    const uint32_t map = 0b11;
    Rec m{4, {map, 0, 0}, std::vector<uint32_t>(7, 0x3c000000), {128, 128, 128, 128, 512, 512, 512}};
    Bytes b = v2({m});
    Container c = parse(b.data(), b.size(), Profile::V2, 64, 64);
    const uint32_t geo[7][3] = {{0, 0, 4}, {0, 16, 4}, {16, 0, 4}, {16, 16, 4}, {0, 32, 5}, {32, 0, 5}, {32, 32, 5}};
    bool ok = c.leafCount() == 7;
    for (uint32_t i = 0; ok && i < 7; i++) ok = c.leafTable[4 * i + 1] == (geo[i][0] | geo[i][1] << 6 | geo[i][2] << 12);
    EXPECT(ok, "v2 MIXED pre-order DFS geometry");
    Rec extra = m;
    extra.map = {map | (1u << 20), 0, 0};
    Bytes e = v2({extra});
    EXPECT(codeOf(e, Profile::V2, 64, 64) == "NONZERO_PADDING", "v2 split-map bit past the walk");
  }
  {
    // FULL_4x4: 256 leaves of 8 bytes (FP4), each padded to 16.
    Rec f{5, {}, std::vector<uint32_t>(256, 0x3c000000), std::vector<uint32_t>(256, 8)};
    Bytes b = v2({f});
    Container c = parse(b.data(), b.size(), Profile::V2, 3, 5);
    EXPECT(c.leafCount() == 256 && c.leafTable[4 * 17 + 1] == (4u | 4u << 6 | 2u << 12), "v2 FULL_4x4 leaf 17 at (4, 4)");
  }
  Bytes good = v2({uniform64(), uniform64()});  // shape 64 x 128
  EXPECT(codeOf(good, Profile::V2, 64, 128) == "OK", "v2 two records");
  auto mutate = [&](std::function<void(Bytes&)> f) {
    Bytes b = good;
    f(b);
    return codeOf(b, Profile::V2, 64, 128);
  };
  EXPECT(mutate([](Bytes& b) { b[0] = 'X'; }) == "BAD_MAGIC", "v2 magic");
  EXPECT(mutate([](Bytes& b) { b[4] = 3; }) == "BAD_VERSION", "v2 version");
  EXPECT(mutate([](Bytes& b) { b.resize(3); }) == "TRUNCATED", "v2 inside the magic");
  EXPECT(mutate([](Bytes& b) { b.resize(12); }) == "TRUNCATED", "v2 inside the fixed header");
  EXPECT(mutate([](Bytes& b) { b.resize(20); }) == "TRUNCATED", "v2 inside the offset table");
  EXPECT(mutate([](Bytes& b) { put32(b, 5, 3); }) == "RECORD_COUNT_MISMATCH", "v2 B != tiles");
  EXPECT(mutate([](Bytes& b) { b[12] = 1; }) == "NONZERO_PADDING", "v2 fixed-header pad");
  EXPECT(mutate([](Bytes& b) { b[28] = 1; }) == "NONZERO_PADDING", "v2 offset-table pad");
  EXPECT(mutate([](Bytes& b) { put32(b, 20, 8); }) == "MISALIGNED_OFFSET", "v2 record offset % 16");
  EXPECT(mutate([](Bytes& b) { put32(b, 20, 0); }) == "NONMONOTONIC_OFFSET", "v2 equal offsets");
  EXPECT(mutate([](Bytes& b) { put32(b, 20, 1u << 20); }) == "OFFSET_OUT_OF_RANGE", "v2 record past the end");
  EXPECT(mutate([](Bytes& b) { put32(b, 32, 6); }) == "UNKNOWN_LAYOUT", "v2 layout 6");
  EXPECT(mutate([](Bytes& b) { put32(b, 32, 8); }) == "RESERVED_BITS", "v2 sb_header bit 3");
  EXPECT(mutate([](Bytes& b) { put32(b, 36, 0x3c000002); }) == "RESERVED_BITS", "v2 leaf flag bit 1");
  EXPECT(mutate([](Bytes& b) { put32(b, 36, 0x3c007c00); }) == "NONFINITE_PARAMETER", "v2 bias Inf");
  EXPECT(mutate([](Bytes& b) { put32(b, 36, 0x3c007c0f & 0xfffffff1); }) == "NONFINITE_PARAMETER", "v2 bias Inf with mode flag");
  // Read as T158 the leaf takes 1024 of the 2048 bytes; the rest is a gap, which is allowed.
  EXPECT(mutate([](Bytes& b) { put32(b, 36, 0x3c000001); }) == "OK", "v2 leaf switched to T158 leaves a gap");
  EXPECT(mutate([](Bytes& b) { b[40] = 1; }) == "NONZERO_PADDING", "v2 record header pad");
  EXPECT(mutate([](Bytes& b) { b.resize(b.size() - 1); }) == "TRUNCATED", "v2 last payload short");
  EXPECT(mutate([](Bytes& b) { b.resize(b.size() + 100, 0xee); }) == "OK", "v2 trailing bytes ignored");
  // A declared B far larger than the stream: refused before allocating per-record state.
  {
    Bytes b(16, 0);
    b[0] = 'S', b[1] = 'G', b[2] = 'F', b[3] = '4', b[4] = 2;
    put32(b, 5, 1u << 20);
    EXPECT(codeOf(b, Profile::V2, 64 * 1024, 64 * 1024, uint64_t(1) << 40) == "TRUNCATED", "v2 huge B, 16-byte stream");
  }

  std::printf("parser_test: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
