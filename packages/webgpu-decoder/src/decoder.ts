/**
 * Host side of the WebGPU decoder: validates with @sgfp4/format (nothing reaches the GPU before
 * `parse` accepted the stream), uploads the container and the leaf table once, and records the
 * dispatches. Outputs larger than one storage binding are decoded in windows of the output; every
 * window runs the same kernel on the same leaves, so the bits are those of a single pass.
 */
import { Sgfp4Error, parse, type Container, type Limits, type Profile, type Shape } from "@sgfp4/format";
import { PARAM_WORDS, WORKGROUP_SIZE, decodeShader, type KernelVariant } from "./shader.js";

export interface DecodeOptions {
  profile: Profile | "auto";
  shape: Shape;
  limits?: Limits;
}

export interface WebGpuDecoderOptions {
  /**
   * Largest output window one dispatch writes, in bytes (rounded down to a multiple of 256,
   * at least 256). Default: the device's maxStorageBufferBindingSize. Tests set it tiny to
   * exercise the chunked path.
   */
  maxChunkBytes?: number;
  /**
   * Largest container (and leaf table) bound whole, in bytes. Default: the device's storage
   * binding limit. Above it every output window gets its own compact copy of its leaves'
   * payloads. Tests set it tiny to exercise that path.
   */
  maxInputBytes?: number;
  /**
   * How the kernel finds each 4x4 cell's leaf and extracts its codes. "cells": a host-built table
   * of one byte per cell, no workgroup memory or barrier (and no table at all when every
   * macroblock is one leaf). "marking": the first kernel, quadtree node marking in workgroup
   * memory; kept for the benchmark. "cells-unified": "cells" with T158 and FP4 codes extracted
   * on one branch-free path (no warp divergence where leaves of both modes meet). "-pairs": each
   * thread expands two vertically adjacent cells, looking their leaf up once when it is the same.
   * "auto" (default): "cells-unified-pairs" where macroblocks hold several leaves, "cells-pairs"
   * where every macroblock is one leaf (H200, 256 MiB: v2 0.78 -> 0.83 of the copy, v1 0.86 ->
   * 0.87; BENCHMARKS.md run 5). Same bits in every case.
   */
  kernel?: KernelOption;
}

// The numeric usage flags are fixed by the WebGPU spec; using them directly avoids needing the
// GPUBufferUsage global (absent in Node until `webgpu`'s globals are installed).
const USAGE = { MAP_READ: 0x1, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80 } as const;
/** Usage the caller's output buffer needs (GPUBufferUsage.STORAGE). */
export const OUTPUT_USAGE = USAGE.STORAGE;

interface Chunk {
  outBase: number; // first output element of the window
  outCount: number;
  blockRowStart: number;
  blockRowCount: number;
  blockColStart: number;
  blockColCount: number;
  /** inputs of this chunk (shared buffers, or the chunk's own compacted copies) */
  payload: GPUBuffer;
  leaves: GPUBuffer;
  leafBindOffset: number;
  leafBindSize: number;
  leafBase: number;
  payloadWordBase: number;
  /** first macroblock of this window's slice of the cell table ("cells" kernel) */
  cellBlockBase: number;
  cellBindOffset: number;
  cellBindSize: number;
}

/** A validated container uploaded to the device, ready to be decoded any number of times. */
export class PreparedContainer {
  /** @internal */
  constructor(
    readonly container: Container,
    /** output size in bytes (rows * cols * 4) */
    readonly outputBytes: number,
    /** @internal */ readonly chunks: readonly Chunk[],
    /** @internal */ readonly params: GPUBuffer,
    /** @internal */ readonly firstLeaf: GPUBuffer,
    /** @internal */ readonly owned: readonly GPUBuffer[],
    /** bytes uploaded: container (or its payloads) + leaf table + first-leaf table */
    readonly uploadedBytes: number,
    /** which kernel decodes it */
    readonly variant: KernelVariant = "marking",
    /** @internal one byte per 4x4 cell, the cell's leaf index within its macroblock */
    readonly cells?: GPUBuffer,
  ) {}
  get shape(): Shape {
    return this.container.shape;
  }
  destroy(): void {
    for (const b of this.owned) b.destroy();
  }
}

