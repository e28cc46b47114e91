/**
 * Output formats (BRIEF shared interface; to be imported from @sgfp4/format once it exports them).
 * f16 and bf16 values are written as their bit patterns in a Uint16Array (host) or two per 32-bit
 * word, little end first (GPU), each the round-to-nearest-even conversion of the exact f32 result
 * (docs/decisions.md P10).
 */
export type OutputFormat = "f32" | "f16" | "bf16";
export const OUTPUT_FORMATS: readonly OutputFormat[] = ["f32", "f16", "bf16"];
export type DecodedArray = Float32Array | Uint16Array;
