/**
 * Host side of the WebGPU decoder. A call validates each stream once: split between the host
 * (records.ts) and a kernel in the call's own submission (leaves-shader.ts), whose verdict gates
 * the decode, or wholly on the host before anything is uploaded (`validation: "host"`). It plans
 * the windows (job.ts), writes every input of the call (parameters, containers, leaf tables or
 * record counts) into one mapped staging buffer, and submits one command buffer: the copy to the
 * device, the validation and prep kernels, and the decode. Device buffers and staging are pooled
 * per decoder (pool.ts).
 */
import { Sgfp4Error, checkShape, parse, type Limits, type Profile, type Shape } from "@sgfp4/format";
import { OUTPUT_FORMATS, type DecodedArray, type OutputFormat } from "@sgfp4/format";
import { planDeviceJob, planDeviceV1Job, planJob, wasmValidator, writeJob, type Job, type JobLimits, type StreamValidator, type ValidatedStream } from "./job.js";
import { align } from "./plan.js";
import { BufferPool, Serial } from "./pool.js";
import { Kernels, type Tables } from "./kernels.js";
import { Batch, INPUT_USAGE, USAGE, type Placed } from "./batch.js";
import { Validations, type ValidatorPool } from "./validation.js";
import { elementBytes } from "./shader.js";
import { countRecordLeaves, v1LeafTable } from "./records.js";

export interface DecodeOptions {
  profile: Profile | "auto";
  shape: Shape;
  limits?: Limits;
  /** output element format (default "f32"); f16/bf16 are bit patterns, two per 32-bit word on the GPU */
  format?: OutputFormat;
}

/** One tensor of a batch (`decodeMany`). */
export interface TensorInput extends DecodeOptions {
  name: string;
  bytes: Uint8Array;
}

/** Where `decodeMany` put a tensor: `byteLength` bytes at `offset` of `buffer`. */
export interface DecodedTensor {
  name: string;
  shape: Shape;
  format: OutputFormat;
  buffer: GPUBuffer;
  offset: number;
  byteLength: number;
}

export interface WebGpuDecoderOptions {
  /**
   * Largest output window one dispatch writes, in bytes (rounded down to a multiple of 256,
   * at least 256). Default: the device's maxStorageBufferBindingSize. Tests set it tiny to
   * exercise the windowed path.
   */
  maxChunkBytes?: number;
  /**
   * Largest container (and leaf table) bound whole, in bytes. Default: the device's storage
   * binding limit. Above it every output window gets its own compact copy of its leaves'
   * payloads. Tests set it tiny to exercise that path.
   */
  maxInputBytes?: number;
  /** Host validation returning the leaf table (default: `wasmValidator`, @sgfp4/cpu-decoder's; `parseValidator` is the reference). */
  validator?: StreamValidator;
  /**
   * Where `decodeToBuffer`, `decode` and `decodeMany` validate. "device" (the default unless a
   * `validator` is given): v2, the host checks the records (work per record, records.ts) and the
   * GPU checks the leaves and builds the leaf table (leaves-shader.ts); v1, the host checks the
   * header and offset words and builds the table, the GPU checks the T158 halves. Both in the
   * decode's submission, which writes nothing unless both halves accepted; the call resolves after
   * reading back the verdict. "host": `validator` checks everything before anything is uploaded,
   * as it always does for `prepare` and for streams whose container or leaf table exceed one
   * storage binding. The verdict and the error are the same either way.
   */
  validation?: "device" | "host";
  /**
   * How inputs reach the device: "staging" (default), a pooled MAP_WRITE buffer kept mapped
   * between calls and copied on the GPU; or "mapped", a new input buffer per call written through
   * mappedAtCreation (no GPU copy, an allocation per call). Both measured in the load benchmark.
   */
  upload?: "staging" | "mapped";
  /** Inputs (containers, leaf tables) per submission of a batch, bytes (default 64 MiB); a larger tensor goes alone. */
  submitBytes?: number;
  /**
   * Where `decodeMany` validates: several streams at once off the calling thread (Node:
   * `createNodeDecoder` gives one on worker threads unless `validator` is set). Without it,
   * each stream is validated on the calling thread with `validator`, just before its upload.
   */
  validatorPool?: ValidatorPool;
}

/** A batch submits what it holds before the host waits, once it holds this much (small tensors share a submission). */
const MIN_SUBMIT_BYTES = 8 << 20;

