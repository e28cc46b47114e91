/**
 * Rate-distortion decisions for a v2 macroblock (policy "rd"): the tree and the leaf modes that
 * minimise D + lambda * bits, with the record's exact bytes. A record of L leaves costs
 * sum(align16(payload)) + 4 L (leaf words) + its header: 16 + pad(L) bytes, pad(L) =
 * (-4L) mod 16, for every layout (uniform layouts, with their 4-byte header, come to the same
 * aligned size), except one 64x64 leaf: 16 bytes. The padding depends on L mod 4, so each
 * subtree keeps its best cost for each residue of its leaf count (4 entries), and the root adds
 * the header and padding: exact bytes, no approximation, in a dynamic program over the 341 nodes.
 */
import { MACROBLOCK, MODE_FP4, MODE_T158, align16, payloadBytes, type Mode } from "@sgfp4/format";
import type { LeafFit } from "./fit.js";
import { LEVEL_SIZES, NODES_PER_BLOCK, nodeId, type MacroblockFitter, type RdChoice } from "./quadtree.js";

/** Distortion of a leaf: squared error (what SNR measures) or the Laplacian-weighted error; per weight, times the leaf's area. */
export type Distortion = "mse" | "lwe";

/** Per node in a stats array: [k] FP4 distortion per weight, [k + 1] T158's, [k + 2] 1 when T158 is allowed. */
export const NODE_STATS = 3;

/** One node's stats from its fit (errors divided by `normalizer`, the tensor's power). */
export function writeNodeStats(fit: LeafFit, size: number, normalizer: number, distortion: Distortion, out: Float64Array, k: number): void {
  const area = size * size;
  out[k] = (distortion === "mse" ? fit.fp4.sse / area : fit.fp4.lwe) / normalizer;
  out[k + 1] = (distortion === "mse" ? fit.t158.sse / area : fit.t158.lwe) / normalizer;
  out[k + 2] = fit.t158Allowed ? 1 : 0;
}

/** Stats of every node of a macroblock (all 341 fitted), at `at` in `out`. */
export function macroblockStats(f: MacroblockFitter, normalizer: number, distortion: Distortion, out: Float64Array, at: number): void {
  for (const size of LEVEL_SIZES) {
    for (let y = 0; y < MACROBLOCK; y += size) {
      for (let x = 0; x < MACROBLOCK; x += size) writeNodeStats(f.at(y, x, size), size, normalizer, distortion, out, at + NODE_STATS * nodeId(y, x, size));
    }
  }
}

const LEAF_WORD = 4;
/** Bytes of a leaf that grow with the leaf count: its payload (16-byte aligned) and its leaf-table word. */
const leafBytes = (size: number, mode: Mode): number => align16(payloadBytes(size, mode)) + LEAF_WORD;
/** Record header and padding for a leaf count of residue r mod 4 (r = 1 also covers L = 1 as a MIXED record, never chosen). */
const headerBytes = (r: number): number => 16 + ((4 - r) & 3) * 4;
/** A single 64x64 leaf: UNIFORM_64, header and leaf word in 16 bytes. */
const SINGLE_LEAF_HEADER = 12;
/** Most the header and padding of two leaf counts differ by (0..12 bytes of padding). */
const MAX_PADDING_GAIN = 12;

/**
 * The squared error (in the tensor's units: normalizer times the stats' units) that the bytes a
 * T158 leaf of this size saves over FP4 are worth at lambda: the leaf's choice takes T158 only if
 * its error is below FP4's plus this.
 */
export function t158SseGap(size: number, lambda: number, normalizer: number): number {
  return normalizer * lambda * 8 * (leafBytes(size, MODE_FP4) - leafBytes(size, MODE_T158));
}

/** Lower bounds on a node leaf's distortion (the stats' units times the area) in each mode. */
export interface LeafFloor {
  fp4: number;
  t158: number;
}

/** Nodes of this size and up (below the root) are decided children first when a floor is given (RdSolver.solve). */
const FLOORED_SIZE = 32;

const NONE = 0;
const LEAF_FP4 = 1;
const LEAF_T158 = 2;
const SPLIT = 3;

