// libFuzzer target for the addon's native parsing path (native/src/sgfp4_parse.cpp) and the
// addressing the Vulkan dispatch builds on it. Built with -fsanitize=fuzzer,address,undefined by
// scripts/fuzz.mjs.
//
// Input: a 5-byte prefix, then the container.
//   byte 0  bit 0: profile (0 = v1, 1 = v2); bit 1: also parse with the other profile;
//           bits 2-3: output limit (0 = default 2^31, 1 = exactly rows*cols*4,
//           2 = rows*cols*4 - 1, which must be LIMIT_EXCEEDED, 3 = 2^20)
//   bytes 1-2 rows, bytes 3-4 cols (u16 little-endian; 0 must give INVALID_ARGUMENT)
//
// parse must agree with parseReference (the record-by-record parse), with itself split into
// three ranges of records and with itself writing the table into an arena: verdict, message and
// tables (blockPayload checked against the table and planChunks).
//
// A rejected stream must carry a DECISIONS.md section-3 code (or INVALID_ARGUMENT /
// LIMIT_EXCEEDED); any other exception escapes and libFuzzer reports it. An accepted stream's
// leaf table is checked against what decode.comp assumes (1..256 leaves per block, each
// macroblock tiled exactly once, its cell -> leaf lookup (raster arithmetic or a Z-order
// binary search) agreeing with the tiling, word-aligned payloads inside the stream) and
// expanded on the CPU the way the shader addresses it, into an exactly sized output that ASan
// watches, reading the payloads straight from an exactly sized copy of the input.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "../native/src/sgfp4_parse.hpp"
#include "../native/test/test_arena.hpp"

using namespace sgfp4;

