#include "host_copy.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "work_pool.hpp"

namespace sgfp4 {

namespace {

// SGFP4_VULKAN_HOST_COPY=memcpy: plain memcpy (the benchmark's comparison), read per copy.
bool streamingStores() {
  const char* v = std::getenv("SGFP4_VULKAN_HOST_COPY");
  return !(v && std::strcmp(v, "memcpy") == 0);
}

// One thread's part. The copies here are megabytes the CPU does not read again soon (inputs the
// GPU reads, outputs handed to the caller), so the stores bypass the cache: no read for ownership
// of each destination line, a third less memory traffic. On the 2-core container 8 MiB parts
// copied at 16 GB/s against memcpy's 8-9 GB/s (BENCHMARKS.md, session 14).
void copyPart(uint8_t* d, const uint8_t* s, size_t n, bool streaming) {
  (void)streaming;  // no streaming stores without SSE2
#if defined(__SSE2__)
  if (n >= 4096 && streaming) {
    const size_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;  // stores need 16-byte alignment
    std::memcpy(d, s, head);
    d += head, s += head, n -= head;
    const size_t blocks = n / 64;
    auto* dv = reinterpret_cast<__m128i*>(d);
    const auto* sv = reinterpret_cast<const __m128i*>(s);
    for (size_t i = 0; i < blocks; i++, dv += 4, sv += 4) {
      const __m128i a = _mm_loadu_si128(sv), b = _mm_loadu_si128(sv + 1), c = _mm_loadu_si128(sv + 2), e = _mm_loadu_si128(sv + 3);
      _mm_stream_si128(dv, a);
      _mm_stream_si128(dv + 1, b);
      _mm_stream_si128(dv + 2, c);
      _mm_stream_si128(dv + 3, e);
    }
    _mm_sfence();  // visible to the other threads and the device before the part counts as done
    d += blocks * 64, s += blocks * 64, n -= blocks * 64;
  }
#endif
  std::memcpy(d, s, n);
}

}  // namespace

void copySerial(void* dst, const void* src, size_t bytes) { copyPart(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes, streamingStores()); }

void copyParallel(void* dst, const void* src, size_t bytes) {
  constexpr size_t kPage = 4096, kMinPart = size_t(512) << 10;  // below this a thread costs more than it saves
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  // Parts in whole pages, so no two threads write (or fault) the same page.
  const size_t pages = (bytes + kPage - 1) / kPage;
  const bool streaming = streamingStores();
  parallelRanges(pages, kMinPart / kPage, [&](size_t p0, size_t p1) {
    const size_t from = p0 * kPage, to = std::min(bytes, p1 * kPage);
    copyPart(d + from, s + from, to - from, streaming);
  });
}

}  // namespace sgfp4
