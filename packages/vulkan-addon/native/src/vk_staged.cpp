// The discrete-GPU decode, staged: the output split into stages of about kStageBytes (whole
// macroblock rows, each one dispatch), each its own submission: upload of the stage's part of the
// stream and leaf table from pooled staging, the dispatch, and the GPU's copy of the stage's
// output into pooled host-visible (cached) readback memory. While the GPU runs stage k, the host
// fills the staging of stage k + 1 and copies stage k - 1 out of the readback memory.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "host_copy.hpp"
#include "stage_trace.hpp"
#include "vk_decode.hpp"

namespace sgfp4 {

namespace {

constexpr uint64_t kStageBytes = uint64_t(16) << 20;

constexpr uint64_t kStagesInFlight = 2;

uint64_t envNumber(const char* name, uint64_t dflt) {
  const char* v = std::getenv(name);
  const uint64_t n = v ? std::strtoull(v, nullptr, 10) : 0;
  return n ? n : dflt;
}
// Knobs for tests and the benchmark's probe: SGFP4_VULKAN_STAGE_BYTES makes stages smaller (small
// outputs then run many), SGFP4_VULKAN_STAGES_IN_FLIGHT sets how many stages are submitted before
// the host waits for the oldest.
uint64_t stageBytes() { return envNumber("SGFP4_VULKAN_STAGE_BYTES", kStageBytes); }
uint64_t stagesInFlight() { return std::min<uint64_t>(16, envNumber("SGFP4_VULKAN_STAGES_IN_FLIGHT", kStagesInFlight)); }

// The device's plan with chunks of at most kStageBytes of output where the shape allows (one
// macroblock row may be larger), else the device's own plan.
Plan stagePlan(const VulkanDevice& d, const Container& c, size_t len, OutputFormat format) {
  const PlanLimits limits = planLimits(d);
  PlanLimits staged = limits;
  staged.maxRange = std::min(limits.maxRange, std::max(stageBytes(), 64 * c.cols * elementBytes(format) + 256));
  try {
    return planChunks(staged, c, len, format);
  } catch (const Failure&) {
    return planChunks(limits, c, len, format);
  }
}

// Bytes [from, to) of a device buffer, uploaded from the same offsets of `src` (srcLen bytes
// long; the tail past it is zero) through its region of the staging buffer.
struct Region {
  const uint8_t* src;
  uint64_t srcLen, size;   // size: the device buffer's padded length
  uint64_t stagingAt;      // where the region starts in the staging buffer
  Buffer* dst;
  uint64_t lo = 0, hi = 0;  // uploaded so far (one interval: every stage's range is added to it)

