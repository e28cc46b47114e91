/**
 * Everything the page knows, in one object that the panels receive explicitly (no module-level
 * variables): what is open, its parse and decodes, the original tensor, the loaded manifest and
 * the last vector run. `resetForOpen` is the one place that says what a new file clears.
 */
import type { Container, Manifest, Profile, Shape } from "@sgfp4/format";
import type { CpuWorkerBackend } from "./decoders/cpu";
import type { Availability, PageDecoder as DecoderBackend } from "./decoders";
import type { StructureModel } from "./model";
import type { ErrorStats, OriginalTensor, listSafetensors } from "./original";
import type { ColorBy } from "./painters";
import type { ConformanceRow } from "./conformance";
import type { TensorCanvas } from "./view";

export interface DecodeResult {
  backend: string;
  status: "running" | "ok" | "failed" | "unavailable";
  ms?: number;
  code?: string;
  message?: string;
  out?: Float32Array;
}

export interface Opened {
  name: string;
  bytes: Uint8Array;
  profile: Profile | "auto";
  shape: Shape;
  /** the manifest entry when opened from a manifest */
  manifestEntry?: Manifest["tensors"][number];
}

export interface Agreement {
  equal: boolean;
  index?: number;
  row?: number;
  col?: number;
  cpuBits?: string;
  gpuBits?: string;
  reason?: string;
}

export interface ParseFault {
  code: string;
  message: string;
  /** byte offset of the fault in the stream, when the parser names one */
  offset?: number;
  /** the block/record it was found in */
  record?: number;
}

export interface PageState {
  status: "empty" | "opening" | "decoding" | "done";
  /** bumps on every open, so late results of an older file are dropped */
  generation: number;
  /** settles when the current open has finished */
  idle: Promise<void>;
  opened?: Opened;
  /** bytes of the last picked file, kept so the person can retry with another shape */
  pending?: { name: string; bytes: Uint8Array };
  /** the whole container, or after a refusal the blocks before the fault */
  container?: Container;
  model?: StructureModel;
  parseError?: ParseFault;
  decodes: Record<string, DecodeResult>;
  agreement?: Agreement;
  original?: OriginalTensor;
  safetensors?: { bytes: Uint8Array; name: string; listing: ReturnType<typeof listSafetensors> };
  errorStats?: ErrorStats;
  manifest?: { manifest: Manifest; files: Map<string, File> };
  conformance: { rows: ConformanceRow[]; done: boolean };
  colorBy: ColorBy;
}

export interface Decoders {
  list: DecoderBackend[];
  cpu: CpuWorkerBackend;
  availability: Map<string, Promise<Availability>>;
  /** what each backend runs on, shown beside its result */
  detail: Map<string, string>;
}

/** What every panel function gets: the state, the two canvases and the decoders. */
export interface Page {
  state: PageState;
  structureView: TensorCanvas;
  valuesView: TensorCanvas;
  decoders: Decoders;
}

export function createState(): PageState {
  return { status: "empty", generation: 0, idle: Promise.resolve(), decodes: {}, conformance: { rows: [], done: false }, colorBy: "mode" };
}

/**
 * A new file: drop everything derived from the previous one. The original tensor goes too,
 * unless the new file is a manifest tensor and the loaded safetensors file holds a tensor of that
 * name (the caller then picks it); the manifest itself stays (its other tensors can be picked).
 */
export function resetForOpen(s: PageState, o: Opened): void {
  s.opened = o;
  s.container = undefined;
  s.model = undefined;
  s.parseError = undefined;
  s.decodes = {};
  s.agreement = undefined;
  s.errorStats = undefined;
  const keepSafetensors = !!o.manifestEntry && !!s.safetensors?.listing.entries.some((e) => e.name === o.manifestEntry!.name);
  s.original = undefined;
  if (!keepSafetensors) s.safetensors = undefined;
}
