// Bench-only timings (not in the shipped addon): the decode kernel with its output kept on the
// device against a copy of the same output bytes (vkCmdCopyBuffer and a copy shader), GPU
// timestamps; and the plain host<->device transfer floors, wall clock.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vk_decode.hpp"

namespace sgfp4 {

// A candidate pipeline (gen-shaders.mjs CANDIDATES) timed in the same rounds as the default.
struct CandidateTimes {
  const char* name;
  std::vector<double> ns;  // per run
  int exact = -1;          // its output equals the default's, bit for bit (-1: not checked)
};

struct KernelTimes {
  std::vector<double> decodeNs, copyBufferNs, copyShaderNs;  // per run
  std::vector<CandidateTimes> candidates;                    // f32 only
  uint32_t batch = 1;  // runs back to back per timestamp pair
  uint64_t outputBytes = 0, streamBytes = 0, leafTableBytes = 0;
  uint32_t dispatches = 0;
};

// Times the decode of `c` into `format` (and, for f32, the candidate pipelines built from
// native/shaders/decode.comp) against copies of the same output size. `check`, when not null,
// receives the decoded output (outputBytes) for a bit check, and each candidate's output is
// compared with it.
// `maxBatch` caps the runs per timestamp pair (default 200; small on a slow CPU device).
KernelTimes timeKernel(VulkanDevice& d, const uint8_t* bytes, size_t len, const Container& c, OutputFormat format, uint32_t reps, uint32_t warmup,
                       uint32_t maxBatch, std::vector<uint8_t>* check);

// The driver's statistics (VK_KHR_pipeline_executable_properties: registers, shared memory, ...)
// of the default f32 decode pipeline and of each candidate, from a second, short-lived VkDevice on
// the same GPU with the extension enabled; empty where the driver lacks it.
struct PipelineStats {
  std::string pipeline, executable, statistic;
  double value;
};
std::vector<PipelineStats> pipelineStatistics(VulkanDevice& d);

// Wall-clock ns of `reps` plain copies of `bytes` between device-local and host-visible
// (pre-allocated, mapped) memory: toHost = device-to-host, else host-to-device.
std::vector<double> timeTransfer(VulkanDevice& d, uint64_t bytes, bool toHost, uint32_t reps);

}  // namespace sgfp4
