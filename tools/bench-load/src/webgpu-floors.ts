/**
 * GPU floors of the load benchmark, measured on the same Dawn device as the paths they judge:
 * uploading bytes to a device buffer, copying a device buffer to the host, and a plain WGSL copy
 * kernel; plus the time of compute passes (iterations recorded in one pass, one submission): GPU
 * time from timestamp queries around the pass when the device has 'timestamp-query', else the
 * wall time of the submission (which adds submission and completion latency), labelled as such.
 */
import { COPY_SHADER } from "@sgfp4/webgpu-decoder";
import { medianMs } from "./timing.js";

/** Wall time each timed pass is preceded by the same pass kept running (GpuFloors.keepBusy). */
const GPU_WARM_MS = Number(process.env.BENCH_LOAD_GPU_WARM_MS ?? 300);

const U = { MAP_READ: 0x1, MAP_WRITE: 0x2, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80, QUERY_RESOLVE: 0x200 } as const;

export class GpuFloors {
  private readonly copyPipeline: GPUComputePipeline;
  /** how `passMs` times a pass */
  readonly timer: "GPU timestamps" | "wall clock per submission";

  constructor(private readonly device: GPUDevice, private readonly reps: number) {
    const module = device.createShaderModule({ code: COPY_SHADER, label: "bench-copy" });
    this.copyPipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
    this.timer = device.features.has("timestamp-query") ? "GPU timestamps" : "wall clock per submission";
  }

  /**
   * ms per iteration of `record`, `iters` of them in one compute pass and submission (median of
   * reps), by `timer`, after keeping the GPU busy with the same pass for GPU_WARM_MS.
   */
  async passMs(record: (pass: GPUComputePassEncoder) => void, iters: number): Promise<number> {
    await this.keepBusy(record, iters);
    return this.timer === "GPU timestamps" ? this.gpuPassMs(record, iters) : this.wallPassMs(record, iters);
  }

  /**
   * The same pass submitted back to back (two in flight) for GPU_WARM_MS of wall time, untimed: a
   * GPU that has idled between rows runs at its idle clock until its governor sees sustained load
   * (H100, session 15: 345 MHz instead of 1980 for most of the run, kernels 1.4-2.6x slower;
   * gpu-clock.ts). BENCH_LOAD_GPU_WARM_MS sets it (0: off, the sessions 8-14 method).
   */
  private async keepBusy(record: (pass: GPUComputePassEncoder) => void, iters: number): Promise<void> {
    const until = performance.now() + GPU_WARM_MS;
    let previous: Promise<undefined> | undefined;
    while (performance.now() < until) {
      const encoder = this.device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      for (let i = 0; i < iters; i++) record(pass);
      pass.end();
      this.device.queue.submit([encoder.finish()]);
      const done = this.device.queue.onSubmittedWorkDone();
      await previous;
      previous = done;
    }
    await previous;
  }

  /** Wall time of the pass's submission until the queue is done, per iteration. */
  wallPassMs(record: (pass: GPUComputePassEncoder) => void, iters: number): Promise<number> {
    return medianMs(async () => {
      const encoder = this.device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      for (let i = 0; i < iters; i++) record(pass);
      pass.end();
      this.device.queue.submit([encoder.finish()]);
      await this.device.queue.onSubmittedWorkDone();
    }, this.reps).then((ms) => ms / iters);
  }

