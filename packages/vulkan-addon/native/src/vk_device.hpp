// One Vulkan device: its choice among those the loader lists, its limits, memory types, the
// decode pipelines (one per output format), buffers, and one-shot command submissions.
#pragma once
#include <cstdint>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "buffer_pool.hpp"
#include "decode_plan.hpp"
#include "vk_loader.hpp"

namespace sgfp4 {

struct DeviceInfo {
  uint32_t index = 0;
  std::string name, type, driverName, driverInfo, apiVersion, driverVersion;
  uint32_t vendorId = 0, deviceId = 0;
  uint64_t maxStorageBufferRange = 0, maxMemoryAllocationSize = 0, minStorageBufferOffsetAlignment = 0;
  uint32_t maxComputeWorkGroupCount[3] = {0, 0, 0};
  uint32_t maxComputeWorkGroupInvocations = 0, maxComputeSharedMemorySize = 0;
  double timestampPeriodNs = 0;
  uint32_t timestampValidBits = 0;
  uint64_t deviceLocalHeapBytes = 0;
  bool halfOutputs = false;  // storageBuffer16BitAccess: f16 / bf16 outputs available
  uint64_t hostImportAlignment = 0;  // VK_EXT_external_memory_host enabled: minImportedHostPointerAlignment, else 0
  std::vector<std::string> allDevices;  // "index: name (type)"
  std::string loaderPath, selectedBy;
};

// Push constants of native/shaders/decode.comp (same order and types).
struct PushDecode {
  uint32_t blockBase, blockCount, tilesX, rows, cols, rowBase, streamWordBase, streamWords, leafBase, leafCount, groupsX;
};

class VulkanDevice {
 public:
  explicit VulkanDevice(const std::string& selection);
  ~VulkanDevice();
  VulkanDevice(const VulkanDevice&) = delete;
  VulkanDevice& operator=(const VulkanDevice&) = delete;

  DeviceInfo info;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queueFamily = 0;
  bool unifiedMemory = false;  // device-local memory is host-visible (CPU / integrated devices)
  VkDescriptorSetLayout decodeSetLayout = VK_NULL_HANDLE;
  VkPipelineLayout decodeLayout = VK_NULL_HANDLE;
  // Buffers kept between decodes (staging, readback, device inputs and outputs).
  BufferPool pool{*this};
  // vkQueueSubmit needs the queue externally synchronized: decodes on worker threads and the
  // main thread share this device, so every submission takes this lock.
  std::mutex queueMutex;
  // Command pools, buffers and fences of finished submissions, reset, for the next ones.
  struct IdleSubmission {
    VkCommandPool pool;
    VkCommandBuffer cmd;
    VkFence fence;
  };
  static constexpr size_t kMaxIdleSubmissions = 32;
  std::mutex submissionsMutex;
  std::vector<IdleSubmission> idleSubmissions;

  VkPipeline decodePipeline(OutputFormat f) const;
  // A new buffer (usable as storage buffer and copy source and target), mapped unless Device
  // memory on a discrete GPU. Prefer pool.take(), which reuses idle ones.
  Buffer makeBuffer(VkDeviceSize size, Memory kind);
  // The pages holding [ptr, ptr + bytes) as a buffer the GPU copies to or from (no host copy),
  // through VK_EXT_external_memory_host; `offset` is where ptr lies in it. An empty Buffer when
  // the device cannot import (no extension, or the driver refuses this memory).
  Buffer importHostMemory(const void* ptr, uint64_t bytes, VkDeviceSize& offset);
  std::atomic<uint64_t> hostImports{0};  // successful imports (tests check the path ran)
  std::atomic<uint64_t> buffersMade{0};  // makeBuffer calls (tests check the pool served a call)
  // VkMemoryPropertyFlags of the last buffer made of each Memory kind (stats: which heap a path uses).
  std::atomic<uint32_t> memoryFlags[3] = {0, 0, 0};

 private:
  uint32_t memoryType(uint32_t typeBits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const;
  void choose(const std::string& selection, const Instance& inst);
  void createDevice();
  VkPhysicalDeviceMemoryProperties memProps{};
  bool supports16BitStorage = false;
  PFN_vkGetMemoryHostPointerPropertiesEXT getHostPointerProperties = nullptr;
  VkPipeline pipelines[3] = {VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE};  // by OutputFormat
};

// One device per selection string ("" = default order or SGFP4_VULKAN_DEVICE), never destroyed.
VulkanDevice& deviceFor(const std::string& selection);
// The device deviceFor made for this selection, or null (none made yet: nothing is created).
VulkanDevice* existingDevice(const std::string& selection);

// Whether the physical device offers the named device extension.
bool hasDeviceExtension(VkPhysicalDevice phys, const char* name);
// A device with one queue of `queueFamily`, the feature structs chained at `features` (or null) and
// `extensions` enabled; `what` names the call in the error.
VkDevice makeDevice(VkPhysicalDevice phys, uint32_t queueFamily, void* features, const std::vector<const char*>& extensions, const char* what);
// Compute pipeline objects on any VkDevice (the shipped one, or the bench's statistics device).
VkDescriptorSetLayout makeSetLayout(VkDevice device, uint32_t storageBuffers);
VkPipelineLayout makePipelineLayout(VkDevice device, VkDescriptorSetLayout set, uint32_t pushBytes);
VkPipeline makePipeline(VkDevice device, const uint32_t* code, size_t bytes, VkPipelineLayout layout,
                        const VkSpecializationInfo* spec = nullptr, VkPipelineCreateFlags flags = 0);

void barrier(VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags srcAccess, VkPipelineStageFlags dst, VkAccessFlags dstAccess);

// Command pool, command buffer and fence owned by one call, so calls on several threads never
// share recording state (command pools are externally synchronized in Vulkan). Recording starts
// in the constructor.
class Submission {
 public:
  explicit Submission(VulkanDevice& d);
  ~Submission();
  Submission(const Submission&) = delete;
  Submission& operator=(const Submission&) = delete;
  void submitAndWait();
  // The two halves of submitAndWait: several submissions of one call in flight at once.
  void submit();
  void wait();
  // Starts recording again after submitAndWait (the bench reuses one submission).
  void restart();
  VkCommandBuffer cmd = VK_NULL_HANDLE;

 private:
  VulkanDevice& d_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  bool submitted_ = false;
};

// Descriptor sets of storage buffers, all freed with the pool (one per call).
class DescriptorSets {
 public:
  DescriptorSets(VkDevice device, VkDescriptorSetLayout layout, uint32_t sets, uint32_t buffersPerSet);
  ~DescriptorSets();
  DescriptorSets(const DescriptorSets&) = delete;
  DescriptorSets& operator=(const DescriptorSets&) = delete;
  // Binds bindings 0..n-1 of set k to the given ranges.
  void write(uint32_t k, const VkDescriptorBufferInfo* buffers, uint32_t n);
  std::vector<VkDescriptorSet> sets;

 private:
  VkDevice device_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
};

// Workgroup grid for `groups` workgroups within maxComputeWorkGroupCount[0] per row.
void grid(const DeviceInfo& info, uint64_t groups, uint32_t& gx, uint32_t& gy);

}  // namespace sgfp4
