#version 450
#include "sgfp4_leaf_table.glsl" // @sgfp4/format's generated contract: leaf-table words, geometry, FP16
// SGFP4 leaf expansion: one workgroup per 64x64 macroblock, leaves from the leaf table
// (docs/ARCHITECTURE.md) that the native parser produced after validating the stream.
// Bit-exact per DECISIONS.md section 2: FP16 -> float32 with integer operations, one
// correctly rounded multiply-add (S*code is exact), signed zeros fixed up explicitly
// because Vulkan does not promise to preserve them by default.
#define THREADS 256u
layout(local_size_x = 256) in;

// The workgroup's leaves go to shared memory (one barrier); then every thread finds the leaf of
// its own 4x4 cell (arithmetic for raster layouts, a binary search over Z-order keys for MIXED)
// and expands the cell's four rows of four codes, `restrict` and all four payload words loaded
// before any store. Run 5 on the H200: a cell per thread (one leaf lookup, not four for four rows
// 16 apart) took v2 from 0.76-0.78 to 0.82-0.84 of the copy shader and v1 from 0.88-0.89 to
// 0.92-0.95. Run 6: finding the cell's leaf in the thread that expands it (no shared cell map,
// no second barrier) +0.7-1.0 points on v2, and warp tiles in multi-leaf macroblocks (below)
// +0.7-0.8 more: v2 0.835-0.856, v1 0.93-0.96. Session 19, two runs on the H200: the signed-zero
// fix-up only for leaves that can produce a zero (leafMayZero; the candidate LAZY_ZERO until then)
// took encoder-made v2 from 0.80-0.86 to 0.84-0.87 (on the H100 it had been within 0.002).
//
// The bench-only addon (scripts/build-bench.mjs) builds candidate pipelines from this file with
// the defines below and times them against the default in the same rounds, checking each one's
// bits against the default's on the device; the shipped addon contains none of them. Measured and
// rejected: extracting FP4 and T158 codes on one branch-free path (run 4: 4% slower on v2);
// 128-thread workgroups with two cells a thread (run 5: 4-9 points slower); two cell rows per
// warp in every macroblock instead of warp tiles in multi-leaf ones (run 6: v2 -0.7 to -0.8);
// FP4 codes to floats through 2^23 + code bits instead of the int->float conversion (FAST_CODES:
// H100 within 0.002, H200 0.01-0.02 slower, session 19); one padding word per 32 Z-order keys
// against shared-memory bank conflicts in the search (SKEW_KEYS: no gain, session 19).
//   ZERO_FLAG: leafMayZero judged once per leaf when the leaves are loaded, not per cell.
//   CELL_MAP: each leaf writes its index into the cells it covers while the leaves are loaded
//     (before the one barrier), and a cell reads its leaf there instead of searching the keys.
//   REGION_MAP: CELL_MAP with a second level, so that no leaf writes more than four entries: a
//     leaf of 16x16 and up writes the 16x16 regions it covers, a smaller one its cells and a
//     "split" mark in its region; a cell reads its region's leaf, or its own entry when split.
//   DIAG_NO_SEARCH: diagnostic, not exact: a cell's leaf guessed without the search, to time it.
#define NOALIAS restrict
layout(std430, set = 0, binding = 0) NOALIAS readonly buffer Stream { uint words[]; } stream;
layout(std430, set = 0, binding = 1) NOALIAS readonly buffer Leaves { uvec4 entries[]; } leaves;
layout(std430, set = 0, binding = 2) NOALIAS readonly buffer FirstLeaf { uint idx[]; } firstLeaf;
#ifdef HALF_OUTPUT
// f16 / bf16 output (P10): each value the round-to-nearest-even conversion of the exact float32
// result, computed on its bits with integer operations. Specialization constant 0: 1 = bf16.
#extension GL_EXT_shader_16bit_storage : require
layout(constant_id = 0) const uint BF16 = 0u;
layout(std430, set = 0, binding = 3) writeonly buffer OutScalar { uint16_t v[]; } outScalar; // aliases OutVec
layout(std430, set = 0, binding = 4) writeonly buffer OutVec { uvec2 v[]; } outVec;
#else
layout(std430, set = 0, binding = 3) writeonly buffer OutScalar { uint v[]; } outScalar; // aliases OutVec
layout(std430, set = 0, binding = 4) writeonly buffer OutVec { uvec4 v[]; } outVec;
#endif

