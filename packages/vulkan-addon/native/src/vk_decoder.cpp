#define VK_NO_PROTOTYPES
#include "vk_decoder.hpp"

#include <dlfcn.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "shaders.h"  // generated at build time: kDecodeSpv, kCopySpv (SPIR-V words)

namespace sgfp4 {
namespace {

const char* kInstallHint =
    "Install it with: apt-get install libvulkan1 mesa-vulkan-drivers (Debian/Ubuntu; mesa-vulkan-drivers "
    "gives the CPU device lavapipe), or install your GPU vendor's Vulkan driver";

// ---- the loader, opened on first use ------------------------------------------------------

#define SGFP4_VK_GLOBAL(X) X(vkCreateInstance) X(vkEnumerateInstanceVersion)
#define SGFP4_VK_INSTANCE(X)                                                                              \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)                     \
  X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceQueueFamilyProperties)                          \
  X(vkGetPhysicalDeviceMemoryProperties) X(vkCreateDevice) X(vkDestroyDevice) X(vkGetDeviceQueue)          \
  X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements) X(vkAllocateMemory)               \
  X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory) X(vkUnmapMemory) X(vkCreateShaderModule)           \
  X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout) X(vkDestroyDescriptorSetLayout)                 \
  X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) X(vkCreateComputePipelines) X(vkDestroyPipeline)   \
  X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool) X(vkAllocateDescriptorSets)                        \
  X(vkUpdateDescriptorSets) X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers)    \
  X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkResetCommandBuffer) X(vkCmdBindPipeline)              \
  X(vkCmdBindDescriptorSets) X(vkCmdPushConstants) X(vkCmdDispatch) X(vkCmdPipelineBarrier)               \
  X(vkCmdCopyBuffer) X(vkCmdWriteTimestamp) X(vkCmdResetQueryPool) X(vkCreateQueryPool)                   \
  X(vkDestroyQueryPool) X(vkGetQueryPoolResults) X(vkQueueSubmit) X(vkCreateFence) X(vkDestroyFence)      \
  X(vkWaitForFences) X(vkResetFences) X(vkDeviceWaitIdle)

#define SGFP4_DECLARE(name) PFN_##name name = nullptr;
SGFP4_VK_GLOBAL(SGFP4_DECLARE)
SGFP4_VK_INSTANCE(SGFP4_DECLARE)
PFN_vkGetInstanceProcAddr getInstanceProcAddr = nullptr;

struct Instance {
  VkInstance handle = VK_NULL_HANDLE;
  uint32_t apiVersion = VK_API_VERSION_1_0;
  std::string loaderPath;
};

std::string versionString(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." + std::to_string(VK_API_VERSION_PATCH(v));
}

void check(VkResult r, const char* what) {
  if (r == VK_SUCCESS) return;
  std::string detail = std::string(what) + " failed with VkResult " + std::to_string(int(r));
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) detail += " (out of memory)";
  if (r == VK_ERROR_DEVICE_LOST) detail += " (device lost)";
  throw BackendFailure("vulkan-error", detail);
}

Instance& instance() {
  static Instance* inst = nullptr;  // never destroyed, see decoderFor
  if (inst) return *inst;
  const char* override = std::getenv("SGFP4_VULKAN_LOADER");
  const char* path = override && *override ? override : "libvulkan.so.1";
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = dlerror();
    throw BackendFailure("no-loader", std::string("the Vulkan loader ") + path + " could not be loaded (" + (err ? err : "dlopen failed") +
                                          "). " + kInstallHint + ". SGFP4_VULKAN_LOADER may name the loader's path.");
  }
  getInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
  if (!getInstanceProcAddr) throw BackendFailure("no-loader", std::string(path) + " has no vkGetInstanceProcAddr: not a Vulkan loader. " + kInstallHint);
