/**
 * One call's jobs on their way to the GPU, in submissions. Each job is written into the open
 * upload slot as soon as the host has validated it (the slot is a pooled staging buffer kept
 * mapped between calls, or with upload "mapped" a new mappedAtCreation input buffer), and a
 * submission - the copy to the device, the prep kernels, the decodes of every job in it - goes
 * out when the slot is full or when the caller is about to wait for the host (`flush`), so the
 * GPU uploads and decodes tensor k while the host still validates tensor k + 1. Two slots
 * alternate: the host fills one while the GPU copies out of the other.
 */
import type { Job, JobLimits } from "./job.js";
import { writeJob } from "./job.js";
import { STATUS_BYTES, type Kernels, type Tables } from "./kernels.js";
import type { BufferPool } from "./pool.js";

export const USAGE = { MAP_READ: 0x1, MAP_WRITE: 0x2, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80 } as const;
export const INPUT_USAGE = USAGE.STORAGE | USAGE.UNIFORM;

/** A job and where its output goes. */
export interface Placed {
  job: Job;
  output: GPUBuffer;
  offset: number;
}

interface Slot {
  index: number;
  range: Uint8Array;
  size: number;
  used: number;
  placed: (Placed & { base: number; gated: boolean })[];
  /** unmap and return the buffer the dispatches bind (after recording the copy into it, if any) */
  close(encoder: GPUCommandEncoder): GPUBuffer;
  /** after the submission: map the staging again for the next call */
  submitted(): void;
}

export interface BatchConfig {
  device: GPUDevice;
  pool: BufferPool;
  kernels: Kernels;
  limits: JobLimits;
  upload: "staging" | "mapped";
  /** inputs per submission, bytes (a larger job goes alone) */
  submitBytes: number;
}

export class Batch {
  private slot: Slot | undefined;
  private next = 0;
  private readonly transient: GPUBuffer[] = [];
  /** device-validated jobs so far, in order (the status word names one by its index here) */
  private readonly checked: Placed["job"][] = [];
  private status: GPUBuffer | undefined;

  constructor(private readonly c: BatchConfig) {}

  /**
   * Write `p`'s inputs into the open slot (opening one, or submitting the full one, first).
   * `moreBytes`: an estimate of the inputs of the jobs that will follow in this call; a new slot
   * holds them too, up to submitBytes (a staging slot much larger than its use slows every call
   * down, measured on lavapipe; a short estimate only costs another submission).
   */
  async add(p: Placed, moreBytes = 0): Promise<void> {
    const need = p.job.regionBytes;
    if (this.slot && this.slot.used + need > this.slot.size) this.submit(false);
    // a multiple of 256 (getMappedRange takes sizes in multiples of 4; binding offsets are 256-aligned)
    this.slot ??= await this.open(Math.max(need, Math.ceil(Math.min(this.c.submitBytes, need + moreBytes) / 256) * 256));
    const s = this.slot;
    // Device-validated jobs are numbered in order. From the first of them on, every decode is
    // gated on the status word: skipped when a device-validated job at or before its number was
    // refused (a job's own number; another job's, the last device-validated job before it), so
    // nothing after a refused stream is written.
    const statusIndex = p.job.device ? this.checked.length : Math.max(0, this.checked.length - 1);
    if (p.job.device) {
      this.checked.push(p.job);
      if (!this.status) {
        this.status = this.c.pool.get("status", STATUS_BYTES, USAGE.STORAGE | USAGE.COPY_SRC | USAGE.COPY_DST);
        this.c.device.queue.writeBuffer(this.status, 0, new Uint32Array([0xffffffff])); // none refused yet
      }
    }
    writeJob(p.job, s.range.subarray(s.used, s.used + need), this.c.limits, statusIndex);
    s.placed.push({ ...p, base: s.used, gated: this.status !== undefined });
    s.used += need;
  }

  /** Bytes written into the open slot and not yet submitted. */
  get pending(): number {
    return this.slot?.used ?? 0;
  }

  /** Submit what the open slot holds (more will follow). */
  flush(): void {
    this.submit(false);
  }

