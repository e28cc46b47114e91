#version 450
// SGFP4 leaf expansion: one workgroup per 64x64 macroblock, leaves from the leaf table
// (docs/ARCHITECTURE.md) that the native parser produced after validating the stream.
// Bit-exact per DECISIONS.md section 2: FP16 -> float32 with integer operations, one
// correctly rounded multiply-add (S*code is exact), signed zeros fixed up explicitly
// because Vulkan does not promise to preserve them by default.
layout(local_size_x = 256) in;

// Every thread finds the leaf of its own 4x4 cell of the map: arithmetic for raster (uniform)
// layouts, a binary search over the leaves' Z-order keys for MIXED (pre-order DFS is Z-order).
// `restrict` and all four payload words loaded before any store.
//
// Code extraction, candidate measured and rejected (UNIFIED_MODES_MULTI_LEAF): when a
// macroblock holds several leaves, one warp's lanes can cover FP4 and T158 leaves at once, and a
// branch on the mode runs both sides for the whole warp; the candidate extracts both modes on one
// branch-free path there (after the WebGPU decoder's `cells-unified`). Single-leaf macroblocks
// (all of v1) keep the branch. On the H200 (BENCHMARKS.md run 4) it was 4% slower on v2 and 1%
// on v1, so the default pipeline stays the run-3 shader (branch always). It is kept as the
// benchmark's second pipeline so a revision can be timed against the default in the same rounds:
// scripts/build-native.mjs compiles that pipeline with -DSERIAL_FILL (the name of the run-2
// baseline it used to hold), which selects the candidate. Bit-exact on lavapipe as the default
// (tests and conformance, commit 13aa8cb).
#ifdef SERIAL_FILL
#define UNIFIED_MODES_MULTI_LEAF
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

shared uint sMap[256];   // 4x4 cell of the macroblock -> local leaf index
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

void main() {
  uint local = gl_WorkGroupID.y * pc.groupsX + gl_WorkGroupID.x;
  if (local >= pc.blockCount) return; // whole workgroup leaves together
  uint b = pc.blockBase + local;
  uint t = gl_LocalInvocationIndex;
  uint first = firstLeaf.idx[b];
  uint n = clamp(firstLeaf.idx[b + 1u] - first, 1u, 256u);

  if (t < n) {
    uint li = min(first - pc.leafBase + t, pc.leafCount - 1u);
    uvec4 L = leaves.entries[li];
    uint geom = L.y & 0xffffu;
    uint log2 = clamp((geom >> 12) & 7u, 2u, 6u);
    uint mode = (geom >> 15) & 1u;
    uint payWords = (mode == 0u) ? (1u << (2u * log2 - 3u)) : (1u << (2u * log2 - 4u));
    uint w = (L.w >> 2) - pc.streamWordBase;
    // Unreachable for a validated stream; keeps the reads inside the bound range regardless.
    if (L.w >> 2 < pc.streamWordBase || w + payWords > pc.streamWords) w = 0u;
    sGeom[t] = geom;
    sScale[t] = halfToFloatBits(L.z >> 16);
    sBias[t] = halfToFloatBits(L.z & 0xffffu);
    sPay[t] = w;
    sKey[t] = zorder((geom & 63u) >> 2, ((geom >> 6) & 63u) >> 2);
  }
  barrier();
  if (n > 1u) { // n is uniform: the barrier below is in uniform control flow
    uint cy = t >> 4, cx = t & 15u;
    uint g0 = sGeom[0];
    uint sc = 1u << (clamp((g0 >> 12) & 7u, 2u, 6u) - 2u); // cells per side of leaf 0
    uint per = 16u / sc;                                    // leaves per row if raster
    // Raster (uniform layout) iff there are per*per leaves and, beyond 2x2, leaf 2 sits at
    // row 0, column 2: pre-order DFS always puts leaf 2 at (sc, 0) in that case.
    bool raster = n == per * per && (per <= 2u || (sGeom[2] & 4095u) == ((2u * sc * 4u) << 6));
    uint li;
    if (raster) {
      li = (cy / sc) * per + cx / sc;
    } else {
      uint key = zorder(cy, cx), lo = 0u, hi = n - 1u;
      while (lo < hi) {
        uint mid = (lo + hi + 1u) >> 1;
        if (sKey[mid] <= key) lo = mid; else hi = mid - 1u;
      }
      li = lo;
    }
    sMap[t] = li;
    barrier();
  }

  uint by = b / pc.tilesX, bx = b - by * pc.tilesX;
  uint row0 = by * 64u, col0 = bx * 64u;
  bool full = row0 + 64u <= pc.rows && col0 + 64u <= pc.cols && (pc.cols & 3u) == 0u;
  // Phase A: locate the 4 code groups of this thread and load their payload words.
  uint leafOf[4], codeAt[4], word[4];
  for (uint k = 0u; k < 4u; k++) {
    uint g = k * 256u + t;
    uint r = g >> 4, c = (g & 15u) << 2;
    uint li = (n == 1u) ? 0u : min(sMap[(r >> 2) * 16u + (c >> 2)], n - 1u);
    uint geom = sGeom[li];
    uint ly = geom & 63u, lx = (geom >> 6) & 63u, log2 = (geom >> 12) & 7u, mode = (geom >> 15) & 1u;
    uint i = (((r - ly) << log2) + (c - lx)) & 4095u; // first of 4 codes, a multiple of 4
    leafOf[k] = li;
    codeAt[k] = i;
    word[k] = stream.words[min(sPay[li] + (mode == 0u ? (i >> 3) : (i >> 4)), pc.streamWords - 1u)];
  }
  // Phase B: expand and store.
  for (uint k = 0u; k < 4u; k++) {
    uint g = k * 256u + t;
    uint r = g >> 4, c = (g & 15u) << 2;
    uint li = leafOf[k], i = codeAt[k];
    uint mode = (sGeom[li] >> 15) & 1u;
    float S = uintBitsToFloat(sScale[li]);
    uint biasBits = sBias[li];
    vec4 q;
#ifdef UNIFIED_MODES_MULTI_LEAF
    if (n > 1u) { // n is the same for the whole workgroup: no divergence here
      // FP4: 8 codes a word, 4 bits each; T158: 16 codes a word, 2 bits each.
      uint codeBitsLog2 = 2u - mode;
      uint bits = word[k] >> ((i & ((8u << mode) - 1u)) << codeBitsLog2);
      uvec4 field = uvec4(bits) >> (uvec4(0u, 1u, 2u, 3u) << codeBitsLog2);
      ivec4 fp4 = ivec4(field << 28) >> 28;            // the nibble, sign-extended
      uvec4 sym = field & 3u;
      ivec4 t158 = ivec4(sym & 1u) - ivec4(sym >> 1);  // 00 -> 0, 01 -> +1, 10 -> -1, 11 -> 0
      q = vec4(mode == 0u ? fp4 : t158);
    } else
#endif
    if (mode == 0u) {
      uint bits = word[k] >> ((i & 7u) * 4u);
      q = vec4(ivec4(int(bits << 28), int(bits << 24), int(bits << 20), int(bits << 16)) >> 28);
    } else {
      uint bits = word[k] >> ((i & 15u) * 2u);
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

    uint orow = row0 + r, ocol = col0 + c;
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
}
