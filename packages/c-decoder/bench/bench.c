/*
 * sgfp4_decode timed on one container: bench CONTAINER PROFILE(1|2) ROWS COLS REFERENCE.f32 REPS
 * Prints one JSON line: the best decode time (bytes in memory -> float32 in the caller's buffer,
 * scratch reused), the floor (memcpy of the same output size, same buffers, same run) and whether
 * the bits equal REFERENCE (the WebAssembly decoder's output).
 */
#define _POSIX_C_SOURCE 199309L
#define SGFP4_IMPLEMENTATION
#include "../sgfp4.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f || fseek(f, 0, SEEK_END) != 0) exit(2);
  const long size = ftell(f);
  void *data = malloc(size > 0 ? (size_t)size : 1);
  rewind(f);
  if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) exit(2);
  fclose(f);
  *len = (size_t)size;
  return data;
}

int main(int argc, char **argv) {
  if (argc != 7) return 2;
  const int profile = atoi(argv[2]), reps = atoi(argv[6]);
  const uint32_t rows = (uint32_t)strtoul(argv[3], NULL, 10), cols = (uint32_t)strtoul(argv[4], NULL, 10);
  size_t len, ref_len;
  const uint8_t *in = read_all(argv[1], &len);
  const float *ref = read_all(argv[5], &ref_len);
  const size_t n = (size_t)rows * cols, scratch_len = sgfp4_scratch_size(profile, len, rows, cols);
  float *out = malloc(n * sizeof(float)), *copy = malloc(n * sizeof(float));
  void *scratch = malloc(scratch_len ? scratch_len : 1);
  if (!out || !copy || !scratch || ref_len != n * sizeof(float)) return 2;
  double best = 1e30, floor = 1e30;
  volatile float sink = 0;
  for (int r = 0; r < reps; r++) {
    double t0 = now_ms();
    const sgfp4_status status = sgfp4_decode(in, len, profile, rows, cols, out, n, scratch, scratch_len, NULL);
    double t = now_ms() - t0;
    if (status != SGFP4_OK) {
      fprintf(stderr, "error: %s\n", sgfp4_status_name(status));
      return 3;
    }
    if (t < best) best = t;
    t0 = now_ms();
    memcpy(copy, ref, n * sizeof(float));
    sink = copy[(size_t)r % n]; /* the copy is used: not optimized away */
    t = now_ms() - t0;
    if (t < floor) floor = t;
  }
  (void)sink;
  printf("{\"ms\":%.3f,\"floorMs\":%.3f,\"bitsOk\":%s}\n", best, floor, memcmp(out, ref, n * sizeof(float)) == 0 ? "true" : "false");
  return 0;
}