  /**
   * Submit the open slot's copy, prep and decodes; `after` records more commands (a readback)
   * after them. Unless `last`, the copy out of the staging buffer is its own submission, so the
   * staging is mapped again (and filled for a later slot) once the copy is done, not the decodes.
   */
  private submit(last: boolean, after?: (encoder: GPUCommandEncoder) => void): void {
    const s = this.slot;
    this.slot = undefined;
    if (!s && !after) return;
    const { device, pool, kernels } = this.c;
    let encoder = device.createCommandEncoder();
    if (s) {
      const inputs = s.close(encoder);
      if (!last) {
        device.queue.submit([encoder.finish()]);
        s.submitted();
        encoder = device.createCommandEncoder();
      }
      const firstLeaf = Math.max(0, ...s.placed.map((p) => p.job.firstLeafBytes));
      // pooled; a growth destroys the smaller one, which the queue keeps alive for work already submitted
      const tables = {
        firstLeaf: firstLeaf ? pool.get("first-leaf", firstLeaf, USAGE.STORAGE) : undefined,
      };
      // device-validated jobs: their leaf tables side by side in one pooled buffer
      const leavesAt = new Map<Placed["job"], number>();
      let leafBytes = 0;
      for (const { job } of s.placed) {
        if (job.device?.kind !== "v2") continue;
        leavesAt.set(job, leafBytes);
        leafBytes += Math.ceil(Math.max(16, job.leafCount * 16) / 256) * 256;
      }
      const leaves = leafBytes ? pool.get("leaves", leafBytes, USAGE.STORAGE) : undefined;
      const status = this.status;
      const pass = encoder.beginComputePass();
      for (const { job, output, offset, base, gated } of s.placed) {
        const at = leavesAt.get(job);
        const t: Tables = { inputs, inputsBase: base, ...tables, ...(at === undefined ? {} : { leaves: { buffer: leaves!, offset: at } }), ...(gated ? { status: status! } : {}) };
        if (job.device) kernels.recordLeaves(pass, job, t);
        kernels.recordPrep(pass, job, t);
        kernels.recordDecode(pass, job, t, output, offset);
      }
      pass.end();
    }
    after?.(encoder);
    device.queue.submit([encoder.finish()]);
    if (last) s?.submitted();
  }

  /**
   * Submit the rest and resolve when the GPU has done everything submitted, with the first
   * device-validated job the GPU refused, if any: neither it nor any job added after it wrote
   * its output.
   */
  async finish(after?: (encoder: GPUCommandEncoder) => void): Promise<Placed["job"] | undefined> {
    try {
      const status = this.status;
      if (!status) {
        this.submit(true, after);
        await this.c.device.queue.onSubmittedWorkDone();
        return undefined;
      }
      const readback = this.c.pool.get("status-readback", STATUS_BYTES, USAGE.MAP_READ | USAGE.COPY_DST);
      this.submit(true, (encoder) => {
        after?.(encoder);
        encoder.copyBufferToBuffer(status, 0, readback, 0, STATUS_BYTES);
      });
      // resolves once the GPU has done everything before the copy, as onSubmittedWorkDone would
      await readback.mapAsync(1 /* GPUMapMode.READ */, 0, STATUS_BYTES);
      try {
        return this.checked[new Uint32Array(readback.getMappedRange(0, 4))[0]!];
      } finally {
        readback.unmap();
      }
    } finally {
      this.release();
    }
  }

  /** Free the per-call input buffers (upload "mapped"); a slot left open is dropped unsubmitted. */
  release(): void {
    if (this.slot) {
      this.slot.close(this.c.device.createCommandEncoder()); // unmapped, never submitted
      this.slot.submitted();
      this.slot = undefined;
    }
    for (const b of this.transient) b.destroy();
    this.transient.length = 0;
  }

  private async open(size: number): Promise<Slot> {
    const { device, pool } = this.c;
    const index = this.next;
    this.next ^= 1;
    const base = { index, size, used: 0, placed: [] };
    if (this.c.upload === "mapped") {
      const inputs = device.createBuffer({ size, usage: INPUT_USAGE, mappedAtCreation: true, label: "sgfp4-inputs" });
      this.transient.push(inputs);
      return { ...base, range: new Uint8Array(inputs.getMappedRange()), close: () => (inputs.unmap(), inputs), submitted: () => undefined };
    }
    const staged = await pool.staging(`staging-${index}`, size);
    const slot: Slot = {
      ...base,
      range: staged.range,
      close: (encoder) => {
        staged.buffer.unmap();
        const inputs = pool.get(`inputs-${index}`, size, INPUT_USAGE | USAGE.COPY_DST);
        if (slot.used) encoder.copyBufferToBuffer(staged.buffer, 0, inputs, 0, slot.used);
        return inputs;
      },
      submitted: () => staged.done(),
    };
    return slot;
  }
}
