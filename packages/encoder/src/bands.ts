/**
 * A tensor as bands of rows: whole in memory (views of one array) or read from a file a band at
 * a time. The encode passes (the tensor's power, the rd policy's robust power, rate-control
 * statistics, the encode itself) each read the rows in order, so a banded encode holds a few
 * bands at a time; every result is defined by the rows' values alone, whatever the bands.
 */
import { MACROBLOCK, Sgfp4Error, type Shape } from "@sgfp4/format";
import { encodeBlockRows, statsBlockRows, tilesOf, type BlockJob, type EncodedRows } from "./blocks.js";
import type { WorkerPool } from "./parallel.js";
import { ExponentCounts, PowerSum } from "./power.js";

/**
 * rows [row0, row0 + rowCount) of a row-major float32 tensor: rowCount * columns values, in an
 * array the encoder may keep and hand to a worker until it asks for another band. `reuse`, when
 * given, is an earlier band (or decode) the encoder is done with: the source may fill its first
 * rowCount * columns values and return that view instead of a new array (no garbage per band).
 */
export type RowSource = (row0: number, rowCount: number, reuse?: Float32Array) => Float32Array | Promise<Float32Array>;

export interface TensorRows {
  shape: Shape;
  read: RowSource;
  /** whether read() returns arrays of its own (a worker pool may then take them without a copy) */
  owned: boolean;
  /** rows per read in the passes over the whole tensor */
  passRows: number;
  /** macroblock rows per job [t0, t1), given the pool (or none) */
  jobRanges: (pool: WorkerPool | undefined) => [number, number][];
}

export function checkShape(shape: Shape): void {
  const [rows, cols] = shape;
  if (!Number.isSafeInteger(rows) || !Number.isSafeInteger(cols) || rows < 1 || cols < 1) throw new Sgfp4Error("INVALID_ARGUMENT", `shape must be [O, I] with integers >= 1, got [${rows}, ${cols}]`);
}

/** Macroblock rows split into n chunks as evenly as floor division gives. */
function evenRanges(tilesY: number, chunks: number): [number, number][] {
  const n = Math.max(1, Math.min(tilesY, chunks));
  const out: [number, number][] = [];
  for (let c = 0; c < n; c++) {
    const t0 = Math.floor((c * tilesY) / n);
    const t1 = Math.floor(((c + 1) * tilesY) / n);
    if (t1 > t0) out.push([t0, t1]);
  }
  return out;
}

/**
 * A tensor in memory: views of `data`. Jobs as before banded reading: four per thread with a
 * pool (the pool copies a job's rows when a worker takes it), else one per macroblock row.
 */
export function arrayRows(data: Float32Array, shape: Shape): TensorRows {
  checkShape(shape);
  const [rows, cols] = shape;
  if (data.length !== rows * cols) throw new Sgfp4Error("INVALID_ARGUMENT", `tensor has ${data.length} values, shape [${rows}, ${cols}] needs ${rows * cols}`);
  const { tilesY } = tilesOf(shape);
  return {
    shape,
    read: (r0, n) => data.subarray(r0 * cols, (r0 + n) * cols),
    owned: false,
    passRows: rows,
    jobRanges: (pool) => evenRanges(tilesY, pool ? pool.threads * 4 : tilesY),
  };
}

/** A band's target size: about 2 MiB of float32 (at least one macroblock row). */
export const BAND_VALUES = 1 << 19;

/** Macroblock rows per band of a tensor with `cols` columns. */
export function bandTiles(cols: number): number {
  return Math.max(1, Math.floor(BAND_VALUES / (MACROBLOCK * cols)));
}

/**
 * A tensor read band by band (`bandRows`, a multiple of 64: the rows of one job and of one pass
 * read; default about BAND_VALUES values). With a pool, jobs are at most a quarter of a thread's
 * share, so the threads stay busy to the end.
 */
export function bandedRows(read: RowSource, shape: Shape, bandRows?: number): TensorRows {
  checkShape(shape);
  const [rows, cols] = shape;
  if (bandRows !== undefined && !(Number.isSafeInteger(bandRows) && bandRows > 0 && bandRows % MACROBLOCK === 0)) throw new Sgfp4Error("INVALID_ARGUMENT", `bandRows must be a positive multiple of ${MACROBLOCK}, got ${bandRows}`);
  const tiles = bandRows !== undefined ? bandRows / MACROBLOCK : bandTiles(cols);
  const { tilesY } = tilesOf(shape);
  const checked: RowSource = async (r0, n, reuse) => {
    const v = await read(r0, n, reuse);
    if (!(v instanceof Float32Array) || v.length !== n * cols) throw new Sgfp4Error("INVALID_ARGUMENT", `readRows(${r0}, ${n}) gave ${v instanceof Float32Array ? `${v.length} values` : "no Float32Array"}, rows of [${rows}, ${cols}] need ${n * cols}`);
    return v;
  };
  return {
    shape,
    read: checked,
    owned: true,
    passRows: tiles * MACROBLOCK,
    jobRanges: (pool) => {
      const perJob = pool ? Math.max(1, Math.min(tiles, Math.ceil(tilesY / (pool.threads * 4)))) : tiles;
      const out: [number, number][] = [];
      for (let t = 0; t < tilesY; t += perJob) out.push([t, Math.min(t + perJob, tilesY)]);
      return out;
    },
  };
}

