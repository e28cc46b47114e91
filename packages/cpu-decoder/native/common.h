/* Types and scalar helpers shared by every part of the kernel (kernel.c includes the parts in order).
 * The leaf-table contract (word layout, masks, payload sizes, code tables, FP16 conversion) comes
 * from @sgfp4/format's generated header, the one definition every backend includes. */
#include <wasm_simd128.h>
#include "sgfp4_leaf_table.h"

typedef unsigned int u32;
typedef unsigned char u8;
typedef unsigned short u16;

static inline float float_from_bits(u32 bits) {
  union { u32 u; float f; } v = { bits };
  return v.f;
}

/* Exact FP16 -> FP32 (subnormals kept, signed zero kept): the contract's integer conversion. */
static inline float half_to_float(u32 h) { return float_from_bits(sgfp4_half_to_float_bits(h)); }

typedef unsigned long long u64;
typedef u32 __attribute__((aligned(1))) unaligned_u32;

static inline u32 load32(const u8 *p) { return *(const unaligned_u32 *)p; }
static inline int half_nonfinite(u32 h) { return sgfp4_half_nonfinite(h); }

/* Bytes [from, to) of the stream are zero (from and to within len, checked by the caller). */
static int all_zero(const u8 *in, u32 from, u32 to) {
  u32 any = 0;
  for (; from < to && (from & 3u); from++) any |= in[from];
  for (; from + 4 <= to; from += 4) any |= load32(in + from);
  for (; from < to; from++) any |= in[from];
  return any == 0;
}
