#include "addon_args.hpp"

#include <algorithm>
#include <memory>

namespace sgfp4 {

Napi::Error toJsError(Napi::Env env, const Failure& f) {
  Napi::Error e = Napi::Error::New(env, f.what());
  e.Set("code", Napi::String::New(env, f.code));
  if (auto* b = dynamic_cast<const BackendFailure*>(&f)) e.Set("reason", Napi::String::New(env, b->reason));
  return e;
}

void invalid(const std::string& msg) { throw Failure("INVALID_ARGUMENT", msg); }

namespace {
OutputFormat formatOf(const std::string& s) {
  if (s == "f32") return OutputFormat::F32;
  if (s == "f16") return OutputFormat::F16;
  if (s == "bf16") return OutputFormat::BF16;
  invalid("format must be \"f32\", \"f16\" or \"bf16\", got " + s);
}
}  // namespace

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
    if (o.Has("format") && !o.Get("format").IsUndefined()) {
      if (!o.Get("format").IsString()) invalid("format must be a string");
      a.format = formatOf(o.Get("format").As<Napi::String>().Utf8Value());
    }
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

void* outputArray(const Napi::CallbackInfo& info, size_t i, OutputFormat format, uint64_t count) {
  const napi_typedarray_type want = format == OutputFormat::F32 ? napi_float32_array : napi_uint16_array;
  const char* name = format == OutputFormat::F32 ? "Float32Array" : "Uint16Array";
  if (info.Length() <= i || !info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().TypedArrayType() != want)
    invalid(std::string("out must be a ") + name + " for this format");
  auto out = info[i].As<Napi::TypedArray>();
  if (uint64_t(out.ElementLength()) != count)
    invalid("out has " + std::to_string(out.ElementLength()) + " elements, the shape needs " + std::to_string(count));
  return static_cast<uint8_t*>(out.ArrayBuffer().Data()) + out.ByteOffset();
}

Napi::TypedArray newOutputArray(Napi::Env env, OutputFormat format, uint64_t count, void** data) {
  auto buffer = Napi::ArrayBuffer::New(env, size_t(count * elementBytes(format)));
  *data = buffer.Data();
  if (format == OutputFormat::F32) return Napi::Float32Array::New(env, count, buffer, 0);
  return Napi::Uint16Array::New(env, count, buffer, 0);
}

PendingHandOver::PendingHandOver(Napi::Env env, OutputFormat format, uint64_t count, void* memory) {
  auto held = std::make_unique<Lease>();
  auto buffer = Napi::ArrayBuffer::New(env, memory, size_t(count * elementBytes(format)), [](Napi::Env, void*, Lease* lease) { delete lease; }, held.get());
  holder_ = held.release();  // owned by the ArrayBuffer's finalizer now
  array_ = Napi::Persistent(format == OutputFormat::F32 ? Napi::TypedArray(Napi::Float32Array::New(env, count, buffer, 0)) : Napi::TypedArray(Napi::Uint16Array::New(env, count, buffer, 0)));
}

Napi::TypedArray PendingHandOver::adopt(Lease&& readback) {
  *holder_ = std::move(readback);
  return array_.Value();
}

Napi::TypedArray handOver(Napi::Env env, OutputFormat format, uint64_t count, Lease&& readback) {
  PendingHandOver result(env, format, count, readback.buf.mapped);
  return result.adopt(std::move(readback));
}

Napi::Object deviceInfoObject(Napi::Env env, const DeviceInfo& i) {
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
  auto formats = Napi::Array::New(env);
  formats.Set(uint32_t(0), "f32");
  if (i.halfOutputs) {
    formats.Set(uint32_t(1), "f16");
    formats.Set(uint32_t(2), "bf16");
  }
  o.Set("formats", formats);
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
}

}  // namespace sgfp4
