/**
 * WGSL for the decode kernel. One workgroup expands one 64x64 macroblock; thread t owns the 4x4
 * cell t of it (row t/16, column t%16), or with `cellPairs` the two cells of rows 2 (t/16) and
 * 2 (t/16) + 1; either way each store instruction of a 32-thread warp writes two 256-byte row
 * segments: fully coalesced, whatever the leaf sizes are.
 *
 * Finding the leaf of a cell, "marking" variant (KernelVariant below has the others): every leaf
 * marks its own node of the full quadtree (85 nodes of size 64..8 plus 256 of size 4) with its
 * index + 1; a cell then looks at its ancestors from the
 * root down, and the first marked one is its leaf. The host parser guarantees that the leaves of a
 * macroblock tile it exactly, so each cell finds exactly one.
 *
 * Arithmetic (DECISIONS.md section 2): S and Bias are converted from FP16 with integer operations
 * (subnormals kept), w = S * code + Bias in f32 (S * code is exact, so a fused multiply-add gives
 * the same bits), and a zero result gets the sign IEEE-754 round-to-nearest gives it, computed with
 * integer logic, because WGSL lets an implementation ignore the sign of zero.
 */

export const WORKGROUP_SIZE = 256;

/** Per-dispatch parameters: 16 u32, in the order of the WGSL struct `Params`. */
export const PARAM_WORDS = 16;

/**
 * How a thread finds its cell's leaf:
 * - "marking": the quadtree node marking above, in workgroup memory, behind a barrier.
 * - "cells": the host gives one byte per 4x4 cell, the cell's leaf index within its macroblock
 *   (256 bytes per 16 KiB of output, ~1.6% more traffic); each thread reads its byte and its leaf
 *   entry directly. No workgroup memory (so no zero-fill), no barrier.
 * - "single": every macroblock is one leaf (all of v1, v2 of only UNIFORM_64): leaf index 0.
 */
export type KernelVariant = "marking" | "cells" | "single";

/**
 * `vec4Output`: columns a multiple of 4, so each cell row is one aligned vec4<f32> store.
 * `cellPairs` ("cells" and "single" only): a workgroup of 128 threads, thread t owning the two
 * vertically adjacent cells (2 * (t / 16), t % 16) and (2 * (t / 16) + 1, t % 16). Leaves of 8x8
 * and up cover both, so the leaf is looked up and its parameters converted once for 32 outputs;
 * each store of a warp still writes two 256-byte row segments.
 */
