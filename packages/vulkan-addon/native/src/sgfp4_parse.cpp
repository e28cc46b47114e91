// Native SGFP4 parser: the entry points (parse, parseReference, checkShape), the v1 parse and
// the v2 fast path. The exact record-by-record v2 parse is in sgfp4_parse_exact.cpp.
#include "sgfp4_parse.hpp"

#include <cmath>
#include <cstring>

#include "sgfp4_parse_internal.hpp"
#include "work_pool.hpp"

// The fast path checks and writes four leaves at once with SSE2 (every x86-64 has it); other
// targets, or SGFP4_PARSE_SCALAR, take the scalar code beside it.
#if defined(__SSE2__) && !defined(SGFP4_PARSE_SCALAR)
#define SGFP4_PARSE_SSE2 1
#include <emmintrin.h>
#else
#define SGFP4_PARSE_SSE2 0
#endif

namespace sgfp4 {
using namespace detail;  // the helpers and the exact parse (sgfp4_parse_internal.hpp)

namespace {

constexpr uint64_t kV1Payload = SGFP4_V1_PAYLOAD_BYTES;

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

// ---- The fast path ----------------------------------------------------------------------
// A record is first checked without building a message: every fault only sets a bit (headers,
// padding) or returns false (a bound). A record that fails is parsed again by parseRecord
// (sgfp4_parse_exact.cpp), which throws the exact error in the exact order; valid streams, the
// common case, never take it.

// Bits set when a v2 leaf header has reserved flag bits, or an Inf/NaN scale or bias (the bias
// mask 0xFFF0 keeps the exponent bits).
SGFP4_INLINE uint32_t badHeader(uint32_t h) {
  const uint32_t e = ~h & 0x7c007c00u;  // an exponent of all ones leaves its half zero here
  return (h & SGFP4_V2_LEAF_RESERVED_MASK) | uint32_t((e & 0xffffu) == 0) | uint32_t((e >> 16) == 0);
}

constexpr uint32_t geometry(uint32_t y, uint32_t x, uint32_t log2) { return y | x << 6 | log2 << 12; }

struct Leaves {
  const uint8_t* in;
  uint64_t len;
  uint32_t b;
  uint32_t* t;    // next table entry
  uint64_t hdr;   // next leaf header
  uint64_t p;     // next payload
  uint32_t bad;   // header faults
  uint64_t pad;   // nonzero 4x4 payload padding
#if SGFP4_PARSE_SSE2
  __m128i bad4 = _mm_setzero_si128();  // faults found four leaves at a time
#endif

  bool ok() const {
#if SGFP4_PARSE_SSE2
    if (_mm_movemask_epi8(_mm_cmpeq_epi8(bad4, _mm_setzero_si128())) != 0xffff) return false;
#endif
    return !bad && !pad;
  }

  // One leaf of side 8 or more: its payload (size^2/2 or /4 bytes) is a whole number of 16-byte
  // chunks, so it has no padding and is not read; the caller bounds p.
  SGFP4_INLINE void leaf(uint32_t geo, uint32_t log2) {
    const uint32_t h = rd32(in + hdr);
    const uint32_t mode = h & SGFP4_V2_LEAF_MODE_MASK;
    bad |= badHeader(h);
    t[SGFP4_LEAF_WORD_BLOCK] = b;
    t[SGFP4_LEAF_WORD_GEOMETRY] = geo | mode << 15;
    t[SGFP4_LEAF_WORD_PARAMS] = sgfp4_v2_header_params(h);
    t[SGFP4_LEAF_WORD_PAYLOAD] = uint32_t(p);
    t += SGFP4_LEAF_WORDS, hdr += 4;
    p += uint64_t(1) << (2 * log2 - 1 - mode);
  }