namespace {

[[noreturn]] void die(const char* what, uint64_t a = 0, uint64_t b = 0) {
  std::fprintf(stderr, "INVARIANT BROKEN: %s (%llu, %llu)\n", what, (unsigned long long)a, (unsigned long long)b);
  std::abort();
}
#define REQUIRE(cond, ...) \
  do {                     \
    if (!(cond)) die(#cond, ##__VA_ARGS__); \
  } while (0)

const std::set<std::string> kCodes = {"TRUNCATED",         "BAD_MAGIC",          "BAD_VERSION",          "RECORD_COUNT_MISMATCH",
                                      "NONZERO_PADDING",   "MISALIGNED_OFFSET",  "NONMONOTONIC_OFFSET",  "OFFSET_OUT_OF_RANGE",
                                      "RESERVED_BITS",     "UNKNOWN_LAYOUT",     "NONFINITE_PARAMETER",  "SIZE_MISMATCH",
                                      "LIMIT_EXCEEDED",    "INVALID_ARGUMENT"};

uint32_t rd32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }

// decode.comp's zorder(): interleaves 4-bit cell row and column (TL, TR, BL, BR).
uint32_t zorder(uint32_t cy, uint32_t cx) {
  uint32_t k = 0;
  for (uint32_t i = 0; i < 4; i++) k |= (((cx >> i) & 1u) << (2 * i)) | (((cy >> i) & 1u) << (2 * i + 1));
  return k;
}

void checkAndExpand(const uint8_t* s, size_t len, const Container& c, Profile profile, uint64_t rows, uint64_t cols) {
  REQUIRE(c.rows == rows && c.cols == cols, c.rows, c.cols);
  REQUIRE(c.tilesY == (rows + 63) / 64 && c.tilesX == (cols + 63) / 64, c.tilesY, c.tilesX);
  const uint64_t B = c.blockCount;
  REQUIRE(B == c.tilesY * c.tilesX, B);
  REQUIRE(c.leafTable.size() % 4 == 0, c.leafTable.size());
  REQUIRE(c.blockFirstLeaf.size() == B + 1, c.blockFirstLeaf.size(), B);
  REQUIRE(c.blockFirstLeaf[0] == 0 && c.blockFirstLeaf[B] == c.leafCount(), c.blockFirstLeaf[B], c.leafCount());
  // Payloads start after the headers: v1 after 8*B bytes, v2 after the padded offset table.
  const uint64_t payloadFloor = profile == Profile::V1 ? 8 * B : 16 + 4 * B;

  std::unique_ptr<float[]> out(new float[rows * cols]);  // exactly O*I, as the GPU output
  std::vector<uint8_t> written(rows * cols, 0);
  uint32_t owner[256];
  for (uint64_t b = 0; b < B; b++) {
    const uint32_t first = c.blockFirstLeaf[b], last = c.blockFirstLeaf[b + 1];
    REQUIRE(first <= last && last <= c.leafCount(), first, last);
    const uint32_t n = last - first;
    // decode.comp clamps n to 1..256 and keeps per-leaf state in 256-entry shared arrays.
    REQUIRE(n >= 1 && n <= 256, b, n);
    if (profile == Profile::V1) REQUIRE(n == 1, b, n);
    std::memset(owner, 0xff, sizeof owner);
    for (uint32_t t = 0; t < n; t++) {
      const uint32_t* L = &c.leafTable[4 * size_t(first + t)];
      REQUIRE(L[0] == b, L[0], b);
      const uint32_t g = L[1], y = g & 63, x = (g >> 6) & 63, log2 = (g >> 12) & 7, mode = (g >> 15) & 1, size = 1u << log2;
      REQUIRE((g >> 16) == 0 && log2 >= 2 && log2 <= 6, g);
      REQUIRE(y % size == 0 && x % size == 0 && y + size <= 64 && x + size <= 64, y, x);
      if (profile == Profile::V1) REQUIRE(log2 == 6, log2);
      REQUIRE((L[2] & 0x7c00) != 0x7c00 && (L[2] & 0x7c000000) != 0x7c000000, L[2]);  // finite FP16
      if (profile == Profile::V2) REQUIRE((L[2] & 0xf) == 0, L[2]);  // v2 bias keeps 12 bits; flags masked off
      const uint64_t off = L[3], bytes = sgfp4_leaf_payload_bytes(log2, mode);
      REQUIRE(off % (profile == Profile::V1 ? 8 : 16) == 0, off);  // the shader reads words
      REQUIRE(off >= payloadFloor && off + bytes <= len, off, len);
      if (profile == Profile::V1 && mode == 1)
        for (uint64_t o = off + 1024; o < off + 2048; o++) REQUIRE(s[o] == 0, o);
      for (uint32_t cy = y >> 2; cy < (y + size) >> 2; cy++)
        for (uint32_t cx = x >> 2; cx < (x + size) >> 2; cx++) {
          REQUIRE(owner[cy * 16 + cx] == 0xffffffffu, b, cy * 16 + cx);  // tiled at most once
          owner[cy * 16 + cx] = t;
        }
    }
    for (uint32_t k = 0; k < 256; k++) REQUIRE(owner[k] != 0xffffffffu, b, k);  // tiled at least once

    // decode.comp's cell -> leaf lookup must match the tiling: raster arithmetic for uniform
    // layouts, else a binary search that needs the leaves in Z-order (pre-order DFS).
    if (n > 1) {
      const uint32_t* L0 = &c.leafTable[4 * size_t(first)];
      const uint32_t sc = 1u << (((L0[1] >> 12) & 7) - 2), per = 16 / sc;
      const bool raster = n == per * per && (per <= 2 || (c.leafTable[4 * size_t(first + 2) + 1] & 4095u) == ((2u * sc * 4u) << 6));
      for (uint32_t cell = 0; cell < 256; cell++) {
        const uint32_t cy = cell >> 4, cx = cell & 15;
        uint32_t li;
        if (raster) {
          li = (cy / sc) * per + cx / sc;
        } else {
          const uint32_t key = zorder(cy, cx);
          uint32_t lo = 0, hi = n - 1;
          while (lo < hi) {
            const uint32_t mid = (lo + hi + 1) >> 1;
            const uint32_t* M = &c.leafTable[4 * size_t(first + mid)];
            if (zorder((M[1] & 63) >> 2, ((M[1] >> 6) & 63) >> 2) <= key) lo = mid;
            else hi = mid - 1;
          }
          li = lo;
        }
        REQUIRE(li == owner[cell], b * 256 + cell, li);
      }
    }

    // Expansion, one element at a time from the owning leaf's payload.
    const uint64_t by = b / c.tilesX, bx = b % c.tilesX;
    for (uint32_t r = 0; r < 64; r++)
      for (uint32_t col = 0; col < 64; col++) {
        const uint64_t R = by * 64 + r, C = bx * 64 + col;
        if (R >= rows || C >= cols) continue;
        const uint32_t* L = &c.leafTable[4 * size_t(first + owner[(r >> 2) * 16 + (col >> 2)])];
        const uint32_t g = L[1], y = g & 63, x = (g >> 6) & 63, size = 1u << ((g >> 12) & 7), mode = (g >> 15) & 1;
        const uint32_t k = (r - y) * size + (col - x);
        const uint32_t word = rd32(s + L[3] + (mode ? k / 16 : k / 8) * 4);
        int code;
        if (mode == 0) {
          const int nib = (word >> (4 * (k % 8))) & 15;
          code = nib >= 8 ? nib - 16 : nib;
        } else {
          const int sym = (word >> (2 * (k % 16))) & 3;
          code = sym == 1 ? 1 : sym == 2 ? -1 : 0;
        }
        float S, Bi;
        const uint32_t sb = sgfp4_half_to_float_bits(L[2] >> 16), bb = sgfp4_half_to_float_bits(L[2] & 0xffff);
        std::memcpy(&S, &sb, 4);
        std::memcpy(&Bi, &bb, 4);
        out[R * cols + C] = S * float(code) + Bi;
        written[R * cols + C]++;
      }
  }
  for (uint64_t i = 0; i < rows * cols; i++) REQUIRE(written[i] == 1, i, written[i]);
}

void runOne(const uint8_t* s, size_t len, Profile profile, uint32_t rows, uint32_t cols, uint32_t limitMode) {
  const uint64_t need = uint64_t(rows) * cols * 4;
  uint64_t limit = kDefaultMaxOutputBytes;
  if (limitMode == 1) limit = need;
  if (limitMode == 2) limit = need == 0 ? 0 : need - 1;
  if (limitMode == 3) limit = uint64_t(1) << 20;
  std::string code = "OK", message = "OK";
  Container c;
  try {
    c = parse(s, len, profile, rows, cols, limit);
  } catch (const Failure& f) {
    code = f.code;
    message = f.what();
    if (!kCodes.count(code)) die(("unknown error code " + code).c_str());
  }
  // parse's fast path and its records split over the work pool against the plain sequential
  // parse (parseReference): the same verdict, the same message, the same tables.
  // Variant 2: into a table arena (the Vulkan direct route's upload memory): the same again, the
  // arena freed with a rejected parse, blockPayload agreeing with the table and planning alike.
  for (int variant = 0; variant < 3; variant++) {
    std::string other = "OK";
    Container o;
    auto arena = std::make_shared<sgfp4test::HeapArena>();
    std::weak_ptr<sgfp4test::HeapArena> watch = arena;
    std::shared_ptr<sgfp4test::HeapArena> kept;
    if (variant == 2 && len % 2 == 0) arena->wantStream(len), kept = arena;  // half the inputs: also the stream's copy
    try {
      o = variant == 0 ? parseReference(s, len, profile, rows, cols, limit) : parse(s, len, profile, rows, cols, limit, 3, variant == 2 ? std::move(arena) : nullptr);
      if (kept) REQUIRE(sgfp4test::streamCopyOk(*kept, o, s, len), variant);
    } catch (const Failure& f) {
      other = f.what();
      if (variant == 2 && !kept) REQUIRE(watch.expired(), variant);
    }
    if (other != message) {
      std::fprintf(stderr, "parse: %s\n%s: %s\n", message.c_str(), variant == 0 ? "parseReference" : variant == 1 ? "parse, 3 ranges" : "parse into an arena", other.c_str());
      die("parse disagrees", variant);
    }
    if (code == "OK") REQUIRE(o.leafTable == c.leafTable && o.blockFirstLeaf == c.blockFirstLeaf, variant);
    if (code == "OK" && variant == 2) REQUIRE(sgfp4test::payloadSpansMatch(o) && sgfp4test::payloadSpansMatch(c) && sgfp4test::plansAgree(o, len), variant);
  }
  if (rows == 0 || cols == 0) {
    REQUIRE(code == "INVALID_ARGUMENT", rows, cols);
    return;
  }
  if (need > limit) REQUIRE(code == "LIMIT_EXCEEDED", need, limit);
  else REQUIRE(code != "LIMIT_EXCEEDED" && code != "INVALID_ARGUMENT", need, limit);
  if (code == "OK") checkAndExpand(s, len, c, profile, rows, cols);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const uint32_t flags = data[0];
  const uint32_t rows = data[1] | uint32_t(data[2]) << 8, cols = data[3] | uint32_t(data[4]) << 8;
  // Copy the stream so that ASan sees its exact end (and a zero-length stream is not null).
  std::vector<uint8_t> stream(data + 5, data + size);
  const Profile first = (flags & 1) ? Profile::V2 : Profile::V1;
  const uint32_t limitMode = (flags >> 2) & 3;
  runOne(stream.data(), stream.size(), first, rows, cols, limitMode);
  if (flags & 2) runOne(stream.data(), stream.size(), first == Profile::V1 ? Profile::V2 : Profile::V1, rows, cols, limitMode);
  return 0;
}
