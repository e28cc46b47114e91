/**
 * One tensor's decode as the GPU will run it, planned on the host without a GPU: its output
 * windows, where its inputs (per-window parameters, container bytes, leaf table) sit in one
 * upload region, and the sizes of the lookup tables the prep kernels build. `writeJob` fills that
 * region (a mapped staging buffer), so one copy moves every input of a batch to the device.
 */
import { LEAF_WORDS, Sgfp4Error, parse, tiling, type Limits, type Profile, type Shape } from "@sgfp4/format";
import { buildLeafTable } from "@sgfp4/cpu-decoder/validate";
import { elementBytes, paramWords, type KernelVariant } from "./shader.js";
import type { OutputFormat } from "@sgfp4/format";
import { align, compactLeaves, compactSize, planWindows, windowLeaves, type OutputWindow } from "./plan.js";
import type { RecordCounts } from "./records.js";
import { CHECK_PARAM_WORDS } from "./leaves-shader.js";

/** A stream the host validated: its profile, shape and leaf table (docs/ARCHITECTURE.md layout). */
export interface ValidatedStream {
  profile: Profile;
  shape: Shape;
  leafTable: Uint32Array;
}

/**
 * Validates a stream and returns its leaf table, or throws the Sgfp4Error of DECISIONS.md
 * section 3. The seam for a faster validator (e.g. @sgfp4/cpu-decoder's WebAssembly one); it runs
 * once per stream, and nothing reaches the GPU before it accepted the stream.
 */
export type StreamValidator = (bytes: Uint8Array, opts: { profile: Profile | "auto"; shape: Shape; limits?: Limits }) => ValidatedStream;

/** The reference validator: @sgfp4/format's `parse` (readable, slower: ~80 ns per leaf). */
export const parseValidator: StreamValidator = (bytes, opts) => {
  const c = parse(bytes, opts);
  return { profile: c.profile, shape: c.shape, leafTable: c.leafTable };
};

/**
 * The default: @sgfp4/cpu-decoder's WebAssembly validator (same rules and leaf table as `parse`,
 * which runs only to give the detailed error of a rejected stream, or where wasm cannot compile).
 */
export const wasmValidator: StreamValidator = (bytes, opts) => buildLeafTable(bytes, opts);

/** Alignment of every piece of the upload region (storage and uniform binding offsets). */
export const PIECE_ALIGN = 256;

export interface Range {
  offset: number;
  size: number;
}

export interface JobWindow extends OutputWindow {
  /** leaves [l0, l1) of the stream this window reads */
  l0: number;
  l1: number;
  /** offsets in the job's upload region */
  params: number;
  payload: Range;
  leaves: Range;
  /** index of the first leaf in the `leaves` binding */
  leafBase: number;
}

export interface Job {
  name: string;
  shape: Shape;
  format: OutputFormat;
  variant: KernelVariant;
  /** output bytes (rows * cols * element bytes) */
  outputBytes: number;
  windows: JobWindow[];
  /** bytes of the upload region (a multiple of PIECE_ALIGN) */
  regionBytes: number;
  /** bytes of the first-leaf table the prep kernel builds ("tree" variant, host-validated; 0 otherwise) */
  firstLeafBytes: number;
  /** what writeJob copies */
  bytes: Uint8Array;
  leafCount: number;
  /** host-validated: the leaf table, uploaded with the container */
  leafTable?: Uint32Array;
  /**
   * device-validated: v2, the host checked the records and counted their leaves (records.ts);
   * the leaves kernel checks the leaves and builds the table on the GPU (leaves-shader.ts).
   * `blockFirst` (uploaded at `firstLeaf`, the tree kernel's first-leaf table) and the kernel's
   * parameters (`check`) sit in the upload region; the table goes to a pooled device buffer.
   * v1: the host built the leaf table (uploaded as usual) and a kernel checks the T158 halves.
   */
  device?: { kind: "v2"; blockFirst: Uint32Array; firstLeaf: Range; check: Range } | { kind: "v1"; check: Range };
  compacted: boolean;
}

export interface JobLimits {
  /** largest output window, bytes (a multiple of 256) */
  maxChunkBytes: number;
  /** largest storage binding */
  maxBinding: number;
  /** largest buffer (the upload region of one job is one buffer) */
  maxBuffer: number;
  /** inputs above this are compacted per window (tests set it tiny) */
  maxInputBytes: number;
  maxWorkgroupsPerDimension: number;
}

