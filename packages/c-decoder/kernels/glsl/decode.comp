#version 450
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
// +0.7-0.8 more: v2 0.835-0.856, v1 0.93-0.96.
//
// The benchmark's second pipeline (scripts/build-native.mjs compiles it with -DSERIAL_FILL, the
// name of the run-2 baseline it first held) times a candidate against the default in the same
// rounds. Measured and rejected: extracting FP4 and T158 codes on one branch-free path (run 4:
// 4% slower on v2); 128-thread workgroups with two cells a thread (run 5: 4-9 points slower).
// Candidate now (ROW_ORDER): the run-6 cell order, two cell rows per warp in every macroblock,
// against the default's warp tiles in multi-leaf ones (run 6: v2 -0.7 to -0.8 points).
#ifdef SERIAL_FILL
#define ROW_ORDER
#endif
#define NOALIAS restrict
layout(std430, set = 0, binding = 0) NOALIAS readonly buffer Stream { uint words[]; } stream;
layout(std430, set = 0, binding = 1) NOALIAS readonly buffer Leaves { uvec4 entries[]; } leaves;
layout(std430, set = 0, binding = 2) NOALIAS readonly buffer FirstLeaf { uint idx[]; } firstLeaf;
layout(std430, set = 0, binding = 3) writeonly buffer OutScalar { uint v[]; } outScalar; // aliases OutVec
layout(std430, set = 0, binding = 4) writeonly buffer OutVec { uvec4 v[]; } outVec;

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
shared uint sKey[256];   // Z-order key of the leaf's first cell

