/*
 * The public functions: argument and limit checks, the scratch layout, and the kernel's entry
 * points. Acceptance and output always come from the kernel (validate_v1 + decode_leaves for v1,
 * validate_decode_v2 for v2, as @sgfp4/cpu-decoder calls them); classify.c only names a refusal.
 */
#define SGFP4__TABLE_BYTES (256u * 16u) /* one v2 record's leaf table */
#define SGFP4__INPUT_SLACK 16u          /* the kernel may load 16 bytes past an 8x8 T158 payload */

SGFP4_API const char *sgfp4_status_name(sgfp4_status status) {
  switch (status) {
    case SGFP4_OK: return "OK";
    case SGFP4_SIZE_MISMATCH: return "SIZE_MISMATCH";
    case SGFP4_BAD_MAGIC: return "BAD_MAGIC";
    case SGFP4_BAD_VERSION: return "BAD_VERSION";
    case SGFP4_TRUNCATED: return "TRUNCATED";
    case SGFP4_NONZERO_PADDING: return "NONZERO_PADDING";
    case SGFP4_RECORD_COUNT_MISMATCH: return "RECORD_COUNT_MISMATCH";
    case SGFP4_MISALIGNED_OFFSET: return "MISALIGNED_OFFSET";
    case SGFP4_NONMONOTONIC_OFFSET: return "NONMONOTONIC_OFFSET";
    case SGFP4_OFFSET_OUT_OF_RANGE: return "OFFSET_OUT_OF_RANGE";
    case SGFP4_UNKNOWN_LAYOUT: return "UNKNOWN_LAYOUT";
    case SGFP4_RESERVED_BITS: return "RESERVED_BITS";
    case SGFP4_NONFINITE_PARAMETER: return "NONFINITE_PARAMETER";
    case SGFP4_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case SGFP4_LIMIT_EXCEEDED: return "LIMIT_EXCEEDED";
    case SGFP4_BACKEND_FAILURE: return "BACKEND_FAILURE";
  }
  return "UNKNOWN";
}

/* The call's geometry, or a status when the profile or shape is invalid or over a bound. Products
 * are compared by division, so no 64-bit product wraps. */
typedef struct sgfp4__call {
  sgfp4_status status;
  u32 tiles_x, blocks;
} sgfp4__call;

static sgfp4__call sgfp4__plan(int profile, size_t len, uint32_t rows, uint32_t cols, sgfp4_error *err) {
  sgfp4__call c = {SGFP4_OK, 0, 0};
  if ((profile != SGFP4_PROFILE_V1 && profile != SGFP4_PROFILE_V2) || rows == 0 || cols == 0) {
    c.status = sgfp4__fail(err, SGFP4_INVALID_ARGUMENT, SGFP4_NO_BLOCK, "profile must be 1 or 2, rows and cols >= 1");
  } else if ((u64)rows * cols > SGFP4_MAX_OUTPUT_BYTES / 4u || (u64)rows * cols > SIZE_MAX / 4u || SGFP4_MAX_OUTPUT_BYTES > (UINT64_C(1) << 33)) {
    c.status = sgfp4__fail(err, SGFP4_LIMIT_EXCEEDED, SGFP4_NO_BLOCK, "output over SGFP4_MAX_OUTPUT_BYTES");
  } else if ((u64)len > 0xffffffffu - 8192u || len > SIZE_MAX - 8192u) { /* 32-bit kernel offsets; scratch size fits size_t */
    c.status = sgfp4__fail(err, SGFP4_LIMIT_EXCEEDED, SGFP4_NO_BLOCK, "stream of 4 GiB or more");
  } else {
    c.tiles_x = (cols + 63u) / 64u;
    c.blocks = ((rows + 63u) / 64u) * c.tiles_x;
  }
  return c;
}

SGFP4_API size_t sgfp4_scratch_size(int profile, size_t len, uint32_t rows, uint32_t cols) {
  sgfp4_error ignored;
  const sgfp4__call c = sgfp4__plan(profile, len, rows, cols, &ignored);
  if (c.status != SGFP4_OK) return 0;
  /* 16: room to align the start; v1: leaf table (16 bytes a block) and block_first (B + 1 words);
   * v2: one record's leaf table and a copy of the stream with the kernel's load slack */
  if (profile == SGFP4_PROFILE_V1) return 16u + 20u * (size_t)c.blocks + 4u;
  return 16u + SGFP4__TABLE_BYTES + len + SGFP4__INPUT_SLACK;
}

static u32 *sgfp4__aligned(void *scratch) { return (u32 *)(((uintptr_t)scratch + 15u) & ~(uintptr_t)15u); }

/* The name of a refusal (kernel said "not ok"); SGFP4_BACKEND_FAILURE if no rule is broken. */
static sgfp4_status sgfp4__refused(const uint8_t *in, size_t len, int profile, const sgfp4__call *c, u32 *geo, sgfp4_error *err) {
  const sgfp4_status s = profile == SGFP4_PROFILE_V1 ? sgfp4__classify_v1(in, (u32)len, c->blocks, err)
                                                     : sgfp4__classify_v2(in, (u32)len, c->blocks, geo, err);
  return s != SGFP4_OK ? s : sgfp4__fail(err, SGFP4_BACKEND_FAILURE, SGFP4_NO_BLOCK, "the validator refused the stream but no rule names the fault");
}

