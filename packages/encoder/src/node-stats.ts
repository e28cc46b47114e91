/**
 * Rate control's per-node statistics of a tensor's blocks (NODE_STATS doubles per node, 341 nodes
 * per 64x64 block: 8 KiB per block, half the block's float32 size), kept in memory or spilled to
 * a file and read back a range of blocks at a time. The same doubles either way, so the lambda
 * search and the encode get the same bytes; a file keeps a large model's statistics out of memory
 * (the search reads them once per bisection step).
 */
import { closeSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { NODES_PER_BLOCK } from "./quadtree.js";
import { NODE_STATS } from "./rd.js";

/** Values per block. */
export const BLOCK_STATS = NODE_STATS * NODES_PER_BLOCK;

export interface NodeStats {
  readonly blockCount: number;
  /** Stats of blocks [b0, b0 + count), BLOCK_STATS per block: valid until the next call (copy to keep). */
  blocks(b0: number, count: number): Float64Array;
  /** Appends the next blocks' stats (blocks in order). */
  append(values: Float64Array): void;
  /** Frees what it holds (a file is removed). */
  close(): void;
}

export class MemoryNodeStats implements NodeStats {
  private readonly values: Float64Array;
  private filled = 0;

  constructor(readonly blockCount: number) {
    this.values = new Float64Array(blockCount * BLOCK_STATS);
  }

  blocks(b0: number, count: number): Float64Array {
    return this.values.subarray(b0 * BLOCK_STATS, (b0 + count) * BLOCK_STATS);
  }

  append(values: Float64Array): void {
    this.values.set(values, this.filled);
    this.filled += values.length;
  }

  close(): void {}
}

let spills = 0;

/** Stats in a file of `dir` (removed by close), read back through one scratch buffer. */
export class FileNodeStats implements NodeStats {
  private readonly path: string;
  private readonly fd: number;
  private written = 0;
  private scratch = new Float64Array(0);
  private open = true;

  constructor(
    readonly blockCount: number,
    dir: string,
  ) {
    this.path = join(dir, `.rate-control-stats-${process.pid}-${spills++}`);
    this.fd = openSync(this.path, "w+");
  }

  append(values: Float64Array): void {
    const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    for (let at = 0; at < bytes.length; ) at += writeSync(this.fd, bytes, at, bytes.length - at, this.written + at);
    this.written += bytes.length;
  }

  blocks(b0: number, count: number): Float64Array {
    const n = count * BLOCK_STATS;
    if (this.scratch.length < n) this.scratch = new Float64Array(n);
    const out = this.scratch.subarray(0, n);
    const bytes = new Uint8Array(out.buffer, 0, out.byteLength);
    const from = b0 * BLOCK_STATS * 8;
    for (let at = 0; at < bytes.length; ) {
      const got = readSync(this.fd, bytes, at, bytes.length - at, from + at);
      if (got === 0) throw new RangeError(`rate-control statistics file ends at block ${b0 + Math.floor(at / (BLOCK_STATS * 8))}`);
      at += got;
    }
    return out;
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    closeSync(this.fd);
    rmSync(this.path, { force: true });
  }
}
