// Test helpers for parse's table arena (the Vulkan direct route's upload memory, sgfp4_parse.hpp)
// and blockPayload: an arena on the heap at the exact size asked (so AddressSanitizer bounds the
// parser's writes into it), the check that blockPayload agrees with the table, and (with
// decode_plan.cpp linked) the check that planChunks makes the same plan from either.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "../src/sgfp4_parse.hpp"
#ifdef SGFP4_TEST_PLAN
#include "../src/decode_plan.hpp"
#endif

namespace sgfp4test {

struct HeapArena : sgfp4::TableArena {
  explicit HeapArena(bool refuse = false) : refuse(refuse) {}
  uint32_t* take(size_t words) noexcept override {
    calls++;
    if (refuse) return nullptr;
    memory.reset(new uint32_t[words]);
    return memory.get();
  }
  // Also a copy of the stream, into exactly len bytes (ASan-bounded).
  void wantStream(size_t len) {
    streamMemory.reset(new uint8_t[len ? len : 1]);
    streamCopy = streamMemory.get();
  }
  bool refuse;
  int calls = 0;
  std::unique_ptr<uint32_t[]> memory;
  std::unique_ptr<uint8_t[]> streamMemory;
};

// After an accepted parse with a stream copy: complete where the fast path ran (blockPayload
// given), and then equal to the input.
inline bool streamCopyOk(const HeapArena& a, const sgfp4::Container& c, const uint8_t* bytes, size_t len) {
  if (!a.streamCopy) return true;
  const uint64_t copied = a.streamCopied.load();
  if (copied > len) return false;
  if (c.profile == sgfp4::Profile::V2 && !c.blockPayload.empty() && copied != len) return false;
  return copied != len || len == 0 || std::memcmp(a.streamCopy, bytes, len) == 0;
}

// blockPayload, when present, against the table: each block's first payload offset and the end
// of its last, padded to 16.
inline bool payloadSpansMatch(const sgfp4::Container& c) {
  if (c.blockPayload.empty()) return true;
  if (c.blockPayload.size() != 2 * c.blockCount || c.blockFirstLeaf.size() != c.blockCount + 1) return false;
  for (uint64_t b = 0; b < c.blockCount; b++) {
    const uint32_t first = c.blockFirstLeaf[b], last = c.blockFirstLeaf[b + 1];
    if (first >= last || uint64_t(last) * SGFP4_LEAF_WORDS > c.leafTable.size()) return false;
    const uint32_t* lo = &c.leafTable[SGFP4_LEAF_WORDS * size_t(first)];
    const uint32_t* hi = &c.leafTable[SGFP4_LEAF_WORDS * size_t(last - 1)];
    const uint32_t g = hi[SGFP4_LEAF_WORD_GEOMETRY];
    const uint64_t used = sgfp4_leaf_payload_bytes(sgfp4_geometry_log2(g), sgfp4_geometry_mode(g));
    const uint64_t end = uint64_t(hi[SGFP4_LEAF_WORD_PAYLOAD]) + ((used + 15) & ~uint64_t(15));
    if (c.blockPayload[2 * b] != lo[SGFP4_LEAF_WORD_PAYLOAD] || c.blockPayload[2 * b + 1] != end) return false;
  }
  return true;
}

#ifdef SGFP4_TEST_PLAN
// The plan (or its error) as text.
inline std::string planText(const sgfp4::PlanLimits& limits, const sgfp4::Container& c, size_t len) {
  try {
    const sgfp4::Plan p = sgfp4::planChunks(limits, c, len, sgfp4::OutputFormat::F32);
    std::string s = std::to_string(p.streamBytes);
    for (const sgfp4::Chunk& ch : p.chunks)
      for (uint64_t v : {ch.by0, ch.by1, ch.row0, ch.row1, ch.streamStart, ch.streamEnd, ch.leafStart, ch.leafEnd}) s += "," + std::to_string(v);
    return s;
  } catch (const sgfp4::Failure& f) {
    return f.what();
  }
}
// planChunks from blockPayload and from the table alone: the same plans, under limits that make
// one chunk, many (small bindings, a small first chunk, 256-byte alignment).
inline bool plansAgree(const sgfp4::Container& c, size_t len) {
  if (c.blockPayload.empty()) return true;
  sgfp4::Container tableOnly = c;  // a copy: heap tables
  tableOnly.blockPayload.clear();
  const sgfp4::PlanLimits limits[3] = {{uint64_t(1) << 31, 16, uint64_t(1) << 31, 0}, {4096, 256, 1u << 20, 1}, {1 << 16, 64, 7, 20000}};
  for (const sgfp4::PlanLimits& l : limits)
    if (planText(l, c, len) != planText(l, tableOnly, len)) return false;
  return true;
}
#endif

}  // namespace sgfp4test
