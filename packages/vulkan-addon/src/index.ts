/**
 * @sgfp4/vulkan-addon: SGFP4 decode on Vulkan compute through a Node-API addon.
 *
 * The wrapper validates with @sgfp4/format first (so errors and their order match the other
 * backends and no output is allocated for a bad stream); the native side parses and checks the
 * stream again on its own, because it must be safe even when called directly.
 */
import { fileURLToPath } from "node:url";
import nodeGypBuild from "node-gyp-build";
import { Sgfp4Error, isErrorCode, parse, requestedFormat, type Decoder, type Limits, type Profile, type Shape } from "@sgfp4/format";

export interface DecodeOptions {
  profile: Profile | "auto";
  shape: Shape;
  limits?: Limits;
  /**
   * Vulkan device: an index or a case-insensitive name substring. Default: the environment
   * variable SGFP4_VULKAN_DEVICE, else the first discrete GPU, then integrated, then CPU.
   */
  device?: string;
}

export interface VulkanInfo {
  index: number;
  name: string;
  type: "discrete" | "integrated" | "virtual" | "cpu" | "other";
  vendorId: number;
  deviceId: number;
  apiVersion: string;
  driverVersion: string;
  driverName: string;
  driverInfo: string;
  loader: string;
  selectedBy: string;
  /** every device the loader lists, "index: name (type)" */
  devices: string[];
  limits: {
    maxStorageBufferRange: number;
    maxMemoryAllocationSize: number;
    minStorageBufferOffsetAlignment: number;
    maxComputeWorkGroupCount: [number, number, number];
    maxComputeWorkGroupInvocations: number;
    maxComputeSharedMemorySize: number;
    timestampPeriodNs: number;
    timestampValidBits: number;
    deviceLocalHeapBytes: number;
  };
}

export interface BenchmarkOptions extends DecodeOptions {
  reps?: number;
  warmup?: number;
}

/** GPU-timestamp figures; the output stays on the device during the timed region. */
export interface BenchmarkResult {
  device: string;
  outputBytes: number;
  streamBytes: number;
  /** leaf table + per-block index, read by the kernel in addition to the stream */
  leafTableBytes: number;
  leafCount: number;
  dispatches: number;
  /** per decode, each sample the mean of `batch` runs back to back */
  decodeNs: number[];
  /** the first shader version (no restrict, loads interleaved with stores), for comparison */
  decodeBaselineNs: number[];
  batch: number;
  copyBufferNs: number[];
  copyShaderNs: number[];
  /** medians */
  decodeMedianNs: number;
  copyMedianNs: number;
  /** (stream bytes read + float32 bytes written) / median decode time, GB/s (1e9) */
  decodeGBps: number;
  /** (output bytes read + written) / median time of the faster copy (vkCmdCopyBuffer or shader), GB/s */
  copyGBps: number;
  /** decodeGBps / copyGBps */
  ratioToCopy: number;
}

interface NativeAddon {
  parse(bytes: Uint8Array, profile: Profile, rows: number, cols: number, options?: object): { leafTable: Uint32Array; blockFirstLeaf: Uint32Array; leafCount: number };
  decodeInto(bytes: Uint8Array, profile: Profile, rows: number, cols: number, out: Float32Array, options?: object): void;
  /** Validates synchronously (throws), then decodes on a libuv pool thread; out null = a new array. */
  decodeAsync(bytes: Uint8Array, profile: Profile, rows: number, cols: number, out: Float32Array | null, options?: object): Promise<Float32Array>;
  info(options?: object): VulkanInfo;
  bench(bytes: Uint8Array, profile: Profile, rows: number, cols: number, options?: object): Omit<BenchmarkResult, "device" | "decodeMedianNs" | "copyMedianNs" | "decodeGBps" | "copyGBps" | "ratioToCopy">;
}

const packageRoot = fileURLToPath(new URL("..", import.meta.url));
let loaded: { addon: NativeAddon } | { error: Sgfp4Error } | undefined;

