#include "buffer_pool.hpp"

#include <algorithm>

#include "vk_device.hpp"

namespace sgfp4 {

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  std::swap(device, o.device);
  std::swap(buf, o.buf);
  std::swap(mem, o.mem);
  std::swap(size, o.size);
  std::swap(mapped, o.mapped);
  return *this;
}

Buffer::~Buffer() {
  if (buf) vkDestroyBuffer(device, buf, nullptr);
  if (mem) vkFreeMemory(device, mem, nullptr);
}

namespace {
// Sizes rounded so that similar requests share buffers: powers of two up to 1 MiB, then whole MiB.
VkDeviceSize pooledSize(VkDeviceSize n) {
  const VkDeviceSize mib = VkDeviceSize(1) << 20;
  if (n > mib) return (n + mib - 1) / mib * mib;
  VkDeviceSize p = 4096;
  while (p < n) p <<= 1;
  return p;
}
}  // namespace

Buffer BufferPool::take(Memory kind, VkDeviceSize size) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto best = idle_.end();
    for (auto it = idle_.begin(); it != idle_.end(); ++it)
      if (it->kind == kind && it->buf.size >= size && it->buf.size <= 2 * size + 4096 && (best == idle_.end() || it->buf.size < best->buf.size)) best = it;
    if (best != idle_.end()) {
      Buffer b = std::move(best->buf);
      idle_.erase(best);
      return b;
    }
  }
  const VkDeviceSize rounded = pooledSize(size);
  return d_.makeBuffer(rounded <= d_.info.maxMemoryAllocationSize ? rounded : size, kind);
}

void BufferPool::give(Memory kind, Buffer&& b) {
  Buffer dropped;  // freed outside the lock
  std::lock_guard<std::mutex> lock(mutex_);
  if (size_t(std::count_if(idle_.begin(), idle_.end(), [&](const Idle& i) { return i.kind == kind; })) >= kMaxIdlePerKind) {
    auto oldest = std::find_if(idle_.begin(), idle_.end(), [&](const Idle& i) { return i.kind == kind; });
    dropped = std::move(oldest->buf);
    idle_.erase(oldest);
  }
  idle_.push_back(Idle{kind, std::move(b)});
}

void BufferPool::trim() {
  std::vector<Idle> gone;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    gone.swap(idle_);
  }
}

size_t BufferPool::idleCount() {
  std::lock_guard<std::mutex> lock(mutex_);
  return idle_.size();
}

}  // namespace sgfp4
