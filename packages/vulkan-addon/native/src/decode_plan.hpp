// How one decode is split into dispatches: runs of whole macroblock rows whose output, leaves and
// payloads each fit one storage-buffer binding of the device. No Vulkan here, so it can be
// tested alone.
#pragma once
#include <cstdint>
#include <vector>

#include "sgfp4_parse.hpp"

namespace sgfp4 {

// The output's element type (P10: f16 / bf16 are the round-to-nearest-even conversions of the
// exact float32 result).
enum class OutputFormat : uint32_t { F32 = 0, F16 = 1, BF16 = 2 };
inline uint64_t elementBytes(OutputFormat f) { return f == OutputFormat::F32 ? 4 : 2; }

struct PlanLimits {
  uint64_t maxRange;   // largest binding: min(maxStorageBufferRange, maxMemoryAllocationSize, 2 GiB)
  uint64_t align;      // minStorageBufferOffsetAlignment, at least 16
  uint64_t maxGroups;  // workgroups one dispatch may have (x * y grid)
  uint64_t firstOutputBytes = 0;  // non-zero: the first chunk's output at most this (at least one macroblock row)
};

// A run of whole macroblock rows whose output, leaves and payloads each fit one binding.
struct Chunk {
  uint64_t by0, by1;                // macroblock rows [by0, by1)
  uint64_t row0, row1;              // output rows
  uint64_t streamStart, streamEnd;  // bound byte range of the stream
  uint64_t leafStart, leafEnd;      // bound leaf range
};

struct Plan {
  std::vector<Chunk> chunks;
  uint64_t streamBytes;  // padded to 16
  uint64_t elemBytes;    // bytes per output value
  uint64_t cols;
  uint64_t outputBytes(const Chunk& ch) const { return (ch.row1 - ch.row0) * cols * elemBytes; }
  uint64_t outputOffset(const Chunk& ch) const { return ch.row0 * cols * elemBytes; }
};

// Throws LIMIT_EXCEEDED when `c` cannot be split into dispatches within `limits`.
Plan planChunks(const PlanLimits& limits, const Container& c, size_t len, OutputFormat format);

}  // namespace sgfp4
