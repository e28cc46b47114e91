/*
 * SGFP4 WebAssembly SIMD kernel: validators, leaf expansion and f16/bf16 output, for
 * @sgfp4/cpu-decoder. The stream is hostile: the validators (validate.h, and the one-pass record
 * decoders of fused.h) apply every reject rule of DECISIONS.md section 3 and never read outside
 * the stream copy; the expander (expand.h) only expands leaf tables that a validator built.
 * The JS side lays out linear memory per call (src/layouts.ts); no stack or static data is used,
 * so the whole memory belongs to the caller (scripts/build-wasm.mjs fails a build that needs one).
 *
 * Arithmetic is bit-exact with DECISIONS.md section 2: w = f32(S) * code + f32(Bias), one rounding.
 * The SIMD path computes (S * 2^-28) * (code * 2^28) + Bias: both products equal S * code exactly
 * (S*code has at most 15 significant bits and S * 2^-28 stays normal), so the bits are identical.
 *
 * One translation unit: the parts are included in dependency order so that their always_inline
 * helpers inline across parts (one module, one set of exports).
 */
#include "common.h"   /* types, FP16 -> f32, unaligned loads, zero checks */
#include "codes.h"    /* payload bytes -> codes -> floats, SIMD stores of leaf rows */
#include "expand.h"   /* decode_leaves, output bands, decode_v1_banded */
#include "validate.h" /* validate_v1, validate_v2: verdict + leaf table */
#include "fused.h"    /* validate_decode_v2(_rows): one pass, record by record */
#include "convert.h"  /* convert_f16, convert_bf16 */
