/*
 * Checks of sgfp4.h that the command protocol cannot reach, driven by test/api.test.ts:
 *   api-check names                                  every status name, one a line, in enum order
 *   api-check validate CONTAINER PROFILE ROWS COLS   sgfp4_validate's verdict: OK or the code name
 *   api-check calls                                  argument, limit and floating-point-mode checks;
 *                                                    prints "PASS" or the failed checks, exit 1
 */
#define SGFP4_IMPLEMENTATION
#include "../../sgfp4.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

static int failures = 0;
#define EXPECT(cond)                                                   \
  do {                                                                 \
    if (!(cond)) {                                                     \
      printf("FAIL line %d: %s\n", __LINE__, #cond);                   \
      failures++;                                                      \
    }                                                                  \
  } while (0)

/* A valid 1x1 v1 stream: one block, FP4, scale 1.0 (0x3c00), bias 0, code 1 at (0, 0). */
static void one_block_v1(uint8_t *s) {
  memset(s, 0, 2056);
  s[2] = 0x00, s[3] = 0x3c; /* header: scale << 16 | bias */
  s[8] = 0x01;              /* payload byte 0: codes 0 and 1 = 1, 0 */
}

static int calls(void) {
  static uint8_t stream[2056];
  static unsigned char scratch[1 << 13];
  float out[4];
  sgfp4_error err;
  one_block_v1(stream);
  const size_t need = sgfp4_scratch_size(SGFP4_PROFILE_V1, sizeof stream, 1, 1);
  EXPECT(need > 0 && need <= sizeof scratch);
  EXPECT(sgfp4_decode(stream, sizeof stream, SGFP4_PROFILE_V1, 1, 1, out, 1, scratch, need, &err) == SGFP4_OK && err.code == SGFP4_OK);
  EXPECT(out[0] == 1.0f);
  EXPECT(sgfp4_decode(stream, sizeof stream, SGFP4_PROFILE_V1, 1, 1, out, 1, scratch, need, NULL) == SGFP4_OK);
  EXPECT(sgfp4_validate(stream, sizeof stream, SGFP4_PROFILE_V1, 1, 1, scratch, need, &err) == SGFP4_OK);
  /* the call's own faults */
  EXPECT(sgfp4_scratch_size(3, sizeof stream, 1, 1) == 0);
  EXPECT(sgfp4_decode(stream, sizeof stream, 3, 1, 1, out, 1, scratch, need, &err) == SGFP4_INVALID_ARGUMENT && err.code == SGFP4_INVALID_ARGUMENT);
  EXPECT(sgfp4_decode(stream, sizeof stream, SGFP4_PROFILE_V1, 0, 1, out, 1, scratch, need, &err) == SGFP4_INVALID_ARGUMENT);
  EXPECT(sgfp4_decode(stream, sizeof stream, SGFP4_PROFILE_V1, 1, 1, out, 0, scratch, need, &err) == SGFP4_INVALID_ARGUMENT);
  EXPECT(sgfp4_decode(stream, sizeof stream, SGFP4_PROFILE_V1, 1, 1, NULL, 1, scratch, need, &err) == SGFP4_INVALID_ARGUMENT);
  EXPECT(sgfp4_decode(stream, sizeof stream, SGFP4_PROFILE_V1, 1, 1, out, 1, scratch, need - 1, &err) == SGFP4_INVALID_ARGUMENT);
  EXPECT(sgfp4_decode(stream, sizeof stream, SGFP4_PROFILE_V1, 1, 1, out, 1, NULL, need, &err) == SGFP4_INVALID_ARGUMENT);
  EXPECT(sgfp4_validate(stream, sizeof stream, SGFP4_PROFILE_V2, 1, 1, scratch, 16, &err) == SGFP4_INVALID_ARGUMENT);
  /* DECISIONS.md section 5: 2^29 floats is the bound, one more row is over it; refused before any scratch is used */
  EXPECT(sgfp4_scratch_size(SGFP4_PROFILE_V2, 16, 1u << 14, 1u << 15) > 0);
  EXPECT(sgfp4_scratch_size(SGFP4_PROFILE_V2, 16, (1u << 14) + 1, 1u << 15) == 0);
  EXPECT(sgfp4_decode(stream, sizeof stream, SGFP4_PROFILE_V2, (1u << 14) + 1, 1u << 15, out, 1, scratch, sizeof scratch, &err) == SGFP4_LIMIT_EXCEEDED);
  EXPECT(sgfp4_decode(stream, sizeof stream, SGFP4_PROFILE_V1, 0xffffffffu, 0xffffffffu, out, 1, scratch, sizeof scratch, &err) == SGFP4_LIMIT_EXCEEDED);
  /* rows * cols * 4 = 2^64 would wrap to 0 in 64-bit arithmetic */
  EXPECT(sgfp4_scratch_size(SGFP4_PROFILE_V1, sizeof stream, 1u << 31, 1u << 31) == 0);
  EXPECT(sgfp4_decode(stream, sizeof stream, SGFP4_PROFILE_V1, 1u << 31, 1u << 31, out, 1, scratch, sizeof scratch, &err) == SGFP4_LIMIT_EXCEEDED);
  /* a stream fault: the output is zeroed and the block is named */
  out[0] = 7.0f;
  stream[4 + 0] = 0x04; /* offset flag bit 2 */
  EXPECT(sgfp4_decode(stream, sizeof stream, SGFP4_PROFILE_V1, 1, 1, out, 1, scratch, need, &err) == SGFP4_RESERVED_BITS);
  EXPECT(err.code == SGFP4_RESERVED_BITS && err.block == 0 && err.detail && out[0] == 0.0f);
  EXPECT(sgfp4_validate(stream, sizeof stream, SGFP4_PROFILE_V1, 1, 1, scratch, need, &err) == SGFP4_RESERVED_BITS);
  EXPECT(sgfp4_decode(stream, 0, SGFP4_PROFILE_V2, 1, 1, out, 1, scratch, sizeof scratch, &err) == SGFP4_TRUNCATED && err.block == SGFP4_NO_BLOCK);
  stream[4] = 0;
#if defined(__SSE__)
  /* flush-to-zero / denormals-are-zero (what -ffast-math turns on) would change FP16 subnormal
   * scales: the decoder refuses instead of decoding other bits */
  const unsigned int csr = _mm_getcsr();
  _mm_setcsr(csr | 0x8040u);
  const sgfp4_status flushed = sgfp4_decode(stream, sizeof stream, SGFP4_PROFILE_V1, 1, 1, out, 1, scratch, need, &err);
  _mm_setcsr(csr);
  EXPECT(flushed == SGFP4_INVALID_ARGUMENT);
#endif
  if (failures == 0) printf("PASS\n");
  return failures ? 1 : 0;
}

static int validate_file(char **argv) {
  FILE *f = fopen(argv[2], "rb");
  if (!f) return 2;
  static uint8_t data[1 << 22];
  const size_t len = fread(data, 1, sizeof data, f);
  fclose(f);
  const int profile = strcmp(argv[3], "v1") == 0 ? SGFP4_PROFILE_V1 : SGFP4_PROFILE_V2;
  const uint32_t rows = (uint32_t)strtoul(argv[4], NULL, 10), cols = (uint32_t)strtoul(argv[5], NULL, 10);
  const size_t need = sgfp4_scratch_size(profile, len, rows, cols);
  void *scratch = malloc(need ? need : 1);
  sgfp4_error err;
  const sgfp4_status s = sgfp4_validate(data, len, profile, rows, cols, scratch, need, &err);
  free(scratch);
  printf("%s\n", sgfp4_status_name(s));
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "names") == 0) {
    for (int s = SGFP4_OK; s <= SGFP4_BACKEND_FAILURE; s++) printf("%s\n", sgfp4_status_name((sgfp4_status)s));
    return 0;
  }
  if (argc == 6 && strcmp(argv[1], "validate") == 0) return validate_file(argv);
  if (argc == 2 && strcmp(argv[1], "calls") == 0) return calls();
  fprintf(stderr, "usage: api-check names | calls | validate CONTAINER PROFILE ROWS COLS\n");
  return 2;
}
