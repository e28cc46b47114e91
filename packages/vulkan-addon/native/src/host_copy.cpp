#include "host_copy.hpp"

#include <cstdint>
#include <cstring>

#include "work_pool.hpp"

namespace sgfp4 {

void copyParallel(void* dst, const void* src, size_t bytes) {
  constexpr size_t kPage = 4096, kMinPart = size_t(512) << 10;  // below this a thread costs more than it saves
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  // Parts in whole pages, so no two threads write (or fault) the same page.
  const size_t pages = (bytes + kPage - 1) / kPage;
  parallelRanges(pages, kMinPart / kPage, [&](size_t p0, size_t p1) {
    const size_t from = p0 * kPage, to = std::min(bytes, p1 * kPage);
    std::memcpy(d + from, s + from, to - from);
  });
}

}  // namespace sgfp4
