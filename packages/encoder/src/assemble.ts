/**
 * A tensor's container and statistics from its jobs' results, taken one job at a time in row
 * order: each job's records (or v1 payloads) are kept, its decode and summaries are not, so a
 * banded encode holds the container and a few bands, never the tensor.
 */
import { LAYOUT_NAMES, V1_PAYLOAD_BYTES, v2Prefix, writeV1, type Shape } from "@sgfp4/format";
import { COUNT_CLIPPED, COUNT_FP4_WEIGHTS, COUNT_LAYOUTS, COUNT_LEAVES, COUNT_T158_WEIGHTS, type EncodedRows } from "./blocks.js";
import type { TensorStats } from "./tensor.js";

export class TensorAssembly {
  /** v2: each job's records (back to back, as the stream holds them) and every record's length; v1: the jobs' headers and payloads */
  private readonly recordRuns: Uint8Array[] = [];
  private readonly recordLengths: number[] = [];
  private readonly v1Parts: { headers: Int32Array; payloads: Uint8Array }[] = [];
  // integer counts: the same totals in any order; the sums per block or tile row in raster
  // order, so the same numbers whatever the job split
  private counts = new Float64Array(0);
  private lweSum = 0;
  private sig = 0;
  private err = 0;
  private maxAbsError = 0;

  constructor(
    readonly shape: Shape,
    readonly profile: "v1" | "v2",
  ) {}

  /** The next job's result (jobs in row order). */
  add(p: EncodedRows): void {
    if (this.profile === "v1") this.v1Parts.push({ headers: p.v1Headers, payloads: p.bytes });
    else {
      this.recordRuns.push(p.bytes);
      for (const length of p.recordBytes) this.recordLengths.push(length);
    }
    if (this.counts.length === 0) this.counts = new Float64Array(p.counts.length);
    if (p.maxAbsError > this.maxAbsError) this.maxAbsError = p.maxAbsError;
    p.counts.forEach((c, k) => (this.counts[k] = this.counts[k]! + c));
    for (const x of p.lweArea) this.lweSum += x;
    for (let t = 0; t < p.signalError.length; t += 2) {
      this.sig += p.signalError[t]!;
      this.err += p.signalError[t + 1]!;
    }
  }

  /**
   * The container of every job added, as consecutive pieces (v2: the header and offset table,
   * then the jobs' records as they came; nothing copied), to be written or hashed in order.
   */
  pieces(): Uint8Array[] {
    if (this.profile === "v2") return [v2Prefix(this.shape, this.recordLengths), ...this.recordRuns];
    return [this.v1Bytes()];
  }

  private v1Bytes(): Uint8Array {
    const blocks = this.v1Parts.flatMap((p) =>
      Array.from({ length: p.headers.length / 4 }, (_, b) => {
        const h = p.headers.subarray(4 * b, 4 * b + 4);
        return { scaleBits: h[0]!, biasBits: h[1]!, mode: h[2] as 0 | 1, errorHint: h[3] === 1, payload: p.payloads.subarray(V1_PAYLOAD_BYTES * b, V1_PAYLOAD_BYTES * (b + 1)) };
      }),
    );
    return writeV1({ shape: this.shape, blocks });
  }

  /** The tensor's statistics (bytes: the container's length). */
  stats(bytes: number): TensorStats {
    const { counts, sig, err, profile } = this;
    const weights = this.shape[0] * this.shape[1];
    const modeWeights: [number, number] = [counts[COUNT_FP4_WEIGHTS] ?? 0, counts[COUNT_T158_WEIGHTS] ?? 0];
    const area = modeWeights[0] + modeWeights[1];
    const layouts: Record<string, number> = {};
    if (profile === "v2") {
      LAYOUT_NAMES.forEach((name, layout) => {
        if (counts[COUNT_LAYOUTS + layout]) layouts[name] = counts[COUNT_LAYOUTS + layout]!;
      });
    }
    const leafSizes: Record<string, number> = {};
    for (let k = 0; k < 5; k++) if (counts[COUNT_LEAVES + k]) leafSizes[String(4 << k)] = counts[COUNT_LEAVES + k]!;
    return {
      profile,
      weights,
      bytes,
      bitsPerWeight: (bytes * 8) / weights,
      snrDb: err === 0 ? Infinity : sig === 0 ? -Infinity : 10 * Math.log10(sig / err),
      mse: err / weights,
      lwe: this.lweSum / area,
      modeWeights,
      layouts,
      leafSizes,
      clipped: counts[COUNT_CLIPPED]!,
      maxAbsError: this.maxAbsError,
    };
  }
}
