// Argument reading, error conversion and result arrays shared by the addon's entry points
// (the shipped addon and the bench-only one).
#pragma once
#include <napi.h>

#include <cstdint>
#include <string>

#include "decode_plan.hpp"
#include "sgfp4_parse.hpp"
#include "vk_device.hpp"

namespace sgfp4 {

Napi::Error toJsError(Napi::Env env, const Failure& f);
[[noreturn]] void invalid(const std::string& msg);

struct Args {
  const uint8_t* bytes = nullptr;
  size_t len = 0;
  Profile profile = Profile::V1;
  double rows = 0, cols = 0;
  uint64_t maxOutputBytes = kDefaultMaxOutputBytes;
  std::string device;
  OutputFormat format = OutputFormat::F32;
};

// (bytes: Uint8Array, profile: "v1" | "v2", rows, cols, ..., options?: {maxOutputBytes?, device?, format?})
// with the options object at `optionsIndex`.
Args readArgs(const Napi::CallbackInfo& info, size_t optionsIndex);
// The `device` option of an options object at index i ("" when absent).
std::string deviceOption(const Napi::CallbackInfo& info, size_t i);
// The data of info[i] after checking it is the typed array of `format` (Float32Array for f32,
// Uint16Array for f16 / bf16) with `count` elements.
void* outputArray(const Napi::CallbackInfo& info, size_t i, OutputFormat format, uint64_t count);
Napi::Object deviceInfoObject(Napi::Env env, const DeviceInfo& i);

// A new result array (Float32Array for f32, Uint16Array for f16 / bf16) of `count` elements, its
// memory owned by V8 (so a dropped result is freed by the GC itself, with no finalizer to wait
// for); `data` receives where the decode writes it.
Napi::TypedArray newOutputArray(Napi::Env env, OutputFormat format, uint64_t count, void** data);

// From this size, `decode` and `decodeAsync` on a discrete GPU return the pooled readback memory
// the GPU wrote (no host copy, no fresh pages to fault in) instead of a new V8-owned array.
constexpr uint64_t kHandOverMinBytes = uint64_t(1) << 20;

// A result array (of `format`, `count` elements) over pooled readback memory: an external
// ArrayBuffer whose finalizer gives the buffer back to the device's pool once the array is
// garbage-collected. Until then the memory is the array's alone (the pool lends it out).
// The array is made before the decode writes the memory, while the GPU runs: V8's work for a new
// large array (its external-memory accounting) took 1.6-2.1 ms per 128 MiB on the H100 host, as
// long as the GPU's part of a 4096x8192 decode. It holds an empty Lease until adopt() moves the
// readback into it and is not returned to JavaScript before; if the decode fails it is dropped
// unreachable (its finalizer then frees the empty Lease).
class PendingHandOver {
 public:
  PendingHandOver(Napi::Env env, OutputFormat format, uint64_t count, void* memory);
  Napi::TypedArray adopt(Lease&& readback);

 private:
  Napi::Reference<Napi::TypedArray> array_;
  Lease* holder_;  // owned by the ArrayBuffer's finalizer
};
// The same made and adopted at once (the decode is done).
Napi::TypedArray handOver(Napi::Env env, OutputFormat format, uint64_t count, Lease&& readback);

template <typename F>
Napi::Value guarded(const Napi::CallbackInfo& info, F f) {
  try {
    return f();
  } catch (const Failure& e) {
    throw toJsError(info.Env(), e);
  } catch (const std::bad_alloc&) {
    throw toJsError(info.Env(), Failure("BACKEND_FAILURE", "out of host memory"));
  }
}

}  // namespace sgfp4
