/*
 * sgfp4-decode: sgfp4.h behind the conformance runner's command protocol
 * (conformance/src/command-decoder.ts), so `sgfp4 conformance --backend-cmd` and the fuzzer can
 * run it:
 *     sgfp4-decode CONTAINER PROFILE ROWS COLS OUTPUT
 *     exit 0  OUTPUT holds ROWS*COLS little-endian float32, row-major
 *     exit 3  rejected: `error: CODE: detail` on stderr, no OUTPUT written
 *     exit 2  usage or I/O error
 */
#define SGFP4_IMPLEMENTATION
#include "../sgfp4.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_REJECTED = 3, EXIT_USAGE = 2 };

static int parse_dim(const char *s, uint32_t *v) {
  char *end;
  errno = 0;
  const unsigned long long x = strtoull(s, &end, 10);
  if (errno || *s == '\0' || *s == '-' || *end != '\0' || x == 0 || x > 0xffffffffu) return 0;
  *v = (uint32_t)x;
  return 1;
}

/* The whole file, malloc'd (*len bytes); NULL on failure. */
static uint8_t *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t *data = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n == cap) {
      cap = cap ? cap * 2 : 1 << 16;
      uint8_t *grown = realloc(data, cap);
      if (!grown) break;
      data = grown;
    }
    const size_t got = fread(data + n, 1, cap - n, f);
    n += got;
    if (got == 0) {
      if (ferror(f)) break;
      fclose(f);
      *len = n;
      return data;
    }
  }
  fclose(f);
  free(data);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: sgfp4-decode CONTAINER PROFILE ROWS COLS OUTPUT\n");
    return EXIT_USAGE;
  }
  const int profile = strcmp(argv[2], "v1") == 0 ? SGFP4_PROFILE_V1 : strcmp(argv[2], "v2") == 0 ? SGFP4_PROFILE_V2 : 0;
  uint32_t rows, cols;
  if (!profile || !parse_dim(argv[3], &rows) || !parse_dim(argv[4], &cols)) {
    fprintf(stderr, "usage: PROFILE must be v1 or v2, ROWS and COLS integers >= 1\n");
    return EXIT_USAGE;
  }
  size_t len;
  uint8_t *in = read_file(argv[1], &len);
  if (!in) {
    fprintf(stderr, "cannot read %s: %s\n", argv[1], strerror(errno));
    return EXIT_USAGE;
  }
  sgfp4_error err;
  const size_t scratch_len = sgfp4_scratch_size(profile, len, rows, cols);
  const size_t count = (size_t)rows * cols;
  /* scratch_len is 0 when the call is refused (limit, shape): sgfp4_decode then says why */
  void *scratch = scratch_len ? malloc(scratch_len) : NULL;
  float *out = scratch_len ? malloc(count * sizeof(float)) : NULL;
  if (scratch_len && (!scratch || !out)) {
    fprintf(stderr, "out of memory\n");
    return EXIT_USAGE;
  }
  const sgfp4_status status = sgfp4_decode(in, len, profile, rows, cols, out, out ? count : 0, scratch, scratch_len, &err);
  free(in);
  free(scratch);
  if (status != SGFP4_OK) {
    free(out);
    if (err.block != SGFP4_NO_BLOCK) fprintf(stderr, "error: %s: %s (record %u)\n", sgfp4_status_name(status), err.detail, err.block);
    else fprintf(stderr, "error: %s: %s\n", sgfp4_status_name(status), err.detail);
    return status == SGFP4_BACKEND_FAILURE ? 1 : EXIT_REJECTED;
  }
  FILE *f = fopen(argv[5], "wb");
  const int written = f && fwrite(out, sizeof(float), count, f) == count; /* float32 LE: the header is little-endian only */
  free(out);
  if (!f || fclose(f) != 0 || !written) {
    fprintf(stderr, "cannot write %s\n", argv[5]);
    return EXIT_USAGE;
  }
  return 0;
}
