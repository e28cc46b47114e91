/**
 * The page talks to every decoder through this interface (the conformance backend shape of
 * docs/ARCHITECTURE.md), so the UI does not care whether a decode runs in a worker or on a GPU.
 */
import type { Profile, Shape } from "@sgfp4/format";

export interface DecodeOptions {
  profile: Profile;
  shape: Shape;
}

export type Availability = { ok: true; detail?: string } | { ok: false; reason: string };

export interface DecoderBackend {
  /** short label shown in column headers: "CPU", "WebGPU" */
  readonly name: string;
  /** Can this backend run in this page? Never throws; says why not. */
  available(): Promise<Availability>;
  /** Decode or reject with a DecodeFailure. */
  decode(bytes: Uint8Array, opts: DecodeOptions): Promise<Float32Array>;
  close?(): void;
}

/** A decoder's refusal as the page shows it: the Sgfp4Error code and message. */
export class DecodeFailure extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = "DecodeFailure";
    this.code = code;
  }
}

/** Turn anything thrown by a decoder into a DecodeFailure, keeping an Sgfp4Error's code. */
export function toFailure(e: unknown): DecodeFailure {
  if (e instanceof DecodeFailure) return e;
  if (typeof e === "object" && e !== null) {
    const o = e as { code?: unknown; message?: unknown };
    if (typeof o.code === "string") return new DecodeFailure(o.code, String(o.message ?? o.code));
    if (typeof o.message === "string") return new DecodeFailure("BACKEND_FAILURE", o.message);
  }
  return new DecodeFailure("BACKEND_FAILURE", String(e));
}
