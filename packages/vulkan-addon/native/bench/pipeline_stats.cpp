// Bench-only: the driver's statistics of the decode pipelines (registers, shared memory, ...), so a
// kernel row can be read next to what limits its occupancy. A second, short-lived VkDevice on the
// same GPU enables VK_KHR_pipeline_executable_properties (the shipped device does not).
#include <string>

#include "bench_shaders.h"
#include "kernel_bench.hpp"
#include "shaders.h"

namespace sgfp4 {

std::vector<PipelineStats> pipelineStatistics(VulkanDevice& d) {
  std::vector<PipelineStats> out;
  if (!hasDeviceExtension(d.phys, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) return out;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR feature{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  feature.pipelineExecutableInfo = VK_TRUE;
  VkDevice dev = makeDevice(d.phys, d.queueFamily, &feature, {VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME}, "vkCreateDevice (pipeline statistics)");
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
