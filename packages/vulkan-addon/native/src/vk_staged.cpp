// The discrete-GPU decode in stages: the output split into stages of about kStageBytes (whole
// macroblock rows, each one dispatch), each its own submission, so that the host fills the inputs
// of stage k + 1 and copies stage k - 1 out (decodeInto) while the GPU runs stage k.
// - Direct (the default since session 13): inputs in pooled host-visible upload memory that the
//   kernel reads over the bus, and every stage writing its rows straight into the pooled
//   host-visible readback memory: no device copies.
// - Staged (SGFP4_VULKAN_DIRECT=0): inputs uploaded from pooled staging into device buffers, the
//   stage decoded into device memory, and the GPU's copy of it into the readback memory.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>

#include "host_copy.hpp"
#include "stage_trace.hpp"
#include "vk_decode.hpp"

namespace sgfp4 {

namespace {

constexpr uint64_t kStageBytes = uint64_t(16) << 20;

// Stages submitted before the host waits for the oldest: staged 2; direct 3, which gave
// decodeInto 8-14% less time than 2 on three of four H100 probe rows (1.5% more on the fourth;
// tools/bench-load/results/h100-s14-vulkan-probe2.log).
constexpr uint64_t kStagesInFlight = 2, kDirectStagesInFlight = 3;
constexpr uint64_t kFirstStageBytes = uint64_t(4) << 20;

uint64_t envNumber(const char* name, uint64_t dflt) {
  const char* v = std::getenv(name);
  const uint64_t n = v ? std::strtoull(v, nullptr, 10) : 0;
  return n ? n : dflt;
}
// Knobs for tests and the benchmark's probe: SGFP4_VULKAN_STAGE_BYTES makes stages smaller (small
// outputs then run many), SGFP4_VULKAN_STAGES_IN_FLIGHT sets how many stages are submitted before
// the host waits for the oldest.
uint64_t stageBytes() { return envNumber("SGFP4_VULKAN_STAGE_BYTES", kStageBytes); }
uint64_t stagesInFlight(uint64_t dflt) { return std::min<uint64_t>(16, envNumber("SGFP4_VULKAN_STAGES_IN_FLIGHT", dflt)); }

// The device's plan with chunks of at most kStageBytes of output where the shape allows (one
// macroblock row may be larger), else the device's own plan.
Plan stagePlan(const VulkanDevice& d, const Container& c, size_t len, OutputFormat format) {
  const PlanLimits limits = planLimits(d);
  PlanLimits staged = limits;
  staged.maxRange = std::min(limits.maxRange, std::max(stageBytes(), 64 * c.cols * elementBytes(format) + 256));
  // A smaller first stage: the GPU starts once its inputs are filled.
  staged.firstOutputBytes = std::min(staged.maxRange, kFirstStageBytes);
  try {
    return planChunks(staged, c, len, format);
  } catch (const Failure&) {
    return planChunks(limits, c, len, format);
  }
}

// Bytes [from, to) of an input buffer, filled from the same offsets of `src` (srcLen bytes long;
// the tail past it is zero). Staged: through its region of the staging buffer and a recorded copy
// into the device buffer `dst`. Direct: written straight into `dst`'s mapped memory, which the
// kernel reads over the bus (host writes before a submission are visible to it).
struct Region {
  const uint8_t* src;
  uint64_t srcLen, size;   // size: the buffer's padded length
  uint64_t stagingAt;      // where the region starts in the staging buffer (staged only)
  Buffer* dst;
  uint64_t lo = 0, hi = 0;  // filled so far (one interval: every stage's range is added to it)
  uint8_t* staging = nullptr;  // null: direct
  VkBuffer stagingBuffer = VK_NULL_HANDLE;

