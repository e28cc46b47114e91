/**
 * WGSL of the decode kernel. One workgroup of 128 threads expands one 64x64 macroblock; thread t
 * owns the two vertically adjacent 4x4 cells (2 (t / 16), t % 16) and (2 (t / 16) + 1, t % 16),
 * so each store instruction of a 32-thread warp writes two 256-byte row segments: coalesced,
 * whatever the leaf sizes are. Leaves of 8x8 and up cover both cells, so the leaf is looked up and
 * its parameters converted once for 32 outputs.
 *
 * Finding a cell's leaf: where every macroblock is one leaf (all of v1) the leaf is the block's;
 * otherwise a table of one byte per cell (built on the GPU by prep-shader.ts) gives its index
 * within the macroblock. The variants measured on the way to this kernel (quadtree node marking,
 * one cell per thread, branched modes for multi-leaf blocks) are in docs/history/webgpu-benchmarks.md.
 *
 * Arithmetic (DECISIONS.md section 2): S and Bias are converted from FP16 with integer operations
 * (subnormals kept), w = S * code + Bias in f32 (S * code is exact, so a fused multiply-add gives
 * the same bits), and a zero result gets the sign IEEE-754 round-to-nearest gives it, computed with
 * integer logic, because WGSL lets an implementation ignore the sign of zero. f16 and bf16 outputs
 * are the round-to-nearest-even conversion of that f32, in integer arithmetic (P10).
 */
import { OUTPUT_FORMATS, type OutputFormat } from "@sgfp4/format";

export const WORKGROUP_SIZE = 128;

/** Per-window parameters shared by the prep and decode kernels: 16 u32, the WGSL struct `Params`. */
export const PARAM_WORDS = 16;

export const PARAMS_WGSL = /* wgsl */ `
struct Params {
  rows: u32, cols: u32, tilesX: u32, firstBlock: u32,
  blockCount: u32, groupsX: u32, leafBase: u32, outBase: u32,
  outCount: u32, outOrigin: u32, leafCount: u32, leafEnd: u32,
  leafGroupsX: u32, _pad0: u32, _pad1: u32, _pad2: u32,
}`;

/** The Params words of one window, in struct order. */
export function paramWords(p: {
  rows: number; cols: number; tilesX: number; firstBlock: number; blockCount: number; groupsX: number; leafBase: number;
  outBase: number; outCount: number; outOrigin: number; leafCount: number; leafEnd: number; leafGroupsX: number;
}): number[] {
  return [p.rows, p.cols, p.tilesX, p.firstBlock, p.blockCount, p.groupsX, p.leafBase, p.outBase, p.outCount, p.outOrigin, p.leafCount, p.leafEnd, p.leafGroupsX, 0, 0, 0];
}

/**
 * - "single": every macroblock is one leaf; leaf = block, no tables; T158 and FP4 on separate
 *   branches (uniform across a block), the full signed-zero logic.
 * - "cells": leaf index from the cell table; T158 and FP4 codes on one branch-free path (no warp
 *   divergence where leaves of both modes meet) and a one-compare zero path.
 */
export type KernelVariant = "single" | "cells";

/** Bytes per output element. */
export const elementBytes = (format: OutputFormat): number => (format === "f32" ? 4 : 2);

/**
 * `aligned`: columns a multiple of 4, so each cell row is one aligned store (vec4 of f32, or four
 * halves in a vec2<u32>); otherwise elements are stored one by one (halves with atomic and/or on
 * their 16 bits of the word, which a neighbouring cell may share).
 */