  // Uploads what [from, to) adds to the uploaded interval (at most two pieces).
  void need(uint64_t from, uint64_t to, uint8_t* staging, VkCommandBuffer cmd) {
    to = std::min(to, size);
    if (from >= to) return;
    if (lo == hi) lo = hi = from;
    if (from < lo) piece(from, lo, staging, cmd), lo = from;
    if (to > hi) piece(hi, to, staging, cmd), hi = to;
  }
  void piece(uint64_t from, uint64_t to, uint8_t* staging, VkCommandBuffer cmd) const {
    const uint64_t copyEnd = std::min(to, srcLen);
    if (copyEnd > from) copyParallel(staging + stagingAt + from, src + from, copyEnd - from);
    const uint64_t zeroFrom = std::max(from, srcLen);
    if (to > zeroFrom) std::memset(staging + stagingAt + zeroFrom, 0, to - zeroFrom);
    VkBufferCopy region{stagingAt + from, from, to - from};
    vkCmdCopyBuffer(cmd, stagingBuffer, dst->buf, 1, &region);
  }
  VkBuffer stagingBuffer = VK_NULL_HANDLE;
};

}  // namespace

Lease decodeStaged(VulkanDevice& d, const uint8_t* bytes, size_t len, const Container& c, OutputFormat format, void* out) {
  const Plan plan = stagePlan(d, c, len, format);
  const VkPipeline pipeline = d.decodePipeline(format);
  const uint64_t leafBytes = c.leafTable.size() * 4, firstBytes = c.blockFirstLeaf.size() * 4;
  const uint64_t leafPadded = (leafBytes + 15) & ~uint64_t(15), firstPadded = (firstBytes + 15) & ~uint64_t(15);
  const uint64_t outBytes = c.rows * c.cols * plan.elemBytes;
  DeviceJob job;
  job.stream = Lease(d.pool, Memory::Device, plan.streamBytes);
  job.leaves = Lease(d.pool, Memory::Device, leafBytes);
  job.firstLeaf = Lease(d.pool, Memory::Device, firstBytes);
  // Two output buffers used in turn: stage k + 2's dispatch comes after stage k's copy out of
  // the same buffer (its barrier orders it after every earlier transfer).
  uint64_t largest = 0;
  for (const Chunk& ch : plan.chunks) largest = std::max(largest, plan.outputBytes(ch));
  for (size_t k = 0; k < std::min<size_t>(2, plan.chunks.size()); k++) job.outputs.emplace_back(d.pool, Memory::Device, largest);
  writeSets(d, job, c, plan);
  Lease staging(d.pool, Memory::HostUpload, plan.streamBytes + leafPadded + firstPadded);
  Lease readback(d.pool, Memory::HostReadback, outBytes);
  auto* up = static_cast<uint8_t*>(staging.buf.mapped);
  const uint8_t* down = static_cast<const uint8_t*>(readback.buf.mapped);
  Region stream{bytes, len, plan.streamBytes, 0, &job.stream.buf};
  Region leaves{reinterpret_cast<const uint8_t*>(c.leafTable.data()), leafBytes, leafPadded, plan.streamBytes, &job.leaves.buf};
  Region first{reinterpret_cast<const uint8_t*>(c.blockFirstLeaf.data()), firstBytes, firstPadded, plan.streamBytes + leafPadded, &job.firstLeaf.buf};
  for (Region* r : {&stream, &leaves, &first}) r->stagingBuffer = staging.buf.buf;

  const size_t depth = size_t(stagesInFlight());
  StageTrace trace(d, plan.chunks.size());
  trace.setupDone();
  // After the buffers: destroyed first, each waiting for the device if its work is in flight.
  std::vector<std::unique_ptr<Submission>> stages;
  auto copyOut = [&](size_t k) {
    trace.time(k, StageTrace::Wait, [&] { stages[k]->wait(); });
    const Chunk& ch = plan.chunks[k];
    if (out) trace.time(k, StageTrace::Copy, [&] { copyParallel(static_cast<uint8_t*>(out) + plan.outputOffset(ch), down + plan.outputOffset(ch), plan.outputBytes(ch)); });
  };
  for (size_t k = 0; k < plan.chunks.size(); k++) {
    const Chunk& ch = plan.chunks[k];
    stages.push_back(std::make_unique<Submission>(d));
    VkCommandBuffer cmd = stages[k]->cmd;
    trace.mark(cmd, k, 0);
    trace.time(k, StageTrace::Fill, [&] {
      stream.need(ch.streamStart, ch.streamEnd, up, cmd);
      leaves.need(ch.leafStart * 16, ch.leafEnd * 16, up, cmd);
      first.need(0, firstPadded, up, cmd);
    });
    // Also orders this stage's dispatch after the uploads of earlier stages it binds.
    barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
    trace.mark(cmd, k, 1);
    recordChunk(d, cmd, job, c, plan, k, pipeline);
    barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    trace.mark(cmd, k, 2);
    VkBufferCopy region{0, plan.outputOffset(ch), plan.outputBytes(ch)};
    vkCmdCopyBuffer(cmd, job.outputs[k % 2].buf.buf, readback.buf.buf, 1, &region);
    barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    trace.mark(cmd, k, 3);
    trace.time(k, StageTrace::Submit, [&] { stages[k]->submit(); });
    if (k + 1 >= depth) copyOut(k + 1 - depth);
  }
  for (size_t k = plan.chunks.size() + 1 > depth ? plan.chunks.size() + 1 - depth : 0; k < plan.chunks.size(); k++) copyOut(k);
  trace.print();
  if (out) return Lease();
  return readback;
}

// Discrete GPUs, direct (the default for a hand-over since session 13: on the H100 it took `decode`
// from 0.51-0.52 to 0.72-0.75 of the device-to-host copy on v1 and from 0.36-0.42 to 0.44-0.52 on
// v2, BENCHMARKS.md): the inputs in host-visible upload memory and the output in the
// pooled host-visible readback memory, both bound to the decode itself, so the kernel reads the
// stream over the bus and writes each value where the caller will find it: no device copies, one
// submission. Empty Lease where it does not apply (a plan of several dispatches).
Lease decodeDirect(VulkanDevice& d, const uint8_t* bytes, size_t len, const Container& c, OutputFormat format) {
  const Plan plan = planFor(d, c, len, format);
  if (plan.chunks.size() != 1) return Lease();
  const uint64_t leafBytes = c.leafTable.size() * 4, firstBytes = c.blockFirstLeaf.size() * 4;
  // Inputs read over the bus too: copying them into device memory first (in the same submission)
  // was measured in session 13 and gained nothing consistent (BENCHMARKS.md).
  DeviceJob job;
  job.stream = Lease(d.pool, Memory::HostUpload, plan.streamBytes);
  job.leaves = Lease(d.pool, Memory::HostUpload, leafBytes);
  job.firstLeaf = Lease(d.pool, Memory::HostUpload, firstBytes);
  job.outputs.emplace_back(d.pool, Memory::HostReadback, plan.outputBytes(plan.chunks[0]));
  const struct {
    Buffer* dst;
    const void* src;
    uint64_t n;
  } fills[3] = {{&job.stream.buf, bytes, len}, {&job.leaves.buf, c.leafTable.data(), leafBytes}, {&job.firstLeaf.buf, c.blockFirstLeaf.data(), firstBytes}};
  for (const auto& f : fills) {
    auto* p = static_cast<uint8_t*>(f.dst->mapped);
    if (f.n) copyParallel(p, static_cast<const uint8_t*>(f.src), f.n);
    std::memset(p + f.n, 0, f.dst->size - f.n);  // the tail of the 16-byte rounding too
  }
  writeSets(d, job, c, plan);
  Submission sub(d);  // after the buffers: destroyed first, waiting for the device if a wait failed
  recordDecode(d, sub.cmd, job, c, plan, d.decodePipeline(format));
  barrier(sub.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  sub.submitAndWait();
  return std::move(job.outputs[0]);
}

Lease decodeToReadback(VulkanDevice& d, const uint8_t* bytes, size_t len, const Container& c, OutputFormat format) {
  const char* direct = std::getenv("SGFP4_VULKAN_DIRECT");  // "0": the staged path (tests, the benchmark's comparison)
  if (!direct || direct[0] != '0') {
    Lease r = decodeDirect(d, bytes, len, c, format);
    if (r.buf.buf) return r;
  }
  return decodeStaged(d, bytes, len, c, format, nullptr);
}

}  // namespace sgfp4