  // Fills what [from, to) adds to the filled interval (at most two pieces).
  void need(uint64_t from, uint64_t to, VkCommandBuffer cmd) {
    to = std::min(to, size);
    if (from >= to) return;
    if (lo == hi) lo = hi = from;
    if (from < lo) piece(from, lo, cmd), lo = from;
    if (to > hi) piece(hi, to, cmd), hi = to;
  }
  void piece(uint64_t from, uint64_t to, VkCommandBuffer cmd) const {
    uint8_t* at = staging ? staging + stagingAt : static_cast<uint8_t*>(dst->mapped);
    const uint64_t copyEnd = std::min(to, srcLen);
    if (copyEnd > from) copyParallel(at + from, src + from, copyEnd - from);
    const uint64_t zeroFrom = std::max(from, srcLen);
    if (to > zeroFrom) std::memset(at + zeroFrom, 0, to - zeroFrom);
    if (!staging) return;
    VkBufferCopy region{stagingAt + from, from, to - from};
    vkCmdCopyBuffer(cmd, stagingBuffer, dst->buf, 1, &region);
  }
};

// The leaf table's memory when the parser puts it straight into the upload buffer the kernel
// binds (the direct route): no heap table, and no copy of it into the upload memory.
struct UploadArena : TableArena {
  explicit UploadArena(VulkanDevice& d) : device(d) { owner = &d; }
  void copyStream(uint8_t* dst, const uint8_t* src, size_t n) noexcept override { copySerial(dst, src, n); }
  uint32_t* take(size_t words) noexcept override {
    if (!tableHere) return nullptr;
    try {
      lease = Lease(device.pool, Memory::HostUpload, VkDeviceSize(words) * 4);
      return static_cast<uint32_t*>(lease.buf.mapped);
    } catch (...) {
      lease = Lease();
      return nullptr;  // the heap, as without an arena
    }
  }
  VulkanDevice& device;
  Lease lease;
  Lease stream;  // with a stream copy: len bytes, zero-padded to 16 (the parse fills the rest)
  bool tableHere = true;  // false: the table on the heap (SGFP4_VULKAN_LEAF_TABLE=copy), only the stream copy here
};

// Whether an output of this size takes the direct route on `d` (decodeStaged).
bool directFits(const VulkanDevice& d, uint64_t outBytes) { return outBytes <= (planLimits(d).maxRange & ~uint64_t(255)); }

}  // namespace

std::shared_ptr<TableArena> leafArena(VulkanDevice* d, double rows, double cols, OutputFormat format, const size_t* streamLen) {
  if (!d || d->unifiedMemory || d->info.hostImportAlignment || defaultRoute() != Route::Direct) return nullptr;
  // SGFP4_VULKAN_LEAF_TABLE=copy: the table on the heap, copied into upload memory by the stages'
  // fills, as before session 15 (the benchmark's comparison in one run; read per call).
  const char* where = std::getenv("SGFP4_VULKAN_LEAF_TABLE");
  const bool tableCopied = where && std::strcmp(where, "copy") == 0;
  if (tableCopied && !(streamLen && *streamLen)) return nullptr;
  if (!(rows >= 1 && cols >= 1)) return nullptr;
  const double outBytes = rows * cols * double(elementBytes(format));
  if (!(outBytes <= double(uint64_t(1) << 40)) || !directFits(*d, uint64_t(outBytes))) return nullptr;
  std::shared_ptr<UploadArena> arena;
  try {
    arena = std::make_shared<UploadArena>(*d);
    arena->tableHere = !tableCopied;
  } catch (...) {
    return nullptr;  // nothing here may throw ahead of the stream's own errors
  }
  if (streamLen && *streamLen) {
    const uint64_t padded = (uint64_t(*streamLen) + 15) & ~uint64_t(15);
    try {
      arena->stream = Lease(d->pool, Memory::HostUpload, padded);
    } catch (...) {
      return arena;  // no copy by the parse: the stream's errors come first, the worker's copy after
    }
    auto* p = static_cast<uint8_t*>(arena->stream.buf.mapped);
    if (!p) return arena;
    std::memset(p + *streamLen, 0, padded - *streamLen);
    arena->streamCopy = p;
  }
  return arena;
}

Lease parsedStream(TableArena* a, const VulkanDevice& d, size_t len) {
  if (!a || a->owner != &d || !a->streamCopy || a->streamCopied.load() != len) return Lease();
  return std::move(static_cast<UploadArena*>(a)->stream);
}

const Buffer* leavesInPlace(const VulkanDevice& d, const Container& c) {
  const std::shared_ptr<TableArena>& a = c.leafTable.get_allocator().arena;
  if (!a || a->owner != &d || !a->given || a->given != c.leafTable.data() || c.leafTable.empty()) return nullptr;
  const Lease& lease = static_cast<const UploadArena&>(*a).lease;
  if (!lease.buf.buf || lease.buf.size < c.leafTable.size() * 4) return nullptr;
  return &lease.buf;
}

Route defaultRoute() {
  const char* direct = std::getenv("SGFP4_VULKAN_DIRECT");  // "0": the staged route (tests, the benchmark's comparison)
  return direct && direct[0] == '0' ? Route::Staged : Route::Direct;
}

Lease decodeStaged(VulkanDevice& d, const uint8_t* bytes, size_t len, const Container& c, OutputFormat format, Route route, const StagedIo& io) {
  void* const out = io.out;
  const auto planStart = std::chrono::steady_clock::now();
  const Plan plan = stagePlan(d, c, len, format);
  StageTrace trace(d, plan.chunks.size(), planStart);  // setupUs: from here (leases, descriptor sets) to the first stage
  const VkPipeline pipeline = d.decodePipeline(format);
  const uint64_t leafBytes = c.leafTable.size() * 4, firstBytes = c.blockFirstLeaf.size() * 4;
  const uint64_t leafPadded = (leafBytes + 15) & ~uint64_t(15), firstPadded = (firstBytes + 15) & ~uint64_t(15);
  const uint64_t outBytes = c.rows * c.cols * plan.elemBytes;
  // Direct needs the whole output in one binding (every stage writes its rows in place).
  const bool direct = route == Route::Direct && directFits(d, outBytes);
  // The leaf table already in upload memory (parsed there): bound as is.
  const Buffer* leavesIn = direct ? leavesInPlace(d, c) : nullptr;
  const Memory inputs = direct ? Memory::HostUpload : Memory::Device;
  // A stream the caller already put in upload memory: bound as is (direct), else read from there.
  const bool filled = io.stream && io.stream->buf.size >= plan.streamBytes;
  if (filled && !direct) bytes = static_cast<const uint8_t*>(io.stream->buf.mapped);
  DeviceJob job;
  job.stream = filled && direct ? std::move(*io.stream) : Lease(d.pool, inputs, plan.streamBytes);
  if (leavesIn) job.leavesIn = leavesIn;
  else job.leaves = Lease(d.pool, inputs, leafBytes);
  job.firstLeaf = Lease(d.pool, inputs, firstBytes);
  Lease readback = io.readback ? std::move(*io.readback) : Lease(d.pool, Memory::HostReadback, outBytes);
  Lease staging;
  if (direct) {
    job.outputs.push_back(std::move(readback));
    job.wholeOutputBytes = outBytes;
  } else {
    // Two output buffers used in turn: stage k + 2's dispatch comes after stage k's copy out of
    // the same buffer (its barrier orders it after every earlier transfer).
    uint64_t largest = 0;
    for (const Chunk& ch : plan.chunks) largest = std::max(largest, plan.outputBytes(ch));
    for (size_t k = 0; k < std::min<size_t>(2, plan.chunks.size()); k++) job.outputs.emplace_back(d.pool, Memory::Device, largest);
    staging = Lease(d.pool, Memory::HostUpload, plan.streamBytes + leafPadded + firstPadded);
  }
  writeSets(d, job, c, plan);
  const Buffer& result = direct ? job.outputs[0].buf : readback.buf;
  const uint8_t* down = static_cast<const uint8_t*>(result.mapped);
  Region stream{bytes, len, plan.streamBytes, 0, &job.stream.buf};
  if (filled && direct) stream.hi = plan.streamBytes;  // nothing to fill
  Region leaves{reinterpret_cast<const uint8_t*>(c.leafTable.data()), leafBytes, leafPadded, plan.streamBytes, &job.leaves.buf};
  if (leavesIn) leaves.hi = leafPadded;  // nothing to fill (leafBytes is a multiple of 16)
  Region first{reinterpret_cast<const uint8_t*>(c.blockFirstLeaf.data()), firstBytes, firstPadded, plan.streamBytes + leafPadded, &job.firstLeaf.buf};
  if (!direct)
    for (Region* r : {&stream, &leaves, &first}) r->staging = static_cast<uint8_t*>(staging.buf.mapped), r->stagingBuffer = staging.buf.buf;

  // A direct hand-over reuses nothing between stages: all of them are queued at once, so that the
  // GPU has work while the host makes the result array (whileGpuRuns).
  const size_t inFlight = size_t(stagesInFlight(direct ? kDirectStagesInFlight : kStagesInFlight));
  const size_t depth = direct && !out ? std::max<size_t>(inFlight, std::min<size_t>(plan.chunks.size(), 64)) : inFlight;
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
      stream.need(ch.streamStart, ch.streamEnd, cmd);
      leaves.need(ch.leafStart * 16, ch.leafEnd * 16, cmd);
      first.need(0, firstPadded, cmd);
    });
    // Also orders this stage's dispatch after the uploads of earlier stages it binds.
    if (!direct) barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
    trace.mark(cmd, k, 1);
    recordChunk(d, cmd, job, c, plan, k, pipeline);
    trace.mark(cmd, k, 2);
    if (direct) {
      barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    } else {
      barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
      VkBufferCopy region{0, plan.outputOffset(ch), plan.outputBytes(ch)};
      vkCmdCopyBuffer(cmd, job.outputs[k % 2].buf.buf, readback.buf.buf, 1, &region);
      barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    }
    trace.mark(cmd, k, 3);
    trace.time(k, StageTrace::Submit, [&] { stages[k]->submit(); });
    // Direct: with two stages queued, the rest of the inputs in one parallel copy (the host's
    // small per-stage fills ran at a quarter of its copy rate on the H100 host and were most of
    // decodeInto's host time); later stages find them filled.
    if (direct && k == 1)
      trace.time(k, StageTrace::Fill, [&] {
        stream.need(0, plan.streamBytes, VK_NULL_HANDLE);
        leaves.need(0, leafPadded, VK_NULL_HANDLE);
      });
    if (k + 1 >= depth) copyOut(k + 1 - depth);
  }
  if (io.whileGpuRuns) io.whileGpuRuns(const_cast<uint8_t*>(down));
  for (size_t k = plan.chunks.size() + 1 > depth ? plan.chunks.size() + 1 - depth : 0; k < plan.chunks.size(); k++) copyOut(k);
  trace.print();
  Lease output = direct ? std::move(job.outputs[0]) : std::move(readback);
  if (out) return Lease();
  if (io.readback) {
    *io.readback = std::move(output);
    return Lease();
  }
  return output;
}

Lease decodeToReadback(VulkanDevice& d, const uint8_t* bytes, size_t len, const Container& c, OutputFormat format, const StagedIo& io) {
  return decodeStaged(d, bytes, len, c, format, defaultRoute(), io);
}

}  // namespace sgfp4
