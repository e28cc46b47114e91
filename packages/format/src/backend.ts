/**
 * The one interface every decoder backend implements (docs/ARCHITECTURE.md), so that the
 * conformance runner, the CLI and the fuzzer drive any of them the same way. It lives here,
 * in the package every backend already depends on.
 */
import type { Profile, Shape } from "./geometry.js";

export type Availability = { ok: true; detail?: string } | { ok: false; reason: string };

export interface DecodeRequest {
  profile: Profile;
  /** (O, I): rows, columns of the output */
  shape: Shape;
}

export interface ConformanceBackend {
  readonly name: string;
  /** Can this backend run here? Never throws; says why not. */
  available(): Promise<Availability>;
  /** Decode, or throw Sgfp4Error with a code of DECISIONS.md section 3. */
  decode(bytes: Uint8Array, opts: DecodeRequest): Promise<Float32Array>;
  close?(): Promise<void>;
}
