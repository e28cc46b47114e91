#include "decode_worker.hpp"

#include <cstring>

#include "host_copy.hpp"

namespace sgfp4 {

DecodeWorker::DecodeWorker(Napi::Env env, VulkanDevice& device, const uint8_t* bytes, size_t len, Container container, OutputFormat format, bool intoTarget,
                           Lease parsedStream)
    : Napi::AsyncWorker(env, "sgfp4.decodeAsync"),
      deferred_(Napi::Promise::Deferred::New(env)),
      device_(device),
      len_(len),
      container_(std::move(container)),
      format_(format) {
  const uint64_t count = container_.rows * container_.cols, outBytes = count * elementBytes(format_);
  handOver_ = !intoTarget && !device_.unifiedMemory && outBytes >= kHandOverMinBytes;
  // A copy of the input: the caller may reuse or detach its buffer as soon as the call returns.
  // A direct hand-over copies it straight into the pooled upload memory the kernel reads (no
  // fresh pages, no second copy); otherwise into a new array. On the work pool either way.
  const uint64_t padded = (uint64_t(len) + 15) & ~uint64_t(15);
  if (handOver_ && defaultRoute() == Route::Direct && parsedStream.buf.buf && parsedStream.buf.size >= padded) {
    stream_ = std::move(parsedStream);  // copied by the parse
  } else if (handOver_ && defaultRoute() == Route::Direct) {
    stream_ = Lease(device_.pool, Memory::HostUpload, padded);
    auto* p = static_cast<uint8_t*>(stream_.buf.mapped);
    if (len) copyParallel(p, bytes, len);
    std::memset(p + len, 0, padded - len);
  } else {
    bytes_.reset(new uint8_t[std::max<size_t>(1, len)]);
    if (len) copyParallel(bytes_.get(), bytes, len);
  }
  if (handOver_) {
    readbackLease_ = Lease(device_.pool, Memory::HostReadback, outBytes);
    readbackMemory_ = readbackLease_.buf.mapped;
  } else if (!intoTarget) {
    // No JS code can reach it before the promise resolves, so the worker writes into it directly.
    result_ = Napi::Persistent(newOutputArray(env, format_, count, &resultData_));
  }
}

void DecodeWorker::makeResult() {
  if (handOver_) pending_.emplace(Env(), format_, container_.rows * container_.cols, readbackMemory_);
}

void DecodeWorker::Execute() {
  try {
    if (handOver_) {
      StagedIo io;
      io.readback = &readbackLease_;
      io.stream = stream_.buf.buf ? &stream_ : nullptr;
      decodeStaged(device_, bytes_.get(), len_, container_, format_, defaultRoute(), io);
    }
    else if (resultData_) decodeInto(device_, bytes_.get(), len_, container_, format_, resultData_);
    else readback_.emplace(decodeToHost(device_, bytes_.get(), len_, container_, format_));
    bytes_.reset();  // the input is no longer needed; free it before the JS thread runs OnOK
    stream_ = Lease();
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

void DecodeWorker::OnOK() {
  Napi::Env env = Env();
  const uint64_t n = container_.rows * container_.cols;
  if (handOver_) {
    try {
      if (!pending_) pending_.emplace(env, format_, n, readbackMemory_);  // makeResult failed: try again
      deferred_.Resolve(pending_->adopt(std::move(readbackLease_)));
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
    }
    return;
  }
  if (!result_.IsEmpty()) {
    deferred_.Resolve(result_.Value());
    return;
  }
  Napi::TypedArray out = target_.Value();
  if (uint64_t(out.ElementLength()) != n) {
    deferred_.Reject(toJsError(env, Failure("INVALID_ARGUMENT", "out changed length (detached?) while the decode ran")).Value());
    return;
  }
  readback_->copyTo(static_cast<uint8_t*>(out.ArrayBuffer().Data()) + out.ByteOffset());
  readback_.reset();  // its buffers go back to the pool
  deferred_.Resolve(out);
}

void DecodeWorker::OnError(const Napi::Error&) {
  Napi::Error e = Napi::Error::New(Env(), message_);
  e.Set("code", Napi::String::New(Env(), code_));
  if (!reason_.empty()) e.Set("reason", Napi::String::New(Env(), reason_));
  deferred_.Reject(e.Value());
}

void DecodeWorker::fail(const std::string& code, const std::string& message, const std::string& reason) {
  code_ = code;
  message_ = message;
  reason_ = reason;
  SetError(message);
}

}  // namespace sgfp4