export function decodeShader(vec4Output: boolean, variant: KernelVariant = "marking", unifiedModes = false, cellPairs = false): string {
  if (cellPairs && variant === "marking") throw new Error("cellPairs needs the cells or single variant");
  const modes = unifiedModes ? UNIFIED_MODES : BRANCHED_MODES;
  const outType = vec4Output ? "array<vec4<f32>>" : "array<f32>";
  const store = vec4Output
    ? /* wgsl */ `
      if (r < p.rows && e >= p.outBase && e - p.outBase < p.outCount) {
        output[(e - p.outBase) >> 2u] = bitcast<vec4<f32>>(v);
      }`
    : /* wgsl */ `
      if (r < p.rows) {
        for (var j = 0u; j < 4u; j++) {
          let ej = e + j;
          if (c + j < p.cols && ej >= p.outBase && ej - p.outBase < p.outCount) {
            output[ej - p.outBase] = bitcast<f32>(v[j]);
          }
        }
      }`;
  const markingDecls = /* wgsl */ `
// node index + 1 of each leaf's quadtree node (0 = not a leaf); zero-initialised by WGSL
var<workgroup> nodeLeaf: array<u32, 341>;
var<workgroup> leafScale: array<f32, 256>;
var<workgroup> leafBias: array<f32, 256>;
var<workgroup> leafInfo: array<u32, 256>;
var<workgroup> leafWord: array<u32, 256>;

// nodes of size 64, 32, 16, 8, 4 start at these indices of nodeLeaf
fn nodeIndex(y: u32, x: u32, log2: u32) -> u32 {
  var base = 0u;
  switch (log2) {
    case 6u: { base = 0u; }
    case 5u: { base = 1u; }
    case 4u: { base = 5u; }
    case 3u: { base = 21u; }
    default: { base = 85u; }
  }
  return base + (y >> log2) * (64u >> log2) + (x >> log2);
}`;
  const markingLookup = /* wgsl */ `
  let count = min(firstLeaf[b + 1u] - first, 256u);
  if (t < count) {
    let lp = leafParams(leaves[first + t - p.leafBase]);
    leafScale[t] = lp.s;
    leafBias[t] = lp.bias;
    leafInfo[t] = lp.info;
    leafWord[t] = lp.word;
    nodeLeaf[nodeIndex(lp.info & 63u, (lp.info >> 6u) & 63u, (lp.info >> 12u) & 7u)] = t + 1u;
  }
  workgroupBarrier();

  var k = 0u;
  for (var log2 = 6u; log2 >= 2u; log2--) {
    let n = nodeLeaf[nodeIndex(cy, cx, log2)];
    if (n != 0u) { k = n; break; }
  }
  if (k == 0u) { return; } // unreachable for parsed streams
  k -= 1u;
  let s = leafScale[k];
  let bias = leafBias[k];
  let info = leafInfo[k];
  let word = leafWord[k];`;
  // Leaf index from the host's cell table; the leaf entry is read straight from the table (the
  // threads of one leaf hit the same cache line).
  const leafIndex = variant === "cells" ? "(cells[(b - p.cellBlockBase) * 64u + (cell >> 2u)] >> ((cell & 3u) * 8u)) & 255u" : "0u";
  const leafFields = /* wgsl */ `
  let s = lp.s;
  let bias = lp.bias;
  let info = lp.info;
  let word = lp.word;`;
  const directLookup = /* wgsl */ `
  let k = ${leafIndex};
  let lp = leafParams(leaves[first + k - p.leafBase]);${leafFields}`;
  // pairs: the second cell reuses the first one's leaf parameters when it is the same leaf
  const pairLookup = /* wgsl */ `
  let k = ${leafIndex};
  if (k != kPrev) {
    lp = leafParams(leaves[first + k - p.leafBase]);
    kPrev = k;
  }${leafFields}`;
  const cellsDecl = /* wgsl */ `
// leaf index (within its macroblock) of each 4x4 cell, 4 per word
@group(0) @binding(5) var<storage, read> cells: array<u32>;`;
  const lookup = variant === "marking" ? markingLookup : cellPairs ? pairLookup : directLookup;
  const cellBody = /* wgsl */ `
  let ly = info & 63u;
  let lx = (info >> 6u) & 63u;
  let size = 1u << ((info >> 12u) & 7u);
  let t158 = (info & 0x8000u) != 0u;
  let r0 = by * 64u + cy;
  for (var i = 0u; i < 4u; i++) {
    let r = r0 + i;
    let codeIndex = (cy - ly + i) * size + (cx - lx); // a multiple of 4
    var v: vec4<u32>;
    ${modes}
    let e = r * p.cols + c;
    ${store}
  }`;
  const body = cellPairs
    ? /* wgsl */ `
  let cx = (t & 15u) * 4u;
  let c = bx * 64u + cx;
  if (c >= p.cols) { return; }
  var lp: LeafParams;
  var kPrev = 0xffffffffu;
  for (var h = 0u; h < 2u; h++) {
    let cell = ((t >> 4u) * 2u + h) * 16u + (t & 15u);
    let cy = (cell >> 4u) * 4u;
${lookup}
${cellBody}
  }`
    : /* wgsl */ `
  let cell = t;
  let cy = (cell >> 4u) * 4u;
  let cx = (cell & 15u) * 4u;
${lookup}
  let c = bx * 64u + cx;
  if (c >= p.cols) { return; } // after the lookup: the marking variant's barrier needs every thread
${cellBody}`;
  return /* wgsl */ `
struct Params {
  rows: u32, cols: u32, tilesX: u32, blockRowStart: u32,
  blockColStart: u32, blockColCount: u32, groupsX: u32, blockCount: u32,
  leafBase: u32, payloadWordBase: u32, outBase: u32, outCount: u32,
  cellBlockBase: u32, _pad1: u32, _pad2: u32, _pad3: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> payload: array<u32>;
@group(0) @binding(2) var<storage, read> leaves: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> firstLeaf: array<u32>;
@group(0) @binding(4) var<storage, read_write> output: ${outType};
${variant === "cells" ? cellsDecl : ""}
${variant === "marking" ? markingDecls : ""}

// FP16 bits -> f32 bits, integer operations only (subnormals normalised, never flushed).
fn halfToFloatBits(h: u32) -> u32 {
  let sign = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0x1fu) { return sign | 0x7f800000u | (m << 13u); }
  if (e != 0u) { return sign | ((e + 112u) << 23u) | (m << 13u); }
  if (m == 0u) { return sign; }
  let shift = countLeadingZeros(m) - 21u; // moves the top set bit to bit 10
  return sign | ((113u - shift) << 23u) | (((m << shift) & 0x3ffu) << 13u);
}

// info: bits 0-5 y, 6-11 x, 12-14 log2 size, 15 mode, 16 bias is -0, 17 scale is negative, 18 scale is zero
struct LeafParams { s: f32, bias: f32, info: u32, word: u32 }

fn leafParams(leaf: vec4<u32>) -> LeafParams {
  let sBits = halfToFloatBits(leaf.z >> 16u);
  let bBits = halfToFloatBits(leaf.z & 0xffffu);
  var info = leaf.y & 0xffffu;
  if (bBits == 0x80000000u) { info |= 0x10000u; }
  if ((sBits & 0x80000000u) != 0u) { info |= 0x20000u; }
  if ((sBits & 0x7fffffffu) == 0u) { info |= 0x40000u; }
  return LeafParams(bitcast<f32>(sBits), bitcast<f32>(bBits), info, (leaf.w >> 2u) - p.payloadWordBase);
}

// One element: f32(S) * code + f32(Bias), zero sign fixed by integer logic.
fn affine(s: f32, b: f32, info: u32, code: i32) -> u32 {
  let w = s * f32(code) + b;
${unifiedModes ? FAST_ZERO : ""}
  // S * code is -0 when it is zero and the signs differ; a zero sum is -0 only if both are -0.
  let productZero = code == 0 || (info & 0x40000u) != 0u;
  let productNegative = ((info & 0x20000u) != 0u) != (code < 0);
  let negZero = (info & 0x10000u) != 0u && productZero && productNegative;
  return select(bitcast<u32>(w), select(0u, 0x80000000u, negZero), w == 0.0);
}

@compute @workgroup_size(${cellPairs ? WORKGROUP_SIZE / 2 : WORKGROUP_SIZE})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let group = wid.y * p.groupsX + wid.x;
  if (group >= p.blockCount) { return; }
  let by = p.blockRowStart + group / p.blockColCount;
  let bx = p.blockColStart + group % p.blockColCount;
  let b = by * p.tilesX + bx;
  let first = firstLeaf[b];
${body}
}
`;
}

