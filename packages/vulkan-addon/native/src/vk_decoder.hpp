// Vulkan compute decode of a parsed (validated) SGFP4 container. The loader is opened at run
// time with dlopen, so a machine without libvulkan can still load the addon and gets one clear
// error on first use.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sgfp4_parse.hpp"

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
  std::vector<std::string> allDevices;  // "index: name (type)"
  std::string loaderPath, selectedBy;
};

struct BenchOptions {
  uint32_t reps = 10, warmup = 2;
};

struct BenchResult {
  std::vector<double> decodeNs, decodeBaselineNs, copyBufferNs, copyShaderNs;  // per decode / copy
  uint32_t batch = 1;  // runs back to back per timestamp pair
  uint64_t outputBytes = 0, streamBytes = 0, leafTableBytes = 0;
  uint32_t dispatches = 0;
};

// Thrown with code BACKEND_FAILURE; `reason` is "no-loader", "no-device" or "vulkan-error".
struct BackendFailure : Failure {
  std::string reason;
  BackendFailure(std::string r, const std::string& detail) : Failure("BACKEND_FAILURE", detail), reason(std::move(r)) {}
};

class VulkanDecoder;

// One decoder per device selection string ("" = default order or SGFP4_VULKAN_DEVICE).
VulkanDecoder& decoderFor(const std::string& deviceSelection);
DeviceInfo deviceInfo(VulkanDecoder& d);
// Throws LIMIT_EXCEEDED when `c` cannot be split into dispatches that fit this device (the
// check decodeInto makes first), so callers can fail before handing work to another thread.
void checkDecodable(VulkanDecoder& d, const Container& c, size_t len);
// Decodes `c` (parsed from bytes) into out (rows*cols floats). Safe to call from several
// threads at once on the same decoder: each call records its own commands and waits on its own
// fence; queue submissions are serialized. `bench` uses the decoder's shared command buffer and
// must stay on one thread (the JS thread).
void decodeInto(VulkanDecoder& d, const uint8_t* bytes, size_t len, const Container& c, float* out);
BenchResult bench(VulkanDecoder& d, const uint8_t* bytes, size_t len, const Container& c, const BenchOptions& o);

}  // namespace sgfp4
