/**
 * v2 quadtree decisions for one 64x64 macroblock under the "spec" policy: the 22.7 threshold
 * policy (with relative or absolute thresholds and hysteresis) and the rate control of that policy
 * (approximate bits per leaf). The "rd" policy is in rd.ts.
 */
import { LAYOUT, MACROBLOCK, MODE_FP4, MODE_T158, align16, payloadBytes, type Layout, type Mode, type QuadTree } from "@sgfp4/format";
import { boundOrFitLeaf, fitLeafCandidates, fitLeafCandidatesAfterKernel, fitLeafChosen, fitLeafWithSum, finishLeaf, resumeLeafFit, withLwe, withLweDecoding, type Candidate, type FitOptions, type FitResume, type FitWorkspace, type LeafFit, type LweLowerBound } from "./fit.js";
import { fitKernels } from "./fit/kernels.js";
import type { Fitted } from "./fit/types.js";

/** Leaf sizes from the root (level 0) to the floor (level 4). */
export const LEVEL_SIZES = [64, 32, 16, 8, 4] as const;
/** First node id of each level; node ids are level offset + raster index in that level. */
const LEVEL_OFFSET = [0, 1, 5, 21, 85];
export const NODES_PER_BLOCK = 341;
export function nodeId(y: number, x: number, size: number): number {
  const per = MACROBLOCK / size;
  // the level of size 64, 32, 16, 8, 4: 0 to 4 (a lookup by the size as a property name cost ~2% of an encode)
  return LEVEL_OFFSET[Math.clz32(size) - 25]! + (y / size) * per + x / size;
}

export type ThresholdSizes = Readonly<Record<64 | 32 | 16 | 8, number>>;

/**
 * Default relative thresholds: a leaf is good enough when its Laplacian-weighted error is at
 * most this fraction of its reference signal power (see QuadtreeOptions.powerFloor). Larger
 * at small sizes because a split costs more header and padding bits there.
 */
export const DEFAULT_RELATIVE_THRESHOLDS: ThresholdSizes = { 64: 0.012, 32: 0.016, 16: 0.024, 8: 0.032 };
/** The public reference's absolute MSE limits (0.01 at 64 down to 0.0005 at 4; 4x4 never splits). */
export const REFERENCE_ABSOLUTE_THRESHOLDS: ThresholdSizes = { 64: 0.01, 32: 0.005, 16: 0.0025, 8: 0.001 };

export interface QuadtreeOptions {
  thresholdMode: "relative" | "absolute";
  /** per-size thresholds; defaults depend on thresholdMode */
  thresholds?: ThresholdSizes;
  /** every threshold is multiplied by this (a per-tensor knob) */
  thresholdScale: number;
  /** relative mode: reference power = max(mean(w^2) of the leaf, powerFloor * mean(w^2) of the tensor) */
  powerFloor: number;
  /** accept a leaf whose error is within this fraction above its threshold */
  borderline: number;
  /** keep a split only when it lowers the error by at least this fraction */
  splitGain: number;
}

export const DEFAULT_QUADTREE_OPTIONS: Readonly<QuadtreeOptions> = {
  thresholdMode: "relative",
  thresholdScale: 1,
  powerFloor: 0.05,
  borderline: 0.1,
  splitGain: 0.2,
};

export interface LeafOut {
  y: number;
  x: number;
  size: number;
  mode: Mode;
  scaleBits: number;
  biasBits: number;
  errorHint: boolean;
  /** in row-major leaf order */
  codes: Int8Array;
  sse: number;
  lwe: number;
}

export interface BlockOut {
  layout: Layout | -1;
  tree?: QuadTree;
  leaves: LeafOut[];
}

/** Fits the leaves of one padded macroblock on demand, each node once. */
export class MacroblockFitter {
  // by nodeId (arrays: a Map grew and rehashed several times per block)
  private readonly cache: ((LeafFit & { power: number }) | undefined)[] = new Array(NODES_PER_BLOCK);
  /** nodes answered with a bound: the estimates a later full fit resumes from */
  private readonly resumes: (FitResume | undefined)[] = new Array(NODES_PER_BLOCK);
  /**
   * chosenOnly: only the chosen candidates' errors are read (see fitLeafChosen). ws: the fits'
   * scratch (node values are copied into ws.nodeValues: a buffer per macroblock, allocated
   * outside the JS heap, drove the GC). lweOnDemand (not with chosenOnly): the fits measure no
   * LWE and make no 22.7 selection (see fitLeafCandidates); chosenLeaf measures a leaf's when asked.
   * t158GapOf (with lweOnDemand): fitLeafCandidates' t158Gap for a node of each size.
   */
  constructor(
    readonly block: Float64Array,
    readonly fit: FitOptions,
    readonly ws: FitWorkspace,
    readonly chosenOnly = false,
    readonly lweOnDemand = false,
    readonly t158GapOf?: (size: number) => number,
  ) {}