/**
 * Solves macroblocks one at a time (scratch reused; one solver per thread). `fill`, when given,
 * is asked for a node's stats before they are read (lazy fitting: nodes the decision can prove
 * useless are never fitted); stats entries it has not filled must be NaN.
 */
export class RdSolver {
  private readonly cost = new Float64Array(NODES_PER_BLOCK * 4);
  private readonly dist = new Float64Array(NODES_PER_BLOCK * 4);
  private readonly bytes = new Float64Array(NODES_PER_BLOCK * 4);
  private readonly kind = new Uint8Array(NODES_PER_BLOCK * 4);
  /** for a split at (node, residue): the residues of its four children */
  private readonly childResidue = new Uint8Array(NODES_PER_BLOCK * 16);
  private readonly pairCost = new Float64Array(4);
  private readonly pairArg = new Uint8Array(4);
  private readonly tripleCost = new Float64Array(4);
  private readonly tripleArg = new Uint8Array(4);
  private stats: Float64Array = new Float64Array(0);
  private at = 0;
  private scale = 0;
  private fill: ((y: number, x: number, size: number, k: number) => void) | undefined;
  private readonly floor: LeafFloor = { fp4: 0, t158: 0 };
  private floorOf: ((y: number, x: number, size: number, out: LeafFloor) => void) | undefined;

  /**
   * The choice minimising distortion + lambda * 8 * bytes for the block whose node stats start at `at`.
   * floorOf (with fill): asked for a node of FLOORED_SIZE or more once its four children are
   * decided, it returns at most the distortion of the node as one leaf in each mode (LeafFloor);
   * where even those floors lose to the node's best split by more than any padding can give
   * back, the node is never fitted. Its children are then decided first.
   */
  solve(stats: Float64Array, at: number, lambda: number, fill?: (y: number, x: number, size: number, k: number) => void, floorOf?: (y: number, x: number, size: number, out: LeafFloor) => void): RdChoice {
    this.stats = stats;
    this.at = at;
    this.scale = lambda * 8;
    this.fill = fill;
    this.floorOf = floorOf;
    for (let r = 0; r < 4; r++) this.kind[r] = NONE; // the root's table holds its split options only
    const half = MACROBLOCK / 2;
    this.combine(0, [this.node(0, 0, half), this.node(0, half, half), this.node(half, 0, half), this.node(half, half, half)]);
    // the split's best residue with its header (the first of least cost) ...
    let bestR = -1;
    let best = Infinity;
    for (let r = 0; r < 4; r++) {
      if (this.kind[r] === NONE) continue;
      const c = this.cost[r]! + this.scale * headerBytes(r);
      if (c < best) {
        best = c;
        bestR = r;
      }
    }
    // ... against the root as one leaf (its own header), which wins ties
    let rootLeaf: { cost: number; dist: number; bytes: number; mode: Mode } | undefined;
    if (!(this.floorCost(0, 0, MACROBLOCK) + this.scale * SINGLE_LEAF_HEADER > best)) {
      rootLeaf = this.leafOption(0, 0, MACROBLOCK);
      if (!(best < rootLeaf.cost + this.scale * SINGLE_LEAF_HEADER)) bestR = -1;
    }
    const leaves: RdChoice["leaves"] = [];
    if (bestR < 0 && rootLeaf) {
      leaves.push({ y: 0, x: 0, size: MACROBLOCK, mode: rootLeaf.mode });
      return { leaves, recordBytes: rootLeaf.bytes + SINGLE_LEAF_HEADER, distortion: rootLeaf.dist };
    }
    const half2 = MACROBLOCK / 2;
    const kids = this.childResidue;
    const origin = [
      [0, 0],
      [0, half2],
      [half2, 0],
      [half2, half2],
    ] as const;
    origin.forEach(([y, x], c) => this.collect(y, x, half2, kids[bestR * 4 + c]!, leaves));
    return { leaves, recordBytes: this.bytes[bestR]! + headerBytes(bestR), distortion: this.dist[bestR]! };
  }

  private readStats(y: number, x: number, size: number): number {
    const id = nodeId(y, x, size);
    const k = this.at + NODE_STATS * id;
    if (this.fill && Number.isNaN(this.stats[k]!)) this.fill(y, x, size, k);
    return k;
  }

