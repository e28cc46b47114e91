// Buffers kept by a device between decodes: the upload staging, the readback memory, and the
// device-side inputs and outputs. Allocating (and, for host-visible memory, pinning) hundreds of
// MiB per call cost more than the decode itself, so a call takes buffers from the pool and gives
// them back when done; close() (trim) frees the idle ones.
#pragma once
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <cstdint>
#include <mutex>
#include <vector>

namespace sgfp4 {

class VulkanDevice;

// Where a buffer's memory lives. On unified-memory devices (CPU, integrated) Device is also
// host-visible and mapped.
enum class Memory { Device, HostUpload, HostReadback };

struct Buffer {
  VkDevice device = VK_NULL_HANDLE;
  VkBuffer buf = VK_NULL_HANDLE;
  VkDeviceMemory mem = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;
  ~Buffer();
};

class BufferPool {
 public:
  explicit BufferPool(VulkanDevice& d) : d_(d) {}
  // An idle buffer of this kind with at least `size` bytes (best fit, at most twice the need),
  // else a new one.
  Buffer take(Memory kind, VkDeviceSize size);
  void give(Memory kind, Buffer&& b);
  // Frees every idle buffer.
  void trim();
  size_t idleCount();

 private:
  struct Idle {
    Memory kind;
    Buffer buf;
  };
  static constexpr size_t kMaxIdlePerKind = 8;
  VulkanDevice& d_;
  std::mutex mutex_;
  std::vector<Idle> idle_;  // oldest first
};

// A buffer taken from the pool for one call, given back when the call ends.
class Lease {
 public:
  Lease() = default;
  Lease(BufferPool& pool, Memory kind, VkDeviceSize size) : pool_(&pool), kind_(kind), buf(pool.take(kind, size)) {}
  Lease(Lease&& o) noexcept : pool_(o.pool_), kind_(o.kind_), buf(std::move(o.buf)) { o.pool_ = nullptr; }
  Lease& operator=(Lease&& o) noexcept {
    release();
    pool_ = o.pool_;
    kind_ = o.kind_;
    buf = std::move(o.buf);
    o.pool_ = nullptr;
    return *this;
  }
  Lease(const Lease&) = delete;
  ~Lease() { release(); }

 private:
  void release() {
    if (pool_ && buf.buf) pool_->give(kind_, std::move(buf));
    pool_ = nullptr;
  }
  BufferPool* pool_ = nullptr;
  Memory kind_ = Memory::Device;

 public:
  Buffer buf;
};

}  // namespace sgfp4
