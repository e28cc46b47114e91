// Native SGFP4 parser: an independent re-implementation of @sgfp4/format's parse, producing
// the same leaf table (docs/ARCHITECTURE.md) and the same DECISIONS.md section-3 codes, in
// the same check order. It has no Node or Vulkan dependency so the unit tests and the
// sanitizer driver can build it alone. The input is hostile: every read is bounds-checked
// and allocation grows only with the stream's length.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <memory>
#include <utility>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "sgfp4_leaf_table.h"  // @sgfp4/format's generated contract: leaf-table words, masks, FP16

namespace sgfp4 {

enum class Profile { V1, V2 };

// A DECISIONS.md section-3 code (or INVALID_ARGUMENT / LIMIT_EXCEEDED / BACKEND_FAILURE).
struct Failure : std::runtime_error {
  std::string code;
  Failure(std::string c, const std::string& detail) : std::runtime_error(c + ": " + detail), code(std::move(c)) {}
};

// Memory the parser may put the v2 leaf table in instead of the heap: the Vulkan direct route's
// pooled upload buffer, which the kernel then binds as is (no copy of the table). Only the fast
// path's one allocation at the table's final size asks it (on the parsing thread, before any
// range is filled); every other table (v1, the sequential parse, copies) lives on the heap.
struct TableArena {
  virtual ~TableArena() = default;
  // Memory for `words` words, valid while the arena lives, or null (the heap then). Called at
  // most once; must not throw. The memory may be uncached (write-combined): the parser only
  // writes the table there, and planChunks reads Container::blockPayload instead.
  virtual uint32_t* take(size_t words) noexcept = 0;
  uint32_t* given = nullptr;  // what take() returned (never freed by the vector)
  const void* owner = nullptr;  // who made it (the Vulkan side: its device), to find it again
  // Optional: where the fast path also copies the stream (len bytes), each range of records its
  // own bytes right after filling their leaves (so they are read while still in cache), through
  // copyStream. streamCopied counts the bytes done: the whole stream is there when it equals len
  // after an accepted parse; otherwise (v1, the sequential parse) the caller copies it.
  uint8_t* streamCopy = nullptr;
  std::atomic<uint64_t> streamCopied{0};
  virtual void copyStream(uint8_t* dst, const uint8_t* src, size_t n) noexcept { std::memcpy(dst, src, n); }
};

// A vector whose resize leaves new elements uninitialized (they are all written next): the
// parallel parser fills the leaf table on several threads without a zeroing pass first. With an
// arena, its first allocation comes from there when the arena has it (the vector holds the arena,
// so the memory stays valid as long as the table); copies of the vector use the heap.
template <typename T>
struct NoInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  using is_always_equal = std::false_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  std::shared_ptr<TableArena> arena;
  NoInitAllocator() = default;
  explicit NoInitAllocator(std::shared_ptr<TableArena> a) noexcept : arena(std::move(a)) {}
  template <typename U>
  NoInitAllocator(const NoInitAllocator<U>& o) noexcept : arena(o.arena) {}
  NoInitAllocator select_on_container_copy_construction() const { return NoInitAllocator(); }
  T* allocate(size_t n) {
    if (arena && !arena->given && sizeof(T) == 4 && n > 0) {
      if (uint32_t* p = arena->take(n)) return reinterpret_cast<T*>(arena->given = p);
    }
    return std::allocator<T>::allocate(n);
  }
  void deallocate(T* p, size_t n) {
    if (arena && p && static_cast<void*>(p) == static_cast<void*>(arena->given)) return;
    std::allocator<T>::deallocate(p, n);
  }
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
template <typename T, typename U>
bool operator==(const NoInitAllocator<T>& a, const NoInitAllocator<U>& b) noexcept {
  return a.arena == b.arena;
}
template <typename T, typename U>
bool operator!=(const NoInitAllocator<T>& a, const NoInitAllocator<U>& b) noexcept {
  return !(a == b);
}
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
  // v2 streams the fast path parsed (empty otherwise): for block b, [2b] its first payload's
  // offset and [2b + 1] the end of its last payload, padded to 16: all planChunks needs from the
  // table, which it then does not read (the table may lie in uncached upload memory).
  Words blockPayload;
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
// k > 1 always splits the records into k ranges (tests compare it with 1). `arena`: where a v2
// leaf table may go (see TableArena); the verdict, error and table are the same with or without.
// On a rejection the table (and what it took from the arena) is freed with the Container.
Container parse(const uint8_t* bytes, size_t len, Profile profile, double rows, double cols,
                uint64_t maxOutputBytes = kDefaultMaxOutputBytes, unsigned ranges = 0, std::shared_ptr<TableArena> arena = nullptr);

// The same verdict, error and tables from the plain sequential parse (v2 records one by one,
// each through the exact, throwing checks; the table grown as they are accepted). parse's
// v2 fast path must agree with it on every stream: the unit tests and fuzzers compare the two.
Container parseReference(const uint8_t* bytes, size_t len, Profile profile, double rows, double cols,
                         uint64_t maxOutputBytes = kDefaultMaxOutputBytes);

}  // namespace sgfp4
