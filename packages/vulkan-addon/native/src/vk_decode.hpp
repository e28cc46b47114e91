// One decode on the device: inputs uploaded (through pooled staging), the decode recorded per
// chunk of the plan, and the output brought to host-visible memory, from where the caller copies
// it once. The bench reuses prepareJob / recordDecode with the output kept on the device.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "decode_plan.hpp"
#include "vk_device.hpp"

namespace sgfp4 {

// Plans `c` for this device; throws LIMIT_EXCEEDED when it cannot be split into dispatches
// that fit (callers check before handing work to another thread).
Plan planFor(const VulkanDevice& d, const Container& c, size_t len, OutputFormat format);
// The device's binding limits as planChunks takes them.
PlanLimits planLimits(const VulkanDevice& d);

// Device-side state of one decode: inputs uploaded, one output buffer per chunk.
struct DeviceJob {
  Lease stream, leaves, firstLeaf;
  const Buffer* leavesIn = nullptr;  // non-null: the leaf table's buffer, held by the Container (leavesInPlace), not `leaves`
  const Buffer& leafBuffer() const { return leavesIn ? *leavesIn : leaves.buf; }
  Buffer importedStream;  // the caller's input pages, when uploaded from them directly
  std::vector<Lease> outputs;  // one per chunk, or (staged) two used in turn
  // Non-zero: outputs[0] holds the whole output (this many bytes), bound whole for every chunk,
  // each chunk writing its rows in place (the direct route).
  uint64_t wholeOutputBytes = 0;
  std::unique_ptr<DescriptorSets> sets;
};

// Takes the buffers, uploads the inputs (recording copies from `staging` into `cmd` when the
// device's memory is not host-visible) and writes the descriptor sets.
void prepareJob(VulkanDevice& d, VkCommandBuffer cmd, DeviceJob& job, Lease& staging, const uint8_t* bytes, size_t len, const Container& c, const Plan& plan);
// Binds each chunk's descriptor set to its ranges of the job's buffers.
void writeSets(VulkanDevice& d, DeviceJob& job, const Container& c, const Plan& plan);
// Records chunk k's dispatch with `pipeline`.
void recordChunk(VulkanDevice& d, VkCommandBuffer cmd, const DeviceJob& job, const Container& c, const Plan& plan, size_t k, VkPipeline pipeline);
// Records one dispatch per chunk with `pipeline`; returns the number of dispatches.
uint32_t recordDecode(VulkanDevice& d, VkCommandBuffer cmd, const DeviceJob& job, const Container& c, const Plan& plan, VkPipeline pipeline);

// A finished decode whose output sits in mapped memory until copyTo; holds its pooled buffers.
class HostResult {
 public:
  uint64_t bytes = 0;
  // The one host copy, into `out` (bytes long).
  void copyTo(void* out) const;

 private:
  friend HostResult decodeToHost(VulkanDevice&, const uint8_t*, size_t, const Container&, OutputFormat);
  friend HostResult hostResult(Lease&&, uint64_t);
  struct Segment {
    const uint8_t* src;
    uint64_t offset, bytes;
  };
  std::vector<Segment> segments_;
  DeviceJob job_;    // unified memory: the outputs are the segments' memory
  Lease readback_;   // discrete: all outputs copied here by the GPU
};
// A finished staged decode's readback as a HostResult.
HostResult hostResult(Lease&& readback, uint64_t bytes);

// How a discrete GPU's output reaches host memory (vk_staged.cpp).
enum class Route {
  Direct,  // the kernel reads host-visible inputs and writes the host-visible readback memory
  Staged,  // device buffers, with uploads and device-to-host copies by the GPU
};
// Route::Direct unless SGFP4_VULKAN_DIRECT=0 (tests, the benchmark's comparison).
Route defaultRoute();

// What a decode in stages writes to, and what the caller prepared; all optional.
struct StagedIo {
  void* out = nullptr;       // each stage copied here as soon as it is done (decodeInto)
  Lease* readback = nullptr;  // readback memory for the whole output, taken by the caller (it holds the output on return)
  Lease* stream = nullptr;    // the stream already in pooled upload memory, zero-padded to a multiple of 16
  // Called once with the readback memory when every stage is queued, before the waits (the
  // hand-over's array is made then); if it throws, the decode is abandoned once the device is done.
  std::function<void(void*)> whileGpuRuns;
};

// Where the v2 parser may put the leaf table of a decode on `d` (null: not made yet) of this shape
// and format: pooled upload memory that the direct route then binds as is (leavesInPlace), when
// the decode will take the direct route (a discrete GPU, the default route, the output in one
// binding, no host-memory import); else null (the heap, as without an arena).
// With streamLen, the arena also takes upload memory for the stream (padded to 16, the tail
// zeroed) that the parse copies the stream into as it goes (TableArena::streamCopy).
std::shared_ptr<TableArena> leafArena(VulkanDevice* d, double rows, double cols, OutputFormat format, const size_t* streamLen = nullptr);
// The stream's copy in upload memory when the parse made all of it (leafArena's streamLen), else
// an empty Lease (the caller copies the stream).
Lease parsedStream(TableArena* a, const VulkanDevice& d, size_t len);
// The upload buffer of `d` holding c's leaf table (parsed into leafArena's arena), else null.
const Buffer* leavesInPlace(const VulkanDevice& d, const Container& c);

// Discrete GPUs (vk_staged.cpp): decodes `c` in stages (about 16 MiB of output each, one
// submission each) into pooled host-visible readback memory, the host's fill of stage k + 1 and
// its copy of stage k - 1 overlapping the GPU's work on stage k. Returns the readback holding the
// whole output (the caller hands it over or copies it), or an empty Lease with io.out (copied
// there) or io.readback (written there). Route::Direct falls back to Staged when the whole output
// does not fit one storage-buffer binding.
Lease decodeStaged(VulkanDevice& d, const uint8_t* bytes, size_t len, const Container& c, OutputFormat format, Route route, const StagedIo& io = {});
// The whole output of `c` in pooled host-visible readback memory, to hand over (discrete GPUs):
// decodeStaged on the default route.
Lease decodeToReadback(VulkanDevice& d, const uint8_t* bytes, size_t len, const Container& c, OutputFormat format, const StagedIo& io = {});

// Decodes `c` into `out` (rows * cols values of the format). On a discrete GPU: in stages on the
// default route, with the one host copy overlapped (decodeStaged); with SGFP4_VULKAN_HOST_IMPORT=1
// and a device that imports host memory (VK_EXT_external_memory_host), the GPU copies the output straight into
// `out`'s pages and the input from `bytes`' pages instead. Unified memory: one host copy from
// where the device wrote. `out` must stay valid and untouched during the call.
void decodeInto(VulkanDevice& d, const uint8_t* bytes, size_t len, const Container& c, OutputFormat format, void* out);

// Decodes `c` (parsed from bytes) on the device. Safe to call from several threads at once:
// each call records its own commands and waits on its own fence; queue submissions are
// serialized.
HostResult decodeToHost(VulkanDevice& d, const uint8_t* bytes, size_t len, const Container& c, OutputFormat format);

}  // namespace sgfp4