/** The native addon (build/Release or prebuilds/linux-x64). Throws BACKEND_FAILURE when absent. */
export function nativeAddon(): NativeAddon {
  if (!loaded) {
    try {
      loaded = { addon: nodeGypBuild(packageRoot) as NativeAddon };
    } catch (e) {
      loaded = {
        error: withReason(
          new Sgfp4Error(
            "BACKEND_FAILURE",
            `the native addon is not built for ${process.platform}-${process.arch} (${(e as Error).message.split("\n")[0]}). ` +
              "Build it with `pnpm --filter @sgfp4/vulkan-addon build` (needs g++, make, python3, glslc and libvulkan-dev).",
          ),
          "addon-not-built",
        ),
      };
    }
  }
  if ("error" in loaded) throw loaded.error;
  return loaded.addon;
}

function withReason(e: Sgfp4Error, reason: string): Sgfp4Error {
  Object.defineProperty(e, "reason", { value: reason, enumerable: true });
  return e;
}

/** Native errors carry `code` (and `reason` for backend failures): turn them into Sgfp4Error. */
export function toSgfp4Error(e: unknown): unknown {
  const err = e as { code?: unknown; message?: unknown; reason?: unknown };
  if (err && typeof err.code === "string" && isErrorCode(err.code) && !(e instanceof Sgfp4Error)) {
    const prefix = `${err.code}: `;
    const msg = String(err.message ?? "");
    const out = new Sgfp4Error(err.code, msg.startsWith(prefix) ? msg.slice(prefix.length) : msg);
    return typeof err.reason === "string" ? withReason(out, err.reason) : out;
  }
  return e;
}

function native<T>(f: (a: NativeAddon) => T): T {
  const addon = nativeAddon();
  try {
    return f(addon);
  } catch (e) {
    throw toSgfp4Error(e);
  }
}

function nativeOptions(o: { limits?: Limits; device?: string }): { maxOutputBytes?: number; device?: string } {
  return {
    ...(o.limits?.maxOutputBytes !== undefined ? { maxOutputBytes: o.limits.maxOutputBytes } : {}),
    ...(o.device !== undefined ? { device: o.device } : {}),
  };
}

/** Decode into `out` (length O*I). Validates with @sgfp4/format, then decodes on the GPU. */
export function decodeInto(bytes: Uint8Array, opts: DecodeOptions, out: Float32Array): Float32Array {
  const container = parse(bytes, { profile: opts.profile, shape: opts.shape, ...(opts.limits ? { limits: opts.limits } : {}) });
  const [rows, cols] = container.shape;
  if (!(out instanceof Float32Array) || out.length !== rows * cols) {
    throw new Sgfp4Error("INVALID_ARGUMENT", `out must be a Float32Array of ${rows * cols} elements`);
  }
  native((a) => a.decodeInto(bytes, container.profile, rows, cols, out, nativeOptions(opts)));
  return out;
}

/** Decode to a new Float32Array of shape (O, I), row-major. */
export function decode(bytes: Uint8Array, opts: DecodeOptions): Float32Array {
  const container = parse(bytes, { profile: opts.profile, shape: opts.shape, ...(opts.limits ? { limits: opts.limits } : {}) });
  const [rows, cols] = container.shape;
  const out = new Float32Array(rows * cols);
  native((a) => a.decodeInto(bytes, container.profile, rows, cols, out, nativeOptions(opts)));
  return out;
}

/**
 * Like decodeInto, without blocking the event loop: validation (@sgfp4/format, then the native
 * parse) runs now, and the upload, GPU submission, wait and readback run on a libuv pool
 * thread. The input bytes are copied, so `bytes` may be reused at once. `out` is written only
 * when the promise settles (the worker decodes into its own memory, copied into `out` on the JS
 * thread), so reading it before then sees the old contents. Errors reject with Sgfp4Error.
 */