const limitError = (what: string, bytes: number, limit: number) =>
  new Sgfp4Error("LIMIT_EXCEEDED", `${what} needs ${bytes} bytes, over the device's storage binding limit of ${limit}; use a device with higher limits`);

export function planJob(name: string, bytes: Uint8Array, stream: ValidatedStream, format: OutputFormat, limits: JobLimits): Job {
  const { leafTable } = stream;
  const inputMax = Math.min(limits.maxBinding, limits.maxInputBytes);
  const compacted = align(bytes.length, 4) > inputMax || leafTable.byteLength > inputMax;
  return layOut(name, bytes, stream.shape, leafTable.length / LEAF_WORDS, format, limits, compacted, {
    windowLeaves: (w) => windowLeaves(leafTable, w),
    compactSize: (l0, l1) => compactSize(leafTable, l0, l1),
    shared: (take) => ({ payload: take(bytes.length), leaves: take(leafTable.byteLength) }),
    finish: (job) => ({ ...job, leafTable }),
  });
}

/**
 * A device-validated v1 job: the host's leaf table (records.ts `v1LeafTable`) and the check of
 * the T158 halves on the GPU; undefined where the inputs would not fit one storage binding.
 */
export function planDeviceV1Job(name: string, bytes: Uint8Array, shape: Shape, leafTable: Uint32Array, format: OutputFormat, limits: JobLimits): Job | undefined {
  const inputMax = Math.min(limits.maxBinding, limits.maxInputBytes);
  if (align(bytes.length, 4) > inputMax || leafTable.byteLength > inputMax) return undefined;
  let check: Range | undefined;
  return layOut(name, bytes, shape, leafTable.length / LEAF_WORDS, format, limits, false, {
    windowLeaves: (w) => windowLeaves(leafTable, w),
    compactSize: neverCompacted,
    shared: (take) => {
      const pieces = { payload: take(bytes.length), leaves: take(leafTable.byteLength) };
      check = take(4 * CHECK_PARAM_WORDS);
      return pieces;
    },
    finish: (job) => ({ ...job, leafTable, device: { kind: "v1", check: check! } }),
  });
}

/**
 * A device-validated v2 job (records counted on the host), or undefined where the container or
 * its leaf table would not fit one storage binding (the caller then validates on the host and
 * the job is compacted per window).
 */
export function planDeviceJob(name: string, bytes: Uint8Array, counts: RecordCounts, format: OutputFormat, limits: JobLimits): Job | undefined {
  const { blockFirst, leafCount } = counts;
  const inputMax = Math.min(limits.maxBinding, limits.maxInputBytes);
  if (align(bytes.length, 4) > inputMax || leafCount * LEAF_WORDS * 4 > inputMax || 4 * blockFirst.length > limits.maxBinding) return undefined;
  let pieces: { firstLeaf: Range; check: Range } | undefined;
  return layOut(name, bytes, counts.shape, leafCount, format, limits, false, {
    windowLeaves: (w) => ({ l0: blockFirst[w.firstBlock]!, l1: blockFirst[w.firstBlock + w.blockCount]! }),
    compactSize: neverCompacted,
    shared: (take) => {
      const payload = take(bytes.length);
      pieces = { firstLeaf: take(4 * blockFirst.length), check: take(4 * CHECK_PARAM_WORDS) };
      // leaves: offsets in the device buffer the leaves kernel writes, not in the upload region
      return { payload, leaves: { offset: 0, size: Math.max(16, leafCount * LEAF_WORDS * 4) } };
    },
    finish: (job) => ({ ...job, firstLeafBytes: 0, device: { kind: "v2", blockFirst, ...pieces! } }),
  });
}

const neverCompacted = (): never => {
  throw new Error("a device-validated job is never compacted");
};

interface LeafSource {
  windowLeaves(w: OutputWindow): { l0: number; l1: number };
  compactSize(l0: number, l1: number): { payload: number; leaves: number };
  /** the pieces every window shares (not compacted) */
  shared(take: (size: number) => Range): { payload: Range; leaves: Range };
  finish(job: Job): Job;
}