#define SGFP4_LOAD_GLOBAL(name) name = reinterpret_cast<PFN_##name>(getInstanceProcAddr(VK_NULL_HANDLE, #name));
  SGFP4_VK_GLOBAL(SGFP4_LOAD_GLOBAL)
  if (!vkCreateInstance) throw BackendFailure("no-loader", std::string(path) + " does not provide vkCreateInstance. " + kInstallHint);
  auto out = std::make_unique<Instance>();
  out->loaderPath = path;
  uint32_t loaderVersion = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&loaderVersion);
  out->apiVersion = loaderVersion >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_0;
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "sgfp4-vulkan-addon";
  app.apiVersion = out->apiVersion;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  VkResult r = vkCreateInstance(&ci, nullptr, &out->handle);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw BackendFailure("no-device", std::string("the Vulkan loader (") + path + ") found no driver (VK_ERROR_INCOMPATIBLE_DRIVER). " + kInstallHint + "; check with vulkaninfo --summary.");
  check(r, "vkCreateInstance");
#define SGFP4_LOAD_INSTANCE(name)                                                               \
  name = reinterpret_cast<PFN_##name>(getInstanceProcAddr(out->handle, #name));                 \
  if (!name && std::strcmp(#name, "vkGetPhysicalDeviceProperties2") != 0)                        \
    throw BackendFailure("no-loader", std::string("the Vulkan loader does not provide ") + #name);
  SGFP4_VK_INSTANCE(SGFP4_LOAD_INSTANCE)
  inst = out.release();
  return *inst;
}

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

struct PushDecode {
  uint32_t blockBase, blockCount, tilesX, rows, cols, rowBase, streamWordBase, streamWords, leafBase, leafCount, groupsX;
};
struct PushCopy {
  uint32_t count, groupsX;
};

}  // namespace

// ---- one device with its pipelines --------------------------------------------------------

struct Buffer {
  VkDevice device = VK_NULL_HANDLE;
  VkBuffer buf = VK_NULL_HANDLE;
  VkDeviceMemory mem = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(device, o.device);
    std::swap(buf, o.buf);
    std::swap(mem, o.mem);
    std::swap(size, o.size);
    std::swap(mapped, o.mapped);
    return *this;
  }
  ~Buffer() {
    if (buf) vkDestroyBuffer(device, buf, nullptr);
    if (mem) vkFreeMemory(device, mem, nullptr);
  }
};

class VulkanDecoder {
 public:
  explicit VulkanDecoder(const std::string& selection);
  ~VulkanDecoder();
  DeviceInfo info;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queueFamily = 0;
  bool unifiedMemory = false;  // device-local memory is host-visible (CPU / integrated devices)
  VkPhysicalDeviceMemoryProperties memProps{};
  VkDescriptorSetLayout decodeSetLayout = VK_NULL_HANDLE, copySetLayout = VK_NULL_HANDLE;
  VkPipelineLayout decodeLayout = VK_NULL_HANDLE, copyLayout = VK_NULL_HANDLE;
  VkPipeline decodePipeline = VK_NULL_HANDLE, decodeBaselinePipeline = VK_NULL_HANDLE, copyPipeline = VK_NULL_HANDLE;
  VkCommandPool cmdPool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  // vkQueueSubmit needs the queue externally synchronized: decodes on worker threads and the
  // main thread share this device, so every submission takes this lock. Each decode records
  // into its own command pool and waits on its own fence, so only the submit is serialized.
  std::mutex queueMutex;

  Buffer makeBuffer(VkDeviceSize size, VkBufferUsageFlags usage, bool hostVisible);
  Buffer makeDeviceBuffer(VkDeviceSize size, VkBufferUsageFlags usage) { return makeBuffer(size, usage, unifiedMemory); }
  void begin();
  void submitAndWait();

 private:
  uint32_t memoryType(uint32_t typeBits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred);
  VkPipeline makePipeline(const uint32_t* code, size_t bytes, VkPipelineLayout layout);
};

