// Native SGFP4 parser: an independent re-implementation of @sgfp4/format's parse, producing
// the same leaf table (docs/ARCHITECTURE.md) and the same DECISIONS.md section-3 codes, in
// the same check order. It has no Node or Vulkan dependency so the unit tests and the
// sanitizer driver can build it alone. The input is hostile: every read is bounds-checked
// and allocation grows only with the stream's length.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <stdexcept>
#include <string>
#include <vector>

#include "sgfp4_leaf_table.h"  // @sgfp4/format's generated contract: leaf-table words, masks, FP16

namespace sgfp4 {

enum class Profile { V1, V2 };

// A DECISIONS.md section-3 code (or INVALID_ARGUMENT / LIMIT_EXCEEDED / BACKEND_FAILURE).
struct Failure : std::runtime_error {
  std::string code;
  Failure(std::string c, const std::string& detail) : std::runtime_error(c + ": " + detail), code(std::move(c)) {}
};

// A vector whose resize leaves new elements uninitialized (they are all written next): the
// parallel parser fills the leaf table on several threads without a zeroing pass first.
template <typename T>
struct NoInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <typename U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
using Words = std::vector<uint32_t, NoInitAllocator<uint32_t>>;

constexpr uint64_t kDefaultMaxOutputBytes = uint64_t(1) << 31;
// The caller may raise the limit, but never past this (keeps every product below in uint64).
constexpr uint64_t kHardMaxOutputBytes = uint64_t(1) << 40;

struct Container {
  Profile profile = Profile::V1;
  uint64_t rows = 0, cols = 0;
  uint64_t tilesY = 0, tilesX = 0, blockCount = 0;
  // SGFP4_LEAF_WORDS per leaf: block, geometry (sgfp4_geometry_pack), params (scale << 16 | bias), payload offset
  Words leafTable;
  // blockFirstLeaf[b] .. blockFirstLeaf[b+1]: the leaves of block b (B+1 entries)
  Words blockFirstLeaf;
  size_t leafCount() const { return leafTable.size() / SGFP4_LEAF_WORDS; }
};

// Checks the shape (integers >= 1) and the output limit; throws INVALID_ARGUMENT / LIMIT_EXCEEDED.
void checkShape(double rows, double cols, uint64_t maxOutputBytes);

// v2 streams from this size are parsed on the shared work pool, records split into ranges (the
// error is the one the sequential parse gives: the first failing record's).
constexpr size_t kParallelParseMinBytes = size_t(1) << 20;
constexpr uint64_t kParallelParseMinV1Blocks = 65536;  // v1: by block count (a block is cheap to check)

// Throws Failure on any fault. rows/cols are doubles because they arrive from JavaScript.
// `ranges`: 0 splits large streams over the pool's threads; 1 parses on the caller's thread;
// k > 1 always splits the records into k ranges (tests compare it with 1).
Container parse(const uint8_t* bytes, size_t len, Profile profile, double rows, double cols,
                uint64_t maxOutputBytes = kDefaultMaxOutputBytes, unsigned ranges = 0);

// The same verdict, error and tables from the plain sequential parse (v2 records one by one,
// each through the exact, throwing checks; the table grown as they are accepted). parse's
// v2 fast path must agree with it on every stream: the unit tests and fuzzers compare the two.
Container parseReference(const uint8_t* bytes, size_t len, Profile profile, double rows, double cols,
                         uint64_t maxOutputBytes = kDefaultMaxOutputBytes);

}  // namespace sgfp4
