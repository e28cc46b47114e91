/**
 * The leaf-table contract, defined once: the word layout every decoder reads, the payload sizes,
 * the code tables (FP4 nibble, T158 symbol), the v1/v2 header bit fields and the v2 bias mask.
 * The parser and the writer use these names; scripts/generate-contract.mjs turns the same
 * definition (through src/portable.ts) into a C/C++ header, a GLSL include and WGSL source under
 * packages/format/generated/, so the kernels never spell a shift or a mask by hand.
 * See docs/ARCHITECTURE.md "The leaf table".
 */

/** A bit field `(word >>> shift) & mask` of one 32-bit word. */
export interface BitField {
  readonly shift: number;
  readonly bits: number;
}

export const LEAF_WORDS = 4;
/** Index of each word within a leaf's 4-word entry (plain constants: hot loops index with them). */
export const LEAF_BLOCK_WORD = 0;
export const LEAF_GEOMETRY_WORD = 1;
export const LEAF_PARAMS_WORD = 2;
export const LEAF_PAYLOAD_WORD = 3;

/** Word 1 (geometry): position inside the macroblock, log2 of the side, mode. Bits 16-31 are 0. */
export const GEOMETRY_FIELDS = {
  y: { shift: 0, bits: 6 },
  x: { shift: 6, bits: 6 },
  log2: { shift: 12, bits: 3 },
  mode: { shift: 15, bits: 1 },
} as const satisfies Record<string, BitField>;

/** Word 2 (params): the FP16 patterns of scale and bias, flags already removed. */
export const PARAMS_FIELDS = {
  bias: { shift: 0, bits: 16 },
  scale: { shift: 16, bits: 16 },
} as const satisfies Record<string, BitField>;

export const MIN_LEAF_LOG2 = 2;
export const MAX_LEAF_LOG2 = 6;
/** Every leaf's payload starts on, and is padded to, this many bytes. */
export const PAYLOAD_ALIGN = 16;

/** T158 2-bit symbol -> code (spec 22.6.2; 0b11 is reserved and decodes as 0). */
export const T158_CODES: readonly number[] = [0, 1, -1, 0];
/** Leaf modes (flag bit 0 of a v2 leaf header or a v1 offset word). */
export const MODE_FP4 = 0;
export const MODE_T158 = 1;
export type Mode = typeof MODE_FP4 | typeof MODE_T158;
/** FP4 codes are 4-bit two's complement nibbles, low nibble first: -8..7. */
export const FP4_CODE_BITS = 4;
/** T158 codes are 2-bit symbols, low bits first. */
export const T158_CODE_BITS = 2;

/** v2 leaf header: `scale << 16 | bias & 0xFFF0 | flags`; flag bit 0 is the mode, bits 1-3 reserved. */
export const V2_LEAF_HEADER = { MODE_MASK: 0x1, RESERVED_MASK: 0xe, BIAS_MASK: 0xfff0, PARAMS_MASK: 0xfffffff0 } as const;
/** v1 block: header word `scale << 16 | bias`; offset word low 4 bits: mode, ERROR_HINT, 2 reserved. */
export const V1_OFFSET_FLAGS = { MODE_MASK: 0x1, ERROR_HINT_MASK: 0x2, RESERVED_MASK: 0xc, ALL_MASK: 0xf } as const;
/** A v1 block is one 64x64 leaf in a V1_PAYLOAD_BYTES (2048) slot; a T158 block uses its first 1024 bytes. */
export const V1_T158_BYTES = 1024;

export const fieldMask = (f: BitField): number => 2 ** f.bits - 1;

