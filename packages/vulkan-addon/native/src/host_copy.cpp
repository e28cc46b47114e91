#include "host_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace sgfp4 {

void copyParallel(void* dst, const void* src, size_t bytes) {
  constexpr size_t kPerThread = size_t(16) << 20;  // below this a thread costs more than it saves
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = std::min<size_t>({8, hw, bytes / kPerThread});
  if (threads <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const size_t part = (bytes / threads + 4095) & ~size_t(4095);
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; t++) {
    const size_t from = t * part;
    if (from >= bytes) break;
    auto copyPart = [=] { std::memcpy(d + from, s + from, std::min(part, bytes - from)); };
    try {
      pool.emplace_back(copyPart);
    } catch (...) {  // no thread to be had: copy this part here
      copyPart();
    }
  }
  std::memcpy(d, s, std::min(part, bytes));
  for (auto& th : pool) th.join();
}

}  // namespace sgfp4
