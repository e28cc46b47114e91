/*
 * The subset of <wasm_simd128.h> that the @sgfp4/cpu-decoder kernel uses, for native targets, with
 * GCC/Clang vector extensions (each lane operation has wasm's meaning: integer lanes wrap, shifts
 * by a constant, f32 lanes are IEEE round-to-nearest with subnormals kept). The kernel text is
 * compiled unchanged on top of it, so the native decoder and the WebAssembly one are one source.
 */
#if !defined(__GNUC__) || (defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 12)
#error "sgfp4.h implementation needs GCC >= 12 or Clang >= 10 (vector extensions, __builtin_shufflevector)"
#endif
#if defined(__FAST_MATH__)
#error "compile the sgfp4.h implementation without -ffast-math: it reorders float arithmetic and flushes subnormals, which changes decoded bits"
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "sgfp4.h implementation supports little-endian targets only"
#endif

typedef int v128_t __attribute__((vector_size(16), aligned(16)));
typedef signed char sgfp4__i8x16 __attribute__((vector_size(16)));
typedef unsigned char sgfp4__u8x16 __attribute__((vector_size(16)));
typedef short sgfp4__i16x8 __attribute__((vector_size(16)));
typedef unsigned short sgfp4__u16x8 __attribute__((vector_size(16)));
typedef unsigned int sgfp4__u32x4 __attribute__((vector_size(16)));
typedef float sgfp4__f32x4 __attribute__((vector_size(16)));
#define SGFP4__SIMD static inline __attribute__((always_inline))

/* loads and stores: unaligned, through memcpy */
SGFP4__SIMD v128_t wasm_v128_load(const void *p) { v128_t v; __builtin_memcpy(&v, p, 16); return v; }
SGFP4__SIMD void wasm_v128_store(void *p, v128_t v) { __builtin_memcpy(p, &v, 16); }
SGFP4__SIMD v128_t wasm_v128_load32_zero(const void *p) { v128_t v = {0, 0, 0, 0}; __builtin_memcpy(&v, p, 4); return v; }
SGFP4__SIMD v128_t wasm_v128_load64_zero(const void *p) { v128_t v = {0, 0, 0, 0}; __builtin_memcpy(&v, p, 8); return v; }
SGFP4__SIMD void wasm_v128_store64_lane(void *p, v128_t v, int lane) { __builtin_memcpy(p, (const char *)&v + 8 * lane, 8); }

/* constants and splats */
#define wasm_i8x16_const(...) ((v128_t)(sgfp4__i8x16){__VA_ARGS__})
#define wasm_i32x4_const(...) ((v128_t)(v128_t){__VA_ARGS__})
#define wasm_f32x4_const(...) ((v128_t)(sgfp4__f32x4){__VA_ARGS__})
SGFP4__SIMD v128_t wasm_i8x16_splat(signed char x) { return (v128_t)(sgfp4__i8x16){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x}; }
SGFP4__SIMD v128_t wasm_i16x8_splat(short x) { return (v128_t)(sgfp4__i16x8){x, x, x, x, x, x, x, x}; }
SGFP4__SIMD v128_t wasm_i32x4_splat(int x) { return (v128_t){x, x, x, x}; }
SGFP4__SIMD v128_t wasm_f32x4_splat(float x) { return (v128_t)(sgfp4__f32x4){x, x, x, x}; }
SGFP4__SIMD unsigned wasm_u32x4_extract_lane(v128_t a, int i) { return ((sgfp4__u32x4)a)[i]; }
SGFP4__SIMD int wasm_i32x4_extract_lane(v128_t a, int i) { return a[i]; }
SGFP4__SIMD v128_t wasm_i32x4_make(int a, int b, int c, int d) { return (v128_t){a, b, c, d}; }

/* shuffles with constant lane indices; swizzle with run-time ones (an index >= 16 gives 0) */
#define wasm_i8x16_shuffle(a, b, ...) ((v128_t)__builtin_shufflevector((sgfp4__i8x16)(a), (sgfp4__i8x16)(b), __VA_ARGS__))
#define wasm_i16x8_shuffle(a, b, ...) ((v128_t)__builtin_shufflevector((sgfp4__i16x8)(a), (sgfp4__i16x8)(b), __VA_ARGS__))
#define wasm_i32x4_shuffle(a, b, ...) ((v128_t)__builtin_shufflevector((v128_t)(a), (v128_t)(b), __VA_ARGS__))
SGFP4__SIMD v128_t wasm_i8x16_swizzle(v128_t a, v128_t idx) {
  const sgfp4__u8x16 t = (sgfp4__u8x16)a, i = (sgfp4__u8x16)idx;
  sgfp4__u8x16 r;
  for (int k = 0; k < 16; k++) r[k] = i[k] < 16 ? t[i[k] & 15] : 0;
  return (v128_t)r;
}