layout(push_constant) uniform Params {
  uint blockBase;      // first macroblock of this dispatch
  uint blockCount;     // macroblocks in this dispatch
  uint tilesX;
  uint rows;           // O
  uint cols;           // I
  uint rowBase;        // first output row held by the bound output buffer
  uint streamWordBase; // absolute word index of the bound stream range's start
  uint streamWords;    // words in the bound stream range
  uint leafBase;       // absolute leaf index of the bound leaf range's start
  uint leafCount;      // leaves in the bound range
  uint groupsX;        // workgroups along x (the grid may be 2-D)
} pc;

shared uint sGeom[256];
shared uint sScale[256]; // float32 bits
shared uint sBias[256];
shared uint sPay[256];   // word index of the payload in the bound stream range
#ifdef ZERO_FLAG
shared uint sMayZero[256]; // leafMayZero of each leaf, as 0 / 1
#endif
#if defined(CELL_MAP) || defined(REGION_MAP)
shared uint sCellLeaf[256]; // local index of the leaf holding each cell (row-major 16x16 cells)
#endif
#ifdef REGION_MAP
#define REGION_SPLIT 0xffffffffu
shared uint sRegionLeaf[16]; // leaf covering each 16x16 region (row-major 4x4), or REGION_SPLIT
#endif
shared uint sKey[256];   // Z-order key of the leaf's first cell

#ifdef HALF_OUTPUT
// float32 bits -> binary16 bits, round to nearest even; subnormals kept, overflow to Inf. The
// decoded values are finite (finite FP16 parameters, codes -8..7), so no NaN case.
uint f32ToF16(uint x) {
  uint sign = (x >> 16) & 0x8000u;
  uint ax = x & 0x7fffffffu;
  if (ax >= 0x47800000u) return sign | 0x7c00u;  // |x| >= 2^16
  // normal binary16 range: rebias the exponent, round the 13 dropped bits (a carry may reach Inf)
  if (ax >= 0x38800000u) return sign | ((ax - 0x38000000u + 0xfffu + ((ax >> 13) & 1u)) >> 13);
  uint e = ax >> 23;
  if (e < 102u) return sign;  // below 2^-25: rounds to zero
  // subnormal binary16: the value in units of 2^-24 is m >> s, rounded to nearest even
  uint m = (ax & 0x7fffffu) | 0x800000u;
  uint s = 126u - e;  // 14..24
  uint q = m >> s, rest = m & ((1u << s) - 1u), tie = 1u << (s - 1u);
  return sign | (q + ((rest > tie || (rest == tie && (q & 1u) != 0u)) ? 1u : 0u));
}
// float32 bits -> bfloat16 bits, round to nearest even (finite inputs; a carry may reach Inf).
uint f32ToBf16(uint x) { return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16; }
uint toHalf(uint x) { return BF16 != 0u ? f32ToBf16(x) : f32ToF16(x); }
#endif

// Interleaves 4-bit cell row and column: TL, TR, BL, BR order at every level.
uint zorder(uint cy, uint cx) {
  uint k = 0u;
  for (uint i = 0u; i < 4u; i++) k |= (((cx >> i) & 1u) << (2u * i)) | (((cy >> i) & 1u) << (2u * i + 1u));
  return k;
}

