// Sanitizer driver: runs the native parser over a corpus (hand-built containers and the golden
// vectors, written by scripts/native-tests.mjs) and deterministic mutations of each: every
// truncation length (sampled for big seeds), bit flips, random byte and word overwrites. For
// every accepted stream it checks the leaf table's invariants and expands it on the CPU into
// an exactly sized buffer, so AddressSanitizer sees any out-of-bounds access.
// File names: <id>.<v1|v2>.<rows>x<cols>.<OK|CODE|ANY>.bin
#include <dirent.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../src/sgfp4_parse.hpp"
#include "test_arena.hpp"

using namespace sgfp4;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next() {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static int invariantFailures = 0;
static void fail(const std::string& what) {
  if (invariantFailures++ < 20) std::printf("INVARIANT %s\n", what.c_str());
}

// Independent CPU expansion of the leaf table (the spec's arithmetic), exact-size output.
static void expand(const std::vector<uint8_t>& s, const Container& c) {
  const uint64_t n = c.rows * c.cols;
  std::unique_ptr<float[]> out(new float[n]);
  std::vector<uint8_t> cover(c.blockCount * 4096, 0);
  for (size_t i = 0; i < c.leafCount(); i++) {
    const uint32_t b = c.leafTable[4 * i], g = c.leafTable[4 * i + 1], h = c.leafTable[4 * i + 2], off = c.leafTable[4 * i + 3];
    const uint32_t y = g & 63, x = (g >> 6) & 63, log2 = (g >> 12) & 7, mode = (g >> 15) & 1, size = 1u << log2;
    if (b >= c.blockCount || log2 < 2 || log2 > 6 || y % size || x % size || (g >> 16) || off % (c.profile == Profile::V1 ? 8 : 16) || uint64_t(off) + sgfp4_leaf_payload_bytes(log2, mode) > s.size()) {
      fail("leaf " + std::to_string(i) + " out of its bounds");
      return;
    }
    if (i > 0 && c.leafTable[4 * (i - 1)] > b) fail("leaves not in block order");
    float S, B;
    const uint32_t sb = sgfp4_half_to_float_bits(h >> 16), bb = sgfp4_half_to_float_bits(h & 0xffff);
    std::memcpy(&S, &sb, 4);
    std::memcpy(&B, &bb, 4);
    const uint64_t by = b / c.tilesX, bx = b % c.tilesX;
    for (uint32_t k = 0; k < size * size; k++) {
      const uint32_t r = y + k / size, col = x + k % size;
      cover[uint64_t(b) * 4096 + r * 64 + col]++;
      int code;
      if (mode == 0) {
        const int nib = (s[off + k / 2] >> (4 * (k & 1))) & 15;
        code = nib >= 8 ? nib - 16 : nib;
      } else {
        const int sym = (s[off + k / 4] >> (2 * (k & 3))) & 3;
        code = sym == 1 ? 1 : sym == 2 ? -1 : 0;
      }
      const uint64_t R = by * 64 + r, C = bx * 64 + col;
      if (R < c.rows && C < c.cols) out[R * c.cols + C] = S * float(code) + B;
    }
  }
  for (size_t k = 0; k < cover.size(); k++)
    if (cover[k] != 1) {
      fail("macroblock " + std::to_string(k / 4096) + " not tiled exactly once");
      return;
    }
  for (uint64_t b = 0; b < c.blockCount; b++)
    if (c.blockFirstLeaf[b] > c.blockFirstLeaf[b + 1]) fail("block index not monotonic");
}

// The parse with the records split into 3 ranges on the work pool must give the sequential
// parse's leaf table, or its exact error (code and message): checked on every 4th stream. And
// parse must agree with parseReference (the record-by-record parse) on every stream.
static uint64_t runs = 0;
static std::string outcome(const std::vector<uint8_t>& s, Profile p, double rows, double cols, unsigned ranges, Container& c) {
  try {
    c = parse(s.data(), s.size(), p, rows, cols, kDefaultMaxOutputBytes, ranges);
    return "OK";
  } catch (const Failure& f) {
    return f.what();
  }
}

static std::string run(const std::vector<uint8_t>& s, Profile p, double rows, double cols) {
  Container c, split, ref;
  const std::string got = outcome(s, p, rows, cols, 1, c);
  // The fast path against the plain sequential parse, on every stream: same verdict, same
  // message (code, facts, the record and offset it names), same tables.
  std::string want = "OK";
  try {
    ref = parseReference(s.data(), s.size(), p, rows, cols, kDefaultMaxOutputBytes);
  } catch (const Failure& f) {
    want = f.what();
  }
  if (want != got || (got == "OK" && (ref.leafTable != c.leafTable || ref.blockFirstLeaf != c.blockFirstLeaf))) fail("parse differs from parseReference: " + got + " / " + want);
  // Into a table arena (the Vulkan direct route's upload memory): the same verdict, message and
  // tables; blockPayload agrees with the table and plans the same; a rejection frees the arena.
  {
    auto arena = std::make_shared<sgfp4test::HeapArena>();
    const bool keep = runs % 3 == 0;  // then also a copy of the stream, read after the parse
    if (keep) arena->wantStream(s.size());
    std::shared_ptr<sgfp4test::HeapArena> kept = keep ? arena : nullptr;
    std::weak_ptr<sgfp4test::HeapArena> watch = arena;
    Container a;
    std::string inArena = "OK";
    try {
      a = parse(s.data(), s.size(), p, rows, cols, kDefaultMaxOutputBytes, runs % 2 ? 3 : 1, std::move(arena));
      if (kept && !sgfp4test::streamCopyOk(*kept, a, s.data(), s.size())) fail("the parse's stream copy is incomplete or differs");
    } catch (const Failure& f) {
      inArena = f.what();
      if (!kept && !watch.expired()) fail("a rejected parse kept its table arena");
    }
    if (inArena != got || (got == "OK" && (a.leafTable != c.leafTable || a.blockFirstLeaf != c.blockFirstLeaf))) fail("parse into an arena differs: " + got + " / " + inArena);
    if (got == "OK" && !(sgfp4test::payloadSpansMatch(a) && sgfp4test::payloadSpansMatch(c) && sgfp4test::plansAgree(a, s.size()))) fail("blockPayload disagrees with the table");
  }
  if (runs++ % 4 == 0) {
    const std::string other = outcome(s, p, rows, cols, 3, split);
    if (other != got || (got == "OK" && (split.leafTable != c.leafTable || split.blockFirstLeaf != c.blockFirstLeaf))) fail("range-split parse differs: " + got + " / " + other);
  }
  if (got != "OK") return got.substr(0, got.find(':'));
  expand(s, c);
  return "OK";
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::printf("usage: fuzz_driver CORPUS_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  DIR* d = opendir(dir.c_str());
  if (!d) {
    std::printf("cannot open %s\n", dir.c_str());
    return 2;
  }
  std::vector<std::string> files;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 4 && n.substr(n.size() - 4) == ".bin") files.push_back(n);
  }
  closedir(d);
  int seeds = 0, verdictFailures = 0;
  uint64_t mutations = 0, accepted = 0;
  std::map<std::string, uint64_t> codes;
  for (const std::string& name : files) {
    // <id>.<profile>.<rows>x<cols>.<expect>.bin, parsed from the right
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t k = 0; k <= name.size(); k++)
      if (k == name.size() || name[k] == '.') parts.push_back(name.substr(start, k - start)), start = k + 1;
    if (parts.size() < 5) continue;
    const std::string expect = parts[parts.size() - 2], shape = parts[parts.size() - 3], prof = parts[parts.size() - 4];
    const Profile p = prof == "v1" ? Profile::V1 : Profile::V2;
    const size_t xpos = shape.find('x');
    const double rows = std::stod(shape.substr(0, xpos)), cols = std::stod(shape.substr(xpos + 1));
    std::ifstream in(dir + "/" + name, std::ios::binary);
    std::vector<uint8_t> seed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    seeds++;
    const std::string got = run(seed, p, rows, cols);
    if (!(got == expect || (expect == "ANY" && got != "OK"))) {
      verdictFailures++;
      std::printf("VERDICT %s: expected %s, got %s\n", name.c_str(), expect.c_str(), got.c_str());
    }
    auto mutant = [&](std::vector<uint8_t>&& m) {
      mutations++;
      const std::string c = run(m, p, rows, cols);
      codes[c]++;
      if (c == "OK") accepted++;
    };
    const size_t len = seed.size();
    // Truncations: every length for small seeds, 200 sampled ones otherwise.
    if (len <= 2100)
      for (size_t k = 0; k < len; k++) mutant(std::vector<uint8_t>(seed.begin(), seed.begin() + k));
    else
      for (int k = 0; k < 200; k++) mutant(std::vector<uint8_t>(seed.begin(), seed.begin() + next() % len));
    // Bit flips: all bits of the first 256 bytes (headers, tables), sampled elsewhere.
    for (size_t bit = 0; bit < std::min<size_t>(len, 256) * 8; bit++) {
      std::vector<uint8_t> m = seed;
      m[bit / 8] ^= uint8_t(1u << (bit % 8));
      mutant(std::move(m));
    }
    for (int k = 0; k < 700 && len; k++) {
      std::vector<uint8_t> m = seed;
      const int edits = 1 + int(next() % 4);
      for (int e = 0; e < edits; e++) {
        const size_t at = next() % len;
        switch (next() % 4) {
          case 0: m[at] ^= uint8_t(1u << (next() % 8)); break;
          case 1: m[at] = uint8_t(next()); break;
          case 2: {  // an interesting 32-bit word at an aligned position
            static const uint32_t words[] = {0, 1, 6, 7, 8, 15, 16, 0x10, 0x7c00, 0x7c000000, 0xfffffff0, 0xffffffff, 0x80000000};
            const size_t a = at & ~size_t(3);
            const uint32_t w = words[next() % (sizeof words / 4)];
            for (int i = 0; i < 4 && a + i < len; i++) m[a + i] = uint8_t(w >> (8 * i));
            break;
          }
          default: m.resize(at); break;
        }
        if (m.empty()) break;
      }
      mutant(std::move(m));
    }
  }
  std::printf("fuzz_driver: %d seeds, %llu mutations, %llu accepted;", seeds, (unsigned long long)mutations, (unsigned long long)accepted);
  for (auto& [c, n] : codes) std::printf(" %s=%llu", c.c_str(), (unsigned long long)n);
  std::printf("\n");
  const int failures = verdictFailures + invariantFailures;
  std::printf("fuzz_driver: %d passed, %d failed\n", seeds - verdictFailures, failures);
  return failures || seeds == 0 ? 1 : 0;
}