  /**
   * The node's candidate as a chosen leaf (finish: polished by finishLeaf, as `finished`), with
   * its LWE measured (as `lweOf`): the node's values are copied once for both.
   */
  chosenLeaf(y: number, x: number, size: number, c: Candidate, finish: boolean): Candidate {
    const lweMissing = Number.isNaN(c.lwe);
    const polish = finish && "sq" in c;
    if (!lweMissing && !polish) return c;
    const v = this.valuesOf(y, x, size);
    const out = polish ? finishLeaf(this.ws, v, size * size, c as Fitted, this.fit) : c;
    if (Number.isNaN(out.lwe)) {
      if (this.decodeAt >= 0 && withLweDecoding(this.ws, v, size, out, this.decodeAt + y * this.decodeStride + x, this.decodeStride)) this.decodedWeights += size * size;
      else withLwe(this.ws, v, size, out);
    }
    return out;
  }

  /**
   * Where chosenLeaf writes the decode of the leaves whose LWE it measures in the kernel (kern.tileDecoded:
   * the block's (0, 0) at decodeAt, rows decodeStride apart; -1: nowhere), and how many weights it wrote:
   * MACROBLOCK^2 when it wrote every leaf of the block.
   */
  decodeAt = -1;
  decodeStride = 0;
  decodedWeights = 0;

  /** The node's values (the block itself, or copied into ws.nodeValues). */
  private valuesOf(y: number, x: number, size: number): Float64Array {
    if (size === MACROBLOCK) return this.block;
    const kern = fitKernels();
    if (kern && this.block === kern.blockValues) {
      kern.loadNode(y, x, size, 0);
      return kern.values;
    }
    const v = this.ws.nodeValues;
    for (let i = 0; i < size; i++) v.set(this.block.subarray((y + i) * MACROBLOCK + x, (y + i) * MACROBLOCK + x + size), i * size);
    return v;
  }

  /** The node's fit if it has been fitted (nothing is fitted here). */
  fitted(y: number, x: number, size: number): LeafFit | undefined {
    return this.cache[nodeId(y, x, size)];
  }

  at(y: number, x: number, size: number): LeafFit & { power: number } {
    return this.fitOrBound(y, x, size) as LeafFit & { power: number };
  }

  /**
   * The node's fit, or (given limitOf, which maps the node's size and power to a limit) a proof
   * that its chosen LWE exceeds that limit, from bucket estimates (see boundOrFitLeaf). Only fits
   * are cached: a node first bounded is fitted in full if asked again, resuming from the
   * estimates of its bound (no second scale search).
   */
  fitOrBound(y: number, x: number, size: number, limitOf?: (size: number, power: number) => number): (LeafFit | LweLowerBound) & { power: number } {
    const id = nodeId(y, x, size);
    const hit = this.cache[id];
    if (hit) return hit;
    const ws = this.ws;
    const kern = fitKernels();
    let v: Float64Array;
    let power = 0;
    // the leaf's sum in index (row-major) order, as fitLeaf would compute it
    let sv = 0;
    // the kernel's copy also measured the leaf's spread (leafSpread's numbers)
    let spread = false;
    const resume = this.resumes[id];
    // the rd policy's lazy fits: the node's FP4 fit and T158 floor in one kernel call (fitNode)
    let gap = Infinity;
    let fitted = 0;
    if (kern && this.block === kern.blockValues) {
      const o = this.fit;
      if (!resume && !this.chosenOnly && this.lweOnDemand && this.t158GapOf && o.search === "joint" && o.refit && Number.isInteger(o.maxRefitIterations) && o.maxRefitIterations >= 0 && o.maxRefitIterations <= 64) gap = this.t158GapOf(size);
      if (gap < Infinity) {
        fitted = kern.fitNode(y, x, size, o.v2 ? 1 : 0, o.maxRefitIterations);
        // fitNode leaves the sum |w - mean| (T158's starts) to be measured where a T158 fit needs it
        if (!fitted) kern.nodeAbsDev(size * size);
      } else kern.loadNode(y, x, size, 1);
      v = kern.values;
      const st = kern.nodeStats;
      sv = st[0]!;
      power = st[1]!; // sum w^2 in index order, as below
      const s = ws.spread;
      s.svv = power;
      s.min = st[2]!;
      s.max = st[3]!;
      s.absDev = st[4]!;
      s.absMax = st[5]!;
      spread = true;
    } else {
      v = size === MACROBLOCK ? this.block : ws.nodeValues;
      for (let i = 0; i < size; i++) {
        const row = (y + i) * MACROBLOCK + x;
        for (let j = 0; j < size; j++) {
          const w = this.block[row + j]!;
          if (v !== this.block) v[i * size + j] = w;
          power += w * w;
          sv += w;
        }
      }
    }
    power /= size * size;
    if (fitted) {
      const nf = fitLeafCandidatesAfterKernel(kern!, size, this.fit, sv, ws, gap, id, power);
      this.cache[id] = nf;
      return nf;
    }
    const f = resume
      ? resumeLeafFit(v, size, this.fit, sv, resume, ws)
      : !this.chosenOnly
        ? this.lweOnDemand
          ? fitLeafCandidates(v, size, this.fit, sv, ws, this.t158GapOf ? this.t158GapOf(size) : Infinity, spread)
          : fitLeafWithSum(v, size, this.fit, sv, ws)
        : limitOf
          ? boundOrFitLeaf(v, size, this.fit, sv, limitOf(size, power), ws)
          : fitLeafChosen(v, size, this.fit, sv, ws);
    const out = f as (LeafFit | LweLowerBound) & { power: number };
    out.power = power;
    if ("lowerBound" in out) this.resumes[id] = out.resume;
    else this.cache[id] = out;
    return out;
  }
}

