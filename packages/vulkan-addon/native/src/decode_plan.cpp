#include "decode_plan.hpp"

#include <algorithm>
#include <string>

namespace sgfp4 {

Plan planChunks(const PlanLimits& limits, const Container& c, size_t len, OutputFormat format) {
  const uint64_t maxRange = limits.maxRange & ~uint64_t(255);
  const uint64_t align = std::max<uint64_t>(16, limits.align);
  const uint64_t elem = elementBytes(format);
  if (c.rows >= (uint64_t(1) << 31) || c.cols >= (uint64_t(1) << 31)) throw Failure("LIMIT_EXCEEDED", "the Vulkan decoder takes dimensions below 2^31");
  if ((c.blockCount + 1) * 4 > maxRange) throw Failure("LIMIT_EXCEEDED", "too many macroblocks for one storage-buffer binding on this device");
  const uint64_t rowBytes = 64 * c.cols * elem;
  if (rowBytes > maxRange)
    throw Failure("LIMIT_EXCEEDED", "one macroblock row (64 x " + std::to_string(c.cols) + " values of " + std::to_string(elem) +
                                        " bytes) exceeds this device's storage-buffer range of " + std::to_string(maxRange) + " bytes");
  // Payload byte range of each macroblock row, from each block's first and last leaf: within a
  // block the parser lays payloads out in increasing order (v2; v1 blocks have one leaf), so
  // these bound all of them without a pass over every leaf. From blockPayload when the parser
  // gave it (the table itself may be in uncached upload memory): the last payload's end padded
  // to 16 there, which changes nothing below (ends are only compared with len and rounded up to
  // 16, and payloads start at multiples of 16).
  std::vector<uint64_t> rowMin(c.tilesY, UINT64_MAX), rowMax(c.tilesY, 0);
  const size_t n = c.leafCount();
  if (c.blockFirstLeaf.size() != c.blockCount + 1 || c.blockFirstLeaf[c.blockCount] != n) throw Failure("BACKEND_FAILURE", "inconsistent leaf table");
  const bool spans = c.blockPayload.size() == 2 * c.blockCount;
  // Row by row (blockCount = tilesY * tilesX): no division per block.
  for (uint64_t by = 0, b = 0; by < c.tilesY; by++) {
    uint64_t lowest = UINT64_MAX, highest = 0;
    for (const uint64_t rowEnd = b + c.tilesX; b < rowEnd; b++) {
      const uint32_t first = c.blockFirstLeaf[b], last = c.blockFirstLeaf[b + 1];
      if (first >= last) continue;
      uint64_t off, end;
      if (spans) {
        off = c.blockPayload[2 * b], end = c.blockPayload[2 * b + 1];
      } else {
        const uint32_t* lo = &c.leafTable[SGFP4_LEAF_WORDS * size_t(first)];
        const uint32_t* hi = &c.leafTable[SGFP4_LEAF_WORDS * size_t(last - 1)];
        const uint32_t g = hi[SGFP4_LEAF_WORD_GEOMETRY];
        off = lo[SGFP4_LEAF_WORD_PAYLOAD];
        end = uint64_t(hi[SGFP4_LEAF_WORD_PAYLOAD]) + sgfp4_leaf_payload_bytes(sgfp4_geometry_log2(g), sgfp4_geometry_mode(g));
      }
      if (off > end || end > len) throw Failure("BACKEND_FAILURE", "inconsistent leaf table");  // the parser never produces this
      lowest = std::min(lowest, off);
      highest = std::max(highest, end);
    }
    rowMin[by] = lowest;
    rowMax[by] = highest;
  }
  Plan plan;
  plan.streamBytes = (uint64_t(len) + 15) & ~uint64_t(15);
  plan.elemBytes = elem;
  plan.cols = c.cols;
  uint64_t by = 0;
  while (by < c.tilesY) {
    Chunk ch{};
    ch.by0 = by;
    uint64_t sMin = UINT64_MAX, sMax = 0;
    uint64_t end = by;
    while (end < c.tilesY) {
      const uint64_t nMin = std::min(sMin, rowMin[end]), nMax = std::max(sMax, rowMax[end]);
      const uint64_t nRow1 = std::min<uint64_t>(c.rows, (end + 1) * 64);
      const uint64_t outBytes = (nRow1 - by * 64) * c.cols * elem;
      const uint64_t sStart = nMin / align * align;
      const uint64_t sEnd = std::min(plan.streamBytes, (nMax + 15) & ~uint64_t(15));
      const uint64_t l0 = c.blockFirstLeaf[by * c.tilesX] / (align / 16) * (align / 16);
      const uint64_t l1 = c.blockFirstLeaf[(end + 1) * c.tilesX];
      const uint64_t blocks = (end + 1 - by) * c.tilesX;
      const bool small = plan.chunks.empty() && limits.firstOutputBytes && end > by && outBytes > limits.firstOutputBytes;
      const bool fits = !small && outBytes <= maxRange && sEnd - sStart <= maxRange && (l1 - l0) * 16 <= maxRange && blocks <= limits.maxGroups;
      if (!fits) {
        if (end == by) throw Failure("LIMIT_EXCEEDED", "one macroblock row's payloads exceed this device's storage-buffer range");
        break;
      }
      sMin = nMin;
      sMax = nMax;
      ch.streamStart = sStart;
      ch.streamEnd = sEnd;
      ch.leafStart = l0;
      ch.leafEnd = l1;
      end++;
    }
    ch.by1 = end;
    ch.row0 = by * 64;
    ch.row1 = std::min<uint64_t>(c.rows, end * 64);
    plan.chunks.push_back(ch);
    by = end;
  }
  return plan;
}

}  // namespace sgfp4