  /** GPU time between the pass's beginning and end timestamps, per iteration (median of reps after a warm-up). */
  private async gpuPassMs(record: (pass: GPUComputePassEncoder) => void, iters: number): Promise<number> {
    const querySet = this.device.createQuerySet({ type: "timestamp", count: 2 });
    const resolved = this.device.createBuffer({ size: 16, usage: U.QUERY_RESOLVE | U.COPY_SRC });
    const read = this.device.createBuffer({ size: 16, usage: U.MAP_READ | U.COPY_DST });
    const ns: number[] = [];
    try {
      for (let r = 0; r < this.reps + 2; r++) {
        const encoder = this.device.createCommandEncoder();
        const pass = encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } });
        for (let i = 0; i < iters; i++) record(pass);
        pass.end();
        encoder.resolveQuerySet(querySet, 0, 2, resolved, 0);
        encoder.copyBufferToBuffer(resolved, 0, read, 0, 16);
        this.device.queue.submit([encoder.finish()]);
        await read.mapAsync(U.MAP_READ);
        const [t0, t1] = new BigInt64Array(read.getMappedRange());
        read.unmap();
        if (r >= 2) ns.push(Number(t1! - t0!)); // the first two warm up
      }
    } finally {
      querySet.destroy();
      resolved.destroy();
      read.destroy();
    }
    ns.sort((a, b) => a - b);
    return ns[Math.floor(ns.length / 2)]! / 1e6 / iters;
  }

  /**
   * Upload floor of `parts` (containers) into one device buffer: the faster of queue.writeBuffer
   * and a reused mapped staging buffer copied on the GPU, each until the data is on the device.
   */
  async uploadMs(parts: readonly Uint8Array[]): Promise<{ ms: number; how: string }> {
    const offsets: number[] = [];
    let total = 0;
    for (const p of parts) {
      offsets.push(total);
      total += Math.ceil(p.length / 256) * 256;
    }
    const dst = this.device.createBuffer({ size: total, usage: U.STORAGE | U.COPY_DST });
    const staging = this.device.createBuffer({ size: total, usage: U.MAP_WRITE | U.COPY_SRC, mappedAtCreation: true });
    try {
      const write = await medianMs(async () => {
        // encoder output lives in ArrayBuffers (writeBuffer takes no SharedArrayBuffer view)
        parts.forEach((p, i) => this.device.queue.writeBuffer(dst, offsets[i]!, p as Uint8Array<ArrayBuffer>, 0, p.length & ~3));
        await this.device.queue.onSubmittedWorkDone();
      }, this.reps);
      const mapped = await medianMs(async () => {
        if (staging.mapState !== "mapped") await staging.mapAsync(U.MAP_WRITE);
        const range = new Uint8Array(staging.getMappedRange());
        parts.forEach((p, i) => range.set(p, offsets[i]!));
        staging.unmap();
        const encoder = this.device.createCommandEncoder();
        encoder.copyBufferToBuffer(staging, 0, dst, 0, total);
        this.device.queue.submit([encoder.finish()]);
        await this.device.queue.onSubmittedWorkDone();
      }, this.reps);
      return write <= mapped ? { ms: write, how: "queue.writeBuffer" } : { ms: mapped, how: "mapped staging + GPU copy" };
    } finally {
      dst.destroy();
      staging.destroy();
    }
  }

  /** Device-to-host floor for `bytes`: GPU copy into a reused MAP_READ buffer, map, one host copy. */
  async downloadMs(bytes: number): Promise<number> {
    const src = this.device.createBuffer({ size: bytes, usage: U.STORAGE | U.COPY_SRC });
    const readback = this.device.createBuffer({ size: bytes, usage: U.MAP_READ | U.COPY_DST });
    try {
      return await medianMs(async () => {
        const encoder = this.device.createCommandEncoder();
        encoder.copyBufferToBuffer(src, 0, readback, 0, bytes);
        this.device.queue.submit([encoder.finish()]);
        await readback.mapAsync(U.MAP_READ);
        readback.getMappedRange().slice(0);
        readback.unmap();
      }, this.reps);
    } finally {
      src.destroy();
      readback.destroy();
    }
  }

  /**
   * ms of the WGSL vec4 copy kernel moving `bytes` (a multiple of 16) from one buffer to another,
   * per iteration: between the first `bytes` of `reserved` when given (kernel rows: buffers made
   * at the start, see ReservedBuffers), else between two new buffers.
   */
  async copyKernelMs(bytes: number, iters: number, reserved?: ReservedBuffers): Promise<number> {
    const maxBind = Math.floor(this.device.limits.maxStorageBufferBindingSize / 16384) * 16384;
    const own = !reserved;
    const src = reserved?.src ?? this.device.createBuffer({ size: bytes, usage: U.STORAGE });
    const dst = reserved?.out ?? this.device.createBuffer({ size: bytes, usage: U.STORAGE });
    const uniforms: GPUBuffer[] = [];
    try {
      const groups: { bind: GPUBindGroup; x: number; y: number }[] = [];
      for (let at = 0; at < bytes; at += maxBind) {
        const n = Math.min(maxBind, bytes - at);
        const count = Math.ceil(n / 16 / 1024);
        const x = Math.min(count, this.device.limits.maxComputeWorkgroupsPerDimension);
        const u = this.device.createBuffer({ size: 16, usage: U.UNIFORM | U.COPY_DST });
        uniforms.push(u);
        this.device.queue.writeBuffer(u, 0, new Uint32Array([n / 16, x, 0, 0]));
        const entries = [{ buffer: src, offset: at, size: n }, { buffer: dst, offset: at, size: n }, { buffer: u }].map((resource, binding) => ({ binding, resource }));
        groups.push({ bind: this.device.createBindGroup({ layout: this.copyPipeline.getBindGroupLayout(0), entries }), x, y: Math.ceil(count / x) });
      }
      return await this.passMs((pass) => {
        pass.setPipeline(this.copyPipeline);
        for (const g of groups) {
          pass.setBindGroup(0, g.bind);
          pass.dispatchWorkgroups(g.x, g.y);
        }
      }, iters);
    } finally {
      if (own) {
        src.destroy();
        dst.destroy();
      }
      for (const u of uniforms) u.destroy();
    }
  }
}

/**
 * Two large buffers made before any other, for the kernel rows: `out` (the decode kernels' output
 * and the copy's destination) and `src` (the copy's source), so that where a buffer was placed
 * cannot differ between workloads. From the second workload on, the kernel rows and their copy
 * floor run 1.8-3x slower on the H100/H200 (docs/history/webgpu-benchmarks.md, "order-dependent
 * slowdown"); session 13 showed it is not buffer placement: these reserved buffers slowed down
 * too, while scripts/kernel-probe.mjs, in a fresh process, saw no slowdown into early or late
 * buffers after the decoder's user paths. The cause was the GPU's clock (session 15: idle 345 MHz
 * between short passes; gpu-clock.ts), fixed by GpuFloors.keepBusy (session 16: 0.85-0.86 on
 * every workload).
 */
export interface ReservedBuffers {
  out: GPUBuffer;
  src: GPUBuffer;
  bytes: number;
}

export function reserveBuffers(device: GPUDevice, bytes: number): ReservedBuffers {
  return {
    out: device.createBuffer({ size: bytes, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST }),
    src: device.createBuffer({ size: bytes, usage: U.STORAGE }),
    bytes,
  };
}
