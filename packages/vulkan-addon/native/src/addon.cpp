// Node-API surface of the shipped addon. Every entry parses and validates the stream natively
// (the only validation on success: the TypeScript wrapper runs @sgfp4/format's parse only to
// give the detailed error after a rejection) and reports failures as Error objects with `code`
// (a DECISIONS.md section-3 code, or INVALID_ARGUMENT / LIMIT_EXCEEDED / BACKEND_FAILURE) and,
// for backend failures, `reason` ("no-loader", "no-device", "vulkan-error").
#include <napi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "addon_args.hpp"
#include "decode_worker.hpp"
#include "stage_trace.hpp"
#include "source_hash.h"  // generated with shaders.h: kSourceHash, the hash of the native sources
#include "vk_decode.hpp"

#ifdef SGFP4_BENCH
namespace sgfp4 {
void registerBenchExports(Napi::Env env, Napi::Object exports);  // native/bench, bench-only build
}
#endif

namespace {

using namespace sgfp4;

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

// A decode call's parse: on a device already open, a v2 leaf table goes straight into the pooled
// upload memory that the direct route's kernel binds (leafArena), instead of the heap and then a
// copy there; with streamLen, the parse also copies the stream into upload memory as it goes
// (the arena is handed back through `arenaOut`, for parsedStream). The verdict and error are the
// parse's either way.
Container parseForDecode(const Args& a, const size_t* streamLen = nullptr, std::shared_ptr<TableArena>* arenaOut = nullptr) {
  std::shared_ptr<TableArena> arena = a.profile == Profile::V2 ? leafArena(existingDevice(a.device), a.rows, a.cols, a.format, streamLen) : nullptr;
  if (arenaOut) *arenaOut = arena;
  return parse(a.bytes, a.len, a.profile, a.rows, a.cols, a.maxOutputBytes, 0, std::move(arena));
}

// (bytes, profile, rows, cols, options?) -> a new Float32Array (f32) or Uint16Array (f16, bf16),
// written by the GPU (or by the one host copy, see decodeInto).
Napi::Value Decode(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    CallTrace trace("decode");
    Args a = readArgs(info, 4);
    Container c = parseForDecode(a);
    trace.mark("parse");
    VulkanDevice& d = deviceFor(a.device);
    const uint64_t count = c.rows * c.cols;
    // A hand-over plans once, in decodeStaged (LIMIT_EXCEEDED there comes before any buffer or
    // array): planning a 4096x8192 v2 stream took 0.2-0.3 ms on the H100 host.
    if (!d.unifiedMemory && count * elementBytes(a.format) >= kHandOverMinBytes) {
      std::optional<PendingHandOver> result;
      StagedIo io;
      io.whileGpuRuns = [&](void* memory) {
        trace.mark("decode (submitted)");
        result.emplace(info.Env(), a.format, count, memory);
        trace.mark("result array");
      };
      Lease readback = decodeToReadback(d, a.bytes, a.len, c, a.format, io);
      trace.mark("decode (rest)");
      return result->adopt(std::move(readback));
    }
    planFor(d, c, a.len, a.format);  // LIMIT_EXCEEDED before the output is allocated
    trace.mark("plan");
    void* data = nullptr;
    Napi::TypedArray out = newOutputArray(info.Env(), a.format, count, &data);
    decodeInto(d, a.bytes, a.len, c, a.format, data);
    return out;
  });
}

// (bytes, profile, rows, cols, out, options?)
Napi::Value DecodeInto(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    CallTrace trace("decodeInto");
    Args a = readArgs(info, 5);
    Container c = parseForDecode(a);
    trace.mark("parse");
    void* out = outputArray(info, 4, a.format, c.rows * c.cols);
    decodeInto(deviceFor(a.device), a.bytes, a.len, c, a.format, out);
    trace.mark("decode");
    return info.Env().Undefined();
  });
}

