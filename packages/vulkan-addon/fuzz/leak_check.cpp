// Leak check of the native parser: many parses of varied containers (every input in the
// directories given, in the fuzzer's prefixed format, as is, truncated, with a header bit
// flipped and with the other profile), accepted and rejected ones alike. Built with
// -fsanitize=address (LeakSanitizer runs at exit and fails the process on any leak) and,
// separately, without sanitizers for valgrind --leak-check=full. Both via scripts/leak-check.mjs.
#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../native/src/sgfp4_parse.hpp"

using namespace sgfp4;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: leak_check DECODES DIR...\n");
    return 2;
  }
  const long decodes = std::atol(argv[1]);
  std::vector<std::vector<uint8_t>> inputs;
  for (int a = 2; a < argc; a++) {
    DIR* d = opendir(argv[a]);
    if (!d) continue;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream in(std::string(argv[a]) + "/" + e->d_name, std::ios::binary);
      std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (bytes.size() >= 5) inputs.push_back(std::move(bytes));
    }
    closedir(d);
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "leak_check: no inputs\n");
    return 2;
  }
  long accepted = 0, rejected = 0;
  uint64_t leaves = 0;
  for (long i = 0; i < decodes; i++) {
    const std::vector<uint8_t>& in = inputs[size_t(i) % inputs.size()];
    const long variant = (i / long(inputs.size())) % 4;
    Profile profile = (in[0] & 1) ? Profile::V2 : Profile::V1;
    const double rows = in[1] | in[2] << 8, cols = in[3] | in[4] << 8;
    std::vector<uint8_t> s(in.begin() + 5, in.end());
    if (variant == 1) s.resize(s.size() / 2);
    if (variant == 2 && s.size() > 9) s[9] ^= 0x10;
    if (variant == 3) profile = profile == Profile::V1 ? Profile::V2 : Profile::V1;
    try {
      Container c = parse(s.data(), s.size(), profile, rows, cols, kDefaultMaxOutputBytes, 1 /* one thread: the pool's threads live until exit, which valgrind counts as possibly lost */);
      leaves += c.leafCount();
      accepted++;
    } catch (const Failure&) {
      rejected++;
    }
  }
  std::printf("leak_check: %ld parses over %zu inputs: %ld accepted (%llu leaves), %ld rejected\n", decodes, inputs.size(), accepted,
              (unsigned long long)leaves, rejected);
  return accepted > 0 && rejected > 0 ? 0 : 1;
}
