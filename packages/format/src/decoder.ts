/**
 * The one interface every decoder implements (docs/ARCHITECTURE.md, "Decoder interface"), so
 * that the CLI, the conformance suite, the fuzzer and the inspector drive any of them the same
 * way. It lives here, in the package every backend already depends on.
 */
import { Sgfp4Error } from "./errors.js";
import type { Profile, Shape } from "./geometry.js";

export type Availability = { ok: true; detail?: string } | { ok: false; reason: string };

/** Output element formats; f16/bf16 follow P10 in docs/decisions.md (RNE of the exact f32). */
export type OutputFormat = "f32" | "f16" | "bf16";
export const OUTPUT_FORMATS: readonly OutputFormat[] = ["f32", "f16", "bf16"];

export interface DecodeRequest {
  profile: Profile;
  /** (O, I): rows, columns of the output */
  shape: Shape;
  /** default "f32" */
  format?: OutputFormat;
}

/** Float32Array for f32; Uint16Array of f16/bf16 bit patterns for the half formats. */
export type DecodedArray = Float32Array | Uint16Array;

export interface Decoder {
  readonly name: string;
  /** output formats decode() can write; always includes "f32" */
  readonly formats: readonly OutputFormat[];
  /** Can this decoder run here? Never throws; says why not. */
  available(): Promise<Availability>;
  /** Decode, or throw Sgfp4Error with a code of DECISIONS.md section 3. */
  decode(bytes: Uint8Array, req: DecodeRequest): Promise<DecodedArray>;
  close?(): Promise<void>;
}

/**
 * @deprecated use Decoder; kept for one release. Objects written against it may lack
 * `formats` (read them with decoderFormats) and only ever return Float32Array.
 */
export type ConformanceBackend = Omit<Decoder, "formats"> & { readonly formats?: readonly OutputFormat[] };

/** The formats a decoder declares; an object without `formats` (pre-Decoder) writes f32 only. */
export function decoderFormats(d: { readonly formats?: readonly OutputFormat[] }): readonly OutputFormat[] {
  return Array.isArray(d.formats) && d.formats.length > 0 ? d.formats : ["f32"];
}

/** The request's format, refused with INVALID_ARGUMENT when the decoder cannot write it. */
export function requestedFormat(req: DecodeRequest, formats: readonly OutputFormat[], decoder: string): OutputFormat {
  const format = req.format ?? "f32";
  if (!formats.includes(format)) throw new Sgfp4Error("INVALID_ARGUMENT", `decoder ${decoder} writes ${formats.join(", ")}, not ${String(format)}`);
  return format;
}

/** decode() at f32, typed as such; a decoder answering with anything else is a BACKEND_FAILURE. */
export async function decodeFloat32(decoder: Pick<Decoder, "name" | "decode">, bytes: Uint8Array, req: Omit<DecodeRequest, "format">): Promise<Float32Array> {
  const out = await decoder.decode(bytes, { profile: req.profile, shape: req.shape, format: "f32" });
  if (!(out instanceof Float32Array)) throw new Sgfp4Error("BACKEND_FAILURE", `decoder ${decoder.name} returned ${Object.prototype.toString.call(out)} for an f32 request`);
  return out;
}