const align = (n: number, a: number) => Math.ceil(n / a) * a;

export type KernelOption = "auto" | "cells" | "cells-unified" | "cells-pairs" | "cells-unified-pairs" | "marking";

export class WebGpuDecoder {
  readonly device: GPUDevice;
  private readonly maxChunkBytes: number;
  private readonly maxInputBytes: number;
  private readonly kernel: KernelOption;
  private readonly pipelines = new Map<string, GPUComputePipeline>();
  private lostInfo: { reason: string; message: string } | undefined;

  constructor(device: GPUDevice, options: WebGpuDecoderOptions = {}) {
    this.device = device;
    // A lost device (destroyed, driver reset, out of memory) makes every later call fail with
    // bare DOMExceptions or silently; remember why, so errors can say it.
    void device.lost?.then((info) => {
      this.lostInfo = { reason: String(info.reason), message: info.message };
    });
    const deviceMax = Math.floor(device.limits.maxStorageBufferBindingSize / 256) * 256;
    const asked = options.maxChunkBytes === undefined ? deviceMax : Math.max(256, Math.floor(options.maxChunkBytes / 256) * 256);
    this.maxChunkBytes = Math.min(asked, deviceMax);
    this.maxInputBytes = options.maxInputBytes ?? Number.POSITIVE_INFINITY;
    this.kernel = options.kernel ?? "auto";
  }

  /** Pipelines are built once per decoder and output kind, then reused. */
  private pipeline(vec4Output: boolean, variant: KernelVariant): GPUComputePipeline {
    const unified = this.kernel === "cells-unified" || this.kernel === "cells-unified-pairs" || (this.kernel === "auto" && variant === "cells");
    const pairs = variant !== "marking" && (this.kernel === "auto" || this.kernel === "cells-pairs" || this.kernel === "cells-unified-pairs");
    const key = `${vec4Output ? "vec4" : "scalar"}-${variant}${unified ? "-unified" : ""}${pairs ? "-pairs" : ""}`;
    let p = this.pipelines.get(key);
    if (!p) {
      const module = this.device.createShaderModule({ code: decodeShader(vec4Output, variant, unified, pairs), label: "sgfp4-decode" });
      p = this.device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" }, label: `sgfp4-decode-${key}` });
      this.pipelines.set(key, p);
    }
    return p;
  }

  /** Parse (every rejection of DECISIONS.md section 3 happens here), then upload. */
  prepare(bytes: Uint8Array, opts: DecodeOptions): PreparedContainer {
    const container = parse(bytes, { profile: opts.profile, shape: opts.shape, limits: opts.limits });
    return this.upload(bytes, container);
  }