export async function decodeIntoAsync(bytes: Uint8Array, opts: DecodeOptions, out: Float32Array): Promise<Float32Array> {
  const container = parse(bytes, { profile: opts.profile, shape: opts.shape, ...(opts.limits ? { limits: opts.limits } : {}) });
  const [rows, cols] = container.shape;
  if (!(out instanceof Float32Array) || out.length !== rows * cols) {
    throw new Sgfp4Error("INVALID_ARGUMENT", `out must be a Float32Array of ${rows * cols} elements`);
  }
  const pending = native((a) => a.decodeAsync(bytes, container.profile, rows, cols, out, nativeOptions(opts)));
  try {
    return await pending;
  } catch (e) {
    throw toSgfp4Error(e);
  }
}

/**
 * Decode to a new Float32Array of shape (O, I) without blocking the event loop: validation runs
 * now, the GPU round trip on a libuv pool thread (at most UV_THREADPOOL_SIZE decodes run at
 * once; concurrent calls share the device and serialize only their queue submissions). The
 * result's memory is allocated by the addon and handed over without a copy.
 */
export async function decodeAsync(bytes: Uint8Array, opts: DecodeOptions): Promise<Float32Array> {
  const container = parse(bytes, { profile: opts.profile, shape: opts.shape, ...(opts.limits ? { limits: opts.limits } : {}) });
  const [rows, cols] = container.shape;
  const pending = native((a) => a.decodeAsync(bytes, container.profile, rows, cols, null, nativeOptions(opts)));
  try {
    return await pending;
  } catch (e) {
    throw toSgfp4Error(e);
  }
}

/** The device, driver and limits in use. Throws BACKEND_FAILURE (with `.reason`) without one. */
export function info(opts: { device?: string } = {}): VulkanInfo {
  return native((a) => a.info(nativeOptions(opts)));
}

/** Can this machine decode with Vulkan? Never throws. */
export function availability(opts: { device?: string } = {}): { ok: true; detail: string } | { ok: false; reason: string } {
  try {
    const i = info(opts);
    return { ok: true, detail: `${i.name} (${i.type}; ${i.driverName || "driver"} ${i.driverInfo})` };
  } catch (e) {
    return { ok: false, reason: e instanceof Error ? e.message : String(e) };
  }
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/**
 * Benchmark: uploads once, then times (GPU timestamps) the decode with the output kept on the
 * device, against vkCmdCopyBuffer and a copy shader of the same output size in the same context.
 * The native parser validates the stream; `limits.maxOutputBytes` may be raised (up to 2^40).
 */
export function benchmark(bytes: Uint8Array, opts: BenchmarkOptions): BenchmarkResult {
  if (opts.profile === "auto") throw new Sgfp4Error("INVALID_ARGUMENT", "benchmark needs profile v1 or v2");
  const [rows, cols] = opts.shape;
  const r = native((a) =>
    a.bench(bytes, opts.profile as Profile, rows, cols, { ...nativeOptions(opts), ...(opts.reps ? { reps: opts.reps } : {}), ...(opts.warmup !== undefined ? { warmup: opts.warmup } : {}) }),
  );
  const decodeMedianNs = median(r.decodeNs);
  const copyMedianNs = Math.min(median(r.copyBufferNs), median(r.copyShaderNs));
  const decodeGBps = (r.streamBytes + r.outputBytes) / decodeMedianNs;
  const copyGBps = (2 * r.outputBytes) / copyMedianNs;
  return { device: info(opts).name, ...r, decodeMedianNs, copyMedianNs, decodeGBps, copyGBps, ratioToCopy: decodeGBps / copyGBps };
}

export type { Availability, ConformanceBackend, Decoder } from "@sgfp4/format";

/** The decoder "vulkan". available() says why not: addon not built, no loader, no device. */
export function createDecoder(opts: { device?: string } = {}): Decoder {
  const formats = ["f32"] as const;
  return {
    name: "vulkan",
    formats,
    available: async () => availability(opts),
    decode: async (bytes, o) => {
      requestedFormat(o, formats, "vulkan");
      return decodeAsync(bytes, { profile: o.profile, shape: o.shape, ...opts });
    },
  };
}

/** @deprecated use createDecoder; kept for one release. */
export const createConformanceBackend = createDecoder;
