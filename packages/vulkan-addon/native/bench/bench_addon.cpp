// The bench-only exports, added to the addon's own when built with SGFP4_BENCH
// (scripts/build-bench.mjs): `kernel` (device-resident decode vs copies of the same output),
// `transfer` (the plain host<->device copy floors), `hostCopy` (the one host copy alone) and
// `parseTime` (the native parser alone), `pipelineStatistics` (the driver's shader statistics).
#include <napi.h>

#include <chrono>
#include <cstring>

#include "addon_args.hpp"
#include "host_copy.hpp"
#include "kernel_bench.hpp"

namespace sgfp4 {
namespace {

uint32_t uintOption(const Napi::Object& o, const char* name, uint32_t dflt, uint32_t lo, uint32_t hi) {
  if (!o.Has(name) || !o.Get(name).IsNumber()) return dflt;
  return std::max(lo, std::min(hi, o.Get(name).As<Napi::Number>().Uint32Value()));
}

Napi::Array numbers(Napi::Env env, const std::vector<double>& v) {
  auto x = Napi::Array::New(env, v.size());
  for (size_t k = 0; k < v.size(); k++) x.Set(uint32_t(k), v[k]);
  return x;
}

// (bytes, profile, rows, cols, options?: {reps, warmup, maxBatch, format, device, maxOutputBytes, check})
Napi::Value Kernel(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Args a = readArgs(info, 4);
    const Napi::Object o = info.Length() > 4 && info[4].IsObject() ? info[4].As<Napi::Object>() : Napi::Object::New(info.Env());
    const uint32_t reps = uintOption(o, "reps", 7, 1, 1000), warmup = uintOption(o, "warmup", 2, 0, 100), maxBatch = uintOption(o, "maxBatch", 200, 1, 200);
    const bool wantCheck = o.Has("check") && o.Get("check").ToBoolean();
    Container c = parse(a.bytes, a.len, a.profile, a.rows, a.cols, a.maxOutputBytes);
    std::vector<uint8_t> output;
    KernelTimes r = timeKernel(deviceFor(a.device), a.bytes, a.len, c, a.format, reps, warmup, maxBatch, wantCheck ? &output : nullptr);
    Napi::Env env = info.Env();
    auto out = Napi::Object::New(env);
    out.Set("decodeNs", numbers(env, r.decodeNs));
    auto candidates = Napi::Array::New(env, r.candidates.size());
    for (size_t k = 0; k < r.candidates.size(); k++) {
      auto c = Napi::Object::New(env);
      c.Set("name", r.candidates[k].name);
      c.Set("ns", numbers(env, r.candidates[k].ns));
      if (r.candidates[k].exact >= 0) c.Set("exact", r.candidates[k].exact == 1);
      candidates.Set(uint32_t(k), c);
    }
    out.Set("candidates", candidates);
    out.Set("copyBufferNs", numbers(env, r.copyBufferNs));
    out.Set("copyShaderNs", numbers(env, r.copyShaderNs));
    out.Set("batch", r.batch);
    out.Set("outputBytes", double(r.outputBytes));
    out.Set("streamBytes", double(r.streamBytes));
    out.Set("leafTableBytes", double(r.leafTableBytes));
    out.Set("leafCount", double(c.leafCount()));
    out.Set("dispatches", r.dispatches);
    if (wantCheck) out.Set("output", Napi::Buffer<uint8_t>::Copy(env, output.data(), output.size()));
    return out;
  });
}

// (bytes: number, direction: "toHost" | "toDevice", options?: {reps, device}) -> ns per copy
Napi::Value Transfer(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsString()) invalid("expected (bytes, \"toHost\" | \"toDevice\", options?)");
    const double bytes = info[0].As<Napi::Number>().DoubleValue();
    if (!(bytes >= 16 && bytes <= double(uint64_t(1) << 34))) invalid("bytes must be between 16 and 2^34");
    const Napi::Object o = info.Length() > 2 && info[2].IsObject() ? info[2].As<Napi::Object>() : Napi::Object::New(info.Env());
    const bool toHost = info[1].As<Napi::String>().Utf8Value() == "toHost";
    return numbers(info.Env(), timeTransfer(deviceFor(deviceOption(info, 2)), uint64_t(bytes), toHost, uintOption(o, "reps", 5, 1, 1000)));
  });
}