  private upload(bytes: Uint8Array, c: Container): PreparedContainer {
    const device = this.device;
    const [rows, cols] = c.shape;
    const inputMax = Math.min(Math.floor(device.limits.maxStorageBufferBindingSize / 256) * 256, device.limits.maxBufferSize);
    const owned: GPUBuffer[] = [];
    const firstLeafWords = new Uint32Array(c.blockCount + 1);
    for (let b = 0; b < c.blockCount; b++) firstLeafWords[b] = c.blocks[b]!.firstLeaf;
    firstLeafWords[c.blockCount] = c.leafCount;
    if (firstLeafWords.byteLength > inputMax) throw new Sgfp4Error("LIMIT_EXCEEDED", `first-leaf table of ${firstLeafWords.byteLength} bytes exceeds the device's storage binding limit`);
    const firstLeaf = this.createFilled(firstLeafWords, "sgfp4-first-leaf");
    owned.push(firstLeaf);
    let uploaded = firstLeafWords.byteLength;

    const variant: KernelVariant = this.kernel === "marking" ? "marking" : c.leafCount === c.blockCount ? "single" : "cells";
    let cells: GPUBuffer | undefined;
    if (variant === "cells") {
      const table = cellTable(c);
      if (table.byteLength > device.limits.maxBufferSize) throw new Sgfp4Error("LIMIT_EXCEEDED", `cell table of ${table.byteLength} bytes exceeds the device's maxBufferSize`);
      cells = this.createFilled(table, "sgfp4-cells");
      owned.push(cells);
      uploaded += table.byteLength;
    }

    const windows = this.planWindows(c);
    const leafTableBytes = c.leafCount * 16;
    const inputsFit = align(bytes.length, 4) <= Math.min(inputMax, this.maxInputBytes) && leafTableBytes <= Math.min(inputMax, this.maxInputBytes);
    let sharedPayload: GPUBuffer | undefined;
    let sharedLeaves: GPUBuffer | undefined;
    if (inputsFit) {
      sharedPayload = this.createFilled(bytes, "sgfp4-container");
      sharedLeaves = this.createFilled(c.leafTable, "sgfp4-leaf-table");
      owned.push(sharedPayload, sharedLeaves);
      uploaded += bytes.length + leafTableBytes;
    }
    const chunks: Chunk[] = windows.map((w) => {
      const firstBlock = w.blockRowStart * c.tilesX + w.blockColStart;
      const lastBlock = (w.blockRowStart + w.blockRowCount - 1) * c.tilesX + w.blockColStart + w.blockColCount - 1;
      const l0 = firstLeafWords[firstBlock]!;
      const l1 = firstLeafWords[lastBlock + 1]!;
      // this window's blocks are contiguous in the cell table: bind that slice (256 B per block)
      const cellBindSize = (lastBlock + 1 - firstBlock) * 256;
      if (cells && cellBindSize > inputMax) throw new Sgfp4Error("LIMIT_EXCEEDED", `one output window needs ${cellBindSize} bytes of cell table, over the device's storage binding limit of ${inputMax}`);
      const cellSlice = { cellBlockBase: firstBlock, cellBindOffset: firstBlock * 256, cellBindSize };
      if (sharedPayload && sharedLeaves) {
        return { ...w, ...cellSlice, payload: sharedPayload, leaves: sharedLeaves, leafBindOffset: 0, leafBindSize: Math.max(16, leafTableBytes), leafBase: 0, payloadWordBase: 0 };
      }
      // Inputs over one binding: give this window its own compact copy of its leaves' payloads.
      const compact = compactLeaves(bytes, c, l0, l1);
      if (compact.payload.byteLength > inputMax || compact.leaves.byteLength > inputMax) {
        throw new Sgfp4Error("LIMIT_EXCEEDED", `one output window needs ${compact.payload.byteLength + compact.leaves.byteLength} bytes of inputs, over the device's storage binding limit of ${inputMax}; use a device with higher limits`);
      }
      const payload = this.createFilled(compact.payload, "sgfp4-payload-chunk");
      const leaves = this.createFilled(compact.leaves, "sgfp4-leaf-chunk");
      owned.push(payload, leaves);
      uploaded += compact.payload.byteLength + compact.leaves.byteLength;
      return { ...w, ...cellSlice, payload, leaves, leafBindOffset: 0, leafBindSize: Math.max(16, compact.leaves.byteLength), leafBase: l0, payloadWordBase: 0 };
    });

    const paramStride = Math.max(256, device.limits.minUniformBufferOffsetAlignment);
    const paramWords = new Uint32Array((chunks.length * paramStride) / 4);
    chunks.forEach((ch, i) => {
      const blocks = ch.blockRowCount * ch.blockColCount;
      const groupsX = Math.min(blocks, device.limits.maxComputeWorkgroupsPerDimension);
      paramWords.set(
        [rows, cols, c.tilesX, ch.blockRowStart, ch.blockColStart, ch.blockColCount, groupsX, blocks, ch.leafBase, ch.payloadWordBase, ch.outBase, ch.outCount, ch.cellBlockBase],
        (i * paramStride) / 4,
      );
    });
    const params = this.createFilled(paramWords, "sgfp4-params", USAGE.UNIFORM);
    owned.push(params);
    return new PreparedContainer(c, rows * cols * 4, chunks, params, firstLeaf, owned, uploaded, variant, cells);
  }

