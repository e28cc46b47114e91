// copyParallel (streaming stores on x86, parts on the work pool) against memcpy: every size and
// alignment class, the bytes around the destination untouched. Built with the sanitizers by
// scripts/native-tests.mjs.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "../src/host_copy.hpp"

int main() {
  std::mt19937 rng(14);
  int failed = 0, cases = 0;
  const size_t sizes[] = {0, 1, 15, 16, 63, 64, 65, 4095, 4096, 4097, 65536 + 7, (size_t(512) << 10) - 3, size_t(1) << 20, (size_t(3) << 20) + 11, (size_t(9) << 20) + 4093};
  for (size_t n : sizes) {
    for (int k = 0; k < 4; k++) {
      const size_t so = rng() % 64, doff = rng() % 64, guard = 128;
      std::vector<unsigned char> src(n + so + 1), dst(n + doff + guard), want;
      for (auto& b : src) b = static_cast<unsigned char>(rng());
      for (auto& b : dst) b = 0xA5;
      want = dst;
      std::memcpy(want.data() + doff, src.data() + so, n);
      sgfp4::copyParallel(dst.data() + doff, src.data() + so, n);
      cases++;
      if (dst != want) {
        std::fprintf(stderr, "host_copy_test: size %zu, source offset %zu, destination offset %zu: bytes differ\n", n, so, doff);
        failed++;
      }
    }
  }
  std::printf("host_copy_test: %d passed, %d failed\n", cases - failed, failed);
  return failed ? 1 : 0;
}
