/** The options of a decode checked once, up front, for the fast routes. */
import { checkShape, detectProfile } from "@sgfp4/format";
import { kernelModule } from "./kernel.js";
import type { DecodeOptions } from "./options.js";

/** A decode request whose options are checked (shape, limits: before anything is allocated). */
export interface FastRequest {
  profile: "v1" | "v2";
  rows: number;
  cols: number;
  tilesY: number;
  tilesX: number;
  blockCount: number;
}

/**
 * Check the options as parse() does, in the same order, without parsing the stream. Throws
 * INVALID_ARGUMENT / LIMIT_EXCEEDED (checkShape, before any allocation); null when parse() must
 * run (no kernel, a bad argument it reports, a v1 stream of the wrong size).
 */
export function fastRequest(bytes: Uint8Array, opts: DecodeOptions): FastRequest | null {
  if (typeof opts !== "object" || opts === null || !(bytes instanceof Uint8Array) || !kernelModule()) return null;
  const { tilesY, tilesX, blockCount } = checkShape(opts.shape, opts.limits ?? {});
  const profile = opts.profile === "auto" ? detectProfile(bytes, opts.shape) : opts.profile;
  if (profile !== "v1" && profile !== "v2") return null;
  if (profile === "v1" && bytes.length !== 2056 * blockCount) return null;
  // Memory for the validator grows with B (first leaf per block): only when the stream can hold
  // B record offsets, so a short hostile stream with a huge shape allocates nothing (parse() rejects it).
  if (profile === "v2" && bytes.length < 16 + 4 * blockCount) return null;
  return { profile, rows: opts.shape[0], cols: opts.shape[1], tilesY, tilesX, blockCount };
}
