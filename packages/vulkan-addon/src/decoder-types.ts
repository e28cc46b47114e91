/**
 * The shared Decoder interface (BRIEF: @sgfp4/format's decoder.ts). Declared here until that
 * module is on main; then these become re-exports of @sgfp4/format's types.
 */
import type { Availability, Profile, Shape } from "@sgfp4/format";

export type OutputFormat = "f32" | "f16" | "bf16";
export type DecodedArray = Float32Array | Uint16Array;
export interface DecodeRequest {
  profile: Profile;
  shape: Shape;
  format?: OutputFormat;
}
export interface Decoder {
  readonly name: string;
  readonly formats: readonly OutputFormat[];
  available(): Promise<Availability>;
  decode(bytes: Uint8Array, req: DecodeRequest): Promise<DecodedArray>;
  close?(): Promise<void>;
}
