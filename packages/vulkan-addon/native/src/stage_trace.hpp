// SGFP4_VULKAN_TRACE=1: where a discrete-GPU decode's time goes, printed to stderr as one JSON line
// per call: host phases (setup, per stage: fill, submit, wait, copy out) from the wall clock and
// GPU phases (per stage: upload, kernel, device-to-host copy, and the idle gap before the stage)
// from timestamps. A diagnostic for the benchmark's readback rows; off, it costs one getenv.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "vk_device.hpp"

namespace sgfp4 {

// SGFP4_VULKAN_TRACE=1, per Node-API call: its host phases in order (argument reading and parse,
// plan, decode, hand-over, ...; "rest" is what follows the last mark: freeing the parsed
// container), one JSON line on stderr when the call returns.
class CallTrace {
 public:
  explicit CallTrace(const char* call) : call_(call), on_(std::getenv("SGFP4_VULKAN_TRACE") != nullptr), t_(std::chrono::steady_clock::now()) {}
  void mark(const char* phase) {
    if (!on_) return;
    const auto t = std::chrono::steady_clock::now();
    s_ += std::string(s_.empty() ? "" : ",") + "\"" + phase + "\":" + std::to_string(int64_t(std::chrono::duration<double, std::micro>(t - t_).count()));
    t_ = t;
  }
  ~CallTrace() {
    if (!on_) return;
    mark("rest");
    std::fprintf(stderr, "sgfp4-vulkan-call {\"call\":\"%s\",%s}\n", call_, s_.c_str());
  }
  CallTrace(const CallTrace&) = delete;
  CallTrace& operator=(const CallTrace&) = delete;

 private:
  const char* call_;
  bool on_;
  std::chrono::steady_clock::time_point t_;
  std::string s_;
};

class StageTrace {
 public:
  enum Host { Fill, Submit, Wait, Copy, kHost };
  // planStart: when the decode's planning began (its time is printed as planUs).
  StageTrace(VulkanDevice& d, size_t stages, std::chrono::steady_clock::time_point planStart)
      : d_(d), on_(std::getenv("SGFP4_VULKAN_TRACE") != nullptr && d.info.timestampValidBits > 0), t0_(now()) {
    if (!on_) return;
    plan_ = std::chrono::duration<double, std::micro>(t0_ - planStart).count();
    host_.assign(stages * kHost, 0.0);
    VkQueryPoolCreateInfo qpi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qpi.queryCount = uint32_t(4 * stages);
    if (vkCreateQueryPool(d.device, &qpi, nullptr, &queries_) != VK_SUCCESS) on_ = false;
  }
  ~StageTrace() {
    if (queries_) vkDestroyQueryPool(d_.device, queries_, nullptr);
  }
  void setupDone() { setup_ = us(t0_); }
  // Timestamp `point` (0 start, 1 uploaded, 2 decoded, 3 copied) of stage k.
  void mark(VkCommandBuffer cmd, size_t k, uint32_t point) {
    if (!on_) return;
    if (point == 0) vkCmdResetQueryPool(cmd, queries_, uint32_t(4 * k), 4);
    vkCmdWriteTimestamp(cmd, point == 0 ? VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT : VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, uint32_t(4 * k + point));
  }
  // Runs f, adding its wall time to phase h of stage k.
  template <typename F>
  void time(size_t k, Host h, F f) {
    const auto t = now();
    f();
    if (on_) host_[k * kHost + h] += us(t);
  }
  void print() {
    if (!on_) return;
    const size_t n = host_.size() / kHost;
    std::vector<uint64_t> ts(4 * n);
    if (vkGetQueryPoolResults(d_.device, queries_, 0, uint32_t(ts.size()), ts.size() * 8, ts.data(), 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS) return;
    const double p = d_.info.timestampPeriodNs / 1000.0;
    std::string s = "{\"planUs\":" + num(plan_) + ",\"setupUs\":" + num(setup_) + ",\"totalUs\":" + num(us(t0_)) + ",\"stages\":[";
    for (size_t k = 0; k < n; k++) {
      const uint64_t* t = &ts[4 * k];
      const double* h = &host_[k * kHost];
      s += std::string(k ? "," : "") + "{\"fill\":" + num(h[Fill]) + ",\"submit\":" + num(h[Submit]) + ",\"wait\":" + num(h[Wait]) + ",\"copy\":" + num(h[Copy]) +
           ",\"gpuGap\":" + num(k ? double(int64_t(t[0] - ts[4 * k - 1])) * p : 0.0) + ",\"gpuUpload\":" + num(double(t[1] - t[0]) * p) +
           ",\"gpuKernel\":" + num(double(t[2] - t[1]) * p) + ",\"gpuD2h\":" + num(double(t[3] - t[2]) * p) + "}";
    }
    std::fprintf(stderr, "sgfp4-vulkan-trace %s]}\n", s.c_str());
  }

 private:
  static std::chrono::steady_clock::time_point now() { return std::chrono::steady_clock::now(); }
  static double us(std::chrono::steady_clock::time_point t) { return std::chrono::duration<double, std::micro>(now() - t).count(); }
  static std::string num(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", x);
    return b;
  }
  VulkanDevice& d_;
  bool on_;
  std::chrono::steady_clock::time_point t0_;
  double plan_ = 0, setup_ = 0;
  std::vector<double> host_;
  VkQueryPool queries_ = VK_NULL_HANDLE;
};

}  // namespace sgfp4
