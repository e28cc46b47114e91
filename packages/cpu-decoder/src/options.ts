import { OUTPUT_FORMATS, Sgfp4Error, parse, type Container, type OutputFormat } from "@sgfp4/format";

export type { DecodedArray, OutputFormat } from "@sgfp4/format";

export interface DecodeOptions {
  profile: "v1" | "v2" | "auto";
  shape: readonly [number, number];
  limits?: { maxOutputBytes?: number };
  /**
   * "f32" (default): a Float32Array. "f16" / "bf16": a Uint16Array of half-precision bit patterns,
   * each the round-to-nearest-even conversion of the exact f32 result (docs/decisions.md P10).
   */
  format?: OutputFormat;
}

/** The requested output format; INVALID_ARGUMENT for anything else. */
export function formatOf(opts: DecodeOptions): OutputFormat {
  const format = (typeof opts === "object" && opts !== null ? opts.format : undefined) ?? "f32";
  if (!OUTPUT_FORMATS.includes(format)) throw new Sgfp4Error("INVALID_ARGUMENT", `format must be one of ${OUTPUT_FORMATS.join(", ")}, got ${String(format)}`);
  return format;
}

/** parse() validates the whole stream and the limits; nothing is allocated for the output before it returns. */
export function parseForDecode(bytes: Uint8Array, opts: DecodeOptions): Container {
  if (typeof opts !== "object" || opts === null) throw new Sgfp4Error("INVALID_ARGUMENT", "options { profile, shape } are required");
  return parse(bytes, { profile: opts.profile, shape: opts.shape, ...(opts.limits ? { limits: opts.limits } : {}) });
}

/** Anything thrown that is not already an Sgfp4Error (a wasm trap, an allocation failure) is the backend's fault. */
export function asSgfp4Error(e: unknown, what: string): Sgfp4Error {
  if (e instanceof Sgfp4Error) return e;
  const detail = e instanceof Error ? e.message : String(e);
  return new Sgfp4Error("BACKEND_FAILURE", `${what}: ${detail}`);
}
