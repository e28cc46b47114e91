/**
 * @sgfp4/vulkan-addon: SGFP4 decode on Vulkan compute through a Node-API addon.
 *
 * The native side validates the stream (its parser applies the same rules in the same order as
 * @sgfp4/format) and builds the leaf table, once per call. Only when it rejects a stream does the
 * wrapper run @sgfp4/format's parse, to throw that reference parser's detailed error.
 */
import { Sgfp4Error, checkShape, detectProfile, isErrorCode, parse } from "@sgfp4/format";
import type { Availability, DecodedArray, Decoder, Limits, OutputFormat, Profile, Shape } from "@sgfp4/format";
import { nativeAddon, type NativeOptions } from "./native.js";

export { nativeAddon } from "./native.js";
export type { Availability, ConformanceBackend, DecodedArray, Decoder, DecodeRequest, OutputFormat } from "@sgfp4/format";

export interface DecodeOptions {
  profile: Profile | "auto";
  shape: Shape;
  limits?: Limits;
  /**
   * Vulkan device: an index or a case-insensitive name substring. Default: the environment
   * variable SGFP4_VULKAN_DEVICE, else the first discrete GPU, then integrated, then CPU.
   */
  device?: string;
  /** "f32" (default, Float32Array), or "f16" / "bf16" (Uint16Array of bit patterns; P10). */
  format?: OutputFormat;
}
type F32Options = DecodeOptions & { format?: "f32" };

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
  /** output formats this device can write ("f16" and "bf16" need storageBuffer16BitAccess) */
  formats: OutputFormat[];
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

const CALL_CODES = new Set(["INVALID_ARGUMENT", "LIMIT_EXCEEDED", "BACKEND_FAILURE"]);

/**
 * The error to throw for a native failure: for a rejected stream, @sgfp4/format's own error
 * (same code, the reference parser's detail); otherwise the native error as Sgfp4Error.
 */
function detailedError(e: unknown, bytes: Uint8Array, opts: DecodeOptions): unknown {
  const err = toSgfp4Error(e);
  if (err instanceof Sgfp4Error && !CALL_CODES.has(err.code)) {
    try {
      parse(bytes, { profile: opts.profile, shape: opts.shape, ...(opts.limits ? { limits: opts.limits } : {}) });
    } catch (reference) {
      if (reference instanceof Sgfp4Error) return reference;
    }
  }
  return err;
}

interface NativeCall {
  profile: Profile;
  rows: number;
  cols: number;
  options: NativeOptions;
}

/** Checks what the native side cannot see (types, "auto"); the stream is left to the native parser. */
function nativeCall(bytes: Uint8Array, opts: DecodeOptions): NativeCall {
  if (!(bytes instanceof Uint8Array)) throw new Sgfp4Error("INVALID_ARGUMENT", "stream must be a Uint8Array");
  checkShape(opts.shape, opts.limits);
  const profile = opts.profile === "auto" ? detectProfile(bytes, opts.shape) : opts.profile;
  if (profile !== "v1" && profile !== "v2") throw new Sgfp4Error("INVALID_ARGUMENT", `profile must be v1, v2 or auto, got ${String(opts.profile)}`);
  const options: NativeOptions = {
    ...(opts.limits?.maxOutputBytes !== undefined ? { maxOutputBytes: opts.limits.maxOutputBytes } : {}),
    ...(opts.device !== undefined ? { device: opts.device } : {}),
    ...(opts.format !== undefined ? { format: opts.format } : {}),
  };
  return { profile, rows: opts.shape[0], cols: opts.shape[1], options };
}

function run<T>(bytes: Uint8Array, opts: DecodeOptions, f: (c: NativeCall) => T): T {
  const call = nativeCall(bytes, opts);
  nativeAddon(); // BACKEND_FAILURE (addon not built) as is
  try {
    return f(call);
  } catch (e) {
    throw detailedError(e, bytes, opts);
  }
}