export function decodeShader(variant: KernelVariant, format: OutputFormat, aligned: boolean): string {
  if (!OUTPUT_FORMATS.includes(format)) throw new Error(`unknown output format ${String(format)}`);
  const half = format !== "f32";
  const outType = half ? (aligned ? "array<vec2<u32>>" : "array<atomic<u32>>") : aligned ? "array<vec4<u32>>" : "array<u32>";
  const inWindow = (e: string) => `${e} >= p.outBase && ${e} - p.outBase < p.outCount`;
  const convert = format === "f16" ? "f32ToF16" : "f32ToBf16";
  let store: string;
  if (aligned && !half) store = `if (r < p.rows && ${inWindow("e")}) { output[(e - p.outOrigin) >> 2u] = v; }`;
  else if (aligned) {
    store = `if (r < p.rows && ${inWindow("e")}) {
        output[(e - p.outOrigin) >> 2u] = vec2<u32>(${convert}(v.x) | (${convert}(v.y) << 16u), ${convert}(v.z) | (${convert}(v.w) << 16u));
      }`;
  } else {
    const one = half
      ? `let i = ej - p.outOrigin;
            let shift = (i & 1u) * 16u;
            atomicAnd(&output[i >> 1u], ~(0xffffu << shift));
            atomicOr(&output[i >> 1u], ${convert}(v[j]) << shift);`
      : "output[ej - p.outOrigin] = v[j];";
    store = `if (r < p.rows) {
        for (var j = 0u; j < 4u; j++) {
          let ej = e + j;
          if (c + j < p.cols && ${inWindow("ej")}) {
            ${one}
          }
        }
      }`;
  }
  const cells = variant === "cells";
  const tables = cells
    ? /* wgsl */ `
@group(0) @binding(4) var<storage, read> firstLeaf: array<u32>;
// leaf index (within its macroblock) of each 4x4 cell, 4 per word, this window's blocks only
@group(0) @binding(5) var<storage, read> cells: array<u32>;`
    : "";
  const first = cells ? "firstLeaf[b]" : "b";
  const leafIndex = cells ? "(cells[(b - p.firstBlock) * 64u + (cell >> 2u)] >> ((cell & 3u) * 8u)) & 255u" : "0u";
  return /* wgsl */ `${PARAMS_WGSL}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> payload: array<u32>;
@group(0) @binding(2) var<storage, read> leaves: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> output: ${outType};
${tables}
${FP16_TO_F32}
${half ? HALF_CONVERSIONS : ""}

// info: bits 0-5 y, 6-11 x, 12-14 log2 size, 15 mode, 16 bias is -0, 17 scale is negative, 18 scale is zero
struct LeafParams { s: f32, bias: f32, info: u32, word: u32 }

fn leafParams(leaf: vec4<u32>) -> LeafParams {
  let sBits = halfToFloatBits(leaf.z >> 16u);
  let bBits = halfToFloatBits(leaf.z & 0xffffu);
  var info = leaf.y & 0xffffu;
  if (bBits == 0x80000000u) { info |= 0x10000u; }
  if ((sBits & 0x80000000u) != 0u) { info |= 0x20000u; }
  if ((sBits & 0x7fffffffu) == 0u) { info |= 0x40000u; }
  return LeafParams(bitcast<f32>(sBits), bitcast<f32>(bBits), info, leaf.w >> 2u);
}

// One element: f32(S) * code + f32(Bias), zero sign fixed by integer logic.
fn affine(s: f32, b: f32, info: u32, code: i32) -> u32 {
  let w = s * f32(code) + b;
${cells ? FAST_ZERO : ""}
  // S * code is -0 when it is zero and the signs differ; a zero sum is -0 only if both are -0.
  let productZero = code == 0 || (info & 0x40000u) != 0u;
  let productNegative = ((info & 0x20000u) != 0u) != (code < 0);
  let negZero = (info & 0x10000u) != 0u && productZero && productNegative;
  return select(bitcast<u32>(w), select(0u, 0x80000000u, negZero), w == 0.0);
}

@compute @workgroup_size(${WORKGROUP_SIZE})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let group = wid.y * p.groupsX + wid.x;
  if (group >= p.blockCount) { return; }
  let b = p.firstBlock + group;
  let by = b / p.tilesX;
  let bx = b % p.tilesX;
  let first = ${first};
  let cx = (t & 15u) * 4u;
  let c = bx * 64u + cx;
  if (c >= p.cols) { return; }
  var lp: LeafParams;
  var kPrev = 0xffffffffu;
  for (var h = 0u; h < 2u; h++) {
    let cell = ((t >> 4u) * 2u + h) * 16u + (t & 15u);
    let cy = (cell >> 4u) * 4u;
    // the second cell reuses the first one's leaf parameters when it is the same leaf
    let k = ${leafIndex};
    if (k != kPrev) {
      lp = leafParams(leaves[first + k - p.leafBase]);
      kPrev = k;
    }
    let s = lp.s;
    let bias = lp.bias;
    let info = lp.info;
    let word = lp.word;
    let ly = info & 63u;
    let lx = (info >> 6u) & 63u;
    let size = 1u << ((info >> 12u) & 7u);
    let t158 = (info & 0x8000u) != 0u;
    let r0 = by * 64u + cy;
    for (var i = 0u; i < 4u; i++) {
      let r = r0 + i;
      let codeIndex = (cy - ly + i) * size + (cx - lx); // a multiple of 4
      var v: vec4<u32>;
      ${cells ? UNIFIED_MODES : BRANCHED_MODES}
      let e = r * p.cols + c;
      ${store}
    }
  }
}
`;
}

// FP16 bits -> f32 bits, integer operations only (subnormals normalised, never flushed).
const FP16_TO_F32 = /* wgsl */ `
fn halfToFloatBits(h: u32) -> u32 {
  let sign = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0x1fu) { return sign | 0x7f800000u | (m << 13u); }
  if (e != 0u) { return sign | ((e + 112u) << 23u) | (m << 13u); }
  if (m == 0u) { return sign; }
  let shift = countLeadingZeros(m) - 21u; // moves the top set bit to bit 10
  return sign | ((113u - shift) << 23u) | (((m << shift) & 0x3ffu) << 13u);
}`;

/**
 * f32 bits -> f16 / bf16 bits, round to nearest even, in integer arithmetic: WGSL leaves the
 * rounding of pack2x16float and f16 conversions to the implementation. Inputs are finite (the
 * decode of finite FP16 parameters); f16 keeps subnormals and overflows to +-Inf.
 */
const HALF_CONVERSIONS = /* wgsl */ `
fn f32ToF16(x: u32) -> u32 {
  let sign = (x >> 16u) & 0x8000u;
  let a = x & 0x7fffffffu;
  if (a >= 0x477ff000u) { return sign | 0x7c00u; } // 65520 and up round to Inf
  if (a >= 0x38800000u) { // normal f16: rebias the exponent, round off 13 bits
    let m = a - 0x38000000u;
    return sign | ((m + 0xfffu + ((m >> 13u) & 1u)) >> 13u);
  }
  if (a <= 0x33000000u) { return sign; } // at most 2^-25: rounds to (signed) zero
  // subnormal f16: the value in units of 2^-24 is mantissa >> (126 - exponent), rounded
  let shift = 126u - (a >> 23u); // 14..24
  let mant = (a & 0x7fffffu) | 0x800000u;
  let q = mant >> shift;
  let rest = mant & ((1u << shift) - 1u);
  let halfway = 1u << (shift - 1u);
  return sign | (q + select(0u, 1u, rest > halfway || (rest == halfway && (q & 1u) == 1u)));
}

fn f32ToBf16(x: u32) -> u32 {
  return (x + 0x7fffu + ((x >> 16u) & 1u)) >> 16u;
}`;

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

/** Plain copy of vec4<f32>, the bandwidth yardstick of the benchmarks. */
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
