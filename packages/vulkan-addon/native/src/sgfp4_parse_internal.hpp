// Internal to the native parser (not part of sgfp4_parse.hpp's interface): the small helpers
// its two files share, and the exact record-by-record v2 parse (sgfp4_parse_exact.cpp) that
// parseReference runs and the fast path (sgfp4_parse.cpp) falls back to for the exact error.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sgfp4_parse.hpp"

#if defined(__GNUC__) || defined(__clang__)
#define SGFP4_INLINE inline __attribute__((always_inline))
#else
#define SGFP4_INLINE inline
#endif

namespace sgfp4 {
namespace detail {

constexpr uint64_t kMacro = SGFP4_MACROBLOCK;

inline std::string str(uint64_t v) { return std::to_string(v); }
inline std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%x", v);
  return b;
}
inline std::string at(uint64_t record, uint64_t offset) { return " (at record " + str(record) + ", byte offset " + str(offset) + ")"; }

// Little-endian loads (one instruction on a little-endian host).
SGFP4_INLINE uint32_t rd32(const uint8_t* p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
#else
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
#endif
}
[[maybe_unused]] SGFP4_INLINE uint64_t rd64(const uint8_t* p) { return uint64_t(rd32(p)) | uint64_t(rd32(p + 4)) << 32; }

// The checks below run per leaf: the test is inline, the message is built only on a fault.
[[noreturn]] inline void nonFinite(uint32_t header, uint64_t record, uint64_t offset) {
  const uint32_t scale = sgfp4_params_scale_bits(header), bias = sgfp4_params_bias_bits(header);
  if (sgfp4_half_nonfinite(scale)) throw Failure("NONFINITE_PARAMETER", "scale " + hex(scale) + " is Inf or NaN" + at(record, offset));
  throw Failure("NONFINITE_PARAMETER", "bias " + hex(bias) + " is Inf or NaN" + at(record, offset));
}

inline void checkParams(uint32_t header, uint64_t record, uint64_t offset) {
  if (sgfp4_half_nonfinite(sgfp4_params_scale_bits(header)) || sgfp4_half_nonfinite(sgfp4_params_bias_bits(header))) nonFinite(header, record, offset);
}

inline void requireZero(const uint8_t* bytes, uint64_t from, uint64_t to, const char* what) {
  for (uint64_t o = from; o < to; o++)
    if (bytes[o] != 0) throw Failure("NONZERO_PADDING", std::string("nonzero byte in ") + what + " (at byte offset " + str(o) + ")");
}

inline uint64_t align16(uint64_t n) { return (n + SGFP4_PAYLOAD_ALIGN - 1) & ~uint64_t(SGFP4_PAYLOAD_ALIGN - 1); }

struct Geo {
  uint8_t y, x, log2;
};

// ---- The exact parse (sgfp4_parse_exact.cpp) ---------------------------------------------
// Each check throws its Failure with the detailed message, in @sgfp4/format's order.

// One record starting at `start` (< len), appended to `table`; returns the end of its last payload.
uint64_t parseRecord(const uint8_t* bytes, uint64_t len, uint64_t b, uint64_t start, Words& table, std::vector<Geo>& geo);
// Record b's offset-table checks, then parseRecord.
void exactRecord(const uint8_t* bytes, uint64_t len, uint64_t base, uint64_t b, Words& table, std::vector<Geo>& geo);
// The sequential parse of all records (parseReference, and the fast path's fallback).
void parseV2Records(const uint8_t* bytes, uint64_t len, uint64_t base, Container& c);

}  // namespace detail
}  // namespace sgfp4