  private readonly leafScratch = { cost: 0, dist: 0, bytes: 0, mode: MODE_FP4 as Mode };

  /** The node as one leaf: the cheaper allowed mode (FP4 on ties). */
  private leafOption(y: number, x: number, size: number): { cost: number; dist: number; bytes: number; mode: Mode } {
    const k = this.readStats(y, x, size);
    const area = size * size;
    const o = this.leafScratch;
    o.dist = this.stats[k]! * area;
    o.bytes = leafBytes(size, MODE_FP4);
    o.cost = o.dist + this.scale * o.bytes;
    o.mode = MODE_FP4;
    if (this.stats[k + 2]) {
      const dT = this.stats[k + 1]! * area;
      const bT = leafBytes(size, MODE_T158);
      const cT = dT + this.scale * bT;
      if (cT < o.cost) {
        o.cost = cT;
        o.dist = dT;
        o.bytes = bT;
        o.mode = MODE_T158;
      }
    }
    return o;
  }

  /** At most the node's cost as one leaf (no floor: -Infinity). */
  private floorCost(y: number, x: number, size: number): number {
    if (!this.floorOf) return -Infinity;
    const f = this.floor;
    this.floorOf(y, x, size, f);
    return Math.min(f.fp4 + this.scale * leafBytes(size, MODE_FP4), f.t158 + this.scale * leafBytes(size, MODE_T158));
  }

  /** Fills the node's residue table (leaf and split options); returns its id. */
  private node(y: number, x: number, size: number): number {
    const id = nodeId(y, x, size);
    const base = 4 * id;
    for (let r = 0; r < 4; r++) this.kind[base + r] = NONE;
    if (this.floorOf && size >= FLOORED_SIZE) return this.childrenFirst(y, x, size, id);
    const leaf = this.leafOption(y, x, size);
    const leafCost = leaf.cost;
    this.cost[base + 1] = leafCost;
    this.dist[base + 1] = leaf.dist;
    this.bytes[base + 1] = leaf.bytes;
    this.kind[base + 1] = leaf.mode === MODE_T158 ? LEAF_T158 : LEAF_FP4;
    if (size === 4) return id;
    const h = size / 2;
    // Four children cost at least their smallest leaf bytes each (distortion >= 0); the split's
    // padding can save at most MAX_PADDING_GAIN bytes over the leaf's. Below that, no split of
    // this node is ever part of an optimal record: its children are not even fitted.
    const splitFloor = this.scale * (4 * Math.min(leafBytes(h, MODE_FP4), leafBytes(h, MODE_T158)) - MAX_PADDING_GAIN);
    if (leafCost < splitFloor) return id;
    const kids = [this.node(y, x, h), this.node(y, x + h, h), this.node(y + h, x, h), this.node(y + h, x + h, h)] as const;
    this.combine(id, kids);
    return id;
  }

  /**
   * node() with the children decided first: the node's leaf is fitted only if its floor leaves
   * it a chance against the split (the table is then the one node() fills the other way round).
   */
  private childrenFirst(y: number, x: number, size: number, id: number): number {
    const base = 4 * id;
    const h = size / 2;
    this.combine(id, [this.node(y, x, h), this.node(y, x + h, h), this.node(y + h, x, h), this.node(y + h, x + h, h)]);
    let minSplit = Infinity;
    for (let r = 0; r < 4; r++) if (this.kind[base + r] !== NONE && this.cost[base + r]! < minSplit) minSplit = this.cost[base + r]!;
    // the leaf only ever replaces a split option in a record that pads at most MAX_PADDING_GAIN bytes more
    if (this.floorCost(y, x, size) > minSplit + this.scale * MAX_PADDING_GAIN) return id;
    const leaf = this.leafOption(y, x, size);
    const splitFloor = this.scale * (4 * Math.min(leafBytes(h, MODE_FP4), leafBytes(h, MODE_T158)) - MAX_PADDING_GAIN);
    // node() keeps no split of a leaf below splitFloor, and a split at the leaf's residue only if strictly cheaper
    if (leaf.cost < splitFloor) for (let r = 0; r < 4; r++) this.kind[base + r] = NONE;
    if (this.kind[base + 1] === NONE || !(this.cost[base + 1]! < leaf.cost)) {
      this.cost[base + 1] = leaf.cost;
      this.dist[base + 1] = leaf.dist;
      this.bytes[base + 1] = leaf.bytes;
      this.kind[base + 1] = leaf.mode === MODE_T158 ? LEAF_T158 : LEAF_FP4;
    }
    return id;
  }