  // Four leaves of side 2^log2 with consecutive headers and payloads, geometry words g0..g3
  // (without the mode bit). Sides 8 and up as leaf() each. 4x4 payloads are 16 bytes in either
  // mode (FP4 8 + 8 padding, T158 4 + 12), so the four take 64 bytes, read here for their
  // padding: false when they do not fit the stream.
  template <uint32_t log2>
  SGFP4_INLINE bool four(uint32_t g0, uint32_t g1, uint32_t g2, uint32_t g3) {
    if (log2 == 2 && p + 64 > len) return false;
#if SGFP4_PARSE_SSE2
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + hdr));
    const __m128i exponent = _mm_set1_epi16(short(SGFP4_HALF_EXPONENT_MASK));
    // reserved flags, or a half (scale, or bias under 0xFFF0: the same exponent bits) Inf/NaN
    __m128i wrong = _mm_or_si128(_mm_and_si128(h, _mm_set1_epi32(SGFP4_V2_LEAF_RESERVED_MASK)), _mm_cmpeq_epi16(_mm_and_si128(h, exponent), exponent));
    const __m128i mode = _mm_and_si128(h, _mm_set1_epi32(SGFP4_V2_LEAF_MODE_MASK));
    const __m128i base = _mm_set1_epi32(int(uint32_t(p)));  // payload offsets fit 32 bits (len < 2^32); p stays 64-bit
    __m128i addr;
    if (log2 == 2) {
      // FP4 uses bytes 0..7 of its 16, T158 bytes 0..3: the rest must be zero
      const __m128i t158 = _mm_sub_epi32(_mm_setzero_si128(), mode);
      const __m128i upper = _mm_set_epi32(-1, -1, 0, 0), word1 = _mm_set_epi32(0, 0, -1, 0);
      const uint8_t* q = in + p;
      auto padding = [&](const __m128i m, int j) {
        return _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * j)), _mm_or_si128(upper, _mm_and_si128(m, word1)));
      };
      wrong = _mm_or_si128(wrong, padding(_mm_shuffle_epi32(t158, 0x00), 0));
      wrong = _mm_or_si128(wrong, padding(_mm_shuffle_epi32(t158, 0x55), 1));
      wrong = _mm_or_si128(wrong, padding(_mm_shuffle_epi32(t158, 0xaa), 2));
      wrong = _mm_or_si128(wrong, padding(_mm_shuffle_epi32(t158, 0xff), 3));
      addr = _mm_add_epi32(base, _mm_set_epi32(48, 32, 16, 0));
      p += 64;
    } else {
      // FP4 size^2 / 2 bytes, T158 half that; offsets from a prefix sum of the four
      const __m128i size = _mm_sub_epi32(_mm_set1_epi32(1 << (2 * log2 - 1)), _mm_slli_epi32(mode, 2 * log2 - 2));
      __m128i upto = _mm_add_epi32(size, _mm_slli_si128(size, 4));
      upto = _mm_add_epi32(upto, _mm_slli_si128(upto, 8));
      addr = _mm_add_epi32(base, _mm_sub_epi32(upto, size));
      p += uint32_t(_mm_cvtsi128_si32(_mm_shuffle_epi32(upto, 0xff)));
    }
    bad4 = _mm_or_si128(bad4, wrong);
    const __m128i block = _mm_set1_epi32(int(b));
    const __m128i geom = _mm_or_si128(_mm_set_epi32(int(g3), int(g2), int(g1), int(g0)), _mm_slli_epi32(mode, 15));
    const __m128i params = _mm_and_si128(h, _mm_set1_epi32(int(SGFP4_V2_LEAF_PARAMS_MASK)));
    // [block | geometry | params | payload] rows to four entries
    const __m128i bg01 = _mm_unpacklo_epi32(block, geom), pa01 = _mm_unpacklo_epi32(params, addr);
    const __m128i bg23 = _mm_unpackhi_epi32(block, geom), pa23 = _mm_unpackhi_epi32(params, addr);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(t), _mm_unpacklo_epi64(bg01, pa01));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(t + 4), _mm_unpackhi_epi64(bg01, pa01));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(t + 8), _mm_unpacklo_epi64(bg23, pa23));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(t + 12), _mm_unpackhi_epi64(bg23, pa23));
    t += 4 * SGFP4_LEAF_WORDS, hdr += 16;