/** Decode to a new array of shape (O, I), row-major: Float32Array for f32, Uint16Array for f16 / bf16. */
export function decode(bytes: Uint8Array, opts: F32Options): Float32Array;
export function decode(bytes: Uint8Array, opts: DecodeOptions): DecodedArray;
export function decode(bytes: Uint8Array, opts: DecodeOptions): DecodedArray {
  return run(bytes, opts, (c) => nativeAddon().decode(bytes, c.profile, c.rows, c.cols, c.options));
}

/** Decode into `out` (O*I elements: Float32Array for f32, Uint16Array for f16 / bf16). */
export function decodeInto<T extends DecodedArray>(bytes: Uint8Array, opts: DecodeOptions, out: T): T {
  run(bytes, opts, (c) => nativeAddon().decodeInto(bytes, c.profile, c.rows, c.cols, out, c.options));
  return out;
}

/**
 * Decode to a new array without blocking the event loop: validation runs now, the GPU round trip
 * on a libuv pool thread (at most UV_THREADPOOL_SIZE decodes run at once; concurrent calls share
 * the device and serialize only their queue submissions). The input is copied, so `bytes` may be
 * reused at once. Errors reject with Sgfp4Error.
 */
export function decodeAsync(bytes: Uint8Array, opts: F32Options): Promise<Float32Array>;
export function decodeAsync(bytes: Uint8Array, opts: DecodeOptions): Promise<DecodedArray>;
export async function decodeAsync(bytes: Uint8Array, opts: DecodeOptions): Promise<DecodedArray> {
  const pending = run(bytes, opts, (c) => nativeAddon().decodeAsync(bytes, c.profile, c.rows, c.cols, null, c.options));
  try {
    return await pending;
  } catch (e) {
    throw toSgfp4Error(e);
  }
}

/**
 * Like decodeAsync, into `out`. `out` is written only when the promise settles (the GPU's
 * readback is copied into it on the JS thread), so reading it before then sees the old contents;
 * if `out` is detached meanwhile it rejects INVALID_ARGUMENT.
 */
export async function decodeIntoAsync<T extends DecodedArray>(bytes: Uint8Array, opts: DecodeOptions, out: T): Promise<T> {
  const pending = run(bytes, opts, (c) => nativeAddon().decodeAsync(bytes, c.profile, c.rows, c.cols, out, c.options));
  try {
    return (await pending) as T;
  } catch (e) {
    throw toSgfp4Error(e);
  }
}

function native<T>(f: (a: ReturnType<typeof nativeAddon>) => T): T {
  const addon = nativeAddon();
  try {
    return f(addon);
  } catch (e) {
    throw toSgfp4Error(e);
  }
}

/** The device, driver and limits in use. Throws BACKEND_FAILURE (with `.reason`) without one. */
export function info(opts: { device?: string } = {}): VulkanInfo {
  return native((a) => a.info(opts.device !== undefined ? { device: opts.device } : {}));
}

/** Frees the staging, readback and device buffers kept between decodes (they are reused otherwise). */
export function releaseBuffers(opts: { device?: string } = {}): void {
  native((a) => a.trim(opts.device !== undefined ? { device: opts.device } : {}));
}

/** Can this machine decode with Vulkan? Never throws. */
export function availability(opts: { device?: string } = {}): Availability {
  try {
    const i = info(opts);
    return { ok: true, detail: `${i.name} (${i.type}; ${i.driverName || "driver"} ${i.driverInfo})` };
  } catch (e) {
    return { ok: false, reason: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * The decoder "vulkan" (decodes with decodeAsync). available() says why not: addon not built, no
 * loader, no device. close() frees the buffers kept between decodes.
 */
export function createDecoder(opts: { device?: string } = {}): Decoder {
  return {
    name: "vulkan",
    get formats(): readonly OutputFormat[] {
      return availability(opts).ok ? info(opts).formats : ["f32"];
    },
    available: async () => availability(opts),
    decode: (bytes, req) => decodeAsync(bytes, { profile: req.profile, shape: req.shape, ...(req.format ? { format: req.format } : {}), ...opts }),
    close: async () => {
      if (availability(opts).ok) releaseBuffers(opts);
    },
  };
}

/** @deprecated use createDecoder; kept for one release. */
export const createConformanceBackend = createDecoder;
