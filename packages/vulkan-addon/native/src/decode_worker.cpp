#include "decode_worker.hpp"

#include <cstring>

#include "host_copy.hpp"

namespace sgfp4 {

DecodeWorker::DecodeWorker(Napi::Env env, VulkanDevice& device, const uint8_t* bytes, size_t len, Container container, OutputFormat format)
    : Napi::AsyncWorker(env, "sgfp4.decodeAsync"),
      deferred_(Napi::Promise::Deferred::New(env)),
      device_(device),
      bytes_(new uint8_t[std::max<size_t>(1, len)]),
      len_(len),
      container_(std::move(container)),
      format_(format) {
  // A copy: the caller may reuse or detach its buffer as soon as the call returns. On the work
  // pool: the fresh pages' faults and the copy of a large stream are spread over its threads.
  if (len) copyParallel(bytes_.get(), bytes, len);
}

void DecodeWorker::result() {
  const uint64_t bytes = container_.rows * container_.cols * elementBytes(format_);
  if (!device_.unifiedMemory && bytes >= kHandOverMinBytes) {
    handOver_ = true;
    readbackLease_ = Lease(device_.pool, Memory::HostReadback, bytes);
    readbackMemory_ = readbackLease_.buf.mapped;
    return;
  }
  result_ = Napi::Persistent(newOutputArray(Env(), format_, container_.rows * container_.cols, &resultData_));
}

void DecodeWorker::makeResult() {
  if (handOver_) pending_.emplace(Env(), format_, container_.rows * container_.cols, readbackMemory_);
}

void DecodeWorker::Execute() {
  try {
    if (handOver_) decodeStaged(device_, bytes_.get(), len_, container_, format_, nullptr, defaultRoute(), nullptr, &readbackLease_);
    else if (resultData_) decodeInto(device_, bytes_.get(), len_, container_, format_, resultData_);
    else readback_.emplace(decodeToHost(device_, bytes_.get(), len_, container_, format_));
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