#else
    if (log2 > 2) {
      leaf(g0, log2), leaf(g1, log2), leaf(g2, log2), leaf(g3, log2);
      return true;
    }
    const uint8_t* q = in + p;
    const uint32_t gs[4] = {g0, g1, g2, g3};
    for (uint32_t j = 0; j < 4; j++) {
      const uint32_t h = rd32(in + hdr + 4 * j);
      const uint32_t mode = h & SGFP4_V2_LEAF_MODE_MASK;
      bad |= badHeader(h);
      // FP4 uses bytes 0..7, T158 0..3: the rest of the 16 must be zero
      pad |= rd64(q + 16 * j + 8) | (rd64(q + 16 * j) & (uint64_t(0) - mode) << 32);
      uint32_t* e = t + SGFP4_LEAF_WORDS * j;
      e[SGFP4_LEAF_WORD_BLOCK] = b;
      e[SGFP4_LEAF_WORD_GEOMETRY] = gs[j] | mode << 15;
      e[SGFP4_LEAF_WORD_PARAMS] = sgfp4_v2_header_params(h);
      e[SGFP4_LEAF_WORD_PAYLOAD] = uint32_t(p + 16 * j);
    }
    t += 4 * SGFP4_LEAF_WORDS, hdr += 16, p += 64;
#endif
    return true;
  }
  // The four quadrants (TL, TR, BL, BR) of the node of side 2^(log2 + 1) at (y, x).
  template <uint32_t log2>
  SGFP4_INLINE bool quad(uint32_t y, uint32_t x) {
    const uint32_t g = geometry(y, x, log2), s = 1u << log2;
    return four<log2>(g, g + (s << 6), g + s, g + s + (s << 6));
  }
};

// Leaves of a uniform layout of side 2^log2 (2..5), row-major, four at a time: four of a row
// (64 >> log2 = 16, 8 or 4 leaves a row), or the 2x2 of UNIFORM_32.
template <uint32_t log2>
SGFP4_INLINE bool uniformLeaves(Leaves& L) {
  constexpr uint32_t size = 1u << log2;
  if (log2 == 5) return L.quad<5>(0, 0);
  for (uint32_t y = 0; y < 64; y += size)
    for (uint32_t x = 0; x < 64; x += 4 * size) {
      const uint32_t g = geometry(y, x, log2);
      if (!L.four<log2>(g, g + (size << 6), g + (2 * size << 6), g + (3 * size << 6))) return false;
    }
  return true;
}

// The leaf count a record declares: the uniform layouts' fixed counts, or for MIXED one leaf
// plus three per set split-map bit (a split turns one node into four). The latter is the walk's
// count when every set bit is reached, and more than it otherwise (the record is then rejected).
constexpr uint32_t kUniformCount[6] = {1, 4, 16, 64, 0, 256};