  /** The split options of node `id` from its children's tables, kept per residue where cheaper than what is there. */
  private combine(id: number, kids: readonly [number, number, number, number]): void {
    const { cost, dist, bytes, kind, pairCost, pairArg, tripleCost, tripleArg } = this;
    const a = 4 * kids[0];
    const b = 4 * kids[1];
    const c = 4 * kids[2];
    const d = 4 * kids[3];
    this.merge(a, b, pairCost, pairArg, null);
    this.merge(-1, c, tripleCost, tripleArg, pairCost);
    const base = 4 * id;
    for (let r = 0; r < 4; r++) {
      let best = Infinity;
      let arg = -1;
      for (let r3 = 0; r3 < 4; r3++) {
        const rd = (r - r3) & 3;
        if (kind[d + rd] === NONE) continue;
        const t = tripleCost[r3]! + cost[d + rd]!;
        if (t < best) {
          best = t;
          arg = r3;
        }
      }
      if (arg < 0 || !(best < (kind[base + r] === NONE ? Infinity : cost[base + r]!))) continue;
      const r3 = arg;
      const r2 = tripleArg[r3]!;
      const ra = pairArg[r2]!;
      const rb = (r2 - ra) & 3;
      const rc = (r3 - r2) & 3;
      const rd = (r - r3) & 3;
      // the children's distortions and bytes added in child order, as before
      let sd = 0;
      let sb = 0;
      sd += dist[a + ra]!;
      sb += bytes[a + ra]!;
      sd += dist[b + rb]!;
      sb += bytes[b + rb]!;
      sd += dist[c + rc]!;
      sb += bytes[c + rc]!;
      sd += dist[d + rd]!;
      sb += bytes[d + rd]!;
      const at = base * 4 + 4 * r;
      this.childResidue[at] = ra;
      this.childResidue[at + 1] = rb;
      this.childResidue[at + 2] = rc;
      this.childResidue[at + 3] = rd;
      cost[base + r] = best;
      dist[base + r] = sd;
      bytes[base + r] = sb;
      kind[base + r] = SPLIT;
    }
  }

  /** out[r] = min over ra of left[ra] + table[(r - ra) & 3] (left: a node table at `a`, or `leftCosts`); arg the ra. */
  private merge(a: number, t: number, out: Float64Array, arg: Uint8Array, leftCosts: Float64Array | null): void {
    const { cost, kind } = this;
    for (let r = 0; r < 4; r++) {
      let best = Infinity;
      let at = 0;
      for (let ra = 0; ra < 4; ra++) {
        const left = leftCosts ? leftCosts[ra]! : kind[a + ra] === NONE ? Infinity : cost[a + ra]!;
        const rb = (r - ra) & 3;
        if (left === Infinity || kind[t + rb] === NONE) continue;
        const s = left + cost[t + rb]!;
        if (s < best) {
          best = s;
          at = ra;
        }
      }
      out[r] = best;
      arg[r] = at;
    }
  }

  private collect(y: number, x: number, size: number, r: number, out: RdChoice["leaves"]): void {
    const id = nodeId(y, x, size);
    const e = 4 * id + r;
    const kind = this.kind[e]!;
    if (kind !== SPLIT) {
      out.push({ y, x, size, mode: kind === LEAF_T158 ? MODE_T158 : MODE_FP4 });
      return;
    }
    const h = size / 2;
    const rs = this.childResidue;
    const base = 16 * id + 4 * r;
    this.collect(y, x, h, rs[base]!, out);
    this.collect(y, x + h, h, rs[base + 1]!, out);
    this.collect(y + h, x, h, rs[base + 2]!, out);
    this.collect(y + h, x + h, h, rs[base + 3]!, out);
  }
}
