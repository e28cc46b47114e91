// Node-API surface. Every entry re-parses the stream natively (the JS wrapper's validation is
// not trusted) and reports failures as Error objects with `code` (a DECISIONS.md section-3
// code, or INVALID_ARGUMENT / LIMIT_EXCEEDED / BACKEND_FAILURE) and, for backend failures,
// `reason` ("no-loader", "no-device", "vulkan-error").
#include <napi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "sgfp4_parse.hpp"
#include "vk_decoder.hpp"

namespace {

using namespace sgfp4;

Napi::Error toJsError(Napi::Env env, const Failure& f) {
  Napi::Error e = Napi::Error::New(env, f.what());
  e.Set("code", Napi::String::New(env, f.code));
  if (auto* b = dynamic_cast<const BackendFailure*>(&f)) e.Set("reason", Napi::String::New(env, b->reason));
  return e;
}

[[noreturn]] void invalid(const std::string& msg) { throw Failure("INVALID_ARGUMENT", msg); }

struct Args {
  const uint8_t* bytes = nullptr;
  size_t len = 0;
  Profile profile = Profile::V1;
  double rows = 0, cols = 0;
  uint64_t maxOutputBytes = kDefaultMaxOutputBytes;
  std::string device;
};

// (bytes: Uint8Array, profile: "v1" | "v2", rows, cols, options?: {maxOutputBytes?, device?})
Args readArgs(const Napi::CallbackInfo& info, size_t optionsIndex) {
  Args a;
  if (info.Length() < 4 || !info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    invalid("expected (bytes: Uint8Array, profile, rows, cols)");
  auto u8 = info[0].As<Napi::Uint8Array>();
  a.bytes = u8.Data();
  a.len = u8.ByteLength();
  if (!info[1].IsString()) invalid("profile must be \"v1\" or \"v2\"");
  const std::string p = info[1].As<Napi::String>().Utf8Value();
  if (p == "v1") a.profile = Profile::V1;
  else if (p == "v2") a.profile = Profile::V2;
  else invalid("profile must be \"v1\" or \"v2\", got " + p);
  if (!info[2].IsNumber() || !info[3].IsNumber()) invalid("shape dimensions must be numbers");
  a.rows = info[2].As<Napi::Number>().DoubleValue();
  a.cols = info[3].As<Napi::Number>().DoubleValue();
  if (info.Length() > optionsIndex && info[optionsIndex].IsObject()) {
    auto o = info[optionsIndex].As<Napi::Object>();
    if (o.Has("maxOutputBytes") && o.Get("maxOutputBytes").IsNumber()) {
      const double m = o.Get("maxOutputBytes").As<Napi::Number>().DoubleValue();
      if (!(m >= 0 && m <= double(kHardMaxOutputBytes))) invalid("maxOutputBytes must be between 0 and 2^40");
      a.maxOutputBytes = uint64_t(m);
    }
    if (o.Has("device") && o.Get("device").IsString()) a.device = o.Get("device").As<Napi::String>().Utf8Value();
  }
  return a;
}

std::string deviceOption(const Napi::CallbackInfo& info, size_t i) {
  if (info.Length() > i && info[i].IsObject()) {
    auto o = info[i].As<Napi::Object>();
    if (o.Has("device") && o.Get("device").IsString()) return o.Get("device").As<Napi::String>().Utf8Value();
  }
  return "";
}

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

Napi::Value Parse(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Args a = readArgs(info, 4);
    Container c = parse(a.bytes, a.len, a.profile, a.rows, a.cols, a.maxOutputBytes);
    Napi::Env env = info.Env();
    auto table = Napi::Uint32Array::New(env, c.leafTable.size());
    std::copy(c.leafTable.begin(), c.leafTable.end(), table.Data());
    auto first = Napi::Uint32Array::New(env, c.blockFirstLeaf.size());
    std::copy(c.blockFirstLeaf.begin(), c.blockFirstLeaf.end(), first.Data());
    auto out = Napi::Object::New(env);
    out.Set("leafTable", table);
    out.Set("blockFirstLeaf", first);
    out.Set("leafCount", double(c.leafCount()));
    out.Set("tilesY", double(c.tilesY));
    out.Set("tilesX", double(c.tilesX));
    out.Set("blockCount", double(c.blockCount));
    return out;
  });
}

// (bytes, profile, rows, cols, out: Float32Array, options?)
Napi::Value DecodeInto(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Args a = readArgs(info, 5);
    Container c = parse(a.bytes, a.len, a.profile, a.rows, a.cols, a.maxOutputBytes);
    if (info.Length() < 5 || !info[4].IsTypedArray() || info[4].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
      invalid("out must be a Float32Array");
    auto out = info[4].As<Napi::Float32Array>();
    if (uint64_t(out.ElementLength()) != c.rows * c.cols)
      invalid("out has " + std::to_string(out.ElementLength()) + " elements, the shape needs " + std::to_string(c.rows * c.cols));
    VulkanDecoder& d = decoderFor(a.device);
    decodeInto(d, a.bytes, a.len, c, out.Data());
    return info.Env().Undefined();
  });
}

