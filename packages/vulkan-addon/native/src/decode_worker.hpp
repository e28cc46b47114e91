// decodeAsync's worker. All validation (arguments, the native parse, the dispatch plan) runs on
// the JS thread before it is queued, so a bad stream rejects without using a pool thread. The
// worker owns a copy of the input bytes; the GPU round trip (upload, submit, wait, readback) runs
// on the libuv pool thread. Without a target it decodes into the result array, allocated before
// (decodeInto: written by the GPU, or one host copy); with a target (decodeIntoAsync)
// the one copy into the caller's array happens on the JS thread when the GPU is done, after
// checking the array still has its length (JS may detach it meanwhile).
#pragma once
#include <napi.h>

#include <memory>
#include <optional>

#include "addon_args.hpp"
#include "vk_decode.hpp"

namespace sgfp4 {

class DecodeWorker : public Napi::AsyncWorker {
 public:
  // intoTarget: decodeIntoAsync (target() follows); else decodeAsync, whose result is made here:
  // on a discrete GPU from kHandOverMinBytes pooled readback memory, taken now and handed over in
  // OnOK (no host copy), else a new array the worker writes into.
  // parsedStream: the input already copied into upload memory by the parse (zero-padded to 16),
  // used by a direct hand-over instead of copying it again; else empty.
  DecodeWorker(Napi::Env env, VulkanDevice& device, const uint8_t* bytes, size_t len, Container container, OutputFormat format, bool intoTarget,
               Lease parsedStream = Lease());
  Napi::Promise promise() const { return deferred_.Promise(); }
  // decodeIntoAsync: the array to copy into when done (held so it is not collected).
  void target(Napi::TypedArray out) { target_ = Napi::Persistent(out); }
  // After Queue(), on the JS thread: makes the hand-over's array while the worker decodes.
  void makeResult();

  void Execute() override;
  void OnOK() override;
  void OnError(const Napi::Error&) override;

 private:
  void fail(const std::string& code, const std::string& message, const std::string& reason);

  Napi::Promise::Deferred deferred_;
  VulkanDevice& device_;
  std::unique_ptr<uint8_t[]> bytes_;  // the input's copy, or (direct hand-over) empty and stream_ holds it
  Lease stream_;
  size_t len_;
  Container container_;
  OutputFormat format_;
  std::optional<HostResult> readback_;  // with a target: held until OnOK copies it
  bool handOver_ = false;
  Lease readbackLease_;  // with handOver_: the readback the worker decodes into, adopted in OnOK
  void* readbackMemory_ = nullptr;  // its mapped memory (read on the JS thread while the worker holds the Lease)
  std::optional<PendingHandOver> pending_;
  Napi::Reference<Napi::TypedArray> target_, result_;
  void* resultData_ = nullptr;
  std::string code_, message_, reason_;
};

}  // namespace sgfp4