interface Node {
  y: number;
  x: number;
  size: number;
  /** per-weight error of this subtree (leaf: its LWE; split: mean of the children's) */
  err: number;
  /** a leaf's fit (its chosen candidate is the leaf); kept by reference, nothing copied per node */
  leaf?: LeafFit;
  kids?: [Node, Node, Node, Node];
}

export function thresholdsFor(q: QuadtreeOptions): ThresholdSizes {
  return q.thresholds ?? (q.thresholdMode === "absolute" ? REFERENCE_ABSOLUTE_THRESHOLDS : DEFAULT_RELATIVE_THRESHOLDS);
}

/**
 * The 22.7 policy: largest first; split when over threshold; hysteresis both ways. Nodes of 16x16
 * and up are first asked for a proof that their error exceeds the acceptance limit (bucket
 * estimates, no exact pass): with one, the node is split as the policy would, and its exact fit
 * is needed only if the children's error is not already 20% under the proven bound. The
 * decisions, and so the bytes, are those of fitting every visited node.
 */
export function decideByThreshold(f: MacroblockFitter, q: QuadtreeOptions, tensorPower: number): Node {
  const thr = thresholdsFor(q);
  // a node is accepted when its error is at most this
  const acceptLimit = (size: number, power: number): number => {
    let limit = thr[size as 64 | 32 | 16 | 8] * q.thresholdScale;
    if (q.thresholdMode === "relative") limit *= Math.max(power, q.powerFloor * tensorPower);
    return limit * (1 + q.borderline);
  };
  // the four children, and their mean error
  const split = (y: number, x: number, size: number): { kids: [Node, Node, Node, Node]; err: number } => {
    const h = size / 2;
    const kids: [Node, Node, Node, Node] = [visit(y, x, h), visit(y, x + h, h), visit(y + h, x, h), visit(y + h, x + h, h)];
    return { kids, err: (kids[0].err + kids[1].err + kids[2].err + kids[3].err) * 0.25 };
  };
  const visit = (y: number, x: number, size: number): Node => {
    const r = f.fitOrBound(y, x, size, size >= 16 ? acceptLimit : undefined);
    if ("lowerBound" in r) {
      const s = split(y, x, size);
      if (s.err <= (1 - q.splitGain) * r.lowerBound) return { y, x, size, err: s.err, kids: s.kids };
      const fit = f.at(y, x, size); // the split's gain is measured against the exact error
      const err = fit.chosen.lwe;
      return s.err <= (1 - q.splitGain) * err ? { y, x, size, err: s.err, kids: s.kids } : { y, x, size, err, leaf: fit };
    }
    const err = r.chosen.lwe;
    const self: Node = { y, x, size, err, leaf: r };
    if (size === 4 || err <= acceptLimit(size, r.power)) return self;
    const s = split(y, x, size);
    return s.err <= (1 - q.splitGain) * err ? { y, x, size, err: s.err, kids: s.kids } : self;
  };
  return visit(0, 0, MACROBLOCK);
}

/** Bits one leaf costs in a v2 record: its header word and its 16-byte padded payload. */
export function leafBits(size: number, mode: Mode): number {
  return 32 + 8 * align16(payloadBytes(size, mode));
}

export interface RdChoice {
  /** chosen leaves as (node id, mode) pairs, pre-order */
  leaves: { y: number; x: number; size: number; mode: Mode }[];
  /** exact record bytes */
  recordBytes: number;
  /** sum over leaves of LWE * area (normalized units) */
  distortion: number;
}