#if defined(CELL_MAP) || defined(REGION_MAP)
// Leaf j's index into the side x side cells from (cy0, cx0); the mask keeps a table outside the
// contract in bounds.
void markCells(uint cy0, uint cx0, uint side, uint j) {
  for (uint dy = 0u; dy < side; dy++) {
    for (uint dx = 0u; dx < side; dx++) sCellLeaf[((cy0 + dy) * 16u + cx0 + dx) & 255u] = j;
  }
}
#endif

// Whether a leaf (float32 bits of S and Bias) can decode to a zero, whose sign Vulkan does not
// promise to get right: Bias is +-0, or S*q = -Bias for the one code q that could (S*q and Bias
// are multiples of 2^-24, so the fma is zero only when exactly zero; the quotient, within a few
// ulp, rounds to q when -Bias/S is the integer q). Leaves that cannot skip the fix-up.
bool mayDecodeZero(uint scaleBits, uint biasBits) {
  if ((biasBits & 0x7fffffffu) == 0u) return true;
  float S = uintBitsToFloat(scaleBits), B = uintBitsToFloat(biasBits);
  return fma(S, clamp(roundEven(-B / S), -8.0, 7.0), B) == 0.0; // S = 0: B != 0, never zero
}
bool leafMayZero(uint li) {
#ifdef ZERO_FLAG
  return sMayZero[li] != 0u;
#else
  return mayDecodeZero(sScale[li], sBias[li]);
#endif
}

// Expands the 4 codes of leaf li starting at code index i (from payload word w) to output row
// orow, columns ocol..ocol+3, and stores them.
void expandStore(uint orow, uint ocol, uint li, uint i, uint w, bool full, bool mayZero) {
  uint mode = sgfp4_geometry_mode(sGeom[li]);
  float S = uintBitsToFloat(sScale[li]);
  uint biasBits = sBias[li];
  vec4 q;
  // four codes at once: the vector form of sgfp4_fp4_code / sgfp4_t158_code
  if (mode == SGFP4_MODE_FP4) {
    uint bits = w >> ((i & 7u) * 4u);
    q = vec4(ivec4(int(bits << 28), int(bits << 24), int(bits << 20), int(bits << 16)) >> 28);
  } else {
    uint bits = w >> ((i & 15u) * 2u);
    uvec4 s = uvec4(bits, bits >> 2, bits >> 4, bits >> 6) & 3u;
    q = vec4(equal(s, uvec4(1u))) - vec4(equal(s, uvec4(2u))); // 11 (reserved) -> 0
  }
  uvec4 bits4 = floatBitsToUint(fma(vec4(S), q, vec4(uintBitsToFloat(biasBits))));
  // Signed zero per IEEE round-to-nearest: a zero result is -0 only when Bias is -0 and
  // S*q is -0; S*q has the sign of S, flipped for q < 0.
  if (mayZero) {
    uint flip = biasBits == 0x80000000u ? 0x80000000u : 0u;
    uvec4 zeroBits = (uvec4(sScale[li] & flip)) ^ (uvec4(lessThan(q, vec4(0.0))) * flip);
    bvec4 isZero = equal(bits4 & 0x7fffffffu, uvec4(0u));
    bits4 = uvec4(isZero.x ? zeroBits.x : bits4.x, isZero.y ? zeroBits.y : bits4.y,
                  isZero.z ? zeroBits.z : bits4.z, isZero.w ? zeroBits.w : bits4.w);
  }

#ifdef HALF_OUTPUT
  uvec4 h = uvec4(toHalf(bits4.x), toHalf(bits4.y), toHalf(bits4.z), toHalf(bits4.w));
  if (full) {
    outVec.v[((orow - pc.rowBase) * pc.cols + ocol) >> 2] = uvec2(h.x | (h.y << 16), h.z | (h.w << 16));
  } else if (orow < pc.rows) {
    uint o = (orow - pc.rowBase) * pc.cols + ocol;
    if (ocol < pc.cols) outScalar.v[o] = uint16_t(h.x);
    if (ocol + 1u < pc.cols) outScalar.v[o + 1u] = uint16_t(h.y);
    if (ocol + 2u < pc.cols) outScalar.v[o + 2u] = uint16_t(h.z);
    if (ocol + 3u < pc.cols) outScalar.v[o + 3u] = uint16_t(h.w);
  }
#else
  if (full) {
    outVec.v[((orow - pc.rowBase) * pc.cols + ocol) >> 2] = bits4;
  } else if (orow < pc.rows) {
    uint o = (orow - pc.rowBase) * pc.cols + ocol;
    if (ocol < pc.cols) outScalar.v[o] = bits4.x;
    if (ocol + 1u < pc.cols) outScalar.v[o + 1u] = bits4.y;
    if (ocol + 2u < pc.cols) outScalar.v[o + 2u] = bits4.z;
    if (ocol + 3u < pc.cols) outScalar.v[o + 3u] = bits4.w;
  }
#endif
}

