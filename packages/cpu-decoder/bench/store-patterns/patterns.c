/*
 * Store patterns of the kernel, without the decoding: the same float32 bytes written in different
 * orders, to see what the order alone costs once the output is larger than the cache.
 * Built and run by run.mjs (needs Debian clang + lld, like build:wasm).
 */
#include <wasm_simd128.h>
typedef unsigned int u32;

/* Sequential: out[0..n) in order. */
__attribute__((export_name("sequential"))) void sequential(float *out, u32 n) {
  const v128_t v = wasm_f32x4_splat(2.5f);
  for (u32 i = 0; i < n; i += 4) wasm_v128_store(out + i, v);
}

/* Leaf by leaf, as a kernel writing leaves of side 2^lg straight into the output. */
__attribute__((export_name("leaves"))) void leaves(float *out, u32 rows, u32 cols, u32 lg) {
  const v128_t v = wasm_f32x4_splat(2.5f);
  const u32 s = 1u << lg;
  for (u32 by = 0; by < rows; by += s)
    for (u32 bx = 0; bx < cols; bx += s) {
      float *p = out + by * cols + bx;
      for (u32 r = 0; r < s; r++, p += cols)
        for (u32 c = 0; c < s; c += 4) wasm_v128_store(p + c, v);
    }
}

/* g rows of every 64x64 macroblock of a band at a time (g = 1: each output row in order). */
__attribute__((export_name("row_groups"))) void row_groups(float *out, u32 rows, u32 cols, u32 g) {
  const v128_t v = wasm_f32x4_splat(2.5f);
  for (u32 by = 0; by < rows; by += 64)
    for (u32 r0 = 0; r0 < 64; r0 += g)
      for (u32 bx = 0; bx < cols; bx += 64) {
        float *p = out + (by + r0) * cols + bx;
        for (u32 r = 0; r < g; r++, p += cols)
          for (u32 c = 0; c < 64; c += 4) wasm_v128_store(p + c, v);
      }
}

/* The output band: 64x64 macroblocks written into a g-row x cols staging area, copied out with
 * memory.copy (one contiguous run per staging area). g = 64 is the decoder's band. */
__attribute__((export_name("staged"))) void staged(float *out, u32 rows, u32 cols, float *stage, u32 g) {
  const v128_t v = wasm_f32x4_splat(2.5f);
  for (u32 r0 = 0; r0 < rows; r0 += g) {
    for (u32 bx = 0; bx < cols; bx += 64) {
      float *p = stage + bx;
      for (u32 r = 0; r < g; r++, p += cols)
        for (u32 c = 0; c < 64; c += 4) wasm_v128_store(p + c, v);
    }
    __builtin_memcpy(out + r0 * cols, stage, g * cols * 4u);
  }
}