/**
 * Rate-distortion choice: minimise distortion + lambda * bits over trees and modes, with
 * distortion = LWE * area. Ties keep the larger leaf and FP4 (deterministic).
 */
export function decideRd(stats: Float64Array, at: number, lambda: number): RdChoice {
  const leaves: RdChoice["leaves"] = [];
  const visit = (y: number, x: number, size: number): { cost: number; dist: number; from: number; to: number } => {
    const k = at + 3 * nodeId(y, x, size);
    const area = size * size;
    const dF = stats[k]! * area;
    let best = dF + lambda * leafBits(size, MODE_FP4);
    let mode: Mode = MODE_FP4;
    let dist = dF;
    if (stats[k + 2]) {
      const dT = stats[k + 1]! * area;
      const cT = dT + lambda * leafBits(size, MODE_T158);
      if (cT < best) {
        best = cT;
        mode = MODE_T158;
        dist = dT;
      }
    }
    const from = leaves.length;
    if (size > 4) {
      const h = size / 2;
      const a = visit(y, x, h);
      const b = visit(y, x + h, h);
      const c = visit(y + h, x, h);
      const d = visit(y + h, x + h, h);
      const split = a.cost + b.cost + c.cost + d.cost;
      if (split < best) return { cost: split, dist: a.dist + b.dist + c.dist + d.dist, from, to: leaves.length };
      leaves.length = from; // drop the children's choices
    }
    leaves.push({ y, x, size, mode });
    return { cost: best, dist, from, to: leaves.length };
  };
  const r = visit(0, 0, MACROBLOCK);
  return { leaves, recordBytes: recordBytesOf(leaves), distortion: r.dist };
}

export function recordBytesOf(leaves: readonly { size: number; mode: Mode }[]): number {
  const uniform = leaves.every((l) => l.size === leaves[0]!.size);
  let bytes = align16((uniform ? 4 : 16) + 4 * leaves.length);
  for (const l of leaves) bytes += align16(payloadBytes(l.size, l.mode));
  return bytes;
}

const UNIFORM_LAYOUT: Record<number, Layout> = { 64: LAYOUT.UNIFORM_64, 32: LAYOUT.UNIFORM_32, 16: LAYOUT.UNIFORM_16, 8: LAYOUT.UNIFORM_8, 4: LAYOUT.FULL_4x4 };

/** Record description from leaves given in pre-order DFS (geometry y, x, size). */
export function blockFromLeaves(leaves: LeafOut[]): BlockOut {
  const size0 = leaves[0]!.size;
  if (leaves.every((l) => l.size === size0)) {
    // uniform layouts store leaves in raster order of the tile grid
    const raster = [...leaves].sort((a, b) => a.y - b.y || a.x - b.x);
    return { layout: UNIFORM_LAYOUT[size0]!, leaves: raster };
  }
  let i = 0;
  const build = (y: number, x: number, size: number): QuadTree => {
    const l = leaves[i];
    if (l && l.y === y && l.x === x && l.size === size) {
      i++;
      return "leaf";
    }
    const h = size / 2;
    return [build(y, x, h), build(y, x + h, h), build(y + h, x, h), build(y + h, x + h, h)];
  };
  const tree = build(0, 0, MACROBLOCK);
  return { layout: LAYOUT.MIXED, tree, leaves };
}

export function leavesOfNode(root: Node): LeafOut[] {
  const out: LeafOut[] = [];
  const walk = (n: Node): void => {
    if (n.kids) n.kids.forEach(walk);
    else {
      const c = n.leaf!.chosen;
      out.push({ y: n.y, x: n.x, size: n.size, mode: c.mode, scaleBits: c.scaleBits, biasBits: c.biasBits, errorHint: n.leaf!.errorHint, codes: c.codes, sse: c.sse, lwe: c.lwe });
    }
  };
  walk(root);
  return out;
}

/**
 * Final leaves of an RD choice: the fitted candidate of the chosen mode (finish: polished by
 * finishLeaf, policy rd; the spec policy's rate control keeps its fit as it is).
 */
export function leavesOfRd(f: MacroblockFitter, choice: RdChoice, finish = false): LeafOut[] {
  return choice.leaves.map(({ y, x, size, mode }) => {
    const fit = f.at(y, x, size);
    const fitted = mode === MODE_T158 ? fit.t158 : fit.fp4;
    const c = f.chosenLeaf(y, x, size, fitted, finish);
    return { y, x, size, mode, scaleBits: c.scaleBits, biasBits: c.biasBits, errorHint: false, codes: c.codes, sse: c.sse, lwe: c.lwe };
  });
}
