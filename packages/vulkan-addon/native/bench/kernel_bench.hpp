// Bench-only timings (not in the shipped addon): the decode kernel with its output kept on the
// device against a copy of the same output bytes (vkCmdCopyBuffer and a copy shader), GPU
// timestamps; and the plain host<->device transfer floors, wall clock.
#pragma once
#include <cstdint>
#include <vector>

#include "vk_decode.hpp"

namespace sgfp4 {

struct KernelTimes {
  std::vector<double> decodeNs, candidateNs, copyBufferNs, copyShaderNs;  // per run
  uint32_t batch = 1;  // runs back to back per timestamp pair
  uint64_t outputBytes = 0, streamBytes = 0, leafTableBytes = 0;
  uint32_t dispatches = 0;
};

// Times the decode of `c` into `format` (and, for f32, the candidate pipeline of
// native/shaders/decode.comp built with -DSERIAL_FILL) against copies of the same output size.
// `check`, when not null, receives the decoded output (outputBytes) for a bit check.
// `maxBatch` caps the runs per timestamp pair (default 200; small on a slow CPU device).
KernelTimes timeKernel(VulkanDevice& d, const uint8_t* bytes, size_t len, const Container& c, OutputFormat format, uint32_t reps, uint32_t warmup,
                       uint32_t maxBatch, std::vector<uint8_t>* check);

// Wall-clock ns of `reps` plain copies of `bytes` between device-local and host-visible
// (pre-allocated, mapped) memory: toHost = device-to-host, else host-to-device.
std::vector<double> timeTransfer(VulkanDevice& d, uint64_t bytes, bool toHost, uint32_t reps);

}  // namespace sgfp4