uint32_t VulkanDecoder::memoryType(uint32_t typeBits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
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

Buffer VulkanDecoder::makeBuffer(VkDeviceSize size, VkBufferUsageFlags usage, bool hostVisible) {
  Buffer b;
  b.device = device;
  b.size = std::max<VkDeviceSize>(16, (size + 15) & ~VkDeviceSize(15));
  if (b.size > info.maxMemoryAllocationSize)
    throw Failure("LIMIT_EXCEEDED", "a buffer of " + std::to_string(b.size) + " bytes is over the device's maxMemoryAllocationSize " + std::to_string(info.maxMemoryAllocationSize));
  VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  ci.size = b.size;
  ci.usage = usage;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(device, &ci, nullptr, &b.buf), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, b.buf, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = hostVisible ? memoryType(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                                unifiedMemory ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT : VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
                                   : memoryType(req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  check(vkAllocateMemory(device, &ai, nullptr, &b.mem), "vkAllocateMemory");
  check(vkBindBufferMemory(device, b.buf, b.mem, 0), "vkBindBufferMemory");
  if (hostVisible) check(vkMapMemory(device, b.mem, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
  return b;
}

VkPipeline VulkanDecoder::makePipeline(const uint32_t* code, size_t bytes, VkPipelineLayout layout) {
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = bytes;
  mi.pCode = code;
  VkShaderModule module;
  check(vkCreateShaderModule(device, &mi, nullptr, &module), "vkCreateShaderModule");
  VkComputePipelineCreateInfo pi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  pi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pi.stage.module = module;
  pi.stage.pName = "main";
  pi.layout = layout;
  VkPipeline p;
  VkResult r = vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pi, nullptr, &p);
  vkDestroyShaderModule(device, module, nullptr);
  check(r, "vkCreateComputePipelines");
  return p;
}

VulkanDecoder::VulkanDecoder(const std::string& requested) {
  Instance& inst = instance();
  info.loaderPath = inst.loaderPath;
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
  if (count == 0)
    throw BackendFailure("no-device", "the Vulkan loader found no device. " + std::string(kInstallHint) + "; check with vulkaninfo --summary.");

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
  if (vkGetPhysicalDeviceProperties2 && inst.apiVersion >= VK_API_VERSION_1_2 && p.apiVersion >= VK_API_VERSION_1_2) {
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

  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qf(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, qf.data());
  info.timestampValidBits = qf[queueFamily].timestampValidBits;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = queueFamily;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  check(vkCreateDevice(phys, &di, nullptr, &device), "vkCreateDevice");
  vkGetDeviceQueue(device, queueFamily, 0, &queue);

  auto makeSetLayout = [&](uint32_t bindings) {
    std::vector<VkDescriptorSetLayoutBinding> b(bindings);
    for (uint32_t i = 0; i < bindings; i++) b[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    ci.bindingCount = bindings;
    ci.pBindings = b.data();
    VkDescriptorSetLayout l;
    check(vkCreateDescriptorSetLayout(device, &ci, nullptr, &l), "vkCreateDescriptorSetLayout");
    return l;
  };
  auto makeLayout = [&](VkDescriptorSetLayout set, uint32_t pushBytes) {
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, pushBytes};
    VkPipelineLayoutCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    ci.setLayoutCount = 1;
    ci.pSetLayouts = &set;
    ci.pushConstantRangeCount = 1;
    ci.pPushConstantRanges = &range;
    VkPipelineLayout l;
    check(vkCreatePipelineLayout(device, &ci, nullptr, &l), "vkCreatePipelineLayout");
    return l;
  };
  decodeSetLayout = makeSetLayout(5);
  copySetLayout = makeSetLayout(2);
  decodeLayout = makeLayout(decodeSetLayout, sizeof(PushDecode));
  copyLayout = makeLayout(copySetLayout, sizeof(PushCopy));
  decodePipeline = makePipeline(kDecodeSpv, sizeof kDecodeSpv, decodeLayout);
  decodeBaselinePipeline = makePipeline(kDecodeBaselineSpv, sizeof kDecodeBaselineSpv, decodeLayout);
  copyPipeline = makePipeline(kCopySpv, sizeof kCopySpv, copyLayout);

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = queueFamily;
  check(vkCreateCommandPool(device, &pci, nullptr, &cmdPool), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = cmdPool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  check(vkAllocateCommandBuffers(device, &cai, &cmd), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(vkCreateFence(device, &fci, nullptr, &fence), "vkCreateFence");
  if (info.timestampValidBits > 0) {
    VkQueryPoolCreateInfo qpi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qpi.queryCount = 2;
    check(vkCreateQueryPool(device, &qpi, nullptr, &queries), "vkCreateQueryPool");
  }
}

VulkanDecoder::~VulkanDecoder() {
  if (!device) return;
  vkDeviceWaitIdle(device);
  if (queries) vkDestroyQueryPool(device, queries, nullptr);
  if (fence) vkDestroyFence(device, fence, nullptr);
  if (cmdPool) vkDestroyCommandPool(device, cmdPool, nullptr);
  vkDestroyPipeline(device, decodePipeline, nullptr);
  vkDestroyPipeline(device, decodeBaselinePipeline, nullptr);
  vkDestroyPipeline(device, copyPipeline, nullptr);
  vkDestroyPipelineLayout(device, decodeLayout, nullptr);
  vkDestroyPipelineLayout(device, copyLayout, nullptr);
  vkDestroyDescriptorSetLayout(device, decodeSetLayout, nullptr);
  vkDestroyDescriptorSetLayout(device, copySetLayout, nullptr);
  vkDestroyDevice(device, nullptr);
}

void VulkanDecoder::begin() {
  check(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
}

void VulkanDecoder::submitAndWait() {
  check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  check(vkResetFences(device, 1, &fence), "vkResetFences");
  {
    std::lock_guard<std::mutex> lock(queueMutex);
    check(vkQueueSubmit(queue, 1, &si, fence), "vkQueueSubmit");
  }
  check(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
}

namespace {

// Command pool, command buffer and fence owned by one decode, so decodes on several threads
// never share recording state (command pools are externally synchronized in Vulkan).
struct Submission {
  VulkanDecoder& d;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  explicit Submission(VulkanDecoder& dec) : d(dec) {
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pci.queueFamilyIndex = d.queueFamily;
    check(vkCreateCommandPool(d.device, &pci, nullptr, &pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    check(vkAllocateCommandBuffers(d.device, &cai, &cmd), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(d.device, &fci, nullptr, &fence), "vkCreateFence");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
  }
  Submission(const Submission&) = delete;
  Submission& operator=(const Submission&) = delete;
  void submitAndWait() {
    check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    {
      std::lock_guard<std::mutex> lock(d.queueMutex);
      check(vkQueueSubmit(d.queue, 1, &si, fence), "vkQueueSubmit");
    }
    submitted = true;
    check(vkWaitForFences(d.device, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    submitted = false;
  }
  ~Submission() {
    // After a failed wait (device lost) the work may still reference the buffers: wait for the
    // device before the caller's buffers and this pool go away.
    if (submitted) vkDeviceWaitIdle(d.device);
    if (fence) vkDestroyFence(d.device, fence, nullptr);
    if (pool) vkDestroyCommandPool(d.device, pool, nullptr);
  }

 private:
  bool submitted = false;
};

}  // namespace

namespace {

void barrier(VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags srcAccess, VkPipelineStageFlags dst, VkAccessFlags dstAccess) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = srcAccess;
  mb.dstAccessMask = dstAccess;
  vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

// A run of whole macroblock rows whose output, leaves and payloads each fit one binding.
struct Chunk {
  uint64_t by0, by1;          // macroblock rows [by0, by1)
  uint64_t row0, row1;        // output rows
  uint64_t streamStart, streamEnd;  // bound byte range of the stream
  uint64_t leafStart, leafEnd;      // bound leaf range
  uint64_t outBytes() const { return 0; }
};

struct Plan {
  std::vector<Chunk> chunks;
  uint64_t streamBytes;  // padded to 16
};

Plan planChunks(const VulkanDecoder& d, const Container& c, size_t len) {
  const DeviceInfo& info = d.info;
  uint64_t maxRange = std::min<uint64_t>({info.maxStorageBufferRange, info.maxMemoryAllocationSize, uint64_t(1) << 31});
  maxRange &= ~uint64_t(255);
  const uint64_t align = std::max<uint64_t>(16, info.minStorageBufferOffsetAlignment);
  if (c.rows >= (uint64_t(1) << 31) || c.cols >= (uint64_t(1) << 31))
    throw Failure("LIMIT_EXCEEDED", "the Vulkan decoder takes dimensions below 2^31");
  if ((c.blockCount + 1) * 4 > maxRange) throw Failure("LIMIT_EXCEEDED", "too many macroblocks for one storage-buffer binding on this device");
  const uint64_t rowBytes = 64 * c.cols * 4;
  if (rowBytes > maxRange)
    throw Failure("LIMIT_EXCEEDED", "one macroblock row (64 x " + std::to_string(c.cols) + " float32) exceeds this device's storage-buffer range of " +
                                        std::to_string(maxRange) + " bytes");
  // Payload byte range of each macroblock row.
  std::vector<uint64_t> rowMin(c.tilesY, UINT64_MAX), rowMax(c.tilesY, 0);
  const size_t n = c.leafCount();
  for (size_t i = 0; i < n; i++) {
    const uint64_t by = c.leafTable[4 * i] / c.tilesX;
    const uint32_t g = c.leafTable[4 * i + 1];
    const uint64_t off = c.leafTable[4 * i + 3];
    const uint64_t end = off + leafPayloadBytes((g >> 12) & 7, (g >> 15) & 1);
    if (by >= c.tilesY || end > len) throw Failure("BACKEND_FAILURE", "inconsistent leaf table");  // the parser never produces this
    rowMin[by] = std::min(rowMin[by], off);
    rowMax[by] = std::max(rowMax[by], end);
  }
  Plan plan;
  plan.streamBytes = (uint64_t(len) + 15) & ~uint64_t(15);
  const uint64_t maxGroups = uint64_t(std::max<uint32_t>(1, info.maxComputeWorkGroupCount[0])) * std::max<uint32_t>(1, info.maxComputeWorkGroupCount[1]);
  uint64_t by = 0;
  while (by < c.tilesY) {
    Chunk ch{};
    ch.by0 = by;
    uint64_t sMin = UINT64_MAX, sMax = 0;
    uint64_t end = by;
    while (end < c.tilesY) {
      const uint64_t nMin = std::min(sMin, rowMin[end]), nMax = std::max(sMax, rowMax[end]);
      const uint64_t nRow1 = std::min<uint64_t>(c.rows, (end + 1) * 64);
      const uint64_t outBytes = (nRow1 - by * 64) * c.cols * 4;
      const uint64_t sStart = nMin / align * align;
      const uint64_t sEnd = std::min(plan.streamBytes, (nMax + 15) & ~uint64_t(15));
      const uint64_t l0 = c.blockFirstLeaf[by * c.tilesX] / (align / 16) * (align / 16);
      const uint64_t l1 = c.blockFirstLeaf[(end + 1) * c.tilesX];
      const uint64_t blocks = (end + 1 - by) * c.tilesX;
      const bool fits = outBytes <= maxRange && sEnd - sStart <= maxRange && (l1 - l0) * 16 <= maxRange && blocks <= maxGroups;
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

// Device-side state of one decode: inputs uploaded, one output buffer per chunk.
struct Job {
  Buffer stream, leaves, firstLeaf;
  std::vector<Buffer> outputs;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> sets;
  VkDevice device = VK_NULL_HANDLE;
  ~Job() {
    if (pool) vkDestroyDescriptorPool(device, pool, nullptr);
  }
};

const VkBufferUsageFlags kStorage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;

// Creates the buffers, uploads the inputs (recording copies from `staging` when the device's
// memory is not host-visible into `cmd`, which must be recording) and writes the descriptor sets.
void prepareJob(VulkanDecoder& d, VkCommandBuffer cmd, Job& job, Buffer& staging, const uint8_t* bytes, size_t len, const Container& c, const Plan& plan) {
  job.device = d.device;
  job.stream = d.makeDeviceBuffer(plan.streamBytes, kStorage);
  job.leaves = d.makeDeviceBuffer(c.leafTable.size() * 4, kStorage);
  job.firstLeaf = d.makeDeviceBuffer(c.blockFirstLeaf.size() * 4, kStorage);
  for (const Chunk& ch : plan.chunks) job.outputs.push_back(d.makeDeviceBuffer((ch.row1 - ch.row0) * c.cols * 4, kStorage));

  struct Upload {
    Buffer* dst;
    const void* src;
    size_t n;
  };
  const Upload uploads[3] = {{&job.stream, bytes, len}, {&job.leaves, c.leafTable.data(), c.leafTable.size() * 4}, {&job.firstLeaf, c.blockFirstLeaf.data(), c.blockFirstLeaf.size() * 4}};
  if (d.unifiedMemory) {
    for (const Upload& u : uploads) {
      std::memset(u.dst->mapped, 0, u.dst->size);
      std::memcpy(u.dst->mapped, u.src, u.n);
    }
  } else {
    VkDeviceSize total = 0;
    for (const Upload& u : uploads) total += u.dst->size;
    staging = d.makeBuffer(total, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true);
    VkDeviceSize at = 0;
    for (const Upload& u : uploads) {
      auto* p = static_cast<uint8_t*>(staging.mapped) + at;
      std::memset(p, 0, u.dst->size);
      std::memcpy(p, u.src, u.n);
      VkBufferCopy region{at, 0, u.dst->size};
      vkCmdCopyBuffer(cmd, staging.buf, u.dst->buf, 1, &region);
      at += u.dst->size;
    }
    barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
  }

  const uint32_t nSets = uint32_t(plan.chunks.size());
  VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 5 * nSets};
  VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pci.maxSets = nSets;
  pci.poolSizeCount = 1;
  pci.pPoolSizes = &ps;
  check(vkCreateDescriptorPool(d.device, &pci, nullptr, &job.pool), "vkCreateDescriptorPool");
  std::vector<VkDescriptorSetLayout> layouts(nSets, d.decodeSetLayout);
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = job.pool;
  ai.descriptorSetCount = nSets;
  ai.pSetLayouts = layouts.data();
  job.sets.resize(nSets);
  check(vkAllocateDescriptorSets(d.device, &ai, job.sets.data()), "vkAllocateDescriptorSets");
  for (uint32_t k = 0; k < nSets; k++) {
    const Chunk& ch = plan.chunks[k];
    const VkDescriptorBufferInfo bi[5] = {
        {job.stream.buf, ch.streamStart, ch.streamEnd - ch.streamStart},
        {job.leaves.buf, ch.leafStart * 16, (ch.leafEnd - ch.leafStart) * 16},
        {job.firstLeaf.buf, 0, VK_WHOLE_SIZE},
        {job.outputs[k].buf, 0, VK_WHOLE_SIZE},
        {job.outputs[k].buf, 0, VK_WHOLE_SIZE},
    };
    VkWriteDescriptorSet w[5];
    for (uint32_t i = 0; i < 5; i++) {
      w[i] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w[i].dstSet = job.sets[k];
      w[i].dstBinding = i;
      w[i].descriptorCount = 1;
      w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w[i].pBufferInfo = &bi[i];
    }
    vkUpdateDescriptorSets(d.device, 5, w, 0, nullptr);
  }
}

void grid(const DeviceInfo& info, uint64_t groups, uint32_t& gx, uint32_t& gy) {
  const uint64_t maxX = std::max<uint32_t>(1, info.maxComputeWorkGroupCount[0]);
  gx = uint32_t(std::min<uint64_t>(groups, maxX));
  gy = uint32_t((groups + gx - 1) / gx);
}

uint32_t recordDecode(VulkanDecoder& d, VkCommandBuffer cmd, const Job& job, const Container& c, const Plan& plan, VkPipeline pipeline = VK_NULL_HANDLE) {
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline ? pipeline : d.decodePipeline);
  uint32_t dispatches = 0;
  for (size_t k = 0; k < plan.chunks.size(); k++) {
    const Chunk& ch = plan.chunks[k];
    const uint64_t blocks = (ch.by1 - ch.by0) * c.tilesX;
    uint32_t gx, gy;
    grid(d.info, blocks, gx, gy);
    PushDecode pc{uint32_t(ch.by0 * c.tilesX), uint32_t(blocks), uint32_t(c.tilesX), uint32_t(c.rows), uint32_t(c.cols), uint32_t(ch.row0),
                  uint32_t(ch.streamStart / 4), uint32_t((ch.streamEnd - ch.streamStart) / 4), uint32_t(ch.leafStart), uint32_t(ch.leafEnd - ch.leafStart), gx};
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d.decodeLayout, 0, 1, &job.sets[k], 0, nullptr);
    vkCmdPushConstants(cmd, d.decodeLayout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
    vkCmdDispatch(cmd, gx, gy, 1);
    dispatches++;
  }
  return dispatches;
}

}  // namespace

VulkanDecoder& decoderFor(const std::string& selection) {
  // Never destroyed: tearing Vulkan down from static destructors at process exit crashed the
  // NVIDIA driver (its own exit handlers run first); the process exit releases everything.
  static auto* decoders = new std::map<std::string, VulkanDecoder*>();
  static std::mutex decodersMutex;
  std::lock_guard<std::mutex> lock(decodersMutex);
  auto it = decoders->find(selection);
  if (it != decoders->end()) return *it->second;
  auto d = std::make_unique<VulkanDecoder>(selection);
  return *((*decoders)[selection] = d.release());
}

DeviceInfo deviceInfo(VulkanDecoder& d) { return d.info; }

void checkDecodable(VulkanDecoder& d, const Container& c, size_t len) { planChunks(d, c, len); }

void decodeInto(VulkanDecoder& d, const uint8_t* bytes, size_t len, const Container& c, float* out) {
  const Plan plan = planChunks(d, c, len);
  Job job;
  Buffer staging, readback;
  // Declared after the buffers so it is destroyed first: its destructor waits for the device
  // when a wait failed, before the buffers the work may still use are freed.
  Submission sub(d);
  const VkCommandBuffer cmd = sub.cmd;
  prepareJob(d, cmd, job, staging, bytes, len, c, plan);
  recordDecode(d, cmd, job, c, plan);
  if (!d.unifiedMemory) {
    VkDeviceSize total = 0;
    for (auto& o : job.outputs) total += o.size;
    readback = d.makeBuffer(total, VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
    barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    VkDeviceSize at = 0;
    for (auto& o : job.outputs) {
      VkBufferCopy region{0, at, o.size};
      vkCmdCopyBuffer(cmd, o.buf, readback.buf, 1, &region);
      at += o.size;
    }
    barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  } else {
    barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  }
  sub.submitAndWait();
  VkDeviceSize at = 0;
  for (size_t k = 0; k < plan.chunks.size(); k++) {
    const Chunk& ch = plan.chunks[k];
    const size_t n = size_t((ch.row1 - ch.row0) * c.cols * 4);
    const uint8_t* src = d.unifiedMemory ? static_cast<const uint8_t*>(job.outputs[k].mapped) : static_cast<const uint8_t*>(readback.mapped) + at;
    std::memcpy(reinterpret_cast<uint8_t*>(out) + ch.row0 * c.cols * 4, src, n);
    at += job.outputs[k].size;
  }
}

BenchResult bench(VulkanDecoder& d, const uint8_t* bytes, size_t len, const Container& c, const BenchOptions& o) {
  if (!d.queries) throw BackendFailure("vulkan-error", "this device's queue has no timestamps");
  const Plan plan = planChunks(d, c, len);
  Job job;
  Buffer staging;
  d.begin();
  prepareJob(d, d.cmd, job, staging, bytes, len, c, plan);
  BenchResult res;
  res.dispatches = recordDecode(d, d.cmd, job, c, plan);
  d.submitAndWait();  // uploads + one decode
  staging = Buffer();
  res.outputBytes = c.rows * c.cols * 4;
  res.streamBytes = len;
  res.leafTableBytes = c.leafTable.size() * 4 + c.blockFirstLeaf.size() * 4;

  // Copy baseline buffers: same sizes as the outputs, filled with the decoded data.
  std::vector<Buffer> sources;
  for (auto& out : job.outputs) sources.push_back(d.makeDeviceBuffer(out.size, kStorage));
  d.begin();
  for (size_t k = 0; k < sources.size(); k++) {
    VkBufferCopy region{0, 0, sources[k].size};
    vkCmdCopyBuffer(d.cmd, job.outputs[k].buf, sources[k].buf, 1, &region);
  }
  d.submitAndWait();
  VkDescriptorPool pool;
  const uint32_t nSets = uint32_t(sources.size());
  VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2 * nSets};
  VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pci.maxSets = nSets;
  pci.poolSizeCount = 1;
  pci.pPoolSizes = &ps;
  check(vkCreateDescriptorPool(d.device, &pci, nullptr, &pool), "vkCreateDescriptorPool");
  struct PoolGuard {
    VkDevice dev;
    VkDescriptorPool p;
    ~PoolGuard() { vkDestroyDescriptorPool(dev, p, nullptr); }
  } guard{d.device, pool};
  std::vector<VkDescriptorSetLayout> layouts(nSets, d.copySetLayout);
  std::vector<VkDescriptorSet> sets(nSets);
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pool;
  ai.descriptorSetCount = nSets;
  ai.pSetLayouts = layouts.data();
  check(vkAllocateDescriptorSets(d.device, &ai, sets.data()), "vkAllocateDescriptorSets");
  for (uint32_t k = 0; k < nSets; k++) {
    const VkDescriptorBufferInfo bi[2] = {{sources[k].buf, 0, VK_WHOLE_SIZE}, {job.outputs[k].buf, 0, VK_WHOLE_SIZE}};
    VkWriteDescriptorSet w[2];
    for (uint32_t i = 0; i < 2; i++) {
      w[i] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w[i].dstSet = sets[k];
      w[i].dstBinding = i;
      w[i].descriptorCount = 1;
      w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w[i].pBufferInfo = &bi[i];
    }
    vkUpdateDescriptorSets(d.device, 2, w, 0, nullptr);
  }

  const uint64_t mask = d.info.timestampValidBits >= 64 ? UINT64_MAX : ((uint64_t(1) << d.info.timestampValidBits) - 1);
  // Each timestamp pair brackets `batch` runs back to back (a barrier between runs), so the
  // clocks stay up and launch gaps are amortized; the figure is per run.
  const uint64_t outBytes = res.outputBytes;
  res.batch = uint32_t(std::max<uint64_t>(2, std::min<uint64_t>(200, (uint64_t(8) << 30) / std::max<uint64_t>(outBytes, 1))));
  auto timed = [&](int variant) {
    d.begin();
    vkCmdResetQueryPool(d.cmd, d.queries, 0, 2);
    vkCmdWriteTimestamp(d.cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, d.queries, 0);
    for (uint32_t rep = 0; rep < res.batch; rep++) {
      if (rep) barrier(d.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
      if (variant == 0 || variant == 3) {
        recordDecode(d, d.cmd, job, c, plan, variant == 3 ? d.decodeBaselinePipeline : d.decodePipeline);
      } else if (variant == 1) {
        for (size_t k = 0; k < sources.size(); k++) {
          VkBufferCopy region{0, 0, sources[k].size};
          vkCmdCopyBuffer(d.cmd, sources[k].buf, job.outputs[k].buf, 1, &region);
        }
      } else {
        vkCmdBindPipeline(d.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d.copyPipeline);
        for (uint32_t k = 0; k < nSets; k++) {
          const uint64_t vecs = sources[k].size / 16;
          uint32_t gx, gy;
          grid(d.info, (vecs + 1023) / 1024, gx, gy);
          PushCopy pc{uint32_t(vecs), gx};
          vkCmdBindDescriptorSets(d.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d.copyLayout, 0, 1, &sets[k], 0, nullptr);
          vkCmdPushConstants(d.cmd, d.copyLayout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
          vkCmdDispatch(d.cmd, gx, gy, 1);
        }
      }
    }
    vkCmdWriteTimestamp(d.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, d.queries, 1);
    d.submitAndWait();
    uint64_t ts[2];
    check(vkGetQueryPoolResults(d.device, d.queries, 0, 2, sizeof ts, ts, sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
    return double((ts[1] - ts[0]) & mask) * d.info.timestampPeriodNs / res.batch;
  };
  for (uint32_t w = 0; w < o.warmup; w++)
    for (int v = 0; v < 4; v++) timed(v);
  // Variants interleaved per repetition so clock drift affects all alike.
  for (uint32_t r = 0; r < o.reps; r++) {
    res.decodeNs.push_back(timed(0));
    res.decodeBaselineNs.push_back(timed(3));
    res.copyBufferNs.push_back(timed(1));
    res.copyShaderNs.push_back(timed(2));
  }
  return res;
}

}  // namespace sgfp4