// (bytes, profile, rows, cols, out | null, options?) -> Promise. Argument and stream errors are
// thrown synchronously (the JS wrapper turns them into rejections); only the GPU work runs on
// the worker.
Napi::Value DecodeAsync(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    CallTrace trace("decodeAsync");
    Args a = readArgs(info, 5);
    const bool into = info.Length() > 4 && !info[4].IsNull() && !info[4].IsUndefined();
    // A hand-over on the direct route copies its input into upload memory before returning: the
    // parse makes that copy as it goes, each range of records right after reading them
    // (SGFP4_VULKAN_PARSE_COPY=0: the worker's separate copy, as before; read per call).
    const char* knob = std::getenv("SGFP4_VULKAN_PARSE_COPY");
    const bool handOver = !into && a.rows * a.cols * double(elementBytes(a.format)) >= double(kHandOverMinBytes);
    const size_t len = a.len;
    std::shared_ptr<TableArena> arena;
    Container c = parseForDecode(a, handOver && !(knob && knob[0] == '0') ? &len : nullptr, &arena);
    trace.mark("parse");
    if (into) outputArray(info, 4, a.format, c.rows * c.cols);
    VulkanDevice& d = deviceFor(a.device);
    planFor(d, c, a.len, a.format);  // LIMIT_EXCEEDED now, not on the worker
    trace.mark("plan");
    Lease stream = parsedStream(arena.get(), d, a.len);
    // Owned here until queued: a failure before (the result array not allocated) frees it.
    std::unique_ptr<DecodeWorker> worker(new DecodeWorker(info.Env(), d, a.bytes, a.len, std::move(c), a.format, into, std::move(stream)));
    trace.mark("worker");  // the input's copy, the readback or result array taken
    if (into) worker->target(info[4].As<Napi::TypedArray>());
    Napi::Promise p = worker->promise();
    DecodeWorker* queued = worker.release();
    queued->Queue();  // the worker deletes itself after OnOK / OnError, which run after this call
    try {
      queued->makeResult();
    } catch (const Napi::Error&) {
      // OnOK makes it then (and rejects if it fails again); the promise is already queued.
    }
    trace.mark("result array");
    return p;
  });
}

Napi::Value Info(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value { return deviceInfoObject(info.Env(), deviceFor(deviceOption(info, 0)).info); });
}

// Frees the buffers the device keeps between decodes (the Decoder's close()).
Napi::Value Trim(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    deviceFor(deviceOption(info, 0)).pool.trim();
    return info.Env().Undefined();
  });
}

// What the device keeps and did: idle pooled buffers, host-memory imports so far (tests).
Napi::Value Stats(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    VulkanDevice& d = deviceFor(deviceOption(info, 0));
    auto o = Napi::Object::New(info.Env());
    o.Set("idleBuffers", double(d.pool.idleCount()));
    o.Set("hostImports", double(d.hostImports.load()));
    o.Set("buffersMade", double(d.buffersMade.load()));
    auto flags = Napi::Object::New(info.Env());  // VkMemoryPropertyFlags of the last buffer made of each kind
    flags.Set("device", double(d.memoryFlags[size_t(Memory::Device)].load()));
    flags.Set("upload", double(d.memoryFlags[size_t(Memory::HostUpload)].load()));
    flags.Set("readback", double(d.memoryFlags[size_t(Memory::HostReadback)].load()));
    o.Set("memoryFlags", flags);
    {
      std::lock_guard<std::mutex> lock(d.submissionsMutex);
      o.Set("idleSubmissions", double(d.idleSubmissions.size()));
    }
    return o;
  });
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("parse", Napi::Function::New(env, Parse));
  exports.Set("decode", Napi::Function::New(env, Decode));
  exports.Set("decodeInto", Napi::Function::New(env, DecodeInto));
  exports.Set("decodeAsync", Napi::Function::New(env, DecodeAsync));
  exports.Set("info", Napi::Function::New(env, Info));
  exports.Set("trim", Napi::Function::New(env, Trim));
  exports.Set("stats", Napi::Function::New(env, Stats));
  exports.Set("sourceHash", Napi::String::New(env, kSourceHash));
#ifdef SGFP4_BENCH
  registerBenchExports(env, exports);
#endif
  return exports;
}

}  // namespace

NODE_API_MODULE(sgfp4_vulkan, Init)
