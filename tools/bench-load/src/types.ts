/** The shared interface of the load benchmark's backend modules (BRIEF.md; one module per backend). */
export interface Workload { name: string; family: string; profile: "v1" | "v2"; shape: [number, number];
  bytes: Uint8Array; reference: Float32Array /* CPU decode, for bit checks */ }
export interface LoadRow { backend: "cpu" | "webgpu" | "vulkan"; path: string; workload: string;
  ms: number; floor: string; floorMs: number; ratio: number /* floorMs/ms or as documented */;
  goal?: number; met?: boolean; bitsOk: boolean; skipped?: string; note?: string }
export interface LoadContext { workloads: Workload[]; model: Workload[] /* >= 1 GiB f32 output unless --quick */;
  reps: number; quick: boolean; log(msg: string): void;
  /** --threads N, when given: the CPU rows' decodeParallel threads (default there: every core, at most 16) */
  threads?: number;
  /** log rows as they are measured (`row {json}`), so that a run cut short still reports them */
  measured(rows: readonly LoadRow[]): void }
// one module per backend: tools/bench-load/src/{cpu,webgpu,vulkan}.ts
//   export async function measure(ctx: LoadContext): Promise<LoadRow[]>;
export type Backend = LoadRow["backend"];
export type Measure = (ctx: LoadContext) => Promise<LoadRow[]>;