function checkFormat(format: OutputFormat): OutputFormat {
  if (!OUTPUT_FORMATS.includes(format)) throw new Sgfp4Error("INVALID_ARGUMENT", `output format ${String(format)} is not one of ${OUTPUT_FORMATS.join(", ")}`);
  return format;
}

/** Output bytes of a tensor from its request alone (format and shape checked as the validator will). */
function outputBytesOf(t: DecodeOptions): number {
  const eb = elementBytes(checkFormat(t.format ?? "f32"));
  checkShape(t.shape, t.limits);
  return t.shape[0] * t.shape[1] * eb;
}

/**
 * The error of a stream that device validation refused: parse()'s detailed Sgfp4Error. Should
 * parse() accept it, the two validators disagree, which is a bug: BACKEND_FAILURE says so.
 */
function rejection(bytes: Uint8Array, opts: DecodeOptions): unknown {
  try {
    parse(bytes, { profile: opts.profile, shape: opts.shape, ...(opts.limits ? { limits: opts.limits } : {}) });
  } catch (e) {
    return e;
  }
  return new Sgfp4Error("BACKEND_FAILURE", "device validation refused a stream that parse() accepts (a bug in @sgfp4/webgpu-decoder; decode with validation: \"host\" meanwhile)");
}

/** Throws the rejection when the GPU refused the call's device-validated stream. */
function refused(job: Job | undefined, bytes: Uint8Array, opts: DecodeOptions): void {
  if (job) throw rejection(bytes, opts);
}

/** `e`, an Sgfp4Error naming the tensor when it is one. */
function naming(name: string, e: unknown): unknown {
  return e instanceof Sgfp4Error ? new Sgfp4Error(e.code, `tensor "${name}": ${e.message.slice(e.code.length + 2)}`) : e;
}

// The numeric usage flags (batch.ts) are fixed by the WebGPU spec; using them directly avoids
// needing the GPUBufferUsage global (absent in Node until `webgpu`'s globals are installed).
export { USAGE };
/** Usage the caller's output buffer needs (GPUBufferUsage.STORAGE). */
export const OUTPUT_USAGE = USAGE.STORAGE;

/** A validated container uploaded to the device with its lookup tables, ready to be decoded any number of times. */
export class PreparedContainer {
  /** @internal */
  constructor(
    /** @internal */ readonly job: Job,
    /** @internal */ readonly tables: Tables,
    /** @internal */ readonly owned: readonly GPUBuffer[],
  ) {}
  get shape(): Shape {
    return this.job.shape;
  }
  get format(): OutputFormat {
    return this.job.format;
  }
  /** output size in bytes */
  get outputBytes(): number {
    return this.job.outputBytes;
  }
  /** which kernel decodes it: "single" (one leaf per macroblock, no tables) or "tree" */
  get variant(): Job["variant"] {
    return this.job.variant;
  }
  /** bytes uploaded: parameters, container (or its per-window copies), leaf table */
  get uploadedBytes(): number {
    return this.job.regionBytes;
  }
  destroy(): void {
    for (const b of this.owned) b.destroy();
  }
}