uint halfToFloatBits(uint h) {
  uint sign = (h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1fu;
  uint m = h & 0x3ffu;
  if (e == 0x1fu) return sign | 0x7f800000u | (m << 13);
  if (e != 0u) return sign | ((e + 112u) << 23) | (m << 13);
  if (m == 0u) return sign;
  // subnormal: m * 2^-24, normalised (findMSB(m) in 0..9)
  int msb = findMSB(m);
  uint shift = uint(10 - msb);
  return sign | (uint(113 - int(shift)) << 23) | (((m << shift) & 0x3ffu) << 13);
}

// Interleaves 4-bit cell row and column: TL, TR, BL, BR order at every level.
uint zorder(uint cy, uint cx) {
  uint k = 0u;
  for (uint i = 0u; i < 4u; i++) k |= (((cx >> i) & 1u) << (2u * i)) | (((cy >> i) & 1u) << (2u * i + 1u));
  return k;
}

// Expands the 4 codes of leaf li starting at code index i (from payload word w) to output row
// orow, columns ocol..ocol+3, and stores them.
void expandStore(uint orow, uint ocol, uint li, uint i, uint w, bool full) {
  uint mode = (sGeom[li] >> 15) & 1u;
  float S = uintBitsToFloat(sScale[li]);
  uint biasBits = sBias[li];
  vec4 q;
  if (mode == 0u) {
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
  bool biasNegZero = biasBits == 0x80000000u;
  uint flip = biasNegZero ? 0x80000000u : 0u;
  uvec4 zeroBits = (uvec4(sScale[li] & flip)) ^ (uvec4(lessThan(q, vec4(0.0))) * flip);
  bvec4 isZero = equal(bits4 & 0x7fffffffu, uvec4(0u));
  bits4 = uvec4(isZero.x ? zeroBits.x : bits4.x, isZero.y ? zeroBits.y : bits4.y,
                isZero.z ? zeroBits.z : bits4.z, isZero.w ? zeroBits.w : bits4.w);

  if (full) {
    outVec.v[((orow - pc.rowBase) * pc.cols + ocol) >> 2] = bits4;
  } else if (orow < pc.rows) {
    uint o = (orow - pc.rowBase) * pc.cols + ocol;
    if (ocol < pc.cols) outScalar.v[o] = bits4.x;
    if (ocol + 1u < pc.cols) outScalar.v[o + 1u] = bits4.y;
    if (ocol + 2u < pc.cols) outScalar.v[o + 2u] = bits4.z;
    if (ocol + 3u < pc.cols) outScalar.v[o + 3u] = bits4.w;
  }
}

// Thread's cell (row cell/16, column cell%16 of the macroblock): its four rows of four codes,
// payload words loaded before any store; each store of a warp writes two 256-byte row segments.
// Local index of the leaf holding a cell (row cell/16, column cell%16): arithmetic for raster
// (uniform) layouts, a binary search over the leaves' Z-order keys for MIXED (pre-order DFS is
// Z-order). Reads only the leaf data in shared memory.
uint leafOfCell(uint cell, uint n) {
  if (n == 1u) return 0u;
  uint g0 = sGeom[0];
  uint sc = 1u << (clamp((g0 >> 12) & 7u, 2u, 6u) - 2u); // cells per side of leaf 0
  uint per = 16u / sc;                                    // leaves per row if raster
  uint cy = cell >> 4, cx = cell & 15u;
  // Raster (uniform layout) iff there are per*per leaves and, beyond 2x2, leaf 2 sits at
  // row 0, column 2: pre-order DFS always puts leaf 2 at (sc, 0) in that case.
  if (n == per * per && (per <= 2u || (sGeom[2] & 4095u) == ((2u * sc * 4u) << 6))) return (cy / sc) * per + cx / sc;
  uint key = zorder(cy, cx), lo = 0u, hi = n - 1u;
  while (lo < hi) {
    uint mid = (lo + hi + 1u) >> 1;
    if (sKey[mid] <= key) lo = mid; else hi = mid - 1u;
  }
  return lo;
}

void expandCell(uint cell, uint li, uint row0, uint col0, bool full) {
  uint geom = sGeom[li];
  uint ly = geom & 63u, lx = (geom >> 6) & 63u, log2 = (geom >> 12) & 7u, mode = (geom >> 15) & 1u;
  uint r0 = (cell >> 4) << 2, c = (cell & 15u) << 2;
  uint codeAt[4], word[4];
  for (uint k = 0u; k < 4u; k++) {
    uint i = (((r0 + k - ly) << log2) + (c - lx)) & 4095u; // first of 4 codes, a multiple of 4
    codeAt[k] = i;
    word[k] = stream.words[min(sPay[li] + (mode == 0u ? (i >> 3) : (i >> 4)), pc.streamWords - 1u)];
  }
  for (uint k = 0u; k < 4u; k++) expandStore(row0 + r0 + k, col0 + c, li, codeAt[k], word[k], full);
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
    uint geom = L.y & 0xffffu;
    uint log2 = clamp((geom >> 12) & 7u, 2u, 6u);
    uint mode = (geom >> 15) & 1u;
    uint payWords = (mode == 0u) ? (1u << (2u * log2 - 3u)) : (1u << (2u * log2 - 4u));
    uint w = (L.w >> 2) - pc.streamWordBase;
    // Unreachable for a validated stream; keeps the reads inside the bound range regardless.
    if (L.w >> 2 < pc.streamWordBase || w + payWords > pc.streamWords) w = 0u;
    sGeom[j] = geom;
    sScale[j] = halfToFloatBits(L.z >> 16);
    sBias[j] = halfToFloatBits(L.z & 0xffffu);
    sPay[j] = w;
    sKey[j] = zorder((geom & 63u) >> 2, ((geom >> 6) & 63u) >> 2);
  }
  barrier();
  uint by = b / pc.tilesX, bx = b - by * pc.tilesX;
  uint row0 = by * 64u, col0 = bx * 64u;
  bool full = row0 + 64u <= pc.rows && col0 + 64u <= pc.cols && (pc.cols & 3u) == 0u;
#ifdef ROW_ORDER
  uint cell = t;
#else
  // Multi-leaf macroblocks: a warp's 32 cells form an 8x4-cell tile (32x16 pixels), so warps stay
  // inside one leaf of 32x32 and up and run one side of the mode branch; each store writes four
  // 128-byte row segments. Single-leaf ones (n is the same for the whole workgroup) keep two cell
  // rows per warp, two 256-byte segments a store (tiles there cost v1 0.8 points in run 5).
  uint cell = n > 1u ? ((t >> 6) * 4u + ((t >> 3) & 3u)) * 16u + ((t >> 5) & 1u) * 8u + (t & 7u) : t;
#endif
  // each thread finds its own cell's leaf: no shared cell map, no second barrier
  expandCell(cell, min(leafOfCell(cell, n), n - 1u), row0, col0, full);
}
