/**
 * Entry "@sgfp4/cpu-decoder/validate" (browser-safe): the host validator for every backend. The
 * wasm validator (native/validate.h) applies every reject rule of DECISIONS.md section 3 and
 * builds the leaf table exactly as @sgfp4/format's parse() does (docs/ARCHITECTURE.md layout;
 * tested word for word); parse() runs only on a reject, to throw its detailed Sgfp4Error.
 */
import type { Shape } from "@sgfp4/format";
import { kernelModule } from "./kernel.js";
import { validatedLayout, validateInMemory } from "./layouts.js";
import { asSgfp4Error, parseForDecode, type DecodeOptions } from "./options.js";
import { fastRequest } from "./request.js";
import { scratchMemory } from "./scratch.js";

export interface LeafTable {
  profile: "v1" | "v2";
  shape: Shape;
  tilesY: number;
  tilesX: number;
  /** 4 u32 words per leaf (docs/ARCHITECTURE.md); word 3 = the payload's byte offset in the stream */
  leafTable: Uint32Array;
  leafCount: number;
  /** B + 1 entries: blockFirst[b] = first leaf of macroblock b, blockFirst[B] = leafCount */
  blockFirst: Uint32Array;
}

/**
 * Validate `bytes` and return its leaf table; throws the Sgfp4Error parse() gives (codes of
 * DECISIONS.md: LIMIT_EXCEEDED / INVALID_ARGUMENT before anything is allocated, then the reject
 * codes). Where the wasm kernel cannot run, parse() does the work (same result, slower).
 */
export function buildLeafTable(bytes: Uint8Array, opts: DecodeOptions): LeafTable {
  const table = validateLeafTable(bytes, opts);
  if (table) return table;
  const c = parseForDecode(bytes, opts); // not ok (or no kernel): the exact error, or the table
  const blockFirst = new Uint32Array(c.blockCount + 1);
  c.blocks.forEach((b, i) => (blockFirst[i] = b.firstLeaf));
  blockFirst[c.blockCount] = c.leafCount;
  return { profile: c.profile, shape: c.shape, tilesY: c.tilesY, tilesX: c.tilesX, leafTable: c.leafTable, leafCount: c.leafCount, blockFirst };
}

/** The wasm validator alone: the leaf table, or null for "not ok" (or no kernel). Throws for bad options. */
export function validateLeafTable(bytes: Uint8Array, opts: DecodeOptions): LeafTable | null {
  const module = kernelModule();
  const r = fastRequest(bytes, opts);
  if (!module || !r) return null;
  const layout = validatedLayout(0, r.profile, bytes.length, r.blockCount);
  try {
    const { memory, kernel } = scratchMemory(module, layout.totalBytes);
    const count = validateInMemory(kernel, memory.buffer, bytes, r.profile, r.blockCount, layout, 0);
    if (count < 0) return null;
    return {
      profile: r.profile,
      shape: [r.rows, r.cols],
      tilesY: r.tilesY,
      tilesX: r.tilesX,
      leafTable: new Uint32Array(memory.buffer, layout.tableAt, count * 4).slice(),
      leafCount: count,
      blockFirst: new Uint32Array(memory.buffer, layout.blockFirstAt, r.blockCount + 1).slice(),
    };
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly validation failed");
  }
}
