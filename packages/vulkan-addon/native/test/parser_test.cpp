// Unit tests of the native parser: hand-built streams whose leaf tables and error codes are
// known from construction. Built with -fsanitize=address,undefined by scripts/native-tests.mjs.
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../src/sgfp4_parse.hpp"
#include "test_arena.hpp"

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


// parse (ranges 1 and 3) and parseReference on one stream: "OK" or the full message, and
// whether all three agree (verdict, message, tables).
static std::string agree(const Bytes& stream, Profile p, double rows, double cols, bool* same) {
  const std::unique_ptr<uint8_t[]> copy(new uint8_t[stream.size() ? stream.size() : 1]);  // exact size, for AddressSanitizer
  std::memcpy(copy.get(), stream.data(), stream.size());
  struct {
    const uint8_t* p;
    size_t n;
    const uint8_t* data() const { return p; }
    size_t size() const { return n; }
  } b{stream.empty() ? nullptr : copy.get(), stream.size()};
  std::string out[3];
  Container c[3];
  for (int k = 0; k < 3; k++) {
    try {
      c[k] = k == 2 ? parseReference(b.data(), b.size(), p, rows, cols) : parse(b.data(), b.size(), p, rows, cols, kDefaultMaxOutputBytes, k == 0 ? 1 : 3);
      out[k] = "OK";
    } catch (const Failure& f) {
      out[k] = f.what();
    }
  }
  // With a table arena (ranges 1 and 3; and one that refuses): the same verdict, message and
  // tables; the arena held by the table only, so freed with it (a rejection frees it at once).
  std::string arenaOut[3];
  Container ca[3];
  bool arenaOk = true;
  for (int k = 0; k < 3; k++) {
    auto arena = std::make_shared<sgfp4test::HeapArena>(k == 2);
    arena->wantStream(b.size());  // and a copy of the stream
    std::weak_ptr<sgfp4test::HeapArena> watch = arena;
    const std::shared_ptr<sgfp4test::HeapArena> keep = k == 1 ? arena : nullptr;  // one kept past the parse, to read its stream copy
    try {
      ca[k] = parse(b.data(), b.size(), p, rows, cols, kDefaultMaxOutputBytes, k == 1 ? 3 : 1, std::move(arena));
      arenaOut[k] = "OK";
      if (keep) arenaOk = arenaOk && sgfp4test::streamCopyOk(*keep, ca[k], b.data(), b.size());
      // the table is the arena's memory whenever the arena was asked and gave it
      if (auto a = watch.lock()) arenaOk = arenaOk && (a->calls == 0 || k == 2 || a->given == ca[k].leafTable.data() || ca[k].blockPayload.empty());
    } catch (const Failure& f) {
      arenaOut[k] = f.what();
      arenaOk = arenaOk && (keep || watch.expired());
    }
  }
  *same = out[0] == out[2] && out[1] == out[2] && arenaOk;
  for (int k = 0; k < 3; k++) *same = *same && arenaOut[k] == out[2];
  if (*same && out[2] == "OK") {
    for (int k = 0; k < 2; k++) *same = *same && c[k].leafTable == c[2].leafTable && c[k].blockFirstLeaf == c[2].blockFirstLeaf;
    for (int k = 0; k < 3; k++) *same = *same && ca[k].leafTable == c[2].leafTable && ca[k].blockFirstLeaf == c[2].blockFirstLeaf;
    // blockPayload agrees with the table, and planChunks makes the same plans from either
    for (int k = 0; k < 2; k++) *same = *same && sgfp4test::payloadSpansMatch(c[k]) && sgfp4test::payloadSpansMatch(ca[k]) && sgfp4test::plansAgree(ca[k], b.size());
  }
  if (!*same) std::printf("  disagree: [%s] [%s] [%s] arena [%s] [%s] [%s]%s\n", out[0].c_str(), out[1].c_str(), out[2].c_str(), arenaOut[0].c_str(), arenaOut[1].c_str(), arenaOut[2].c_str(), arenaOk ? "" : " (arena)");
  return out[2];
}