// ---- asynchronous decode -------------------------------------------------------------------
//
// All validation (arguments, the native parse, the dispatch plan) runs on the JS thread before
// the worker is queued, so a bad stream rejects with its code without using a pool thread. The
// worker owns a copy of the input bytes and decodes into memory it owns: JS can neither free
// nor see either while the GPU round trip (upload, submit, wait, readback) runs on the pool
// thread. decodeAsync hands that memory to JS as the result's ArrayBuffer (no copy);
// decodeIntoAsync copies it into the caller's Float32Array when the worker is done, after
// checking that array still has the expected length (it may have been detached meanwhile).

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

class DecodeWorker : public Napi::AsyncWorker {
 public:
  DecodeWorker(Napi::Env env, VulkanDecoder& decoder, std::unique_ptr<uint8_t[]> bytes, size_t len, Container container)
      : Napi::AsyncWorker(env, "sgfp4.decodeAsync"),
        deferred_(Napi::Promise::Deferred::New(env)),
        decoder_(decoder),
        bytes_(std::move(bytes)),
        len_(len),
        container_(std::move(container)) {}

  Napi::Promise promise() const { return deferred_.Promise(); }

  // decodeIntoAsync: the array to copy into when done (held so it is not collected).
  void target(Napi::Float32Array out) { target_ = Napi::Persistent(out); }

  void Execute() override {
    try {
      const size_t n = size_t(container_.rows * container_.cols);
      // malloc, not new[]: the block is handed to an ArrayBuffer whose finalizer calls free.
      out_.reset(static_cast<float*>(std::malloc(std::max<size_t>(1, n) * sizeof(float))));
      if (!out_) throw std::bad_alloc();
      decodeInto(decoder_, bytes_.get(), len_, container_, out_.get());
      bytes_.reset();  // the input is no longer needed; free it before the JS thread runs OnOK
    } catch (const BackendFailure& e) {
      fail(e.code, e.what(), e.reason);
    } catch (const Failure& e) {
      fail(e.code, e.what(), "");
    } catch (const std::bad_alloc&) {
      fail("BACKEND_FAILURE", "BACKEND_FAILURE: out of host memory", "vulkan-error");
    } catch (const std::exception& e) {
      fail("BACKEND_FAILURE", std::string("BACKEND_FAILURE: ") + e.what(), "vulkan-error");
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    const size_t n = size_t(container_.rows * container_.cols);
    if (!target_.IsEmpty()) {
      Napi::Float32Array out = target_.Value();
      if (out.ElementLength() != n) {
        reject(Failure("INVALID_ARGUMENT", "out changed length (detached?) while the decode ran"));
        return;
      }
      std::memcpy(out.Data(), out_.get(), n * sizeof(float));
      deferred_.Resolve(out);
      return;
    }
    float* data = out_.release();
    auto buffer = Napi::ArrayBuffer::New(env, data, n * sizeof(float), [](Napi::Env, void* p) { std::free(p); });
    deferred_.Resolve(Napi::Float32Array::New(env, n, buffer, 0));
  }

  void OnError(const Napi::Error&) override {
    Napi::Error e = Napi::Error::New(Env(), message_);
    e.Set("code", Napi::String::New(Env(), code_));
    if (!reason_.empty()) e.Set("reason", Napi::String::New(Env(), reason_));
    deferred_.Reject(e.Value());
  }

 private:
  void fail(const std::string& code, const std::string& message, const std::string& reason) {
    code_ = code;
    message_ = message;
    reason_ = reason;
    SetError(message);
  }
  void reject(const Failure& f) { deferred_.Reject(toJsError(Env(), f).Value()); }

  Napi::Promise::Deferred deferred_;
  VulkanDecoder& decoder_;
  std::unique_ptr<uint8_t[]> bytes_;
  size_t len_;
  Container container_;
  std::unique_ptr<float, FreeDeleter> out_;
  Napi::Reference<Napi::Float32Array> target_;
  std::string code_, message_, reason_;
};

// (bytes, profile, rows, cols, out: Float32Array | null, options?) -> Promise<Float32Array>.
// Argument and stream errors are thrown synchronously (the JS wrapper turns them into
// rejections); only the GPU work runs on the worker.
Napi::Value DecodeAsync(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Args a = readArgs(info, 5);
    Container c = parse(a.bytes, a.len, a.profile, a.rows, a.cols, a.maxOutputBytes);
    const bool into = info.Length() > 4 && !info[4].IsNull() && !info[4].IsUndefined();
    if (into) {
      if (!info[4].IsTypedArray() || info[4].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) invalid("out must be a Float32Array");
      auto out = info[4].As<Napi::Float32Array>();
      if (uint64_t(out.ElementLength()) != c.rows * c.cols)
        invalid("out has " + std::to_string(out.ElementLength()) + " elements, the shape needs " + std::to_string(c.rows * c.cols));
    }
    VulkanDecoder& d = decoderFor(a.device);
    checkDecodable(d, c, a.len);
    // A copy of the input: the caller may reuse or detach its buffer as soon as we return.
    std::unique_ptr<uint8_t[]> bytes(new uint8_t[std::max<size_t>(1, a.len)]);
    if (a.len) std::memcpy(bytes.get(), a.bytes, a.len);
    auto* worker = new DecodeWorker(info.Env(), d, std::move(bytes), a.len, std::move(c));
    if (into) worker->target(info[4].As<Napi::Float32Array>());
    Napi::Promise p = worker->promise();
    worker->Queue();  // the worker deletes itself after OnOK / OnError
    return p;
  });
}

