// Session-16 experiment (BENCHMARKS.md, "Vulkan readback: what the gap is made of"): can a
// native addon hand over a large external ArrayBuffer without V8 starting incremental marking?
// make(bytes, compensate) returns a Float32Array over malloc'd memory; with compensate, it first
// lowers V8's external-memory count by `bytes` (napi_adjust_external_memory) and gives the bytes
// back at the next call once the array was collected. Build and run: see probe.mjs.
#include <napi.h>

#include <cstdlib>

namespace {
thread_local int64_t owed = 0;  // bytes taken off for arrays since collected, given back at the next call
struct Hold {
  int64_t bytes;
  bool compensated;
};

Napi::Value Make(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int64_t bytes = int64_t(info[0].As<Napi::Number>().DoubleValue());
  const bool compensate = info[1].As<Napi::Boolean>();
  int64_t delta = owed;
  owed = 0;
  if (compensate) delta -= bytes;
  if (delta) Napi::MemoryManagement::AdjustExternalMemory(env, delta);
  void* memory = std::calloc(1, size_t(bytes));
  auto* hold = new Hold{bytes, compensate};
  auto buffer = Napi::ArrayBuffer::New(env, memory, size_t(bytes), [](Napi::Env, void* m, Hold* h) {
    if (h->compensated) owed += h->bytes;
    std::free(m);
    delete h;
  }, hold);
  return Napi::Float32Array::New(env, size_t(bytes / 4), buffer, 0);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("make", Napi::Function::New(env, Make));
  return exports;
}
}  // namespace

NODE_API_MODULE(handover, Init)
