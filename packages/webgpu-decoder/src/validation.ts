/**
 * The streams of one `decodeMany` call, validated in tensor order: inline on the calling thread
 * (a StreamValidator, the browser default), or ahead of use on a ValidatorPool (Node: worker
 * threads, node.ts), which keeps `concurrency` validations in flight while the caller uploads
 * and the GPU decodes the tensors before them. Tensors are independent, so any order of work
 * gives the same tables; results are consumed in order, so the first rejected tensor is the one
 * reported.
 */
import type { Limits, Profile, Shape } from "@sgfp4/format";
import type { StreamValidator, ValidatedStream } from "./job.js";

export interface ValidationRequest {
  profile: Profile | "auto";
  shape: Shape;
  limits?: Limits;
}

/** Validation off the calling thread: the same result (or Sgfp4Error) as a StreamValidator. */
export interface ValidatorPool {
  /** validations worth keeping in flight at once */
  readonly concurrency: number;
  validate(bytes: Uint8Array, opts: ValidationRequest): Promise<ValidatedStream>;
}

export class Validations {
  private readonly started: (Promise<ValidatedStream> | undefined)[] = [];
  private readonly settled: boolean[] = [];
  private launched = 0;

  constructor(
    private readonly tensors: readonly { bytes: Uint8Array; profile: Profile | "auto"; shape: Shape; limits?: Limits }[],
    private readonly validator: StreamValidator,
    private readonly pool?: ValidatorPool,
    /** which tensors it validates (default all); the others are never asked for */
    private readonly wanted: (i: number) => boolean = () => true,
  ) {
    this.fill(0);
  }

  /** Whether `get(i)` has its result already (inline validation never has: it runs in get). */
  ready(i: number): boolean {
    return this.settled[i] === true;
  }

  /** The validated stream of tensor i (throws its Sgfp4Error). Call with i = 0, 1, ... in order. */
  async get(i: number): Promise<ValidatedStream> {
    const t = this.tensors[i]!;
    if (!this.pool) return this.validator(t.bytes, request(t));
    this.fill(i);
    const result = this.started[i]!;
    this.started[i] = undefined; // the table is the caller's now
    return result;
  }

  private fill(from: number): void {
    const pool = this.pool;
    if (!pool) return;
    const until = Math.min(this.tensors.length, from + Math.max(1, pool.concurrency));
    for (; this.launched < until; this.launched++) {
      const i = this.launched;
      if (!this.wanted(i)) continue;
      const t = this.tensors[i]!;
      const p = pool.validate(t.bytes, request(t));
      // results not taken (a call that stopped at an earlier rejection) must not surface as unhandled
      p.then(
        () => (this.settled[i] = true),
        () => (this.settled[i] = true),
      );
      this.started[i] = p;
    }
  }
}

const request = (t: ValidationRequest): ValidationRequest => ({ profile: t.profile, shape: t.shape, ...(t.limits ? { limits: t.limits } : {}) });