// Unless the bias is -0, a zero sum is +0 in IEEE-754 round to nearest (x + -x and +0 + -0 give
// +0), so most leaves need one compare; the branch is the same for a thread's whole cell. Measured
// on the H200: +1.5 to 2 points of the copy for the unified kernel, but -10 to -14 for the
// branched one (a branch inside its mode branches), which keeps the full logic.
const FAST_ZERO = /* wgsl */ `
  if ((info & 0x10000u) == 0u) { return select(bitcast<u32>(w), 0u, w == 0.0); }`;

const BRANCHED_MODES = /* wgsl */ `if (t158) {
      // 16 two-bit symbols per word: 00 -> 0, 01 -> +1, 10 -> -1, 11 -> 0
      let bits = payload[word + (codeIndex >> 4u)] >> ((codeIndex & 15u) * 2u);
      for (var j = 0u; j < 4u; j++) {
        let sym = (bits >> (2u * j)) & 3u;
        let code = select(0, select(-1, 1, sym == 1u), sym == 1u || sym == 2u);
        v[j] = affine(s, bias, info, code);
      }
    } else {
      // 8 signed nibbles per word, LSB first
      let bits = payload[word + (codeIndex >> 3u)] >> ((codeIndex & 7u) * 4u);
      for (var j = 0u; j < 4u; j++) {
        let code = (bitcast<i32>(bits << (28u - 4u * j))) >> 28u;
        v[j] = affine(s, bias, info, code);
      }
    }`;

// Both modes on one path: no divergence when the leaves under one warp mix T158 and FP4.
const UNIFIED_MODES = /* wgsl */ `
    let codeBitsLog2 = select(2u, 1u, t158); // FP4: 4 bits a code, T158: 2
    let perWordLog2 = select(3u, 4u, t158);
    let bits = payload[word + (codeIndex >> perWordLog2)] >> ((codeIndex & ((1u << perWordLog2) - 1u)) << codeBitsLog2);
    for (var j = 0u; j < 4u; j++) {
      let field = bits >> (j << codeBitsLog2);
      let sym = field & 3u;
      // FP4: the nibble sign-extended; T158: 00 -> 0, 01 -> +1, 10 -> -1, 11 -> 0
      let code = select(i32((field & 15u) ^ 8u) - 8, i32(sym & 1u) - i32(sym >> 1u), t158);
      v[j] = affine(s, bias, info, code);
    }`;

/** Plain copy of vec4<f32>, the bandwidth yardstick of the benchmark. */
export const COPY_SHADER = /* wgsl */ `
@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
struct P { count: u32, groupsX: u32, _a: u32, _b: u32 }
@group(0) @binding(2) var<uniform> q: P;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let base = (wid.y * q.groupsX + wid.x) * 1024u + t;
  for (var i = 0u; i < 4u; i++) {
    let idx = base + i * 256u;
    if (idx < q.count) { dst[idx] = src[idx]; }
  }
}
`;