export class WebGpuDecoder {
  readonly device: GPUDevice;
  private readonly maxChunkBytes: number;
  private readonly maxInputBytes: number;
  private readonly validate: StreamValidator;
  private readonly validation: "device" | "host";
  private readonly upload: "staging" | "mapped";
  private readonly submitBytes: number;
  private readonly validatorPool: ValidatorPool | undefined;
  private readonly kernels: Kernels;
  private readonly pool: BufferPool;
  private readonly serial = new Serial();
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
    this.validate = options.validator ?? wasmValidator;
    this.validation = options.validation ?? (options.validator ? "host" : "device");
    this.upload = options.upload ?? "staging";
    this.submitBytes = options.submitBytes ?? 64 * 1024 * 1024;
    this.validatorPool = options.validatorPool;
    this.kernels = new Kernels(device);
    this.pool = new BufferPool(device);
  }

  private get limits(): JobLimits {
    const l = this.device.limits;
    return {
      maxChunkBytes: this.maxChunkBytes,
      maxBinding: Math.min(Math.floor(l.maxStorageBufferBindingSize / 256) * 256, l.maxBufferSize),
      maxBuffer: l.maxBufferSize,
      maxInputBytes: this.maxInputBytes,
      maxWorkgroupsPerDimension: l.maxComputeWorkgroupsPerDimension,
    };
  }

  /** Validate and plan (every rejection happens here, before any device call). */
  private plan(name: string, bytes: Uint8Array, opts: DecodeOptions): Job {
    checkFormat(opts.format ?? "f32"); // before the work of validation
    return this.planValidated(name, bytes, opts, this.validate(bytes, { profile: opts.profile, shape: opts.shape, limits: opts.limits }));
  }

  private planValidated(name: string, bytes: Uint8Array, opts: DecodeOptions, stream: ValidatedStream): Job {
    return planJob(name, bytes, stream, opts.format ?? "f32", this.limits);
  }

  /** A one-tensor call's job: validated on the device where it can be, else on the host as `plan` does. */
  private planCall(bytes: Uint8Array, opts: DecodeOptions): Job {
    return this.planOnDevice("", bytes, opts) ?? this.plan("", bytes, opts);
  }

  /** The device-validated job of a stream, or undefined where the host must validate it. Throws rejections and bad options. */
  private planOnDevice(name: string, bytes: Uint8Array, opts: DecodeOptions): Job | undefined {
    if (this.validation !== "device") return undefined;
    const format = checkFormat(opts.format ?? "f32");
    const counts = countRecordLeaves(bytes, opts);
    if (counts) return planDeviceJob(name, bytes, counts, format, this.limits);
    const table = counts === undefined ? v1LeafTable(bytes, opts) : null;
    if (table === null) throw rejection(bytes, opts);
    return table ? planDeviceV1Job(name, bytes, opts.shape, table, format, this.limits) : undefined;
  }

  /** Validate and upload once; the lookup tables are built at once on the GPU (submitted, not awaited). */
  prepare(bytes: Uint8Array, opts: DecodeOptions): PreparedContainer {
    const job = this.plan("", bytes, opts);
    // through a staging buffer of its own kept mapped between calls (a mappedAtCreation device
    // buffer costs an allocation and a hidden copy per call); while that one is still being
    // mapped again, through queue.writeBuffer
    const inputs = this.device.createBuffer({ size: job.regionBytes, usage: INPUT_USAGE | USAGE.COPY_DST, label: "sgfp4-prepared-inputs" });
    const staged = this.pool.stagingNow("staging-prepare", job.regionBytes);
    const encoder = this.device.createCommandEncoder();
    if (staged) {
      writeJob(job, staged.range, this.limits);
      staged.buffer.unmap();
      encoder.copyBufferToBuffer(staged.buffer, 0, inputs, 0, job.regionBytes);
    } else {
      const region = new Uint8Array(job.regionBytes);
      writeJob(job, region, this.limits);
      this.device.queue.writeBuffer(inputs, 0, region);
    }
    const tables: Tables = { inputs, inputsBase: 0 };
    if (job.variant === "tree") {
      tables.firstLeaf = this.device.createBuffer({ size: job.firstLeafBytes, usage: USAGE.STORAGE, label: "sgfp4-first-leaf" });
      const pass = encoder.beginComputePass();
      this.kernels.recordPrep(pass, job, tables);
      pass.end();
    }
    this.device.queue.submit([encoder.finish()]);
    staged?.done();
    return new PreparedContainer(job, tables, [inputs, ...(tables.firstLeaf ? [tables.firstLeaf] : [])]);
  }

  /**
   * Record the decode of `prepared` into `output` (usage STORAGE) at `outputOffset` (a multiple
   * of 256) on `pass`. Nothing is submitted; call it many times in one pass to repeat the work.
   */
  encode(pass: GPUComputePassEncoder, prepared: PreparedContainer, output: GPUBuffer, outputOffset = 0): void {
    this.checkOutput(prepared.job, output, outputOffset);
    this.kernels.recordDecode(pass, prepared.job, prepared.tables, output, outputOffset);
  }

  private checkOutput(job: Job, output: GPUBuffer, outputOffset: number): void {
    if (outputOffset % 256 !== 0) throw new Sgfp4Error("INVALID_ARGUMENT", `output offset ${outputOffset} is not a multiple of 256`);
    const need = align(job.outputBytes, 4);
    if (output.size < outputOffset + need) throw new Sgfp4Error("INVALID_ARGUMENT", `output buffer of ${output.size} bytes cannot hold ${need} bytes at offset ${outputOffset}`);
  }

  private newOutput(bytes: number, label: string): GPUBuffer {
    if (bytes > this.device.limits.maxBufferSize) {
      throw new Sgfp4Error("LIMIT_EXCEEDED", `output of ${bytes} bytes exceeds the device's maxBufferSize of ${this.device.limits.maxBufferSize}`);
    }
    return this.device.createBuffer({ size: Math.max(16, align(bytes, 4)), usage: USAGE.STORAGE | USAGE.COPY_SRC | USAGE.COPY_DST, label });
  }

  /**
   * Decode into a GPU buffer that stays on the device (usage must include STORAGE). Without
   * `output`, a new buffer (STORAGE | COPY_SRC | COPY_DST) is created and returned. Resolves when
   * the weights are written.
   */
  async decodeToBuffer(bytes: Uint8Array, opts: DecodeOptions, output?: GPUBuffer, outputOffset = 0): Promise<GPUBuffer> {
    const job = this.planCall(bytes, opts);
    const target = output ?? this.newOutput(job.outputBytes, "sgfp4-output");
    try {
      this.checkOutput(job, target, outputOffset);
      await this.serial.run(() => this.guard(async () => refused(await this.run({ job, output: target, offset: outputOffset }), bytes, opts)));
    } catch (e) {
      if (!output) target.destroy();
      throw e;
    }
    return target;
  }

  /**
   * Decode many tensors (a model) onto the device. Streams are validated on the device (see
   * `validation`), or else in order on the host, each just before its upload (with a
   * `validatorPool`, several ahead on other threads); the GPU uploads and decodes tensor k while
   * the host prepares tensor k + 1; small tensors share a submission. Outputs: one new buffer
   * per tensor, or with `arena` sub-ranges (256-byte aligned,
   * in order) of one new buffer, or of the caller's buffer (usage STORAGE) when `arena` is one.
   *
   * A rejected stream throws its code with a message naming the tensor (the first rejected one in
   * order). Then every tensor before it has been decoded (in the caller's arena, its range is
   * written) and nothing from it on is written (a stream the GPU refused, and tensors after it in
   * its submission, have been uploaded); buffers this call created are destroyed.
   */
  async decodeMany(tensors: readonly TensorInput[], opts: { arena?: boolean | GPUBuffer } = {}): Promise<DecodedTensor[]> {
    const sizes = tensors.map((t) => {
      try {
        return outputBytesOf(t);
      } catch (e) {
        throw naming(t.name, e);
      }
    });
    const created: GPUBuffer[] = [];
    let arena: { buffer: GPUBuffer; offsets: number[] } | undefined;
    if (opts.arena) {
      let at = 0;
      const offsets = sizes.map((n) => ((at = align(at, 256)), (at += align(n, 4)), at - align(n, 4)));
      const given = typeof opts.arena === "object" ? opts.arena : undefined;
      if (given && given.size < at) throw new Sgfp4Error("INVALID_ARGUMENT", `arena of ${given.size} bytes cannot hold the ${at} bytes of these tensors`);
      const buffer = given ?? this.newOutput(Math.max(at, 16), "sgfp4-arena");
      if (!given) created.push(buffer);
      arena = { buffer, offsets };
    }
    try {
      return await this.serial.run(() =>
        this.guard(async () => {
          // device-validated jobs, planned up front (a rejection is kept and thrown in order, so
          // that the first rejected tensor is the one reported); the host validators (and a
          // pool's threads) get only the other tensors
          const onDevice = tensors.map((t): Job | { error: unknown } | undefined => {
            try {
              return this.planOnDevice(t.name, t.bytes, t);
            } catch (error) {
              return { error };
            }
          });
          const validations = new Validations(tensors, this.validate, this.validatorPool, (i) => onDevice[i] === undefined);
          const batch = this.batch();
          const placed: Placed[] = [];
          // the inputs of the tensors after each one, estimated before validation (container,
          // and a leaf table of up to half of it for the usual trees)
          const inputsAfter = tensors.map(() => 0);
          for (let i = tensors.length - 2; i >= 0; i--) inputsAfter[i] = inputsAfter[i + 1]! + Math.ceil(1.5 * tensors[i + 1]!.bytes.length) + 4096;
          let rejected: unknown;
          try {
            for (const [i, t] of tensors.entries()) {
              // the GPU should not idle while this thread validates or waits for a worker
              if (batch.pending >= MIN_SUBMIT_BYTES && onDevice[i] === undefined && !validations.ready(i)) batch.flush();
              let job: Job;
              try {
                const planned = onDevice[i];
                if (planned && "error" in planned) throw planned.error;
                job = planned ?? this.planValidated(t.name, t.bytes, t, await validations.get(i));
              } catch (e) {
                rejected = naming(t.name, e);
                break;
              }
              const output = arena?.buffer ?? this.newOutput(job.outputBytes, `sgfp4-${job.name}`);
              if (!arena) created.push(output);
              const p = { job, output, offset: arena?.offsets[i] ?? 0 };
              placed.push(p);
              await batch.add(p, inputsAfter[i]);
            }
            // also when rejected: the tensors before it are decoded, as documented
            const refusedJob = await batch.finish();
            // the GPU's refusal comes before any the host found: its tensor was added earlier
            if (refusedJob) rejected = naming(refusedJob.name, rejection(refusedJob.bytes, tensors[onDevice.indexOf(refusedJob)]!));
          } finally {
            batch.release();
          }
          if (rejected) throw rejected;
          return placed.map(({ job, output, offset }) => ({ name: job.name, shape: job.shape, format: job.format, buffer: output, offset, byteLength: job.outputBytes }));
        }),
      );
    } catch (e) {
      for (const b of created) b.destroy();
      throw e;
    }
  }

  /** Decode and read back to the host: one copy from the mapped readback buffer into the result. */
  decode(bytes: Uint8Array, opts: DecodeOptions & { format?: "f32" }): Promise<Float32Array>;
  decode(bytes: Uint8Array, opts: DecodeOptions): Promise<DecodedArray>;
  async decode(bytes: Uint8Array, opts: DecodeOptions): Promise<DecodedArray> {
    const job = this.planCall(bytes, opts);
    const n = align(job.outputBytes, 4);
    if (n > this.device.limits.maxBufferSize) throw new Sgfp4Error("LIMIT_EXCEEDED", `output of ${n} bytes exceeds the device's maxBufferSize`);
    const host = await this.serial.run(() =>
      this.guard(async () => {
        const output = this.pool.get("output", n, USAGE.STORAGE | USAGE.COPY_SRC);
        const readback = this.pool.get("readback", n, USAGE.MAP_READ | USAGE.COPY_DST);
        refused(await this.run({ job, output, offset: 0 }, (encoder) => encoder.copyBufferToBuffer(output, 0, readback, 0, n)), bytes, opts);
        return this.mapCopy(readback, n);
      }),
    );
    const elements = job.outputBytes / (job.format === "f32" ? 4 : 2);
    return job.format === "f32" ? new Float32Array(host, 0, elements) : new Uint16Array(host, 0, elements);
  }

  /** Copy `byteLength` bytes of `buffer` (COPY_SRC) from `offset` (a multiple of 4) to the host (one host copy). */
  async readBack(buffer: GPUBuffer, byteLength: number, offset = 0): Promise<Float32Array> {
    const n = align(byteLength, 4);
    const host = await this.serial.run(() =>
      this.guard(async () => {
        const readback = this.pool.get("readback", n, USAGE.MAP_READ | USAGE.COPY_DST);
        const encoder = this.device.createCommandEncoder();
        encoder.copyBufferToBuffer(buffer, offset, readback, 0, n);
        this.device.queue.submit([encoder.finish()]);
        return this.mapCopy(readback, n);
      }),
    );
    return new Float32Array(host, 0, byteLength / 4);
  }

  private async mapCopy(readback: GPUBuffer, n: number): Promise<ArrayBuffer> {
    await readback.mapAsync(1 /* GPUMapMode.READ */, 0, n);
    try {
      return readback.getMappedRange(0, n).slice(0);
    } finally {
      readback.unmap();
    }
  }

  private batch(): Batch {
    return new Batch({ device: this.device, pool: this.pool, kernels: this.kernels, limits: this.limits, upload: this.upload, submitBytes: this.submitBytes });
  }

  /**
   * Upload, prep and decode one job in one submission; `after` records more commands after its
   * decode. Resolves with the job if the GPU refused it (device validation; Batch.finish).
   */
  private async run(p: Placed, after?: (encoder: GPUCommandEncoder) => void): Promise<Job | undefined> {
    const batch = this.batch();
    try {
      await batch.add(p);
      return await batch.finish(after);
    } finally {
      batch.release();
    }
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

  /** Free the pooled buffers (the device stays the caller's). */
  destroy(): void {
    this.pool.destroy();
    this.kernels.clear();
  }
}
