/**
 * The leaf-table contract as portable code: constants and small integer functions written once
 * as a tiny expression tree, from the definitions in leaf-table.ts, geometry.ts and fp16.ts.
 * emit.ts renders them as C/C++, GLSL and WGSL (the generated files the kernels include) and as
 * JavaScript, which the tests run against the TypeScript definitions on every input.
 */
import { HALF_EXPONENT_MASK } from "./fp16.js";
import { MACROBLOCK, MODE_FP4, MODE_T158, V1_PAYLOAD_BYTES } from "./geometry.js";
import {
  FP4_CODE_BITS,
  GEOMETRY_FIELDS,
  LEAF_BLOCK_WORD,
  LEAF_GEOMETRY_WORD,
  LEAF_PARAMS_WORD,
  LEAF_PAYLOAD_WORD,
  LEAF_WORDS,
  MAX_LEAF_LOG2,
  MIN_LEAF_LOG2,
  PARAMS_FIELDS,
  PAYLOAD_ALIGN,
  T158_CODE_BITS,
  V1_OFFSET_FLAGS,
  V1_T158_BYTES,
  V2_LEAF_HEADER,
  fieldMask,
  type BitField,
} from "./leaf-table.js";

export type PortableType = "u32" | "i32" | "bool";
export type BinaryOp = "&" | "|" | "^" | "<<" | ">>" | "+" | "-" | "==" | "!=";

export type Expr =
  | { readonly k: "var"; readonly name: string; readonly t: PortableType }
  | { readonly k: "lit"; readonly value: number; readonly t: PortableType }
  | { readonly k: "bin"; readonly op: BinaryOp; readonly a: Expr; readonly b: Expr; readonly t: PortableType }
  | { readonly k: "cast"; readonly a: Expr; readonly t: PortableType }
  /** count of leading zero bits of a nonzero u32 */
  | { readonly k: "clz"; readonly a: Expr; readonly t: "u32" }
  | { readonly k: "select"; readonly cond: Expr; readonly then: Expr; readonly otherwise: Expr; readonly t: PortableType };

export type Stmt =
  | { readonly k: "let"; readonly name: string; readonly value: Expr }
  | { readonly k: "returnIf"; readonly cond: Expr; readonly value: Expr }
  | { readonly k: "return"; readonly value: Expr };

export interface PortableFunction {
  /** snake_case; emitted as `sgfp4_<name>` in every language */
  readonly name: string;
  readonly doc: string;
  readonly params: readonly { readonly name: string; readonly t: PortableType }[];
  readonly returns: PortableType;
  readonly body: readonly Stmt[];
}

export interface PortableConstant {
  /** UPPER_SNAKE; emitted as `SGFP4_<name>` (u32) */
  readonly name: string;
  readonly value: number;
  readonly doc: string;
}

// Expression builders.
const u = (value: number): Expr => ({ k: "lit", value: value >>> 0, t: "u32" });
const i = (value: number): Expr => ({ k: "lit", value, t: "i32" });
const bin = (a: Expr, op: BinaryOp, b: Expr): Expr => ({ k: "bin", op, a, b, t: op === "==" || op === "!=" ? "bool" : a.t });
const toI32 = (a: Expr): Expr => ({ k: "cast", a, t: "i32" });
const select = (cond: Expr, then: Expr, otherwise: Expr): Expr => ({ k: "select", cond, then, otherwise, t: then.t });
const clz = (a: Expr): Expr => ({ k: "clz", a, t: "u32" });

function fn(name: string, doc: string, params: Record<string, PortableType>, returns: PortableType, build: (p: Record<string, Expr>, let_: (n: string, e: Expr) => Expr) => Stmt[]): PortableFunction {
  const lets: Stmt[] = [];
  const p = Object.fromEntries(Object.entries(params).map(([n, t]) => [n, { k: "var", name: n, t } as Expr]));
  const let_ = (n: string, e: Expr): Expr => {
    lets.push({ k: "let", name: n, value: e });
    return { k: "var", name: n, t: e.t };
  };
  const tail = build(p, let_);
  return { name, doc, params: Object.entries(params).map(([n, t]) => ({ name: n, t })), returns, body: [...lets, ...tail] };
}
const ret = (value: Expr): Stmt => ({ k: "return", value });
const returnIf = (cond: Expr, value: Expr): Stmt => ({ k: "returnIf", cond, value });