/* bitwise */
SGFP4__SIMD v128_t wasm_v128_and(v128_t a, v128_t b) { return a & b; }
SGFP4__SIMD v128_t wasm_v128_or(v128_t a, v128_t b) { return a | b; }
SGFP4__SIMD v128_t wasm_v128_bitselect(v128_t a, v128_t b, v128_t mask) { return (a & mask) | (b & ~mask); }
SGFP4__SIMD int wasm_v128_any_true(v128_t a) { return (a[0] | a[1] | a[2] | a[3]) != 0; }

/* integer lanes: shifts and sums on unsigned lanes (wrap-around, as in wasm) */
SGFP4__SIMD v128_t wasm_i16x8_shl(v128_t a, int n) { return (v128_t)((sgfp4__u16x8)a << (unsigned short)n); }
SGFP4__SIMD v128_t wasm_u16x8_shr(v128_t a, int n) { return (v128_t)((sgfp4__u16x8)a >> (unsigned short)n); }
SGFP4__SIMD v128_t wasm_i32x4_shl(v128_t a, int n) { return (v128_t)((sgfp4__u32x4)a << (unsigned)n); }
SGFP4__SIMD v128_t wasm_u32x4_shr(v128_t a, int n) { return (v128_t)((sgfp4__u32x4)a >> (unsigned)n); }
SGFP4__SIMD v128_t wasm_i32x4_shr(v128_t a, int n) { return a >> n; } /* arithmetic: GCC/Clang shift signed lanes so */
SGFP4__SIMD v128_t wasm_u32x4_min(v128_t a, v128_t b) {
  const v128_t a_less = (v128_t)((sgfp4__u32x4)a < (sgfp4__u32x4)b);
  return (a & a_less) | (b & ~a_less);
}
SGFP4__SIMD v128_t wasm_u32x4_max(v128_t a, v128_t b) {
  const v128_t a_more = (v128_t)((sgfp4__u32x4)a > (sgfp4__u32x4)b);
  return (a & a_more) | (b & ~a_more);
}
SGFP4__SIMD v128_t wasm_i32x4_add(v128_t a, v128_t b) { return (v128_t)((sgfp4__u32x4)a + (sgfp4__u32x4)b); }
SGFP4__SIMD v128_t wasm_i32x4_sub(v128_t a, v128_t b) { return (v128_t)((sgfp4__u32x4)a - (sgfp4__u32x4)b); }
SGFP4__SIMD v128_t wasm_i16x8_eq(v128_t a, v128_t b) { return (v128_t)((sgfp4__i16x8)a == (sgfp4__i16x8)b); }
SGFP4__SIMD v128_t wasm_u8x16_ge(v128_t a, v128_t b) { return (v128_t)((sgfp4__u8x16)a >= (sgfp4__u8x16)b); }
SGFP4__SIMD v128_t wasm_i32x4_gt(v128_t a, v128_t b) { return (v128_t)(a > b); }
SGFP4__SIMD v128_t wasm_i32x4_lt(v128_t a, v128_t b) { return (v128_t)(a < b); }
SGFP4__SIMD v128_t wasm_i32x4_ge(v128_t a, v128_t b) { return (v128_t)(a >= b); }
SGFP4__SIMD v128_t wasm_u32x4_extend_low_u16x8(v128_t a) {
  const sgfp4__u16x8 h = (sgfp4__u16x8)a;
  return (v128_t)(sgfp4__u32x4){h[0], h[1], h[2], h[3]};
}
SGFP4__SIMD v128_t wasm_u16x8_narrow_i32x4(v128_t a, v128_t b) {
  sgfp4__u16x8 r;
  for (int k = 0; k < 8; k++) {
    const int x = k < 4 ? a[k] : b[k - 4];
    r[k] = (unsigned short)(x < 0 ? 0 : x > 65535 ? 65535 : x);
  }
  return (v128_t)r;
}

/* f32 lanes */
SGFP4__SIMD v128_t wasm_f32x4_add(v128_t a, v128_t b) { return (v128_t)((sgfp4__f32x4)a + (sgfp4__f32x4)b); }
SGFP4__SIMD v128_t wasm_f32x4_mul(v128_t a, v128_t b) { return (v128_t)((sgfp4__f32x4)a * (sgfp4__f32x4)b); }
SGFP4__SIMD v128_t wasm_f32x4_convert_i32x4(v128_t a) { return (v128_t)__builtin_convertvector(a, sgfp4__f32x4); }
