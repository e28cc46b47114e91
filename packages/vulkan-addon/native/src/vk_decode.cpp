#include "vk_decode.hpp"

#include <algorithm>
#include <cstring>

#include "host_copy.hpp"

namespace sgfp4 {

namespace {
// Below this, importing (pinning) the caller's pages costs more than a copy through the pool.
constexpr uint64_t kImportMinBytes = uint64_t(1) << 20;
}  // namespace

PlanLimits planLimits(const VulkanDevice& d) {
  const DeviceInfo& info = d.info;
  PlanLimits limits;
  limits.maxRange = std::min<uint64_t>({info.maxStorageBufferRange, info.maxMemoryAllocationSize, uint64_t(1) << 31});
  limits.align = info.minStorageBufferOffsetAlignment;
  limits.maxGroups = uint64_t(std::max<uint32_t>(1, info.maxComputeWorkGroupCount[0])) * std::max<uint32_t>(1, info.maxComputeWorkGroupCount[1]);
  return limits;
}

Plan planFor(const VulkanDevice& d, const Container& c, size_t len, OutputFormat format) { return planChunks(planLimits(d), c, len, format); }

void prepareJob(VulkanDevice& d, VkCommandBuffer cmd, DeviceJob& job, Lease& staging, const uint8_t* bytes, size_t len, const Container& c, const Plan& plan) {
  const uint64_t leafBytes = c.leafTable.size() * 4, firstBytes = c.blockFirstLeaf.size() * 4;
  job.stream = Lease(d.pool, Memory::Device, plan.streamBytes);
  job.leaves = Lease(d.pool, Memory::Device, leafBytes);
  job.firstLeaf = Lease(d.pool, Memory::Device, firstBytes);
  for (const Chunk& ch : plan.chunks) job.outputs.emplace_back(d.pool, Memory::Device, plan.outputBytes(ch));

  struct Upload {
    Buffer* dst;
    const void* src;
    uint64_t n, padded;  // bytes given, bytes copied (the tail zeroed)
  };
  const Upload uploads[3] = {{&job.stream.buf, bytes, len, plan.streamBytes},
                             {&job.leaves.buf, c.leafTable.data(), leafBytes, (leafBytes + 15) & ~uint64_t(15)},
                             {&job.firstLeaf.buf, c.blockFirstLeaf.data(), firstBytes, (firstBytes + 15) & ~uint64_t(15)}};
  auto fill = [](uint8_t* p, const Upload& u) {
    if (u.n) std::memcpy(p, u.src, u.n);
    std::memset(p + u.n, 0, u.padded - u.n);
  };
  if (d.unifiedMemory) {
    for (const Upload& u : uploads) fill(static_cast<uint8_t*>(u.dst->mapped), u);
  } else {
    // The stream straight from the caller's pages when the device imports host memory (its
    // padding tail is never read for an output value: payloads end inside the stream).
    VkDeviceSize from = 0;
    if (len >= kImportMinBytes) job.importedStream = d.importHostMemory(bytes, len, from);
    const bool direct = job.importedStream.buf != VK_NULL_HANDLE;
    if (direct) {
      VkBufferCopy region{from, 0, len};
      vkCmdCopyBuffer(cmd, job.importedStream.buf, job.stream.buf.buf, 1, &region);
    }
    VkDeviceSize total = 0;
    for (const Upload& u : uploads) total += u.padded;
    staging = Lease(d.pool, Memory::HostUpload, total);
    VkDeviceSize at = 0;
    for (const Upload& u : uploads) {
      if (direct && u.dst == &job.stream.buf) continue;
      fill(static_cast<uint8_t*>(staging.buf.mapped) + at, u);
      if (u.padded) {
        VkBufferCopy region{at, 0, u.padded};
        vkCmdCopyBuffer(cmd, staging.buf.buf, u.dst->buf, 1, &region);
      }
      at += u.padded;
    }
    barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
  }

  writeSets(d, job, c, plan);
}

void writeSets(VulkanDevice& d, DeviceJob& job, const Container& c, const Plan& plan) {
  const uint64_t firstBytes = c.blockFirstLeaf.size() * 4;
  const uint32_t nSets = uint32_t(plan.chunks.size());
  job.sets = std::make_unique<DescriptorSets>(d.device, d.decodeSetLayout, nSets, 5);
  for (uint32_t k = 0; k < nSets; k++) {
    const Chunk& ch = plan.chunks[k];
    const VkDeviceSize outBytes = plan.outputBytes(ch);
    const VkBuffer out = job.outputs[k % job.outputs.size()].buf.buf;  // staged decodes use fewer, in turn
    const VkDeviceSize bound = job.wholeOutputBytes ? job.wholeOutputBytes : outBytes;
    const VkDescriptorBufferInfo bi[5] = {
        {job.stream.buf.buf, ch.streamStart, ch.streamEnd - ch.streamStart},
        {job.leafBuffer().buf, ch.leafStart * 16, (ch.leafEnd - ch.leafStart) * 16},
        {job.firstLeaf.buf.buf, 0, firstBytes},
        {out, 0, bound},  // scalar view (partial macroblocks)
        {out, 0, bound},  // vector view
    };
    job.sets->write(k, bi, 5);
  }
}

void recordChunk(VulkanDevice& d, VkCommandBuffer cmd, const DeviceJob& job, const Container& c, const Plan& plan, size_t k, VkPipeline pipeline) {
  const Chunk& ch = plan.chunks[k];
  const uint64_t blocks = (ch.by1 - ch.by0) * c.tilesX;
  uint32_t gx, gy;
  grid(d.info, blocks, gx, gy);
  PushDecode pc{uint32_t(ch.by0 * c.tilesX), uint32_t(blocks), uint32_t(c.tilesX), uint32_t(c.rows), uint32_t(c.cols), uint32_t(job.wholeOutputBytes ? 0 : ch.row0),
                uint32_t(ch.streamStart / 4), uint32_t((ch.streamEnd - ch.streamStart) / 4), uint32_t(ch.leafStart), uint32_t(ch.leafEnd - ch.leafStart), gx};
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d.decodeLayout, 0, 1, &job.sets->sets[k], 0, nullptr);
  vkCmdPushConstants(cmd, d.decodeLayout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
  vkCmdDispatch(cmd, gx, gy, 1);
}

uint32_t recordDecode(VulkanDevice& d, VkCommandBuffer cmd, const DeviceJob& job, const Container& c, const Plan& plan, VkPipeline pipeline) {
  for (size_t k = 0; k < plan.chunks.size(); k++) recordChunk(d, cmd, job, c, plan, k, pipeline);
  return uint32_t(plan.chunks.size());
}

HostResult hostResult(Lease&& readback, uint64_t bytes) {
  HostResult r;
  r.bytes = bytes;
  r.readback_ = std::move(readback);
  r.segments_.push_back({static_cast<const uint8_t*>(r.readback_.buf.mapped), 0, bytes});
  return r;
}

HostResult decodeToHost(VulkanDevice& d, const uint8_t* bytes, size_t len, const Container& c, OutputFormat format) {
  const Plan plan = planFor(d, c, len, format);
  const uint64_t outBytes = c.rows * c.cols * plan.elemBytes;
  if (!d.unifiedMemory) return hostResult(decodeStaged(d, bytes, len, c, format, defaultRoute()), outBytes);
  HostResult r;
  r.bytes = outBytes;
  Lease staging;
  // Declared after the buffers so it is destroyed first: its destructor waits for the device
  // when a wait failed, before the buffers the work may still use go back to the pool.
  Submission sub(d);
  prepareJob(d, sub.cmd, r.job_, staging, bytes, len, c, plan);
  recordDecode(d, sub.cmd, r.job_, c, plan, d.decodePipeline(format));
  barrier(sub.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  for (size_t k = 0; k < plan.chunks.size(); k++)
    r.segments_.push_back({static_cast<const uint8_t*>(r.job_.outputs[k].buf.mapped), plan.outputOffset(plan.chunks[k]), plan.outputBytes(plan.chunks[k])});
  sub.submitAndWait();
  return r;
}

void decodeInto(VulkanDevice& d, const uint8_t* bytes, size_t len, const Container& c, OutputFormat format, void* out) {
  // Each path plans for itself (the same LIMIT_EXCEEDED first): no plan here only to size the output.
  const uint64_t outBytes = c.rows * c.cols * elementBytes(format);
  if (d.unifiedMemory) return decodeToHost(d, bytes, len, c, format).copyTo(out);
  if (!d.info.hostImportAlignment || outBytes < kImportMinBytes) {
    decodeStaged(d, bytes, len, c, format, defaultRoute(), StagedIo{out});
    return;
  }
  const Plan plan = planFor(d, c, len, format);
  VkDeviceSize at = 0;
  Buffer target = d.importHostMemory(out, outBytes, at);
  if (!target.buf) {
    decodeStaged(d, bytes, len, c, format, defaultRoute(), StagedIo{out});
    return;
  }
  DeviceJob job;
  Lease staging;
  Submission sub(d);  // after the buffers: destroyed first, waiting for the device if a wait failed
  prepareJob(d, sub.cmd, job, staging, bytes, len, c, plan);
  recordDecode(d, sub.cmd, job, c, plan, d.decodePipeline(format));
  barrier(sub.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
  for (size_t k = 0; k < plan.chunks.size(); k++) {
    VkBufferCopy region{0, at + plan.outputOffset(plan.chunks[k]), plan.outputBytes(plan.chunks[k])};
    vkCmdCopyBuffer(sub.cmd, job.outputs[k].buf.buf, target.buf, 1, &region);
  }
  barrier(sub.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  sub.submitAndWait();
}

void HostResult::copyTo(void* out) const {
  for (const Segment& s : segments_) copyParallel(static_cast<uint8_t*>(out) + s.offset, s.src, s.bytes);
}

}  // namespace sgfp4