static uint32_t lcg = 777;
static uint32_t rnd(uint32_t n) { return ((lcg = lcg * 1103515245u + 12345u) >> 8) % n; }

// A random MIXED tree of the node of side 2^log2: map bits in pre-order, leaf sides in DFS order.
static void randomTree(uint32_t log2, std::vector<int>& bits, std::vector<uint32_t>& leaves) {
  if (log2 > 2) {
    const bool split = rnd(4) != 0;
    bits.push_back(split);
    if (split) {
      for (int q = 0; q < 4; q++) randomTree(log2 - 1, bits, leaves);
      return;
    }
  }
  leaves.push_back(log2);
}

// A random valid record: any layout, random modes, finite parameters.
static Rec randomRecord() {
  const uint32_t layout = rnd(10) < 6 ? 4 : rnd(6);
  Rec r{layout, {}, {}, {}};
  std::vector<uint32_t> sides;
  if (layout == 4) {
    std::vector<int> bits;
    randomTree(6, bits, sides);
    r.map = {0, 0, 0};
    for (size_t k = 0; k < bits.size(); k++)
      if (bits[k]) r.map[k >> 5] |= 1u << (k & 31);
  } else {
    const uint32_t log2 = layout == 5 ? 2 : 6 - layout, per = 64 >> log2;
    sides.assign(per * per, log2);
  }
  for (uint32_t log2 : sides) {
    const uint32_t mode = rnd(3) == 0;
    r.headers.push_back((0x3000u + rnd(0x800)) << 16 | (rnd(0x7c00) & 0xfff0) | mode);
    r.payloadBytes.push_back(mode ? 1u << (2 * log2 - 2) : 1u << (2 * log2 - 1));
  }
  return r;
}

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


  // The fast path against parseReference: random streams of every layout, then one-fault and
  // two-fault mutations of them (the first fault in stream order must be the one named).
  {
    static const uint32_t words[7] = {0x7c000000u, 0x7c00u, 2u, 1u, 5u, 4u, 0xfffffff0u};
    int disagreements = 0, rejected = 0, mutations = 0;
    for (int round = 0; round < 6; round++) {
      const uint32_t tilesX = 1 + rnd(7), tilesY = 1 + rnd(3);
      std::vector<Rec> recs;
      for (uint32_t k = 0; k < tilesX * tilesY; k++) recs.push_back(randomRecord());
      Bytes b = v2(recs);
      const double rows = 64.0 * tilesY - rnd(60), cols = 64.0 * tilesX - rnd(60);
      bool same;
      EXPECT(agree(b, Profile::V2, rows, cols, &same) == "OK" && same, "random valid v2 stream, round " + std::to_string(round));
      for (int m = 0; m < 400; m++) {
        Bytes x = b;
        const int faults = 1 + rnd(2);
        for (int f = 0; f < faults; f++) {
          const size_t at = rnd(uint32_t(x.size()));
          switch (rnd(4)) {
            case 0: x[at] ^= uint8_t(1u << rnd(8)); break;
            case 1: x[at] = uint8_t(rnd(256)); break;
            case 2: put32(x, at & ~size_t(3), words[rnd(7)]); break;
            default: x.resize(at); break;
          }
        }
        mutations++;
        if (agree(x, Profile::V2, rows, cols, &same) != "OK") rejected++;
        if (!same) disagreements++;
      }
    }
    EXPECT(disagreements == 0, std::to_string(disagreements) + " of " + std::to_string(mutations) + " mutated streams: parse and parseReference disagree");
    EXPECT(rejected > 100, "mutations rejected: " + std::to_string(rejected));
  }
  // Two faults in one record: structure (flags, payload bounds, padding) before parameters, and
  // leaf by leaf in order; two faulty records: the first one's, however the records are split.
  {
    Rec f{5, {}, std::vector<uint32_t>(256, 0x3c000000), std::vector<uint32_t>(256, 8)};
    auto code = [](const Bytes& b) {
      bool same;
      const std::string m = agree(b, Profile::V2, 64, 64 * 3, &same);
      return same ? m.substr(0, m.find(':')) : "DISAGREE";
    };
    const size_t hdr = 32 + 4;  // base 32 (16 + 12 -> 32); leaf headers after the sb_header
    const size_t pay = 32 + ((4 + 1024 + 15) / 16) * 16;
    Bytes good3 = v2({f, f, f});
    Bytes b = good3;
    put32(b, hdr + 4 * 1, 0x7c000000);  // leaf 1 scale Inf
    put32(b, hdr + 4 * 7, 0x3c000004);  // leaf 7 reserved flag
    EXPECT(code(b) == "RESERVED_BITS", "reserved flag of a later leaf before an earlier leaf's Inf");
    b = good3;
    put32(b, hdr + 4 * 9, 0x3c000004);  // leaf 9 reserved flag
    b[pay + 16 * 3 + 12] = 1;           // leaf 3 padding
    EXPECT(code(b) == "NONZERO_PADDING", "leaf 3 padding before leaf 9 flags");
    b = good3;
    put32(b, hdr + 4 * 2, 0x3c000001);  // leaf 2 T158: its bytes 4..7 are now padding (0x11)
    b[pay + 16 * 5 + 9] = 1;            // leaf 5 padding too
    EXPECT(code(b) == "NONZERO_PADDING", "T158 4x4 padding");
    // the same fault in records 1 and 2 (different offsets): record 1's, for 1, 3 or 7 ranges
    b = good3;
    const size_t rec = 16 * ((4 + 1024 + 15) / 16) + 256 * 16;
    b[pay + rec + 16 * 7 + 10] = 1, b[pay + 2 * rec + 16 * 2 + 10] = 1;
    std::string msgs[4];
    for (unsigned r : {1u, 2u, 3u, 7u}) {
      try {
        parse(b.data(), b.size(), Profile::V2, 64, 64 * 3, kDefaultMaxOutputBytes, r);
      } catch (const Failure& e) {
        msgs[r == 1 ? 0 : r == 2 ? 1 : r == 3 ? 2 : 3] = e.what();
      }
    }
    EXPECT(msgs[0] == "NONZERO_PADDING: nonzero byte in a leaf's payload padding (at byte offset " + std::to_string(pay + rec + 16 * 7 + 10) + ")" && msgs[1] == msgs[0] &&
               msgs[2] == msgs[0] && msgs[3] == msgs[0],
           "first faulty record wins over ranges: " + msgs[0]);
    // the last leaf's payload one byte short, and leaf 0's bias NaN: TRUNCATED
    b = v2({f});
    put32(b, hdr, 0x3c007e00);
    b.resize(b.size() - 1);
    bool same;
    EXPECT(agree(b, Profile::V2, 64, 64, &same).rfind("TRUNCATED", 0) == 0 && same, "payload bound before parameters");
  }
  // Overlapping records (each read where its offset points; allowed): 1024 UNIFORM_64 records
  // 16 bytes apart in zeros, more leaves than the stream holds without overlap, so the fast path
  // leaves them to the sequential parse; the same tables, and the same error once one breaks.
  {
    const uint32_t B = 1024;
    Bytes b(16, 0);
    b[0] = 'S', b[1] = 'G', b[2] = 'F', b[3] = '4', b[4] = 2;
    put32(b, 5, B);
    const size_t base = (16 + 4 * B + 15) / 16 * 16;
    b.resize(base + 16 * (B - 1) + 16 + 2048, 0);
    for (uint32_t r = 0; r < B; r++) put32(b, 16 + 4 * r, 16 * r);
    bool same;
    EXPECT(agree(b, Profile::V2, 64, 64.0 * B, &same) == "OK" && same, "overlapping records accepted as by the reference");
    Container c = parse(b.data(), b.size(), Profile::V2, 64, 64.0 * B);
    EXPECT(c.leafCount() == B && c.leafTable[4 * 5 + 3] == base + 16 * 5 + 16, "overlapping records: one leaf each, payload after its header");
    Bytes x = b;
    x.resize(x.size() - 1);
    EXPECT(agree(x, Profile::V2, 64, 64.0 * B, &same).find("TRUNCATED: stream ends inside the payload of leaf 0 (at record 1023") == 0 && same, "overlapping records, last one short");
  }

  std::printf("parser_test: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