// (out: TypedArray, options?: {reps, device}) -> ns per copy: decodeInto's one host copy alone on
// this host (copyParallel, the work pool, from pooled readback memory into `out`), the bound of
// decodeInto on a discrete GPU next to the device-to-host copy. The readback memory is filled
// once first (written by the host, not the GPU: its lines are evicted by the 16 MiB-and-up sizes
// measured, not by a GPU write).
Napi::Value HostCopy(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    if (info.Length() < 1 || !info[0].IsTypedArray()) invalid("expected (out: TypedArray, options?)");
    Napi::TypedArray out = info[0].As<Napi::TypedArray>();
    const size_t bytes = out.ByteLength();
    if (bytes < 16) invalid("out must hold at least 16 bytes");
    const Napi::Object o = info.Length() > 1 && info[1].IsObject() ? info[1].As<Napi::Object>() : Napi::Object::New(info.Env());
    VulkanDevice& d = deviceFor(deviceOption(info, 1));
    Lease readback(d.pool, Memory::HostReadback, bytes);
    if (!readback.buf.mapped) invalid("the readback memory is not mapped");
    std::memset(readback.buf.mapped, 0x3c, bytes);
    uint8_t* dst = static_cast<uint8_t*>(out.ArrayBuffer().Data()) + out.ByteOffset();
    std::vector<double> ns;
    const uint32_t reps = uintOption(o, "reps", 5, 1, 1000);
    for (uint32_t r = 0; r <= reps; r++) {  // the first one warms up
      const auto t0 = std::chrono::steady_clock::now();
      copyParallel(dst, readback.buf.mapped, bytes);
      const double t = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
      if (r) ns.push_back(t);
    }
    return numbers(info.Env(), ns);
  });
}

// (bytes, profile, rows, cols, options?: {reps, ranges, maxOutputBytes}) -> {ns: per parse, leafCount}:
// the native parse (validation and leaf table) with nothing copied to JavaScript; ranges 1 = one
// thread, 0 = the shipped default (large streams split over the work pool).
Napi::Value ParseTime(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Args a = readArgs(info, 4);
    const Napi::Object o = info.Length() > 4 && info[4].IsObject() ? info[4].As<Napi::Object>() : Napi::Object::New(info.Env());
    const uint32_t reps = uintOption(o, "reps", 9, 1, 1000), ranges = uintOption(o, "ranges", 0, 0, 256);
    std::vector<double> ns;
    size_t leaves = 0;
    for (uint32_t r = 0; r <= reps; r++) {  // the first one warms up
      const auto t0 = std::chrono::steady_clock::now();
      Container c = parse(a.bytes, a.len, a.profile, a.rows, a.cols, a.maxOutputBytes, ranges);
      const double t = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
      leaves = c.leafCount();
      if (r) ns.push_back(t);
    }
    auto out = Napi::Object::New(info.Env());
    out.Set("ns", numbers(info.Env(), ns));
    out.Set("leafCount", double(leaves));
    return out;
  });
}

// (options?: {device}) -> [{pipeline, executable, statistic, value}]: the driver's statistics of
// the decode pipelines (empty without VK_KHR_pipeline_executable_properties).
Napi::Value PipelineStatistics(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    const std::vector<PipelineStats> stats = pipelineStatistics(deviceFor(deviceOption(info, 0)));
    auto out = Napi::Array::New(info.Env(), stats.size());
    for (size_t k = 0; k < stats.size(); k++) {
      auto s = Napi::Object::New(info.Env());
      s.Set("pipeline", stats[k].pipeline);
      s.Set("executable", stats[k].executable);
      s.Set("statistic", stats[k].statistic);
      s.Set("value", stats[k].value);
      out.Set(uint32_t(k), s);
    }
    return out;
  });
}

}  // namespace

void registerBenchExports(Napi::Env env, Napi::Object exports) {
  exports.Set("parseTime", Napi::Function::New(env, ParseTime));
  exports.Set("kernel", Napi::Function::New(env, Kernel));
  exports.Set("transfer", Napi::Function::New(env, Transfer));
  exports.Set("hostCopy", Napi::Function::New(env, HostCopy));
  exports.Set("pipelineStatistics", Napi::Function::New(env, PipelineStatistics));
}

}  // namespace sgfp4
