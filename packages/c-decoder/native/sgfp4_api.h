/*
 * Public interface. Every function is reentrant; none allocates: the caller passes the output
 * and a scratch buffer of sgfp4_scratch_size() bytes.
 */
#ifndef SGFP4_H
#define SGFP4_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

#ifndef SGFP4_API
#define SGFP4_API
#endif

/* Container profiles: v1 (.fp4, fixed 64x64 blocks) and v2 (.sgfp4, adaptive leaves). */
enum { SGFP4_PROFILE_V1 = 1, SGFP4_PROFILE_V2 = 2 };

/* Outcomes. The stream codes are those of DECISIONS.md section 3 (@sgfp4/format's error codes,
 * by the same names: sgfp4_status_name()); the last ones are about the call, not the stream. */
typedef enum sgfp4_status {
  SGFP4_OK = 0,
  SGFP4_SIZE_MISMATCH,
  SGFP4_BAD_MAGIC,
  SGFP4_BAD_VERSION,
  SGFP4_TRUNCATED,
  SGFP4_NONZERO_PADDING,
  SGFP4_RECORD_COUNT_MISMATCH,
  SGFP4_MISALIGNED_OFFSET,
  SGFP4_NONMONOTONIC_OFFSET,
  SGFP4_OFFSET_OUT_OF_RANGE,
  SGFP4_UNKNOWN_LAYOUT,
  SGFP4_RESERVED_BITS,
  SGFP4_NONFINITE_PARAMETER,
  SGFP4_INVALID_ARGUMENT, /* bad profile or shape, output or scratch too small, FTZ/DAZ floating point mode */
  SGFP4_LIMIT_EXCEEDED,   /* output over SGFP4_MAX_OUTPUT_BYTES, or a stream of 4 GiB - 8 KiB or more */
  SGFP4_BACKEND_FAILURE   /* the kernel refused the stream and no rule names the fault: a bug, please report it */
} sgfp4_status;

/* What went wrong: the code, the record (v2) or block (v1) it is in, and a fixed English detail. */
typedef struct sgfp4_error {
  sgfp4_status code;
  uint32_t block;     /* SGFP4_NO_BLOCK when the fault is not in one record or block */
  const char *detail; /* static string, never NULL after a call */
} sgfp4_error;
#define SGFP4_NO_BLOCK 0xffffffffu

/* DECISIONS.md section 5: the default output bound per call (2^31 bytes). At most 2^33. */
#ifndef SGFP4_MAX_OUTPUT_BYTES
#define SGFP4_MAX_OUTPUT_BYTES (UINT64_C(1) << 31)
#endif

/* "TRUNCATED", ..., the code's name as @sgfp4/format and the conformance protocol spell it. */
SGFP4_API const char *sgfp4_status_name(sgfp4_status status);

/* Bytes of scratch that sgfp4_decode and sgfp4_validate need for this call (0: the shape or
 * profile is invalid). v1: 20 bytes per 64x64 block; v2: the stream length plus 4 KiB. */
SGFP4_API size_t sgfp4_scratch_size(int profile, size_t len, uint32_t rows, uint32_t cols);

/* Check the stream against every rule of DECISIONS.md section 3 without decoding. */
SGFP4_API sgfp4_status sgfp4_validate(const uint8_t *in, size_t len, int profile, uint32_t rows, uint32_t cols,
                                      void *scratch, size_t scratch_len, sgfp4_error *err);

/* Validate and decode into out: rows * cols float32, row-major (out_len counts floats). On any
 * error out holds zeros. err may be NULL. */
SGFP4_API sgfp4_status sgfp4_decode(const uint8_t *in, size_t len, int profile, uint32_t rows, uint32_t cols,
                                    float *out, size_t out_len, void *scratch, size_t scratch_len, sgfp4_error *err);

#ifdef __cplusplus
}
#endif
#endif /* SGFP4_H */