// Thread's cell (row cell/16, column cell%16 of the macroblock): its four rows of four codes,
// payload words loaded before any store; each store of a warp writes two 256-byte row segments.
// Local index of the leaf holding a cell (row cell/16, column cell%16): arithmetic for raster
// (uniform) layouts, a binary search over the leaves' Z-order keys for MIXED (pre-order DFS is
// Z-order). Reads only the leaf data in shared memory.
uint leafOfCell(uint cell, uint n) {
  if (n == 1u) return 0u;
#ifdef CELL_MAP
  return sCellLeaf[cell];
#endif
#ifdef REGION_MAP
  uint region = sRegionLeaf[((cell >> 6) << 2) | ((cell & 15u) >> 2)];
  return region != REGION_SPLIT ? region : sCellLeaf[cell];
#endif
  uint g0 = sGeom[0];
  uint sc = 1u << (clamp(sgfp4_geometry_log2(g0), 2u, 6u) - 2u); // cells per side of leaf 0
  uint per = 16u / sc;                                    // leaves per row if raster
  uint cy = cell >> 4, cx = cell & 15u;
  // Raster (uniform layout) iff there are per*per leaves and, beyond 2x2, leaf 2 sits at
  // row 0, column 2: pre-order DFS always puts leaf 2 at (sc, 0) in that case.
  if (n == per * per && (per <= 2u || (sGeom[2] & 4095u) == ((2u * sc * 4u) << 6))) return (cy / sc) * per + cx / sc;
#ifdef DIAG_NO_SEARCH
  return min((cell * n) >> 8, n - 1u);
#endif
  uint key = zorder(cy, cx), lo = 0u, hi = n - 1u;
  while (lo < hi) {
    uint mid = (lo + hi + 1u) >> 1;
    if (sKey[mid] <= key) lo = mid; else hi = mid - 1u;
  }
  return lo;
}

void expandCell(uint cell, uint li, uint row0, uint col0, bool full) {
  uint geom = sGeom[li];
  uint ly = sgfp4_geometry_y(geom), lx = sgfp4_geometry_x(geom), log2 = sgfp4_geometry_log2(geom), mode = sgfp4_geometry_mode(geom);
  uint r0 = (cell >> 4) << 2, c = (cell & 15u) << 2;
  uint codeAt[4], word[4];
  for (uint k = 0u; k < 4u; k++) {
    uint i = (((r0 + k - ly) << log2) + (c - lx)) & 4095u; // first of 4 codes, a multiple of 4
    codeAt[k] = i;
    word[k] = stream.words[min(sPay[li] + (mode == SGFP4_MODE_FP4 ? (i >> 3) : (i >> 4)), pc.streamWords - 1u)];
  }
  bool mayZero = leafMayZero(li);
  for (uint k = 0u; k < 4u; k++) expandStore(row0 + r0 + k, col0 + c, li, codeAt[k], word[k], full, mayZero);
}

