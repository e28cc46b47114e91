/** What the tests (and curious people in the console) can read: window.__inspector. */
import type { Profile } from "@sgfp4/format";
import { leafAtElement } from "./model";
import { openBytes } from "./open";
import { bundledVectors, runConformance } from "./panels/vectors";
import type { Page } from "./state";

export function inspectorApi(page: Page) {
  const { state, structureView, valuesView, decoders } = page;
  return {
    state() {
      const { model, errorStats, original } = state;
      return {
        status: state.status,
        /** counts opens, so a test can wait for the next one */
        generation: state.generation,
        file: state.opened?.name,
        parseError: state.parseError,
        model: model && {
          profile: model.container.profile,
          shape: [...model.container.shape],
          blockCount: model.container.blockCount,
          /** blocks parsed: fewer than blockCount when the stream was refused */
          blocksParsed: model.container.blocks.length,
          leafCount: model.leafCount,
          bitsPerWeight: model.bitsPerWeight,
          histograms: model.histograms,
          layouts: model.container.blocks.map((b) => b.layout),
        },
        decodes: Object.fromEntries(Object.entries(state.decodes).map(([k, d]) => [k, { status: d.status, ms: d.ms, code: d.code, message: d.message, length: d.out?.length }])),
        agreement: state.agreement,
        snrDb: errorStats ? (errorStats.snrDb === Infinity ? "inf" : errorStats.snrDb) : undefined,
        original: original && { name: original.name, shape: original.shape },
        conformanceDone: state.conformance.done,
        conformance: state.conformance.rows,
      };
    },
    /** [row, col, size, mode] of every leaf in stream order, absolute in the padded grid */
    leaves(): number[] {
      const { model } = state;
      if (!model) return [];
      const out: number[] = [];
      for (let i = 0; i < model.leafCount; i++) out.push(model.leafRow[i]!, model.leafCol[i]!, model.leafSize[i]!, model.leafMode[i]!);
      return out;
    },
    /** leaf index drawn at a structure-canvas pixel (what hovering there describes) */
    leafAtCanvasPixel(x: number, y: number): number {
      if (!state.model) return -1;
      const [r, c] = structureView.elementAt(x, y);
      return leafAtElement(state.model, r, c);
    },
    /** float32 bit patterns of a decode, for bit-exact checks */
    decodedBits(backend: string, start = 0, count = Infinity): number[] {
      const out = state.decodes[backend]?.out;
      if (!out) return [];
      return Array.from(new Uint32Array(out.buffer, out.byteOffset, out.length).subarray(start, Math.min(out.length, start + count)));
    },
    async availability() {
      return Object.fromEntries(await Promise.all([...decoders.availability].map(async ([k, p]) => [k, await p] as const)));
    },
    whenIdle: () => state.idle,
    runBundledVectors: () => runConformance(page, bundledVectors()),
    openBytes: (bytes: Uint8Array, name: string, profile: Profile | "auto", shape: [number, number]) => openBytes(page, { name, bytes, profile, shape }),
    structureView,
    valuesView,
  };
}

export type InspectorApi = ReturnType<typeof inspectorApi>;