/** The windows of a job and where its inputs sit in the upload region. */
function layOut(name: string, bytes: Uint8Array, shape: Shape, leafCount: number, format: OutputFormat, limits: JobLimits, compacted: boolean, leaves: LeafSource): Job {
  const [rows, cols] = shape;
  const { blockCount: blocks } = tiling(shape);
  const variant: KernelVariant = leafCount === blocks ? "single" : "tree";
  const eb = elementBytes(format);
  // halves: a window's binding may start up to 128 bytes before it (256-byte aligned offsets)
  const slack = eb === 4 ? 0 : PIECE_ALIGN;
  const maxElems = Math.max(64, Math.floor((limits.maxChunkBytes - slack) / eb / 64) * 64);
  const windows = planWindows(shape, maxElems);
  const firstLeafBytes = variant === "tree" ? align(4 * (blocks + 1), 4) : 0;
  if (firstLeafBytes > limits.maxBinding) throw limitError("the first-leaf table", firstLeafBytes, limits.maxBinding);

  let at = 0;
  const take = (size: number): Range => {
    const r = { offset: at, size: Math.max(16, align(size, 4)) };
    at += align(r.size, PIECE_ALIGN);
    return r;
  };
  const params = take(windows.length * PIECE_ALIGN);
  const shared = compacted ? undefined : leaves.shared(take);
  const jobWindows = windows.map((w, i): JobWindow => {
    const { l0, l1 } = leaves.windowLeaves(w);
    const base = { ...w, l0, l1, params: params.offset + i * PIECE_ALIGN };
    if (shared) return { ...base, ...shared, leafBase: 0 };
    const need = leaves.compactSize(l0, l1);
    if (need.payload > limits.maxBinding || need.leaves > limits.maxBinding) throw limitError("one output window's inputs", need.payload + need.leaves, limits.maxBinding);
    return { ...base, payload: take(need.payload), leaves: take(need.leaves), leafBase: l0 };
  });
  if (at > limits.maxBuffer) throw new Sgfp4Error("LIMIT_EXCEEDED", `the inputs of one decode need ${at} bytes, over the device's maxBufferSize of ${limits.maxBuffer}`);
  return leaves.finish({ name, shape, format, variant, outputBytes: rows * cols * eb, windows: jobWindows, regionBytes: at, firstLeafBytes, bytes, leafCount, compacted });
}

/**
 * Fill the job's upload region (`region`, the job's bytes of a mapped staging buffer). Output
 * windows are addressed relative to an output binding that starts at a 256-byte boundary at or
 * before the window, which only shifts half-precision windows (by 64 elements at most).
 */
export function writeJob(job: Job, region: Uint8Array, limits: Pick<JobLimits, "maxWorkgroupsPerDimension">, statusIndex = 0): void {
  const [rows, cols] = job.shape;
  const { tilesX } = tiling(job.shape);
  const eb = elementBytes(job.format);
  const words = new Uint32Array(region.buffer, region.byteOffset, region.byteLength >>> 2);
  const written = new Set<number>();
  for (const w of job.windows) {
    const shiftElems = ((w.outBase * eb) % PIECE_ALIGN) / eb;
    const leafCount = w.l1 - w.l0;
    const leafGroups = Math.ceil(leafCount / 256);
    const p = paramWords({
      rows, cols, tilesX, firstBlock: w.firstBlock, blockCount: w.blockCount,
      groupsX: Math.min(w.blockCount, limits.maxWorkgroupsPerDimension), leafBase: w.leafBase,
      outBase: w.outBase, outCount: w.outCount, outOrigin: w.outBase - shiftElems,
      leafCount, leafEnd: w.l1, leafGroupsX: Math.min(Math.max(1, leafGroups), limits.maxWorkgroupsPerDimension), statusIndex,
    });
    words.set(p, w.params / 4);
    if (written.has(w.payload.offset)) continue; // shared inputs: written once
    written.add(w.payload.offset);
    const d = job.device;
    if (d) {
      const blocks = tiling(job.shape).blockCount;
      words.set([blocks, Math.min(blocks, limits.maxWorkgroupsPerDimension), job.bytes.length, statusIndex], d.check.offset / 4);
    }
    if (d?.kind === "v2") {
      region.set(job.bytes, w.payload.offset);
      words.set(d.blockFirst, d.firstLeaf.offset / 4);
    } else if (job.compacted) {
      const leaves = new Uint32Array(region.buffer, region.byteOffset + w.leaves.offset, (w.l1 - w.l0) * LEAF_WORDS);
      compactLeaves(job.bytes, job.leafTable!, w.l0, w.l1, region.subarray(w.payload.offset, w.payload.offset + w.payload.size), leaves);
    } else {
      region.set(job.bytes, w.payload.offset);
      const t = job.leafTable!;
      region.set(new Uint8Array(t.buffer, t.byteOffset, t.byteLength), w.leaves.offset);
    }
  }
}
