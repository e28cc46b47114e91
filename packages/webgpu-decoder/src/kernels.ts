/**
 * The compute pipelines of a decoder (built once, reused) and how a job's windows are recorded:
 * per window, the first-leaf dispatch ("tree" variant of a host-validated job) and the decode dispatch. Bind groups
 * are made per call: their number grows with the windows, not with the output.
 */
import { FIRST_LEAF_SHADER } from "./prep-shader.js";
import { LEAVES_SHADER, V1_CHECK_SHADER } from "./leaves-shader.js";
import { PARAM_WORDS, decodeShader, elementBytes } from "./shader.js";
import type { Job, JobWindow } from "./job.js";
import { tiling } from "@sgfp4/format";

/**
 * Device buffers a job's dispatches bind: its uploaded inputs (at `inputsBase`), the first-leaf
 * table the prep kernel builds, and for a device-validated job the leaf table the leaves kernel writes (at
 * `leaves.offset`), and the call's status word where the decode is gated on it (shader.ts).
 */
export interface Tables {
  inputs: GPUBuffer;
  inputsBase: number;
  firstLeaf?: GPUBuffer;
  leaves?: { buffer: GPUBuffer; offset: number };
  status?: GPUBuffer;
}

/**
 * Bytes of the status buffer: its first word is the index (in the call) of the first
 * device-validated job the GPU refused, 0xFFFFFFFF while none is.
 */
export const STATUS_BYTES = 256;

export class Kernels {
  private readonly pipelines = new Map<string, GPUComputePipeline>();

  constructor(private readonly device: GPUDevice) {}

  private pipeline(key: string, code: () => string): GPUComputePipeline {
    let p = this.pipelines.get(key);
    if (!p) {
      const module = this.device.createShaderModule({ code: code(), label: `sgfp4-${key}` });
      p = this.device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" }, label: `sgfp4-${key}` });
      this.pipelines.set(key, p);
    }
    return p;
  }

  private decodePipeline(job: Job, checked: boolean): GPUComputePipeline {
    const aligned = job.shape[1] % 4 === 0;
    return this.pipeline(`decode-${job.variant}-${job.format}${aligned ? "-x4" : ""}${checked ? "-checked" : ""}`, () => decodeShader(job.variant, job.format, aligned, checked));
  }

  private group(pipeline: GPUComputePipeline, resources: GPUBufferBinding[]): GPUBindGroup {
    return this.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: resources.map((resource, binding) => ({ binding, resource })) });
  }

  private dispatch(pass: GPUComputePassEncoder, pipeline: GPUComputePipeline, bindGroup: GPUBindGroup, groups: number): void {
    const x = Math.min(Math.max(groups, 1), this.device.limits.maxComputeWorkgroupsPerDimension);
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(x, Math.ceil(groups / x));
  }

  private inputs(w: JobWindow, t: Tables): { params: GPUBufferBinding; payload: GPUBufferBinding; leaves: GPUBufferBinding } {
    return {
      params: { buffer: t.inputs, offset: t.inputsBase + w.params, size: PARAM_WORDS * 4 },
      payload: { buffer: t.inputs, offset: t.inputsBase + w.payload.offset, size: w.payload.size },
      leaves: t.leaves
        ? { buffer: t.leaves.buffer, offset: t.leaves.offset + w.leaves.offset, size: w.leaves.size }
        : { buffer: t.inputs, offset: t.inputsBase + w.leaves.offset, size: w.leaves.size },
    };
  }

  /** Each block's first leaf: uploaded with a device-validated job, else built by the first-leaf kernel. */
  private firstLeaf(job: Job, t: Tables): GPUBufferBinding {
    const d = job.device;
    return d?.kind === "v2" ? { buffer: t.inputs, offset: t.inputsBase + d.firstLeaf.offset, size: d.firstLeaf.size } : { buffer: t.firstLeaf!, offset: 0, size: job.firstLeafBytes };
  }

  private status(t: Tables): GPUBufferBinding {
    return { buffer: t.status!, offset: 0, size: STATUS_BYTES };
  }

  /**
   * A device-validated job's checks (leaves-shader.ts): v2, every record's leaves, writing the
   * leaf table; v1, the T158 halves.
   */
  recordLeaves(pass: GPUComputePassEncoder, job: Job, t: Tables): void {
    const d = job.device!;
    const w = job.windows[0]!;
    const { payload, leaves } = this.inputs(w, t);
    const check = { buffer: t.inputs, offset: t.inputsBase + d.check.offset, size: d.check.size };
    const blocks = tiling(job.shape).blockCount;
    if (d.kind === "v1") {
      const pipeline = this.pipeline("v1-check", () => V1_CHECK_SHADER);
      this.dispatch(pass, pipeline, this.group(pipeline, [check, payload, leaves, this.status(t)]), blocks);
      return;
    }
    const pipeline = this.pipeline("leaves", () => LEAVES_SHADER);
    const all = { ...leaves, offset: t.leaves!.offset, size: Math.max(16, job.leafCount * 16) };
    this.dispatch(pass, pipeline, this.group(pipeline, [check, payload, this.firstLeaf(job, t), all, this.status(t)]), blocks);
  }

  /**
   * The first-leaf table of a "tree" job, built from the uploaded leaf table window by window;
   * nothing for a device-validated v2 job, whose table came with its record counts.
   */
  recordPrep(pass: GPUComputePassEncoder, job: Job, t: Tables): void {
    if (job.variant !== "tree" || job.device?.kind === "v2") return;
    const first = this.pipeline("first-leaf", () => FIRST_LEAF_SHADER);
    const firstLeaf = this.firstLeaf(job, t);
    for (const w of job.windows) {
      const { params, leaves } = this.inputs(w, t);
      this.dispatch(pass, first, this.group(first, [params, leaves, firstLeaf]), Math.ceil((w.l1 - w.l0) / 256));
    }
  }

  /** The decode of every window into `output` at `outputOffset` (a multiple of 256). */
  recordDecode(pass: GPUComputePassEncoder, job: Job, t: Tables, output: GPUBuffer, outputOffset: number): void {
    const pipeline = this.decodePipeline(job, t.status !== undefined);
    const eb = elementBytes(job.format);
    for (const w of job.windows) {
      const { params, payload, leaves } = this.inputs(w, t);
      // bound from the 256-byte boundary at or before the window (the kernel's outOrigin)
      const start = outputOffset + w.outBase * eb;
      const bindOffset = start - (start % 256);
      const end = Math.ceil((outputOffset + (w.outBase + w.outCount) * eb) / 4) * 4;
      const out: GPUBufferBinding = { buffer: output, offset: bindOffset, size: end - bindOffset };
      const resources: GPUBufferBinding[] = [params, payload, leaves, out];
      if (job.variant === "tree") resources.push(this.firstLeaf(job, t));
      const entries = resources.map((resource, binding) => ({ binding, resource }));
      if (t.status) entries.push({ binding: 6, resource: this.status(t) });
      this.dispatch(pass, pipeline, this.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }), w.blockCount);
    }
  }

  clear(): void {
    this.pipelines.clear();
  }
}