  /**
   * Output windows: whole macroblock rows while one of them fits a binding (each block decoded
   * once), else element windows of a multiple of 64 elements (256-byte aligned binding offsets),
   * each dispatching the macroblocks it touches.
   */
  private planWindows(c: Container): Pick<Chunk, "outBase" | "outCount" | "blockRowStart" | "blockRowCount" | "blockColStart" | "blockColCount">[] {
    const [rows, cols] = c.shape;
    const total = rows * cols;
    const maxElems = this.maxChunkBytes / 4; // a multiple of 64
    const out: ReturnType<WebGpuDecoder["planWindows"]> = [];
    const blockRowsPerWindow = Math.floor(maxElems / (64 * cols));
    if (blockRowsPerWindow >= 1) {
      for (let by = 0; by < c.tilesY; by += blockRowsPerWindow) {
        const byEnd = Math.min(by + blockRowsPerWindow, c.tilesY);
        const outBase = by * 64 * cols;
        out.push({ outBase, outCount: Math.min(byEnd * 64, rows) * cols - outBase, blockRowStart: by, blockRowCount: byEnd - by, blockColStart: 0, blockColCount: c.tilesX });
      }
      return out;
    }
    for (let e0 = 0; e0 < total; e0 += maxElems) {
      const e1 = Math.min(e0 + maxElems, total);
      const r0 = Math.floor(e0 / cols);
      const r1 = Math.floor((e1 - 1) / cols);
      const by0 = Math.floor(r0 / 64);
      const by1 = Math.floor(r1 / 64);
      if (r0 === r1) {
        const bx0 = Math.floor((e0 % cols) / 64);
        const bx1 = Math.floor(((e1 - 1) % cols) / 64);
        out.push({ outBase: e0, outCount: e1 - e0, blockRowStart: by0, blockRowCount: 1, blockColStart: bx0, blockColCount: bx1 - bx0 + 1 });
      } else {
        out.push({ outBase: e0, outCount: e1 - e0, blockRowStart: by0, blockRowCount: by1 - by0 + 1, blockColStart: 0, blockColCount: c.tilesX });
      }
    }
    return out;
  }

  private createFilled(data: ArrayBufferView, label: string, usage: number = USAGE.STORAGE): GPUBuffer {
    const size = Math.max(16, align(data.byteLength, 4));
    const buffer = this.device.createBuffer({ size, usage: usage | USAGE.COPY_DST, mappedAtCreation: true, label });
    new Uint8Array(buffer.getMappedRange()).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    buffer.unmap();
    return buffer;
  }

  /**
   * Record the decode of `prepared` into `output` (usage STORAGE) at `outputOffset` (a multiple
   * of 256) on `pass`. Nothing is submitted; call it many times in one pass to repeat the work.
   */
  encode(pass: GPUComputePassEncoder, prepared: PreparedContainer, output: GPUBuffer, outputOffset = 0): void {
    const bindGroups = this.bindGroups(prepared, output, outputOffset);
    const vec4Output = prepared.shape[1] % 4 === 0;
    pass.setPipeline(this.pipeline(vec4Output, prepared.variant));
    prepared.chunks.forEach((ch, i) => {
      const blocks = ch.blockRowCount * ch.blockColCount;
      const groupsX = Math.min(blocks, this.device.limits.maxComputeWorkgroupsPerDimension);
      pass.setBindGroup(0, bindGroups[i]!);
      pass.dispatchWorkgroups(groupsX, Math.ceil(blocks / groupsX));
    });
  }

  private bindCache = new WeakMap<PreparedContainer, { output: GPUBuffer; offset: number; groups: GPUBindGroup[] }>();

  private bindGroups(prepared: PreparedContainer, output: GPUBuffer, outputOffset: number): GPUBindGroup[] {
    const cached = this.bindCache.get(prepared);
    if (cached && cached.output === output && cached.offset === outputOffset) return cached.groups;
    if (outputOffset % 256 !== 0) throw new Sgfp4Error("INVALID_ARGUMENT", `output offset ${outputOffset} is not a multiple of 256`);
    if (output.size < outputOffset + prepared.outputBytes) {
      throw new Sgfp4Error("INVALID_ARGUMENT", `output buffer of ${output.size} bytes cannot hold ${prepared.outputBytes} bytes at offset ${outputOffset}`);
    }
    const layout = this.pipeline(prepared.shape[1] % 4 === 0, prepared.variant).getBindGroupLayout(0);
    const paramStride = Math.max(256, this.device.limits.minUniformBufferOffsetAlignment);
    const groups = prepared.chunks.map((ch, i) =>
      this.device.createBindGroup({
        layout,
        entries: [
          { binding: 0, resource: { buffer: prepared.params, offset: i * paramStride, size: PARAM_WORDS * 4 } },
          { binding: 1, resource: { buffer: ch.payload } },
          { binding: 2, resource: { buffer: ch.leaves, offset: ch.leafBindOffset, size: ch.leafBindSize } },
          { binding: 3, resource: { buffer: prepared.firstLeaf } },
          { binding: 4, resource: { buffer: output, offset: outputOffset + ch.outBase * 4, size: ch.outCount * 4 } },
          ...(prepared.cells ? [{ binding: 5, resource: { buffer: prepared.cells, offset: ch.cellBindOffset, size: ch.cellBindSize } }] : []),
        ],
      }),
    );
    this.bindCache.set(prepared, { output, offset: outputOffset, groups });
    return groups;
  }