// Named accessors: plain functions over module constants, which V8 inlines in the parse loop
// (a property load from the field objects in the loop costs ~10% of v2 parse time).
const [Y_SHIFT, X_SHIFT, LOG2_SHIFT, MODE_SHIFT] = [GEOMETRY_FIELDS.y.shift, GEOMETRY_FIELDS.x.shift, GEOMETRY_FIELDS.log2.shift, GEOMETRY_FIELDS.mode.shift];
const [Y_MASK, X_MASK, LOG2_MASK, MODE_MASK] = [fieldMask(GEOMETRY_FIELDS.y), fieldMask(GEOMETRY_FIELDS.x), fieldMask(GEOMETRY_FIELDS.log2), fieldMask(GEOMETRY_FIELDS.mode)];
const [SCALE_SHIFT, BIAS_SHIFT, HALF_MASK] = [PARAMS_FIELDS.scale.shift, PARAMS_FIELDS.bias.shift, fieldMask(PARAMS_FIELDS.bias)];
const V2_PARAMS_MASK = V2_LEAF_HEADER.PARAMS_MASK;
export const geometryY = (g: number): number => (g >>> Y_SHIFT) & Y_MASK;
export const geometryX = (g: number): number => (g >>> X_SHIFT) & X_MASK;
export const geometryLog2 = (g: number): number => (g >>> LOG2_SHIFT) & LOG2_MASK;
export const geometryMode = (g: number): number => (g >>> MODE_SHIFT) & MODE_MASK;
export const packGeometry = (y: number, x: number, log2: number, mode: number): number => (y << Y_SHIFT) | (x << X_SHIFT) | (log2 << LOG2_SHIFT) | (mode << MODE_SHIFT);

export const paramsScaleBits = (p: number): number => (p >>> SCALE_SHIFT) & HALF_MASK;
export const paramsBiasBits = (p: number): number => (p >>> BIAS_SHIFT) & HALF_MASK;
export const packParams = (scaleBits: number, biasBits: number): number => ((scaleBits << SCALE_SHIFT) | (biasBits << BIAS_SHIFT)) >>> 0;
/** The params word of a v2 leaf header: flags (mode, reserved) cleared, bias under its 0xFFF0 mask. */
export const v2HeaderParams = (header: number): number => (header & V2_PARAMS_MASK) >>> 0;

/** Meaningful payload bytes of a leaf of side `1 << log2` (before its padding to 16). */
export const codeBits = (mode: number): number => (mode === MODE_FP4 ? FP4_CODE_BITS : T158_CODE_BITS);
export const leafPayloadBytes = (log2: number, mode: number): number => ((1 << (2 * log2)) * codeBits(mode)) >>> 3;
export const fp4Code = (nibble: number): number => ((nibble & 15) ^ 8) - 8;
export const t158Code = (symbol: number): number => T158_CODES[symbol & 3]!;

/** One leaf of a leaf table, every field decoded. */
export interface LeafEntry {
  readonly block: number;
  readonly y: number;
  readonly x: number;
  readonly log2: number;
  readonly mode: number;
  readonly scaleBits: number;
  readonly biasBits: number;
  readonly payloadOffset: number;
}

export function readLeaf(table: Uint32Array, i: number): LeafEntry {
  const at = i * LEAF_WORDS;
  const g = table[at + LEAF_GEOMETRY_WORD]!;
  const p = table[at + LEAF_PARAMS_WORD]!;
  return {
    block: table[at + LEAF_BLOCK_WORD]!,
    y: geometryY(g),
    x: geometryX(g),
    log2: geometryLog2(g),
    mode: geometryMode(g),
    scaleBits: paramsScaleBits(p),
    biasBits: paramsBiasBits(p),
    payloadOffset: table[at + LEAF_PAYLOAD_WORD]!,
  };
}

export function writeLeaf(table: Uint32Array, i: number, leaf: LeafEntry): void {
  const at = i * LEAF_WORDS;
  table[at + LEAF_BLOCK_WORD] = leaf.block;
  table[at + LEAF_GEOMETRY_WORD] = packGeometry(leaf.y, leaf.x, leaf.log2, leaf.mode);
  table[at + LEAF_PARAMS_WORD] = packParams(leaf.scaleBits, leaf.biasBits);
  table[at + LEAF_PAYLOAD_WORD] = leaf.payloadOffset;
}