/* Checks shared by validate and decode; SGFP4_OK and the plan when the call can go ahead. */
static sgfp4__call sgfp4__begin(const uint8_t *in, size_t len, int profile, uint32_t rows, uint32_t cols, size_t scratch_len,
                                const void *scratch, sgfp4_error *err) {
  sgfp4__call c = sgfp4__plan(profile, len, rows, cols, err);
  if (c.status == SGFP4_OK && ((!in && len) || !scratch || scratch_len < sgfp4_scratch_size(profile, len, rows, cols)))
    c.status = sgfp4__fail(err, SGFP4_INVALID_ARGUMENT, SGFP4_NO_BLOCK, "input is NULL, or scratch is NULL or under sgfp4_scratch_size()");
  return c;
}

SGFP4_API sgfp4_status sgfp4_validate(const uint8_t *in, size_t len, int profile, uint32_t rows, uint32_t cols, void *scratch,
                                      size_t scratch_len, sgfp4_error *err) {
  sgfp4_error local;
  if (!err) err = &local;
  sgfp4__fail(err, SGFP4_OK, SGFP4_NO_BLOCK, "ok");
  const sgfp4__call c = sgfp4__begin(in, len, profile, rows, cols, scratch_len, scratch, err);
  if (c.status != SGFP4_OK) return c.status;
  u32 *table = sgfp4__aligned(scratch);
  const u8 *stream = len ? in : (const u8 *)"";
  int ok;
  if (profile == SGFP4_PROFILE_V1) {
    ok = validate_v1(stream, (u32)len, c.blocks, table, c.blocks, 0, table + 4u * c.blocks) >= 0;
  } else { /* validate_v2 record by record: one record's leaf table at a time, as the one-pass decoder */
    const u32 base = v2_record_base(stream, (u32)len, c.blocks);
    long long prev = -1;
    ok = base != 0;
    for (u32 b = 0; ok && b < c.blocks; b++) {
      const long long start = v2_record_start(stream, (u32)len, base, b, &prev);
      ok = start >= 0 && v2_record(stream, (u32)len, (u32)start, b, table, 256u, 0) >= 0;
    }
  }
  return ok ? SGFP4_OK : sgfp4__refused(stream, len, profile, &c, table, err);
}

/* 1 when f32 lanes keep subnormals (no FTZ/DAZ, e.g. from -ffast-math): the exact FP16 -> f32
 * scale and bias conversion of the kernel relies on it. */
static int sgfp4__subnormals_kept(void) {
  volatile int smallest = 1;    /* bits of 2^-149 */
  volatile float two = 2.0f;     /* volatile: no folding of the product */
  return wasm_u32x4_extract_lane(wasm_f32x4_mul(wasm_i32x4_splat(smallest), wasm_f32x4_splat(two)), 0) == 2u;
}

SGFP4_API sgfp4_status sgfp4_decode(const uint8_t *in, size_t len, int profile, uint32_t rows, uint32_t cols, float *out,
                                    size_t out_len, void *scratch, size_t scratch_len, sgfp4_error *err) {
  sgfp4_error local;
  if (!err) err = &local;
  sgfp4__fail(err, SGFP4_OK, SGFP4_NO_BLOCK, "ok");
  const sgfp4__call c = sgfp4__begin(in, len, profile, rows, cols, scratch_len, scratch, err);
  if (c.status != SGFP4_OK) return c.status;
  if (!out || out_len < (size_t)rows * cols) return sgfp4__fail(err, SGFP4_INVALID_ARGUMENT, SGFP4_NO_BLOCK, "out is NULL or holds fewer than rows * cols floats");
  if (!sgfp4__subnormals_kept()) return sgfp4__fail(err, SGFP4_INVALID_ARGUMENT, SGFP4_NO_BLOCK, "floating point flushes subnormals (FTZ/DAZ, -ffast-math)");
  u32 *table = sgfp4__aligned(scratch);
  const u8 *stream = len ? in : (const u8 *)"";
  int ok;
  if (profile == SGFP4_PROFILE_V1) {
    sgfp4__stream = stream; /* v1 leaves read whole 16-byte chunks inside their payload: no copy */
    ok = validate_v1(stream, (u32)len, c.blocks, table, c.blocks, 0, table + 4u * c.blocks) >= 0;
    if (ok) decode_leaves(table, c.blocks, out, rows, cols, c.tiles_x, 0);
  } else {
    u8 *copy = (u8 *)table + SGFP4__TABLE_BYTES;
    if (len) __builtin_memcpy(copy, stream, len);
    __builtin_memset(copy + len, 0, SGFP4__INPUT_SLACK);
    sgfp4__stream = copy;
    ok = validate_decode_v2(copy, (u32)len, c.blocks, table, out, rows, cols, c.tiles_x, 0, 0) == 0;
  }
  sgfp4__stream = 0;
  if (ok) return SGFP4_OK;
  __builtin_memset(out, 0, (size_t)rows * cols * sizeof(float)); /* no partial output after a refusal */
  return sgfp4__refused(stream, len, profile, &c, table, err);
}
