/* Types and scalar helpers shared by every part of the kernel (kernel.c includes the parts in order). */
#include <wasm_simd128.h>

typedef unsigned int u32;
typedef unsigned char u8;
typedef unsigned short u16;

static inline float float_from_bits(u32 bits) {
  union { u32 u; float f; } v = { bits };
  return v.f;
}

/* Exact FP16 -> FP32 with integer ops (subnormals kept, signed zero kept). */
static inline float half_to_float(u32 h) {
  u32 sign = (h & 0x8000u) << 16;
  u32 exp = (h >> 10) & 0x1fu;
  u32 mant = h & 0x3ffu;
  if (exp == 0x1fu) return float_from_bits(sign | 0x7f800000u | (mant << 13)); /* parser rejects these */
  if (exp != 0) return float_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return float_from_bits(sign);
  u32 shift = (u32)__builtin_clz(mant) - 21u; /* moves the leading 1 to bit 10 */
  return float_from_bits(sign | ((113u - shift) << 23) | (((mant << shift) & 0x3ffu) << 13));
}

typedef unsigned long long u64;
typedef u32 __attribute__((aligned(1))) unaligned_u32;

static inline u32 load32(const u8 *p) { return *(const unaligned_u32 *)p; }
static inline int half_nonfinite(u32 h) { return (h & 0x7c00u) == 0x7c00u; }

/* Bytes [from, to) of the stream are zero (from and to within len, checked by the caller). */
static int all_zero(const u8 *in, u32 from, u32 to) {
  u32 any = 0;
  for (; from < to && (from & 3u); from++) any |= in[from];
  for (; from + 4 <= to; from += 4) any |= load32(in + from);
  for (; from < to; from++) any |= in[from];
  return any == 0;
}
