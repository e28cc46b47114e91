// Bench-only: the driver's statistics of the decode pipelines (registers, shared memory, ...), so a
// kernel row can be read next to what limits its occupancy. A second, short-lived VkDevice on the
// same GPU enables VK_KHR_pipeline_executable_properties (the shipped device does not).
#include <cstring>
#include <string>

#include "bench_shaders.h"
#include "kernel_bench.hpp"
#include "shaders.h"

namespace sgfp4 {

std::vector<PipelineStats> pipelineStatistics(VulkanDevice& d) {
  std::vector<PipelineStats> out;
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(d.phys, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> ext(n);
  vkEnumerateDeviceExtensionProperties(d.phys, nullptr, &n, ext.data());
  bool supported = false;
  for (const auto& e : ext) supported |= std::strcmp(e.extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) == 0;
  if (!supported) return out;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = d.queueFamily;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR feature{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  feature.pipelineExecutableInfo = VK_TRUE;
  const char* name = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
  VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  di.pNext = &feature;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  di.enabledExtensionCount = 1;
  di.ppEnabledExtensionNames = &name;
  VkDevice dev;
  check(vkCreateDevice(d.phys, &di, nullptr, &dev), "vkCreateDevice (pipeline statistics)");
  auto properties = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(vkGetDeviceProcAddr(dev, "vkGetPipelineExecutablePropertiesKHR"));
  auto statistics = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(vkGetDeviceProcAddr(dev, "vkGetPipelineExecutableStatisticsKHR"));

  // The shipped decode layout (5 storage buffers, PushDecode), on this device.
  VkDescriptorSetLayout setLayout = makeSetLayout(dev, 5);
  VkPipelineLayout layout = makePipelineLayout(dev, setLayout, sizeof(PushDecode));

  std::vector<BenchCandidate> pipelines{{"default", kDecodeSpv, sizeof kDecodeSpv}};
  for (const BenchCandidate& c : kDecodeCandidates) pipelines.push_back(c);
  for (const BenchCandidate& c : pipelines) {
    VkPipeline p = makePipeline(dev, c.spv, c.bytes, layout, nullptr, VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR);
    VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
    info.pipeline = p;
    uint32_t ne = 0;
    properties(dev, &info, &ne, nullptr);
    std::vector<VkPipelineExecutablePropertiesKHR> execs(ne, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
    properties(dev, &info, &ne, execs.data());
    for (uint32_t e = 0; e < ne; e++) {
      VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
      ei.pipeline = p;
      ei.executableIndex = e;
      uint32_t ns = 0;
      statistics(dev, &ei, &ns, nullptr);
      std::vector<VkPipelineExecutableStatisticKHR> stats(ns, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
      statistics(dev, &ei, &ns, stats.data());
      for (const auto& s : stats) {
        double v = 0;
        switch (s.format) {
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: v = s.value.b32; break;
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: v = double(s.value.i64); break;
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: v = double(s.value.u64); break;
          default: v = s.value.f64; break;
        }
        out.push_back({c.name, execs[e].name, s.name, v});
      }
    }
    vkDestroyPipeline(dev, p, nullptr);
  }
  vkDestroyPipelineLayout(dev, layout, nullptr);
  vkDestroyDescriptorSetLayout(dev, setLayout, nullptr);
  vkDestroyDevice(dev, nullptr);
  return out;
}

}  // namespace sgfp4