  /**
   * Decode into a GPU buffer that stays on the device (usage must include STORAGE). Without
   * `output`, a new buffer (STORAGE | COPY_SRC) of rows*cols*4 bytes is created and returned.
   */
  async decodeToBuffer(bytes: Uint8Array, opts: DecodeOptions, output?: GPUBuffer, outputOffset = 0): Promise<GPUBuffer> {
    const container = parse(bytes, { profile: opts.profile, shape: opts.shape, limits: opts.limits });
    const outputBytes = container.shape[0] * container.shape[1] * 4;
    if (!output && outputBytes > this.device.limits.maxBufferSize) {
      throw new Sgfp4Error("LIMIT_EXCEEDED", `output of ${outputBytes} bytes exceeds the device's maxBufferSize of ${this.device.limits.maxBufferSize}`);
    }
    return this.guard(async () => {
      const prepared = this.upload(bytes, container);
      const target = output ?? this.device.createBuffer({ size: Math.max(16, outputBytes), usage: USAGE.STORAGE | USAGE.COPY_SRC, label: "sgfp4-output" });
      try {
        const encoder = this.device.createCommandEncoder();
        const pass = encoder.beginComputePass();
        this.encode(pass, prepared, target, outputOffset);
        pass.end();
        this.device.queue.submit([encoder.finish()]);
        await this.device.queue.onSubmittedWorkDone();
      } catch (e) {
        if (!output) target.destroy();
        throw e;
      } finally {
        prepared.destroy();
      }
      return target;
    });
  }

  /** Decode and read back to the host. */
  async decode(bytes: Uint8Array, opts: DecodeOptions): Promise<Float32Array> {
    const gpuOut = await this.decodeToBuffer(bytes, opts);
    try {
      const [rows, cols] = opts.shape;
      return await this.guard(() => this.readBack(gpuOut, rows * cols * 4));
    } finally {
      gpuOut.destroy();
    }
  }

  /** Copy `byteLength` bytes of `buffer` (COPY_SRC) to the host, through bounded staging buffers. */
  async readBack(buffer: GPUBuffer, byteLength: number): Promise<Float32Array> {
    const result = new Float32Array(byteLength / 4);
    const bytesOut = new Uint8Array(result.buffer);
    const piece = Math.min(align(byteLength, 4), 64 * 1024 * 1024);
    const staging = this.device.createBuffer({ size: Math.max(16, piece), usage: USAGE.MAP_READ | USAGE.COPY_DST, label: "sgfp4-readback" });
    try {
      for (let at = 0; at < byteLength; at += piece) {
        const n = Math.min(piece, byteLength - at);
        const encoder = this.device.createCommandEncoder();
        encoder.copyBufferToBuffer(buffer, at, staging, 0, n);
        this.device.queue.submit([encoder.finish()]);
        await staging.mapAsync(1 /* GPUMapMode.READ */, 0, n);
        bytesOut.set(new Uint8Array(staging.getMappedRange(0, n)), at);
        staging.unmap();
      }
    } finally {
      staging.destroy();
    }
    return result;
  }

  /** Why the device was lost (destroy(), a driver reset, ...), once its `lost` promise settled. */
  get lost(): { reason: string; message: string } | undefined {
    return this.lostInfo;
  }

