// The Vulkan loader, opened at run time with dlopen (never linked), so a machine without
// libvulkan still loads the addon and gets one clear error on first use. Declares the entry
// points the decoder uses as global function pointers, filled by loadInstance().
#pragma once
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

#include "sgfp4_parse.hpp"

namespace sgfp4 {

// Thrown with code BACKEND_FAILURE; `reason` is "no-loader", "no-device" or "vulkan-error".
struct BackendFailure : Failure {
  std::string reason;
  BackendFailure(std::string r, const std::string& detail) : Failure("BACKEND_FAILURE", detail), reason(std::move(r)) {}
};

// What to install when the loader or a driver is missing (part of every such error).
extern const char* const kInstallHint;

#define SGFP4_VK_GLOBAL(X) X(vkCreateInstance) X(vkEnumerateInstanceVersion)
#define SGFP4_VK_INSTANCE(X)                                                                              \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)                     \
  X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2) X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties) X(vkCreateDevice) X(vkDestroyDevice) X(vkGetDeviceQueue)          \
  X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements) X(vkAllocateMemory)               \
  X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory) X(vkUnmapMemory) X(vkCreateShaderModule)           \
  X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout) X(vkDestroyDescriptorSetLayout)                 \
  X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) X(vkCreateComputePipelines) X(vkDestroyPipeline)   \
  X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool) X(vkAllocateDescriptorSets)                        \
  X(vkUpdateDescriptorSets) X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers)    \
  X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkResetCommandBuffer) X(vkResetCommandPool)            \
  X(vkCmdBindPipeline)                                                                                  \
  X(vkCmdBindDescriptorSets) X(vkCmdPushConstants) X(vkCmdDispatch) X(vkCmdPipelineBarrier)               \
  X(vkCmdCopyBuffer) X(vkCmdWriteTimestamp) X(vkCmdResetQueryPool) X(vkCreateQueryPool)                   \
  X(vkDestroyQueryPool) X(vkGetQueryPoolResults) X(vkQueueSubmit) X(vkCreateFence) X(vkDestroyFence)      \
  X(vkWaitForFences) X(vkResetFences) X(vkDeviceWaitIdle) X(vkEnumerateDeviceExtensionProperties) X(vkGetDeviceProcAddr)

#define SGFP4_DECLARE_EXTERN(name) extern PFN_##name name;
SGFP4_VK_GLOBAL(SGFP4_DECLARE_EXTERN)
SGFP4_VK_INSTANCE(SGFP4_DECLARE_EXTERN)
#undef SGFP4_DECLARE_EXTERN

struct Instance {
  VkInstance handle = VK_NULL_HANDLE;
  uint32_t apiVersion = VK_API_VERSION_1_0;
  std::string loaderPath;
};

// The process's instance, created on first use (never destroyed: see deviceFor).
// Throws BackendFailure "no-loader" / "no-device" with what to install.
Instance& loadInstance();

// Throws BackendFailure "vulkan-error" unless r is VK_SUCCESS.
void check(VkResult r, const char* what);

std::string versionString(uint32_t v);

}  // namespace sgfp4