/** Calls `each` with every band of the tensor, in row order (one band held at a time, its array reused). */
export async function forEachBand(src: TensorRows, each: (band: Float32Array, row0: number) => void): Promise<void> {
  const rows = src.shape[0];
  let spare: Float32Array | undefined;
  for (let r0 = 0; r0 < rows; r0 += src.passRows) {
    const n = Math.min(src.passRows, rows - r0);
    const band = await src.read(r0, n, spare);
    each(band, r0);
    if (src.owned) spare = band;
  }
}

/**
 * The tensor's power (PowerSum over every value), with every value checked finite: the sum of
 * squares is finite exactly when every value is (a float32 squared is below 2^256, so no finite
 * sum overflows a double), so one pass does both. With `exponents`, also counts the exponents
 * (robustPower) in the same pass.
 */
export async function checkedPower(src: TensorRows, exponents?: ExponentCounts): Promise<number> {
  const sum = new PowerSum();
  const cols = src.shape[1];
  await forEachBand(src, (band, row0) => {
    sum.add(band, exponents);
    if (!Number.isFinite(sum.sum())) {
      const i = band.findIndex((v) => !Number.isFinite(v));
      throw new Sgfp4Error("INVALID_ARGUMENT", `tensor value ${row0 * cols + i} is ${band[i]}; only finite weights can be encoded`);
    }
  });
  return sum.mean();
}

/** The tensor's power with each square capped at cap2 (a second pass: the cap needs every exponent). */
export async function cappedPower(src: TensorRows, cap2: number): Promise<number> {
  const sum = new PowerSum(cap2);
  await forEachBand(src, (band) => sum.add(band));
  return sum.mean();
}

type Kind = "encode" | "stats";
type ResultOf<K extends Kind> = K extends "stats" ? Float64Array : EncodedRows;

/**
 * Runs one kind of job over the tensor's job ranges, reading each job's rows when it is made;
 * `done` gets the results in job order. Inline without a pool; with one, at most two jobs per
 * thread are read and not yet done, so the bands in memory stay few whatever the tensor's size.
 * decodedInto (encode): where a job's decode goes (its rows' values); without it, one array
 * reused for every inline job, a worker's own: either is valid only until `done` returns (and a
 * band source's arrays are reused for the next bands).
 */
export async function runJobs<K extends Kind>(
  kind: K,
  src: TensorRows,
  base: Omit<BlockJob, "data" | "tileRowStart" | "tileRowEnd" | "shape">,
  pool: WorkerPool | undefined,
  done: (job: BlockJob, r: ResultOf<K>, index: number, count: number) => void,
  withJob?: (job: BlockJob) => BlockJob,
  decodedInto?: (job: BlockJob) => Float32Array | undefined,
): Promise<void> {
  const { shape } = src;
  const ranges = src.jobRanges(pool);
  // an array the next read may fill: the last inline job's band, or a worker's decode
  let spare: Float32Array | undefined;
  const make = async ([t0, t1]: [number, number]): Promise<BlockJob> => {
    const r0 = t0 * MACROBLOCK;
    const r1 = Math.min(t1 * MACROBLOCK, shape[0]);
    const job: BlockJob = { ...base, shape, tileRowStart: t0, tileRowEnd: t1, data: await src.read(r0, r1 - r0, spare) };
    spare = undefined;
    return withJob ? withJob(job) : job;
  };
  if (!pool) {
    let scratch = new Float32Array(0);
    const decodeTo = (job: BlockJob): Float32Array => {
      const given = decodedInto?.(job);
      if (given) return given;
      if (scratch.length < job.data.length) scratch = new Float32Array(job.data.length);
      return scratch.subarray(0, job.data.length);
    };
    for (const [i, range] of ranges.entries()) {
      const job = await make(range);
      done(job, (kind === "stats" ? statsBlockRows(job) : encodeBlockRows(job, decodeTo(job))) as ResultOf<K>, i, ranges.length);
      if (src.owned) spare = job.data;
    }
    return;
  }
  const window = 2 * pool.threads;
  const inFlight: { job: BlockJob; result: Promise<ResultOf<K>> }[] = [];
  let finished = 0;
  const settle = async (): Promise<void> => {
    const { job, result } = inFlight.shift()!;
    const r = await result;
    if (kind === "encode" && decodedInto) {
      const into = decodedInto(job);
      if (into) {
        into.set((r as EncodedRows).decoded);
        (r as EncodedRows).decoded = into;
      }
    }
    done(job, r, finished++, ranges.length);
    if (kind === "encode" && src.owned && !decodedInto) spare = (r as EncodedRows).decoded;
  };
  try {
    for (const range of ranges) {
      const job = await make(range);
      const result = pool.run(kind, job, src.owned) as Promise<ResultOf<K>>;
      result.catch(() => undefined); // awaited in order below; a later job's failure must not go unhandled meanwhile
      inFlight.push({ job, result });
      if (inFlight.length >= window) await settle();
    }
    while (inFlight.length) await settle();
  } finally {
    // on an error, the jobs still running are left to finish (their results are dropped)
    inFlight.length = 0;
  }
}
