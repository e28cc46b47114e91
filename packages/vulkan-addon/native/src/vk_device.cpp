#include "vk_device.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "shaders.h"  // generated from native/shaders: kDecodeSpv, kDecodeHalfSpv (SPIR-V words)

namespace sgfp4 {
namespace {

const char* typeName(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}
int typeRank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

// Picks the physical device and queue family: the `selection` (index or name substring), else
// SGFP4_VULKAN_DEVICE, else the first discrete GPU, then integrated, virtual, CPU.
void VulkanDevice::choose(const std::string& requested, const Instance& inst) {
  uint32_t count = 0;
  check(vkEnumeratePhysicalDevices(inst.handle, &count, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> devs(count);
  if (count) check(vkEnumeratePhysicalDevices(inst.handle, &count, devs.data()), "vkEnumeratePhysicalDevices");
  devs.resize(count);
  std::vector<VkPhysicalDeviceProperties> props(count);
  std::vector<int> computeFamily(count, -1);
  for (uint32_t i = 0; i < count; i++) {
    vkGetPhysicalDeviceProperties(devs[i], &props[i]);
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(devs[i], &nq, nullptr);
    std::vector<VkQueueFamilyProperties> q(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(devs[i], &nq, q.data());
    // Prefer a family with compute and timestamps.
    for (uint32_t f = 0; f < nq; f++)
      if ((q[f].queueFlags & VK_QUEUE_COMPUTE_BIT) && (computeFamily[i] < 0 || q[f].timestampValidBits > 0)) {
        computeFamily[i] = int(f);
        if (q[f].timestampValidBits > 0) break;
      }
    info.allDevices.push_back(std::to_string(i) + ": " + props[i].deviceName + " (" + typeName(props[i].deviceType) + ")");
  }
  std::string list;
  for (auto& d : info.allDevices) list += (list.empty() ? "" : "; ") + d;
  if (count == 0) throw BackendFailure("no-device", "the Vulkan loader found no device. " + std::string(kInstallHint) + "; check with vulkaninfo --summary.");

  std::string selection = requested;
  info.selectedBy = "option";
  if (selection.empty()) {
    const char* env = std::getenv("SGFP4_VULKAN_DEVICE");
    selection = env ? env : "";
    info.selectedBy = selection.empty() ? "default (discrete, integrated, then CPU)" : "SGFP4_VULKAN_DEVICE";
  }
  int chosen = -1;
  if (!selection.empty()) {
    const bool numeric = std::all_of(selection.begin(), selection.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (numeric) {
      const unsigned long idx = std::strtoul(selection.c_str(), nullptr, 10);
      if (idx < count) chosen = int(idx);
    } else {
      for (uint32_t i = 0; i < count && chosen < 0; i++)
        if (lower(props[i].deviceName).find(lower(selection)) != std::string::npos) chosen = int(i);
    }
    if (chosen < 0) throw BackendFailure("no-device", "no Vulkan device matches \"" + selection + "\" (" + info.selectedBy + "); devices: " + list);
    if (computeFamily[chosen] < 0) throw BackendFailure("no-device", "Vulkan device \"" + std::string(props[chosen].deviceName) + "\" has no compute queue");
  } else {
    for (uint32_t i = 0; i < count; i++) {
      if (computeFamily[i] < 0) continue;
      if (chosen < 0 || typeRank(props[i].deviceType) < typeRank(props[chosen].deviceType)) chosen = int(i);
    }
    if (chosen < 0) throw BackendFailure("no-device", "no Vulkan device has a compute queue; devices: " + list);
  }
  phys = devs[chosen];
  queueFamily = uint32_t(computeFamily[chosen]);
  const VkPhysicalDeviceProperties& p = props[chosen];
  const VkPhysicalDeviceLimits& lim = p.limits;
  info.index = uint32_t(chosen);
  info.name = p.deviceName;
  info.type = typeName(p.deviceType);
  info.vendorId = p.vendorID;
  info.deviceId = p.deviceID;
  info.apiVersion = versionString(p.apiVersion);
  info.driverVersion = std::to_string(p.driverVersion);
  info.maxStorageBufferRange = lim.maxStorageBufferRange;
  info.minStorageBufferOffsetAlignment = lim.minStorageBufferOffsetAlignment;
  for (int k = 0; k < 3; k++) info.maxComputeWorkGroupCount[k] = lim.maxComputeWorkGroupCount[k];
  info.maxComputeWorkGroupInvocations = lim.maxComputeWorkGroupInvocations;
  info.maxComputeSharedMemorySize = lim.maxComputeSharedMemorySize;
  info.timestampPeriodNs = lim.timestampPeriod;
  info.maxMemoryAllocationSize = uint64_t(1) << 30;  // the Vulkan 1.1 guaranteed minimum, raised below when known
  const bool v12 = vkGetPhysicalDeviceProperties2 && inst.apiVersion >= VK_API_VERSION_1_2 && p.apiVersion >= VK_API_VERSION_1_2;
  if (v12) {
    VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    m3.pNext = &drv;
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &m3;
    vkGetPhysicalDeviceProperties2(phys, &p2);
    info.driverName = drv.driverName;
    info.driverInfo = drv.driverInfo;
    info.maxMemoryAllocationSize = m3.maxMemoryAllocationSize;
  }
  if (v12 && vkGetPhysicalDeviceFeatures2) {
    VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &s16;
    vkGetPhysicalDeviceFeatures2(phys, &f2);
    supports16BitStorage = s16.storageBuffer16BitAccess == VK_TRUE;
  }
  if (v12) {
    if (hasDeviceExtension(phys, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME)) {
      VkPhysicalDeviceExternalMemoryHostPropertiesEXT hp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
      VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
      p2.pNext = &hp;
      vkGetPhysicalDeviceProperties2(phys, &p2);
      info.hostImportAlignment = hp.minImportedHostPointerAlignment;
    }
  }
  vkGetPhysicalDeviceMemoryProperties(phys, &memProps);
  for (uint32_t h = 0; h < memProps.memoryHeapCount; h++)
    if (memProps.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      info.deviceLocalHeapBytes = std::max<uint64_t>(info.deviceLocalHeapBytes, memProps.memoryHeaps[h].size);
  unifiedMemory = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU || p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
  if (unifiedMemory) {
    bool found = false;
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t i = 0; i < memProps.memoryTypeCount; i++) found |= (memProps.memoryTypes[i].propertyFlags & want) == want;
    unifiedMemory = found;
  }
  // Test knob: the discrete-GPU path (staging upload, GPU copy into readback memory) on a
  // unified-memory device, so CI on lavapipe runs it too.
  const char* forceStaging = std::getenv("SGFP4_VULKAN_FORCE_STAGING");
  if (forceStaging && *forceStaging && std::string(forceStaging) != "0") unifiedMemory = false;
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qf(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, qf.data());
  info.timestampValidBits = qf[queueFamily].timestampValidBits;
}

bool hasDeviceExtension(VkPhysicalDevice phys, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(phys, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> ext(n);
  vkEnumerateDeviceExtensionProperties(phys, nullptr, &n, ext.data());
  for (const auto& e : ext)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

VkDevice makeDevice(VkPhysicalDevice phys, uint32_t queueFamily, void* features, const std::vector<const char*>& extensions, const char* what) {
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = queueFamily;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  di.pNext = features;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  di.enabledExtensionCount = uint32_t(extensions.size());
  di.ppEnabledExtensionNames = extensions.data();
  VkDevice device;
  check(vkCreateDevice(phys, &di, nullptr, &device), what);
  return device;
}

void VulkanDevice::createDevice() {
  VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  s16.storageBuffer16BitAccess = VK_TRUE;
  std::vector<const char*> extensions;
  if (info.hostImportAlignment) extensions.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
  device = makeDevice(phys, queueFamily, supports16BitStorage ? &s16 : nullptr, extensions, "vkCreateDevice");
  vkGetDeviceQueue(device, queueFamily, 0, &queue);
  if (info.hostImportAlignment)
    getHostPointerProperties = reinterpret_cast<PFN_vkGetMemoryHostPointerPropertiesEXT>(vkGetDeviceProcAddr(device, "vkGetMemoryHostPointerPropertiesEXT"));
  // Host-memory import is opt-in (SGFP4_VULKAN_HOST_IMPORT=1): pinning the caller's pages on
  // every call cost more on the H200 than the pooled readback with the staged, overlapped host
  // copy (BENCHMARKS.md), and it is only used on discrete GPUs anyway.
  const char* hostImport = std::getenv("SGFP4_VULKAN_HOST_IMPORT");
  if (!getHostPointerProperties || !(hostImport && std::string(hostImport) == "1")) info.hostImportAlignment = 0;
}

VulkanDevice::VulkanDevice(const std::string& requested) {
  Instance& inst = loadInstance();
  info.loaderPath = inst.loaderPath;
  choose(requested, inst);
  createDevice();
  decodeSetLayout = makeSetLayout(device, 5);
  decodeLayout = makePipelineLayout(device, decodeSetLayout, sizeof(PushDecode));
  pipelines[0] = makePipeline(device, kDecodeSpv, sizeof kDecodeSpv, decodeLayout);
  if (supports16BitStorage) {
    // The half-output shader's specialization constant 0 picks bf16 (1) or f16 (0).
    for (uint32_t bf16 = 0; bf16 < 2; bf16++) {
      VkSpecializationMapEntry entry{0, 0, sizeof(uint32_t)};
      VkSpecializationInfo spec{1, &entry, sizeof bf16, &bf16};
      pipelines[1 + bf16] = makePipeline(device, kDecodeHalfSpv, sizeof kDecodeHalfSpv, decodeLayout, &spec);
    }
    info.halfOutputs = true;
  }
}

VulkanDevice::~VulkanDevice() {
  if (!device) return;
  vkDeviceWaitIdle(device);
  pool.trim();
  for (const IdleSubmission& s : idleSubmissions) {
    vkDestroyFence(device, s.fence, nullptr);
    vkDestroyCommandPool(device, s.pool, nullptr);
  }
  for (VkPipeline p : pipelines)
    if (p) vkDestroyPipeline(device, p, nullptr);
  vkDestroyPipelineLayout(device, decodeLayout, nullptr);
  vkDestroyDescriptorSetLayout(device, decodeSetLayout, nullptr);
  vkDestroyDevice(device, nullptr);
}

VkPipeline VulkanDevice::decodePipeline(OutputFormat f) const {
  VkPipeline p = pipelines[uint32_t(f)];
  if (!p) throw Failure("INVALID_ARGUMENT", "this Vulkan device (" + info.name + ") cannot write 16-bit outputs (no storageBuffer16BitAccess); use format \"f32\"");
  return p;
}

uint32_t VulkanDevice::memoryType(uint32_t typeBits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const {
  int fallback = -1;
  for (uint32_t i = 0; i < memProps.memoryTypeCount; i++) {
    if (!(typeBits & (1u << i))) continue;
    const VkMemoryPropertyFlags f = memProps.memoryTypes[i].propertyFlags;
    if ((f & required) != required) continue;
    if ((f & preferred) == preferred) return i;
    if (fallback < 0) fallback = int(i);
  }
  if (fallback < 0) throw BackendFailure("vulkan-error", "no suitable Vulkan memory type");
  return uint32_t(fallback);
}

namespace {
VkMemoryPropertyFlags uploadPreference() {
  const char* v = std::getenv("SGFP4_VULKAN_UPLOAD_MEMORY");
  const std::string want = v ? v : "";
  if (want == "cached") return VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  if (want == "device") return VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  return 0;
}
}  // namespace

Buffer VulkanDevice::makeBuffer(VkDeviceSize size, Memory kind) {
  Buffer b;
  b.device = device;
  b.size = std::max<VkDeviceSize>(16, (size + 15) & ~VkDeviceSize(15));
  if (b.size > info.maxMemoryAllocationSize)
    throw Failure("LIMIT_EXCEEDED", "a buffer of " + std::to_string(b.size) + " bytes is over the device's maxMemoryAllocationSize " + std::to_string(info.maxMemoryAllocationSize));
  VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  ci.size = b.size;
  ci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(device, &ci, nullptr, &b.buf), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, b.buf, &req);
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  const bool mapped = kind != Memory::Device || unifiedMemory;
  uint32_t type;
  if (unifiedMemory) type = memoryType(req.memoryTypeBits, host, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  else if (kind == Memory::Device) type = memoryType(req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  // Readback is read by the CPU: cached memory. Upload is written by the CPU and read by the GPU
  // (over the bus on the direct route): SGFP4_VULKAN_UPLOAD_MEMORY picks cached system memory
  // ("cached"), the device's host-visible memory ("device"), else the first host-visible type.
  else type = memoryType(req.memoryTypeBits, host, kind == Memory::HostReadback ? VkMemoryPropertyFlags(VK_MEMORY_PROPERTY_HOST_CACHED_BIT) : uploadPreference());
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  check(vkAllocateMemory(device, &ai, nullptr, &b.mem), "vkAllocateMemory");
  check(vkBindBufferMemory(device, b.buf, b.mem, 0), "vkBindBufferMemory");
  if (mapped) check(vkMapMemory(device, b.mem, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
  buffersMade++;
  memoryFlags[size_t(kind)] = memProps.memoryTypes[type].propertyFlags;
  return b;
}

Buffer VulkanDevice::importHostMemory(const void* ptr, uint64_t bytes, VkDeviceSize& offset) {
  Buffer b;
  if (!info.hostImportAlignment || bytes == 0) return b;
  // Whole pages around the range: every one of them holds bytes of the range, so all are mapped;
  // the GPU touches only the range itself.
  const uint64_t align = info.hostImportAlignment;
  const uintptr_t start = reinterpret_cast<uintptr_t>(ptr), base = start / align * align;
  const uint64_t size = (start + bytes - base + align - 1) / align * align;
  offset = start - base;
  if (size > info.maxMemoryAllocationSize) return b;
  VkMemoryHostPointerPropertiesEXT hp{VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
  if (getHostPointerProperties(device, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, reinterpret_cast<void*>(base), &hp) != VK_SUCCESS) return b;
  VkExternalMemoryBufferCreateInfo ebi{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
  ebi.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  ci.pNext = &ebi;
  ci.size = size;
  ci.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  b.device = device;
  if (vkCreateBuffer(device, &ci, nullptr, &b.buf) != VK_SUCCESS) return Buffer();
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, b.buf, &req);
  const uint32_t types = req.memoryTypeBits & hp.memoryTypeBits;
  uint32_t type = UINT32_MAX;
  for (uint32_t i = 0; i < memProps.memoryTypeCount && type == UINT32_MAX; i++)
    if ((types & (1u << i)) && (memProps.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) type = i;
  if (type == UINT32_MAX || req.size > size) return Buffer();
  VkImportMemoryHostPointerInfoEXT imp{VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT};
  imp.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  imp.pHostPointer = reinterpret_cast<void*>(base);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.pNext = &imp;
  ai.allocationSize = size;
  ai.memoryTypeIndex = type;
  if (vkAllocateMemory(device, &ai, nullptr, &b.mem) != VK_SUCCESS) return Buffer();
  if (vkBindBufferMemory(device, b.buf, b.mem, 0) != VK_SUCCESS) return Buffer();
  b.size = size;
  hostImports++;
  return b;
}

VkPipeline makePipeline(VkDevice device, const uint32_t* code, size_t bytes, VkPipelineLayout layout, const VkSpecializationInfo* spec,
                        VkPipelineCreateFlags flags) {
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = bytes;
  mi.pCode = code;
  VkShaderModule module;
  check(vkCreateShaderModule(device, &mi, nullptr, &module), "vkCreateShaderModule");
  VkComputePipelineCreateInfo pi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  pi.flags = flags;
  pi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pi.stage.module = module;
  pi.stage.pName = "main";
  pi.stage.pSpecializationInfo = spec;
  pi.layout = layout;
  VkPipeline p;
  VkResult r = vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pi, nullptr, &p);
  vkDestroyShaderModule(device, module, nullptr);
  check(r, "vkCreateComputePipelines");
  return p;
}

VkDescriptorSetLayout makeSetLayout(VkDevice device, uint32_t storageBuffers) {
  std::vector<VkDescriptorSetLayoutBinding> b(storageBuffers);
  for (uint32_t i = 0; i < storageBuffers; i++) b[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  ci.bindingCount = storageBuffers;
  ci.pBindings = b.data();
  VkDescriptorSetLayout l;
  check(vkCreateDescriptorSetLayout(device, &ci, nullptr, &l), "vkCreateDescriptorSetLayout");
  return l;
}

VkPipelineLayout makePipelineLayout(VkDevice device, VkDescriptorSetLayout set, uint32_t pushBytes) {
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, pushBytes};
  VkPipelineLayoutCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  ci.setLayoutCount = 1;
  ci.pSetLayouts = &set;
  ci.pushConstantRangeCount = 1;
  ci.pPushConstantRanges = &range;
  VkPipelineLayout l;
  check(vkCreatePipelineLayout(device, &ci, nullptr, &l), "vkCreatePipelineLayout");
  return l;
}

namespace {
// Never destroyed: tearing Vulkan down from static destructors at process exit crashed the
// NVIDIA driver (its own exit handlers run first); the process exit releases everything.
std::map<std::string, VulkanDevice*>& devices() {
  static auto* d = new std::map<std::string, VulkanDevice*>();
  return *d;
}
std::mutex& devicesMutex() {
  static auto* m = new std::mutex();
  return *m;
}
}  // namespace

VulkanDevice& deviceFor(const std::string& selection) {
  std::lock_guard<std::mutex> lock(devicesMutex());
  auto it = devices().find(selection);
  if (it != devices().end()) return *it->second;
  auto d = std::make_unique<VulkanDevice>(selection);
  return *(devices()[selection] = d.release());
}

VulkanDevice* existingDevice(const std::string& selection) {
  std::lock_guard<std::mutex> lock(devicesMutex());
  auto it = devices().find(selection);
  return it == devices().end() ? nullptr : it->second;
}

void barrier(VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags srcAccess, VkPipelineStageFlags dst, VkAccessFlags dstAccess) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = srcAccess;
  mb.dstAccessMask = dstAccess;
  vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

void grid(const DeviceInfo& info, uint64_t groups, uint32_t& gx, uint32_t& gy) {
  const uint64_t maxX = std::max<uint32_t>(1, info.maxComputeWorkGroupCount[0]);
  gx = uint32_t(std::min<uint64_t>(groups, maxX));
  gy = uint32_t((groups + gx - 1) / gx);
}

Submission::Submission(VulkanDevice& d) : d_(d) {
  {
    // A command pool, buffer and fence a finished call gave back: creating them cost about
    // 0.6 ms per submission on the H200 (run s7 trace), more than a 16 MiB stage's GPU work.
    std::lock_guard<std::mutex> lock(d.submissionsMutex);
    if (!d.idleSubmissions.empty()) {
      const VulkanDevice::IdleSubmission s = d.idleSubmissions.back();
      d.idleSubmissions.pop_back();
      pool_ = s.pool;
      cmd = s.cmd;
      fence_ = s.fence;
    }
  }
  if (!pool_) {
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT | VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = d.queueFamily;
    check(vkCreateCommandPool(d.device, &pci, nullptr, &pool_), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = pool_;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    check(vkAllocateCommandBuffers(d.device, &cai, &cmd), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(d.device, &fci, nullptr, &fence_), "vkCreateFence");
  }
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
}

void Submission::submit() {
  check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  {
    std::lock_guard<std::mutex> lock(d_.queueMutex);
    check(vkQueueSubmit(d_.queue, 1, &si, fence_), "vkQueueSubmit");
  }
  submitted_ = true;
}

void Submission::wait() {
  check(vkWaitForFences(d_.device, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  submitted_ = false;
}

void Submission::submitAndWait() {
  submit();
  wait();
}

void Submission::restart() {
  check(vkResetFences(d_.device, 1, &fence_), "vkResetFences");
  check(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
}

Submission::~Submission() {
  // After a failed wait (device lost) the work may still reference the caller's buffers: wait
  // for the device before they and this pool go away.
  if (submitted_) vkDeviceWaitIdle(d_.device);
  // Not in flight: reset, and kept for the next call (at most kMaxIdleSubmissions).
  if (!submitted_ && vkResetFences(d_.device, 1, &fence_) == VK_SUCCESS && vkResetCommandPool(d_.device, pool_, 0) == VK_SUCCESS) {
    std::lock_guard<std::mutex> lock(d_.submissionsMutex);
    if (d_.idleSubmissions.size() < VulkanDevice::kMaxIdleSubmissions) {
      d_.idleSubmissions.push_back({pool_, cmd, fence_});
      return;
    }
  }
  if (fence_) vkDestroyFence(d_.device, fence_, nullptr);
  if (pool_) vkDestroyCommandPool(d_.device, pool_, nullptr);
}

DescriptorSets::DescriptorSets(VkDevice device, VkDescriptorSetLayout layout, uint32_t n, uint32_t buffersPerSet) : device_(device) {
  VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, buffersPerSet * n};
  VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pci.maxSets = n;
  pci.poolSizeCount = 1;
  pci.pPoolSizes = &ps;
  check(vkCreateDescriptorPool(device, &pci, nullptr, &pool_), "vkCreateDescriptorPool");
  std::vector<VkDescriptorSetLayout> layouts(n, layout);
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pool_;
  ai.descriptorSetCount = n;
  ai.pSetLayouts = layouts.data();
  sets.resize(n);
  check(vkAllocateDescriptorSets(device, &ai, sets.data()), "vkAllocateDescriptorSets");
}

DescriptorSets::~DescriptorSets() {
  if (pool_) vkDestroyDescriptorPool(device_, pool_, nullptr);
}

void DescriptorSets::write(uint32_t k, const VkDescriptorBufferInfo* buffers, uint32_t n) {
  std::vector<VkWriteDescriptorSet> w(n);
  for (uint32_t i = 0; i < n; i++) {
    w[i] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w[i].dstSet = sets[k];
    w[i].dstBinding = i;
    w[i].descriptorCount = 1;
    w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w[i].pBufferInfo = &buffers[i];
  }
  vkUpdateDescriptorSets(device_, n, w.data(), 0, nullptr);
}

}  // namespace sgfp4