// (Without -mpopcnt, __builtin_popcount is a library call.)
SGFP4_INLINE uint32_t popcount32(uint32_t v) {
  v = v - ((v >> 1) & 0x55555555u);
  v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
  return (((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}

// The record at `start` (its offset, sb_header and leaf headers inside the stream, checked by
// the caller; n leaves as above), its entries written to t. False on any fault: nothing written
// then is used. Reads stay inside [start, len): headers below start + 16 + 4n (bounded by the
// caller), 4x4 payloads bounded before they are read, larger payloads never read.
// span: on success, the first payload's offset and the padded end of the last (blockPayload).
bool fastRecord(const uint8_t* in, uint64_t len, uint32_t b, uint64_t start, uint32_t n, uint32_t* t, uint32_t* span) {
  const uint32_t sb = rd32(in + start);
  uint32_t map[4] = {0, 0, 0, 0};
  uint64_t headersAt = start + 4;
  if (sb == 4) {
    map[0] = rd32(in + start + 4), map[1] = rd32(in + start + 8), map[2] = rd32(in + start + 12);
    headersAt = start + 16;
  }
  const uint64_t headersEnd = headersAt + 4 * uint64_t(n);
  const uint64_t payloadStart = align16(headersEnd);
  if (payloadStart > len) return false;
  uint32_t headerPad = 0;
  for (uint64_t o = headersEnd; o < payloadStart; o += 4) headerPad |= rd32(in + o);
  if (headerPad) return false;

  Leaves L{in, len, b, t, headersAt, payloadStart, 0, 0};
  switch (sb) {
    case 0: L.leaf(geometry(0, 0, 6), 6); break;
    case 1: uniformLeaves<5>(L); break;
    case 2: uniformLeaves<4>(L); break;
    case 3: uniformLeaves<3>(L); break;
    case 5:
      if (!uniformLeaves<2>(L)) return false;
      break;
    default: {
      // MIXED: the split map walked in pre-order (TL, TR, BL, BR) by nested loops over the
      // levels, one bit per node of side 8 and up, in the order parseRecord's walk reads them.
      // A 16x16 node's bit and its four children's bits are read at once; four 8x8 leaves of
      // one 16x16 node, and the four 4x4 leaves of an 8x8 node, are taken together (quad).
      // The walk writes at most n entries: each set bit it reads adds three leaves to one.
      uint32_t k = 1;  // the next map bit (bit 0: the root)
      auto bits = [&](uint32_t at) { return uint32_t((uint64_t(map[(at >> 5) + 1]) << 32 | map[at >> 5]) >> (at & 31)); };
      if (!(map[0] & 1)) L.leaf(geometry(0, 0, 6), 6);
      else for (uint32_t q32 = 0; q32 < 4; q32++) {
        const uint32_t y32 = (q32 >> 1) * 32, x32 = (q32 & 1) * 32;
        if (!(bits(k) & 1)) {
          k++;
          L.leaf(geometry(y32, x32, 5), 5);
          continue;
        }
        k++;
        for (uint32_t q16 = 0; q16 < 4; q16++) {
          const uint32_t y16 = y32 + (q16 >> 1) * 16, x16 = x32 + (q16 & 1) * 16;
          const uint32_t v = bits(k);
          if (!(v & 1)) {
            k++;
            L.leaf(geometry(y16, x16, 4), 4);
            continue;
          }
          k += 5;
          const uint32_t splits = (v >> 1) & 15;  // the four 8x8 children's bits
          if (!splits) {
            L.quad<3>(y16, x16);
            continue;
          }
          for (uint32_t q8 = 0; q8 < 4; q8++) {
            const uint32_t y8 = y16 + (q8 >> 1) * 8, x8 = x16 + (q8 & 1) * 8;
            if ((splits >> q8) & 1) {
              if (!L.quad<2>(y8, x8)) return false;
            } else {
              L.leaf(geometry(y8, x8, 3), 3);
            }
          }
        }
      }
      // A set bit past the last one the walk read leaves it short of n leaves (checked below).
      break;
    }
  }
  span[0] = uint32_t(payloadStart), span[1] = uint32_t(L.p);  // used only on success (then p <= len < 2^32)
  return L.p <= len && L.ok() && L.t == t + SGFP4_LEAF_WORDS * uint64_t(n);
}

// Records [b0, b1)'s leaf counts, in order, for as long as their offsets and headers check:
// first[b] (relative to b0's) for b below the returned record (b1 when all check), *total their
// leaves. A record it stops at fails exactRecord's checks (which throws there); one it passes may
// still fail later ones (fastRecord). It stops counting past `cap` leaves (then *total > cap).
uint64_t sizeRecords(const uint8_t* bytes, uint64_t len, uint64_t base, uint64_t b0, uint64_t b1, uint64_t cap, uint32_t* first, uint64_t* total) {
  uint64_t leaves = 0;
  int64_t prev = b0 == 0 ? -1 : int64_t(rd32(bytes + 16 + 4 * (b0 - 1)));
  uint64_t b = b0;
  for (; b < b1; b++) {
#if defined(__GNUC__) || defined(__clang__)
    // record b + 16's first bytes, ahead (one load each: their addresses come from the table)
    if (b + 16 < b1) __builtin_prefetch(bytes + std::min<uint64_t>(base + rd32(bytes + 16 + 4 * (b + 16)), len - 1));
#endif
    const uint32_t rel = rd32(bytes + 16 + 4 * b);
    if ((rel & 15) || int64_t(rel) <= prev) break;
    prev = rel;
    const uint64_t start = base + rel;
    if (start + 4 > len) break;
    const uint32_t sb = rd32(bytes + start);
    if (sb > 5) break;  // reserved bits or an unknown layout
    uint32_t n;
    uint64_t headersAt;
    if (sb == 4) {
      if (start + 16 > len) break;
      n = 1 + 3 * (popcount32(rd32(bytes + start + 4)) + popcount32(rd32(bytes + start + 8)) + popcount32(rd32(bytes + start + 12)));
      headersAt = start + 16;
    } else {
      n = kUniformCount[sb];
      headersAt = start + 4;
    }
    if (headersAt + 4 * uint64_t(n) > len) break;
    first[b] = uint32_t(leaves);  // <= cap < 2^32
    leaves += n;
    if (leaves > cap) break;
  }
  *total = leaves;
  return b;
}

// fastRecord disagreed with parseRecord (a record it rejected was accepted): parseV2 then
// starts over with the reference parse. Never expected; it keeps a fast-path bug from turning
// into a wrong verdict.
struct FastPathMismatch {};

// Records [b0, b1) of a sized stream into their places in the table (first: blockFirstLeaf,
// final for [b0, b1); leavesEnd: the leaves before b1).
// first[b]'s blockPayload entries go to span[2b], span[2b + 1].
void fillRecords(const uint8_t* bytes, uint64_t len, uint64_t base, uint64_t b0, uint64_t b1, uint64_t leavesEnd, uint32_t* table, const uint32_t* first, uint32_t* span) {
  for (uint64_t b = b0; b < b1; b++) {
    const uint64_t start = base + rd32(bytes + 16 + 4 * b);
    const uint32_t n = uint32_t((b + 1 < b1 ? first[b + 1] : leavesEnd) - first[b]);
#if defined(__GNUC__) || defined(__clang__)
    // The next record's bytes, ahead of the walk: the 4x4 payloads it reads are scattered
    // between larger ones it skips, which the hardware's stream prefetch does not follow.
    if (b + 1 < b1) {
      const uint64_t next = base + rd32(bytes + 16 + 4 * (b + 1));
      const uint64_t end = std::min<uint64_t>(b + 2 < b1 ? base + rd32(bytes + 16 + 4 * (b + 2)) : len, std::min<uint64_t>(len, next + 6144));
      for (uint64_t o = next & ~uint64_t(63); o < end; o += 64) __builtin_prefetch(bytes + o);
    }
#endif
    uint32_t* t = table + SGFP4_LEAF_WORDS * uint64_t(first[b]);
    if (fastRecord(bytes, len, uint32_t(b), start, n, t, span + 2 * b)) continue;
    Words one;
    std::vector<Geo> geo;
    const uint64_t end = parseRecord(bytes, len, b, start, one, geo);  // throws the record's error
    if (one.size() != SGFP4_LEAF_WORDS * uint64_t(n) || n == 0) throw FastPathMismatch{};
    std::memcpy(t, one.data(), one.size() * 4);
    span[2 * b] = one[SGFP4_LEAF_WORD_PAYLOAD], span[2 * b + 1] = uint32_t(end);
  }
}

// `reference`: the records through parseV2Records (parseReference).
void parseV2(const uint8_t* bytes, size_t len64, Container& c, unsigned ranges, bool reference, const std::shared_ptr<TableArena>& arena) {
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
  if (reference) return parseV2Records(bytes, len, base, c);

  // First the records' leaf counts (a pass over their first 16 bytes), so that the table is
  // allocated once, at its size, and every range of records writes its leaves in place. Both
  // passes split the records into the same ranges, on the shared pool when ranges > 1.
  // Records that do not overlap hold at least 20 bytes per leaf (header and payload); more
  // leaves than that come from overlapping records (allowed: each is read where its offset
  // points), which take the sequential parse, its table growing with the records accepted. So
  // what is allocated here stays in proportion to the stream.
  const uint64_t cap = (len - base) / 20;
  const uint64_t k = ranges <= 1 ? 1 : std::min<uint64_t>(ranges, B), step = (B + k - 1) / k;
  auto eachRange = [&](const std::function<void(uint64_t, uint64_t, uint64_t)>& f) {
    auto one = [&](size_t r) {
      const uint64_t b0 = std::min<uint64_t>(B, r * step), b1 = std::min<uint64_t>(B, b0 + step);
      if (b0 < b1) f(r, b0, b1);
    };
    if (k == 1) one(0);
    else WorkPool::shared().run(size_t(k), one);
  };
  c.blockFirstLeaf.resize(B + 1);
  uint32_t* first = c.blockFirstLeaf.data();
  std::vector<uint64_t> stop(k), leaves(k, 0), before(k, 0);
  for (uint64_t r = 0; r < k; r++) stop[r] = std::min<uint64_t>(B, (r + 1) * step);
  eachRange([&](uint64_t r, uint64_t b0, uint64_t b1) { stop[r] = sizeRecords(bytes, len, base, b0, b1, cap, first, &leaves[r]); });
  // The first record a range stopped at is the first that fails (offsets and headers); the
  // records before it are filled, then it is parsed exactly (and throws).
  uint64_t sized = B, total = 0;
  for (uint64_t r = 0; r < k && sized == B; r++) {
    before[r] = total;
    total += leaves[r];
    if (total > cap) return parseV2Records(bytes, len, base, c);
    if (stop[r] < std::min<uint64_t>(B, (r + 1) * step)) sized = stop[r];
  }
  first[sized] = uint32_t(total);
  // The stream's copy (arena->streamCopy): range r copies bytes [bound[r], bound[r + 1]), from
  // the start of its first record (0 for the first range) to the next range's (len for the last):
  // together exactly [0, len), clamped to stay in order and inside it whatever the offsets say.
  uint8_t* const copyTo = arena ? arena->streamCopy : nullptr;
  std::vector<uint64_t> bound(copyTo ? k + 1 : 0);
  if (copyTo) {
    bound[k] = len;
    for (uint64_t r = 1; r < k; r++) {
      const uint64_t b0 = std::min<uint64_t>(B, r * step);
      bound[r] = std::min<uint64_t>(len, std::max<uint64_t>(bound[r - 1], b0 < B ? base + rd32(bytes + 16 + 4 * b0) : len));
    }
  }
  if (arena) c.leafTable = Words(NoInitAllocator<uint32_t>(arena));
  c.leafTable.resize(total * SGFP4_LEAF_WORDS);
  c.blockPayload.resize(2 * B);
  try {
    eachRange([&](uint64_t r, uint64_t b0, uint64_t b1) {
      b1 = std::min(b1, sized);
      if (b0 >= b1) return;
      for (uint64_t b = b0; b < b1; b++) first[b] += uint32_t(before[r]);
      fillRecords(bytes, len, base, b0, b1, before[r] + leaves[r], c.leafTable.data(), first, c.blockPayload.data());
      if (copyTo && bound[r + 1] > bound[r]) {
        arena->copyStream(copyTo + bound[r], bytes + bound[r], bound[r + 1] - bound[r]);
        arena->streamCopied += bound[r + 1] - bound[r];
      }
    });
    if (sized < B) {
      // The records before it are accepted: the sequential parse reaches it and throws there.
      Words one;
      std::vector<Geo> geo;
      exactRecord(bytes, len, base, sized, one, geo);
      throw FastPathMismatch{};
    }
  } catch (const FastPathMismatch&) {
    c.leafTable = Words();  // on the heap: the sequential parse reads the table back
    c.blockPayload = Words();
    parseV2Records(bytes, len, base, c);
  }
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

namespace {
Container parseImpl(const uint8_t* bytes, size_t len, Profile profile, double rows, double cols, uint64_t maxOutputBytes, unsigned ranges, bool reference,
                     const std::shared_ptr<TableArena>& arena) {
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
  else parseV2(bytes, len, c, ranges, reference, arena);
  return c;
}
}  // namespace

Container parse(const uint8_t* bytes, size_t len, Profile profile, double rows, double cols, uint64_t maxOutputBytes, unsigned ranges, std::shared_ptr<TableArena> arena) {
  return parseImpl(bytes, len, profile, rows, cols, maxOutputBytes, ranges, false, arena);
}

Container parseReference(const uint8_t* bytes, size_t len, Profile profile, double rows, double cols, uint64_t maxOutputBytes) {
  return parseImpl(bytes, len, profile, rows, cols, maxOutputBytes, 1, true, nullptr);
}

}  // namespace sgfp4