const shl = (a: Expr, n: number): Expr => (n ? bin(a, "<<", u(n)) : a);
const field = (word: Expr, f: BitField): Expr => bin(f.shift ? bin(word, ">>", u(f.shift)) : word, "&", u(fieldMask(f)));
const log2Of = (n: number): number => Math.log2(n);

export const PORTABLE_CONSTANTS: readonly PortableConstant[] = [
  { name: "LEAF_WORDS", value: LEAF_WORDS, doc: "u32 words per leaf-table entry" },
  { name: "LEAF_WORD_BLOCK", value: LEAF_BLOCK_WORD, doc: "word 0: macroblock index b (by = b / tilesX, bx = b % tilesX)" },
  { name: "LEAF_WORD_GEOMETRY", value: LEAF_GEOMETRY_WORD, doc: "word 1: y | x << 6 | log2(size) << 12 | mode << 15" },
  { name: "LEAF_WORD_PARAMS", value: LEAF_PARAMS_WORD, doc: "word 2: scale FP16 bits << 16 | bias FP16 bits (flags removed)" },
  { name: "LEAF_WORD_PAYLOAD", value: LEAF_PAYLOAD_WORD, doc: "word 3: absolute byte offset of the payload in the stream (a multiple of 16)" },
  { name: "MACROBLOCK", value: MACROBLOCK, doc: "macroblock side in elements" },
  { name: "MIN_LEAF_LOG2", value: MIN_LEAF_LOG2, doc: "smallest leaf: 4x4" },
  { name: "MAX_LEAF_LOG2", value: MAX_LEAF_LOG2, doc: "largest leaf: 64x64" },
  { name: "PAYLOAD_ALIGN", value: PAYLOAD_ALIGN, doc: "payloads start on and are padded to 16 bytes" },
  { name: "MODE_FP4", value: MODE_FP4, doc: "FP4_AFFINE: 4-bit two's complement codes, low nibble first" },
  { name: "MODE_T158", value: MODE_T158, doc: "T158_AFFINE: 2-bit symbols 00 -> 0, 01 -> +1, 10 -> -1, 11 -> 0, low bits first" },
  { name: "FP4_CODE_BITS", value: FP4_CODE_BITS, doc: "bits per FP4 code" },
  { name: "T158_CODE_BITS", value: T158_CODE_BITS, doc: "bits per T158 symbol" },
  { name: "V2_LEAF_MODE_MASK", value: V2_LEAF_HEADER.MODE_MASK, doc: "v2 leaf header: mode flag" },
  { name: "V2_LEAF_RESERVED_MASK", value: V2_LEAF_HEADER.RESERVED_MASK, doc: "v2 leaf header: reserved flags, must be 0" },
  { name: "V2_BIAS_MASK", value: V2_LEAF_HEADER.BIAS_MASK, doc: "v2 bias: the low 4 bits carry the flags" },
  { name: "V2_LEAF_PARAMS_MASK", value: V2_LEAF_HEADER.PARAMS_MASK, doc: "v2 leaf header -> params word" },
  { name: "V1_FLAG_MODE_MASK", value: V1_OFFSET_FLAGS.MODE_MASK, doc: "v1 offset word: mode flag" },
  { name: "V1_FLAG_ERROR_HINT_MASK", value: V1_OFFSET_FLAGS.ERROR_HINT_MASK, doc: "v1 offset word: ERROR_HINT (ignored by decoders)" },
  { name: "V1_FLAG_RESERVED_MASK", value: V1_OFFSET_FLAGS.RESERVED_MASK, doc: "v1 offset word: reserved flags, must be 0" },
  { name: "V1_FLAGS_MASK", value: V1_OFFSET_FLAGS.ALL_MASK, doc: "v1 offset word: all flag bits (the rest is the payload base)" },
  { name: "V1_PAYLOAD_BYTES", value: V1_PAYLOAD_BYTES, doc: "v1 payload slot per block" },
  { name: "V1_T158_BYTES", value: V1_T158_BYTES, doc: "v1 T158 data at the start of its slot; the rest must be zero" },
  { name: "HALF_EXPONENT_MASK", value: HALF_EXPONENT_MASK, doc: "FP16 exponent; all ones is Inf/NaN, rejected in scale and bias" },
];

const G = GEOMETRY_FIELDS;
const P = PARAMS_FIELDS;