  /**
   * Run device work; turn validation and out-of-memory errors into BACKEND_FAILURE, and so any
   * non-Sgfp4 error (on a lost device, mapAsync rejects with a bare AbortError).
   */
  private async guard<T>(work: () => Promise<T>): Promise<T> {
    if (this.lostInfo) throw this.lostError();
    this.device.pushErrorScope("out-of-memory");
    this.device.pushErrorScope("validation");
    let result: T | undefined;
    let thrown: unknown;
    try {
      result = await work();
    } catch (e) {
      thrown = e;
    }
    let validation: GPUError | null = null;
    let oom: GPUError | null = null;
    try {
      validation = await this.device.popErrorScope();
      oom = await this.device.popErrorScope();
    } catch (e) {
      thrown ??= e;
    }
    if (thrown) {
      if (thrown instanceof Sgfp4Error) throw thrown;
      // lost is usually reported a tick after the failed call: give it that tick
      if (!this.lostInfo) await new Promise((r) => setTimeout(r, 0));
      if (this.lostInfo) throw this.lostError();
      const detail = thrown instanceof Error ? `${thrown.name}${thrown.message ? `: ${thrown.message}` : ""}` : String(thrown);
      throw new Sgfp4Error("BACKEND_FAILURE", `WebGPU call failed (${detail})`);
    }
    const err = validation ?? oom;
    if (err) throw new Sgfp4Error("BACKEND_FAILURE", `WebGPU ${validation ? "validation" : "out-of-memory"} error: ${err.message}`);
    return result as T;
  }

  private lostError(): Sgfp4Error {
    const l = this.lostInfo!;
    return new Sgfp4Error("BACKEND_FAILURE", `the WebGPU device was lost (reason: ${l.reason}${l.message ? `, ${l.message}` : ""}); create a new device and decoder`);
  }

  destroy(): void {
    this.pipelines.clear();
  }
}

/**
 * One byte per 4x4 cell, macroblock after macroblock (256 bytes each, cell t at row t/16, column
 * t%16): the index, within its macroblock, of the leaf that covers the cell. `parse` guarantees
 * that a macroblock's leaves (at most 256) tile it exactly, so every cell gets exactly one.
 */
function cellTable(c: Container): Uint8Array {
  const table = new Uint8Array(c.blockCount * 256);
  const t = c.leafTable;
  for (let b = 0; b < c.blockCount; b++) {
    const { firstLeaf: first, leafCount } = c.blocks[b]!;
    if (leafCount === 1) continue; // one leaf: index 0, already there
    const end = first + leafCount;
    const base = b * 256;
    for (let l = first; l < end; l++) {
      const geo = t[l * 4 + 1]!;
      const cy = (geo & 63) >> 2;
      const cx = ((geo >>> 6) & 63) >> 2;
      const n = 1 << (((geo >>> 12) & 7) - 2); // leaf side in cells
      const k = l - first;
      for (let i = 0; i < n; i++) table.fill(k, base + (cy + i) * 16 + cx, base + (cy + i) * 16 + cx + n);
    }
  }
  return table;
}

/** Leaves l0..l1 with their payloads packed back to back (16-byte aligned) in a new buffer. */
function compactLeaves(bytes: Uint8Array, c: Container, l0: number, l1: number): { payload: Uint8Array; leaves: Uint32Array } {
  const t = c.leafTable;
  let size = 0;
  for (let i = l0; i < l1; i++) size += align(leafPayloadBytes(t[i * 4 + 1]!), 16);
  const payload = new Uint8Array(Math.max(16, size));
  const leaves = new Uint32Array((l1 - l0) * 4);
  let at = 0;
  for (let i = l0; i < l1; i++) {
    const n = leafPayloadBytes(t[i * 4 + 1]!);
    const from = t[i * 4 + 3]!;
    payload.set(bytes.subarray(from, from + n), at);
    leaves.set(t.subarray(i * 4, i * 4 + 3), (i - l0) * 4);
    leaves[(i - l0) * 4 + 3] = at;
    at += align(n, 16);
  }
  return { payload, leaves };
}

function leafPayloadBytes(geo: number): number {
  const size = 1 << ((geo >>> 12) & 7);
  return (geo >>> 15) & 1 ? (size * size) / 4 : (size * size) / 2;
}

export { WORKGROUP_SIZE };
