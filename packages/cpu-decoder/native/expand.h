/*
 * Expanding a leaf table that a validator has built (validate.h, or @sgfp4/format's parse() with
 * word 3 rebased to an absolute address by the JS side), leaf by leaf, straight into the output
 * or through an output band.
 */
/*
 * Expand `count` leaves into a window of the output: element (r, c) goes to
 * out[(r - row_base) * stride + (c - col_base)], which lets the caller decode a band of macroblock
 * rows, or a run of macroblocks of one row, into a small buffer. Leaves are cropped to the
 * tensor's rows x cols; the window must hold every kept element of the leaves' blocks.
 */
__attribute__((export_name("decode_leaves_window"))) void decode_leaves_window(const u32 *table, u32 count, float *out,
                                                                               u32 stride, u32 rows, u32 cols, u32 tiles_x,
                                                                               u32 row_base, u32 col_base) {
  u32 cached_block = ~0u, by = 0, bx = 0, block_offset = 0, block_inside = 0;
  for (u32 n = 0; n < count; n++, table += 4) {
    const u32 block = table[0], geometry = table[1], params = table[2];
    const u8 *payload = (const u8 *)table[3];
    if (block != cached_block) { /* leaves of a block are contiguous: one division per block */
      cached_block = block;
      by = block / tiles_x;
      bx = block - by * tiles_x;
      /* a block wholly inside the tensor needs no per-leaf crop checks */
      block_inside = by * 64u + 64u <= rows && bx * 64u + 64u <= cols && by < (1u << 25) && bx < (1u << 25);
      block_offset = (by * 64u - row_base) * stride + bx * 64u - col_base;
    }
    u32 lg = sgfp4_geometry_log2(geometry);
    if (lg < 2u || lg > 6u) continue; /* the parser never emits these; never index with them */
    const u32 size = 1u << lg, mode = sgfp4_geometry_mode(geometry);
    const u32 y = sgfp4_geometry_y(geometry), x = sgfp4_geometry_x(geometry);
    float *dst;
    if (block_inside && y + size <= 64u && x + size <= 64u) {
      dst = out + (block_offset + y * stride + x); /* same u32 sum as the general path below */
    } else {
      const u32 r0 = by * 64u + y, c0 = bx * 64u + x;
      if (r0 >= rows || c0 >= cols) continue;
      dst = out + ((r0 - row_base) * stride + c0 - col_base);
      const u32 keep_rows = rows - r0 < size ? rows - r0 : size;
      const u32 keep_cols = cols - c0 < size ? cols - c0 : size;
      if (keep_rows != size || keep_cols != size) {
        leaf_cropped(payload, dst, stride, lg, mode, keep_rows, keep_cols, half_to_float(sgfp4_params_scale_bits(params)),
                     half_to_float(sgfp4_params_bias_bits(params)));
        continue;
      }
    }
    /* Four 4x4 leaves decoded together, either side by side (FULL_4x4 stores them so: each output
     * row gets 64 contiguous bytes, one cache line) or as the TL, TR, BL, BR children of a split
     * 8x8 node of a MIXED tree (two leaves share each row: 32 contiguous bytes). One 4x4 leaf alone
     * writes 16 bytes into each of 4 lines, which costs ~3x more per leaf once the output is
     * bigger than the cache. */
    if (lg == 2u && count - n > 3u && block_inside && table[4] == block && table[8] == block && table[12] == block) {
      const u32 g = geometry & 0x7fffu, g1 = table[5] & 0x7fffu, g2 = table[9] & 0x7fffu, g3 = table[13] & 0x7fffu;
      const int side_by_side = (x & 15u) == 0 && g1 == g + (4u << 6) && g2 == g + (8u << 6) && g3 == g + (12u << 6);
      const int quad = ((x | y) & 7u) == 0 && g1 == g + (4u << 6) && g2 == g + 4u && g3 == g + 4u + (4u << 6);
      if (side_by_side || quad) {
        v128_t s0, b0, s1, b1, s2, b2, s3, b3;
        LEAF_SCALE_BIAS(params, s0, b0);
        LEAF_SCALE_BIAS(table[6], s1, b1);
        LEAF_SCALE_BIAS(table[10], s2, b2);
        LEAF_SCALE_BIAS(table[14], s3, b3);
        const v128_t c0 = codes_4x4(payload, mode), c1 = codes_4x4((const u8 *)table[7], sgfp4_geometry_mode(table[5]));
        const v128_t c2 = codes_4x4((const u8 *)table[11], sgfp4_geometry_mode(table[9]));
        const v128_t c3 = codes_4x4((const u8 *)table[15], sgfp4_geometry_mode(table[13]));
        store_four_4x4(c0, c1, c2, c3, s0, b0, s1, b1, s2, b2, s3, b3, dst, stride, quad);
        n += 3u;
        table += 12;
        continue;
      }
    }
    /* Two side-by-side 8x8 leaves (UNIFORM_8 stores them so), for the same reason: whole lines. */
    if (lg == 3u && (x & 15u) == 0 && count - n > 1u && block_inside && y + 8u <= 64u && table[4] == block &&
        (table[5] & 0x7fffu) == (geometry & 0x7fffu) + (8u << 6)) {
      v128_t sa, ba, sb, bb, ka0, ka1, ka2, ka3, kb0, kb1, kb2, kb3;
      LEAF_SCALE_BIAS(params, sa, ba);
      LEAF_SCALE_BIAS(table[6], sb, bb);
      CODES_8x8(payload, mode, ka0, ka1, ka2, ka3);
      CODES_8x8((const u8 *)table[7], sgfp4_geometry_mode(table[5]), kb0, kb1, kb2, kb3);
      ROWS_PAIR_8x8(dst, stride, ka0, sa, ba, kb0, sb, bb);
      ROWS_PAIR_8x8(dst + 2 * stride, stride, ka1, sa, ba, kb1, sb, bb);
      ROWS_PAIR_8x8(dst + 4 * stride, stride, ka2, sa, ba, kb2, sb, bb);
      ROWS_PAIR_8x8(dst + 6 * stride, stride, ka3, sa, ba, kb3, sb, bb);
      n += 1u;
      table += 4;
      continue;
    }
    v128_t vscale, vbias;
    LEAF_SCALE_BIAS(params, vscale, vbias);
    /* 4x4 and 8x8 leaves (most leaves of fine layouts): both decodings, select by mode; no branch
     * on the mode, which alternates unpredictably. Both start from the payload's nibbles in order
     * (nibble 2i = low half of byte i): an FP4 code is one nibble, a T158 nibble holds two symbols. */
    if (lg <= 3u) {
      const v128_t is_t158 = wasm_i8x16_splat(mode ? -1 : 0);
      const v128_t low4 = wasm_i8x16_splat(0x0f);
      /* T158: each nibble appears twice (unpack with itself); masking the even copy with 0x03 and
       * the odd one with 0x0c leaves symbol s as index s or 4*s of this 16*code table */
      const v128_t t158_of = wasm_i8x16_const(0, 16, -16, 0, 16, 0, 0, 0, -16, 0, 0, 0, 0, 0, 0, 0);
      const v128_t pick = wasm_i16x8_splat(0x0c03);
      const v128_t v0 = wasm_v128_load(payload);
      const v128_t lo0 = wasm_v128_and(v0, low4), hi0 = wasm_v128_and(wasm_u16x8_shr(v0, 4), low4);
      const v128_t nib0 = wasm_i8x16_shuffle(lo0, hi0, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      /* 16*nibble: nibbles are < 16, so the 16-bit shift carries nothing into the next byte */
      const v128_t f0 = wasm_i16x8_shl(nib0, 4);
      const v128_t t0 = wasm_i8x16_swizzle(
          t158_of, wasm_v128_and(wasm_i8x16_shuffle(nib0, nib0, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), pick));
      if (lg == 2u) {
        place16(dst, stride, 2, 0, wasm_v128_bitselect(t0, f0, is_t158), vscale, vbias);
        continue;
      }
      /* 8x8: FP4 uses 32 bytes, T158 16. The second chunk of a T158 leaf may lie past the stream
       * copy; the JS side reserves 16 bytes of slack there (INPUT_SLACK_BYTES). */
      const v128_t v1 = wasm_v128_load(payload + 16);
      const v128_t nib1 = wasm_i8x16_shuffle(lo0, hi0, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      const v128_t lo1 = wasm_v128_and(v1, low4), hi1 = wasm_v128_and(wasm_u16x8_shr(v1, 4), low4);
      const v128_t nib2 = wasm_i8x16_shuffle(lo1, hi1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      const v128_t nib3 = wasm_i8x16_shuffle(lo1, hi1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      const v128_t t1 = wasm_i8x16_swizzle(
          t158_of, wasm_v128_and(wasm_i8x16_shuffle(nib0, nib0, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), pick));
      const v128_t t2 = wasm_i8x16_swizzle(
          t158_of, wasm_v128_and(wasm_i8x16_shuffle(nib1, nib1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), pick));
      const v128_t t3 = wasm_i8x16_swizzle(
          t158_of, wasm_v128_and(wasm_i8x16_shuffle(nib1, nib1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), pick));
      place16(dst, stride, 3, 0, wasm_v128_bitselect(t0, f0, is_t158), vscale, vbias);
      place16(dst, stride, 3, 16, wasm_v128_bitselect(t1, wasm_i16x8_shl(nib1, 4), is_t158), vscale, vbias);
      place16(dst, stride, 3, 32, wasm_v128_bitselect(t2, wasm_i16x8_shl(nib2, 4), is_t158), vscale, vbias);
      place16(dst, stride, 3, 48, wasm_v128_bitselect(t3, wasm_i16x8_shl(nib3, 4), is_t158), vscale, vbias);
      continue;
    }
    big_leaf(payload, dst, stride, lg, mode, vscale, vbias);
  }
}


/* The whole width: element (r, c) goes to out[(r - row_base) * cols + c]. */
__attribute__((export_name("decode_leaves"))) void decode_leaves(const u32 *table, u32 count, float *out, u32 rows,
                                                                   u32 cols, u32 tiles_x, u32 row_base) {
  decode_leaves_window(table, count, out, cols, rows, cols, tiles_x, row_base, 0);
}

/*
 * Output bands. Writing each leaf straight into a large output sends 64 to 256 bytes to each of
 * many rows (4 KiB apart for 1024 columns); measured on pure stores, that pattern costs ~1.7x
 * (64 MiB) to ~2x (16 MiB) a sequential write of the same bytes. So leaves wholly inside the tensor
 * are expanded into a band of 64 rows x up to `chunk_blocks` macroblocks (cache-sized), which is
 * then copied out with memory.copy: one contiguous run when the band spans the whole row width,
 * else one run per row. Edge macroblocks (cropped) are written straight to the output.
 */
static inline void flush_band(const float *band, u32 stride, float *out, u32 cols, u32 by, u32 bx0, u32 inside_blocks) {
  if (!inside_blocks) return;
  float *dst = out + (by * 64u) * cols + bx0 * 64u;
  if (bx0 == 0 && inside_blocks * 64u == cols && stride == cols) {
    __builtin_memcpy(dst, band, 64u * cols * 4u);
    return;
  }
  for (u32 r = 0; r < 64u; r++, dst += cols, band += stride) __builtin_memcpy(dst, band, inside_blocks * 256u);
}

/* Leaf table entries of one macroblock (block index in word 0 ignored) into a 64x64 area at dst, row stride `stride`. */
static inline void decode_block_at(const u32 *table, u32 count, float *dst, u32 stride) {
  /* decode_leaves places block `table[0]` at row (table[0] * 64 - row_base): row_base cancels it,
   * and `rows` = that row + 64 marks the block as wholly inside (no crop checks) */
  const u32 block_row = table[0] * 64u;
  decode_leaves(table, count, dst, block_row + 64u, stride, 1, block_row);
}


/*
 * v1 leaves of an already validated stream (validate_v1's table: one 64x64 leaf per block, in
 * block order), through the output band like validate_decode_v2.
 */
__attribute__((export_name("decode_v1_banded"))) void decode_v1_banded(const u32 *table, u32 blocks, float *out, u32 rows,
                                                                        u32 cols, u32 tiles_x, float *band, u32 chunk_blocks) {
  const u32 stride = chunk_blocks * 64u;
  u32 chunk_by = 0, chunk_bx0 = 0, chunk_inside = 0;
  for (u32 b = 0; b < blocks; b++, table += 4) {
    const u32 by = b / tiles_x, bx = b - by * tiles_x;
    if (by != chunk_by || bx - chunk_bx0 >= chunk_blocks) {
      flush_band(band, stride, out, cols, chunk_by, chunk_bx0, chunk_inside);
      chunk_by = by, chunk_bx0 = bx, chunk_inside = 0;
    }
    if (by * 64u + 64u <= rows && bx * 64u + 64u <= cols && by < (1u << 25) && bx < (1u << 25)) {
      chunk_inside = bx - chunk_bx0 + 1u;
      decode_block_at(table, 1, band + (bx - chunk_bx0) * 64u, stride);
    } else {
      decode_leaves(table, 1, out, rows, cols, tiles_x, 0);
    }
  }
  flush_band(band, stride, out, cols, chunk_by, chunk_bx0, chunk_inside);
}