export const PORTABLE_FUNCTIONS: readonly PortableFunction[] = [
  fn("geometry_y", "leaf row inside its macroblock (word 1)", { g: "u32" }, "u32", ({ g }) => [ret(field(g!, G.y))]),
  fn("geometry_x", "leaf column inside its macroblock (word 1)", { g: "u32" }, "u32", ({ g }) => [ret(field(g!, G.x))]),
  fn("geometry_log2", "log2 of the leaf side, 2..6 (word 1)", { g: "u32" }, "u32", ({ g }) => [ret(field(g!, G.log2))]),
  fn("geometry_mode", "leaf mode, MODE_FP4 or MODE_T158 (word 1)", { g: "u32" }, "u32", ({ g }) => [ret(field(g!, G.mode))]),
  fn("geometry_pack", "word 1 from its fields", { y: "u32", x: "u32", log2: "u32", mode: "u32" }, "u32", ({ y, x, log2, mode }) => [
    ret(bin(bin(shl(y!, G.y.shift), "|", shl(x!, G.x.shift)), "|", bin(shl(log2!, G.log2.shift), "|", shl(mode!, G.mode.shift)))),
  ]),
  fn("params_scale_bits", "FP16 bits of the scale (word 2)", { p: "u32" }, "u32", ({ p }) => [ret(field(p!, P.scale))]),
  fn("params_bias_bits", "FP16 bits of the bias (word 2)", { p: "u32" }, "u32", ({ p }) => [ret(field(p!, P.bias))]),
  fn("v2_header_params", "params word of a v2 leaf header: flags removed, bias under V2_BIAS_MASK", { h: "u32" }, "u32", ({ h }) => [
    ret(bin(h!, "&", u(V2_LEAF_HEADER.PARAMS_MASK))),
  ]),
  fn("leaf_payload_bytes", "meaningful payload bytes of a leaf (FP4 size*size/2, T158 size*size/4), before padding to 16", { log2: "u32", mode: "u32" }, "u32", ({ log2, mode }) => {
    // side^2 codes of `bits` bits = 2^(2 log2 + log2(bits) - 3) bytes
    const bytesLog2 = (bits: number): Expr => bin(bin(log2!, "<<", u(1)), "-", u(3 - log2Of(bits)));
    return [ret(bin(u(1), "<<", select(bin(mode!, "==", u(MODE_T158)), bytesLog2(T158_CODE_BITS), bytesLog2(FP4_CODE_BITS))))];
  }),
  fn("fp4_code", "FP4 nibble (0..15) -> code -8..7", { nibble: "u32" }, "i32", ({ nibble }) => [ret(bin(toI32(bin(bin(nibble!, "&", u(15)), "^", u(8))), "-", i(8)))]),
  fn("t158_code", "T158 symbol (0..3) -> code: 00 -> 0, 01 -> +1, 10 -> -1, 11 (reserved) -> 0", { symbol: "u32" }, "i32", ({ symbol }) => [
    ret(bin(toI32(bin(symbol!, "&", u(1))), "-", toI32(bin(bin(symbol!, ">>", u(1)), "&", u(1))))),
  ]),
  fn("half_nonfinite", "the FP16 pattern is Inf or NaN", { h: "u32" }, "bool", ({ h }) => [ret(bin(bin(h!, "&", u(HALF_EXPONENT_MASK)), "==", u(HALF_EXPONENT_MASK)))]),
  fn("half_to_float_bits", "exact FP16 -> float32 bit pattern with integer operations (subnormals kept, signed zero kept)", { h: "u32" }, "u32", ({ h }, let_) => {
    const sign = let_("sign", bin(bin(h!, "&", u(0x8000)), "<<", u(16)));
    const e = let_("e", bin(bin(h!, ">>", u(10)), "&", u(0x1f)));
    const m = let_("m", bin(h!, "&", u(0x3ff)));
    const body = [
      returnIf(bin(e, "==", u(0x1f)), bin(bin(sign, "|", u(0x7f800000)), "|", bin(m, "<<", u(13)))),
      returnIf(bin(e, "!=", u(0)), bin(bin(sign, "|", bin(bin(e, "+", u(112)), "<<", u(23))), "|", bin(m, "<<", u(13)))),
      returnIf(bin(m, "==", u(0)), sign),
    ];
    // subnormal: m * 2^-24; the shift moves m's top set bit to bit 10
    const shift: Expr = { k: "var", name: "shift", t: "u32" };
    return [
      ...body,
      { k: "let", name: "shift", value: bin(clz(m), "-", u(21)) },
      ret(bin(bin(sign, "|", bin(bin(u(113), "-", shift), "<<", u(23))), "|", bin(bin(bin(m, "<<", shift), "&", u(0x3ff)), "<<", u(13)))),
    ];
  }),
];