void main() {
  uint local = gl_WorkGroupID.y * pc.groupsX + gl_WorkGroupID.x;
  if (local >= pc.blockCount) return; // whole workgroup leaves together
  uint b = pc.blockBase + local;
  uint t = gl_LocalInvocationIndex;
  uint first = firstLeaf.idx[b];
  uint n = clamp(firstLeaf.idx[b + 1u] - first, 1u, 256u);

  for (uint j = t; j < n; j += THREADS) {
    uint li = min(first - pc.leafBase + j, pc.leafCount - 1u);
    uvec4 L = leaves.entries[li];
    uint geom = L[SGFP4_LEAF_WORD_GEOMETRY] & 0xffffu;
    uint log2 = clamp(sgfp4_geometry_log2(geom), SGFP4_MIN_LEAF_LOG2, SGFP4_MAX_LEAF_LOG2);
    uint payWords = sgfp4_leaf_payload_bytes(log2, sgfp4_geometry_mode(geom)) >> 2;
    uint payload = L[SGFP4_LEAF_WORD_PAYLOAD] >> 2;
    uint w = payload - pc.streamWordBase;
    // Unreachable for a validated stream; keeps the reads inside the bound range regardless.
    if (payload < pc.streamWordBase || w + payWords > pc.streamWords) w = 0u;
    sGeom[j] = geom;
    uint scaleBits = sgfp4_half_to_float_bits(sgfp4_params_scale_bits(L[SGFP4_LEAF_WORD_PARAMS]));
    uint biasBits = sgfp4_half_to_float_bits(sgfp4_params_bias_bits(L[SGFP4_LEAF_WORD_PARAMS]));
    sScale[j] = scaleBits;
    sBias[j] = biasBits;
#ifdef ZERO_FLAG
    sMayZero[j] = mayDecodeZero(scaleBits, biasBits) ? 1u : 0u;
#endif
#if defined(CELL_MAP) || defined(REGION_MAP)
    if (n > 1u) {
      uint cy0 = sgfp4_geometry_y(geom) >> 2, cx0 = sgfp4_geometry_x(geom) >> 2, side = 1u << (log2 - 2u);
#ifdef CELL_MAP
      markCells(cy0, cx0, side, j);
#else
      // a valid table never mixes the two writes in one region; the masks keep any other in bounds
      if (side >= 4u) {
        for (uint dy = 0u; dy < (side >> 2); dy++) {
          for (uint dx = 0u; dx < (side >> 2); dx++) sRegionLeaf[(((cy0 >> 2) + dy) * 4u + (cx0 >> 2) + dx) & 15u] = j;
        }
      } else {
        sRegionLeaf[((cy0 >> 2) * 4u + (cx0 >> 2)) & 15u] = REGION_SPLIT;
        markCells(cy0, cx0, side, j);
      }
#endif
    }
#endif
    sPay[j] = w;
    sKey[j] = zorder(sgfp4_geometry_y(geom) >> 2, sgfp4_geometry_x(geom) >> 2);
  }
  barrier();
  uint by = b / pc.tilesX, bx = b - by * pc.tilesX;
  uint row0 = by * 64u, col0 = bx * 64u;
  bool full = row0 + 64u <= pc.rows && col0 + 64u <= pc.cols && (pc.cols & 3u) == 0u;
  // Multi-leaf macroblocks: a warp's 32 cells form an 8x4-cell tile (32x16 pixels), so warps stay
  // inside one leaf of 32x32 and up and run one side of the mode branch; each store writes four
  // 128-byte row segments. Single-leaf ones (n is the same for the whole workgroup) keep two cell
  // rows per warp, two 256-byte segments a store (tiles there cost v1 0.8 points in run 5).
  uint cell = n > 1u ? ((t >> 6) * 4u + ((t >> 3) & 3u)) * 16u + ((t >> 5) & 1u) * 8u + (t & 7u) : t;
  // each thread finds its own cell's leaf: no shared cell map, no second barrier
  expandCell(cell, min(leafOfCell(cell, n), n - 1u), row0, col0, full);
}