Napi::Value Info(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    VulkanDecoder& d = decoderFor(deviceOption(info, 0));
    DeviceInfo i = deviceInfo(d);
    Napi::Env env = info.Env();
    auto o = Napi::Object::New(env);
    o.Set("index", i.index);
    o.Set("name", i.name);
    o.Set("type", i.type);
    o.Set("vendorId", i.vendorId);
    o.Set("deviceId", i.deviceId);
    o.Set("apiVersion", i.apiVersion);
    o.Set("driverVersion", i.driverVersion);
    o.Set("driverName", i.driverName);
    o.Set("driverInfo", i.driverInfo);
    o.Set("loader", i.loaderPath);
    o.Set("selectedBy", i.selectedBy);
    auto devices = Napi::Array::New(env, i.allDevices.size());
    for (size_t k = 0; k < i.allDevices.size(); k++) devices.Set(uint32_t(k), i.allDevices[k]);
    o.Set("devices", devices);
    auto lim = Napi::Object::New(env);
    lim.Set("maxStorageBufferRange", double(i.maxStorageBufferRange));
    lim.Set("maxMemoryAllocationSize", double(i.maxMemoryAllocationSize));
    lim.Set("minStorageBufferOffsetAlignment", double(i.minStorageBufferOffsetAlignment));
    auto wg = Napi::Array::New(env, 3);
    for (uint32_t k = 0; k < 3; k++) wg.Set(k, i.maxComputeWorkGroupCount[k]);
    lim.Set("maxComputeWorkGroupCount", wg);
    lim.Set("maxComputeWorkGroupInvocations", i.maxComputeWorkGroupInvocations);
    lim.Set("maxComputeSharedMemorySize", i.maxComputeSharedMemorySize);
    lim.Set("timestampPeriodNs", i.timestampPeriodNs);
    lim.Set("timestampValidBits", i.timestampValidBits);
    lim.Set("deviceLocalHeapBytes", double(i.deviceLocalHeapBytes));
    o.Set("limits", lim);
    return o;
  });
}

Napi::Value Bench(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Args a = readArgs(info, 4);
    BenchOptions bo;
    if (info.Length() > 4 && info[4].IsObject()) {
      auto o = info[4].As<Napi::Object>();
      if (o.Has("reps") && o.Get("reps").IsNumber()) bo.reps = std::max(1u, std::min(1000u, o.Get("reps").As<Napi::Number>().Uint32Value()));
      if (o.Has("warmup") && o.Get("warmup").IsNumber()) bo.warmup = std::min(100u, o.Get("warmup").As<Napi::Number>().Uint32Value());
    }
    Container c = parse(a.bytes, a.len, a.profile, a.rows, a.cols, a.maxOutputBytes);
    BenchResult r = bench(decoderFor(a.device), a.bytes, a.len, c, bo);
    Napi::Env env = info.Env();
    auto arr = [&](const std::vector<double>& v) {
      auto x = Napi::Array::New(env, v.size());
      for (size_t k = 0; k < v.size(); k++) x.Set(uint32_t(k), v[k]);
      return x;
    };
    auto o = Napi::Object::New(env);
    o.Set("decodeNs", arr(r.decodeNs));
    o.Set("decodeBaselineNs", arr(r.decodeBaselineNs));
    o.Set("batch", r.batch);
    o.Set("copyBufferNs", arr(r.copyBufferNs));
    o.Set("copyShaderNs", arr(r.copyShaderNs));
    o.Set("outputBytes", double(r.outputBytes));
    o.Set("streamBytes", double(r.streamBytes));
    o.Set("leafTableBytes", double(r.leafTableBytes));
    o.Set("leafCount", double(c.leafCount()));
    o.Set("dispatches", r.dispatches);
    return o;
  });
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("parse", Napi::Function::New(env, Parse));
  exports.Set("decodeInto", Napi::Function::New(env, DecodeInto));
  exports.Set("decodeAsync", Napi::Function::New(env, DecodeAsync));
  exports.Set("info", Napi::Function::New(env, Info));
  exports.Set("bench", Napi::Function::New(env, Bench));
  return exports;
}

}  // namespace

NODE_API_MODULE(sgfp4_vulkan, Init)
