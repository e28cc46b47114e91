/**
 * Renders the portable contract (portable.ts) in the kernels' languages. The C text is also
 * valid C++; every name is `SGFP4_<CONSTANT>` / `sgfp4_<function>` in every language.
 * scripts/generate-contract.mjs writes the results to packages/format/generated/.
 */
import { PORTABLE_CONSTANTS, PORTABLE_FUNCTIONS, type Expr, type PortableFunction, type PortableType, type Stmt } from "./portable.js";

export type ContractLanguage = "c" | "glsl" | "wgsl" | "js";

interface Dialect {
  type: Record<PortableType, string>;
  u32(v: number): string;
  i32(v: number): string;
  bin(op: string, a: string, b: string, t: PortableType, operand: PortableType): string;
  cast(a: string, t: PortableType): string;
  clz(a: string): string;
  select(c: string, a: string, b: string): string;
  let(name: string, t: PortableType, value: string): string;
  signature(f: PortableFunction, name: string): string;
  constant(name: string, value: string): string;
}

/** Masks and big values in hex, small counts and shifts in decimal. */
const hex = (v: number): string => (v >= 256 ? `0x${v.toString(16)}` : String(v));
const cLike = (type: Record<PortableType, string>): Pick<Dialect, "type" | "u32" | "i32" | "bin" | "select"> => ({
  type,
  u32: (v) => `${hex(v)}u`,
  i32: (v) => (v < 0 ? `(${v})` : String(v)),
  bin: (op, a, b) => `(${a} ${op} ${b})`,
  select: (c, a, b) => `(${c} ? ${a} : ${b})`,
});

const DIALECTS: Record<ContractLanguage, Dialect> = {
  c: {
    ...cLike({ u32: "uint32_t", i32: "int32_t", bool: "int" }),
    cast: (a, t) => `((${t === "i32" ? "int32_t" : "uint32_t"})${a})`,
    clz: (a) => `sgfp4_clz32(${a})`,
    let: (n, t, v) => `const ${DIALECTS.c.type[t]} ${n} = ${v};`,
    signature: (f, name) => `static inline ${DIALECTS.c.type[f.returns]} ${name}(${f.params.map((p) => `${DIALECTS.c.type[p.t]} ${p.name}`).join(", ")})`,
    constant: (n, v) => `#define ${n} ${v}`,
  },
  glsl: {
    ...cLike({ u32: "uint", i32: "int", bool: "bool" }),
    cast: (a, t) => `${t === "i32" ? "int" : "uint"}(${a})`,
    clz: (a) => `(31u - uint(findMSB(${a})))`,
    let: (n, t, v) => `${DIALECTS.glsl.type[t]} ${n} = ${v};`,
    signature: (f, name) => `${DIALECTS.glsl.type[f.returns]} ${name}(${f.params.map((p) => `${DIALECTS.glsl.type[p.t]} ${p.name}`).join(", ")})`,
    constant: (n, v) => `const uint ${n} = ${v};`,
  },
  wgsl: {
    type: { u32: "u32", i32: "i32", bool: "bool" },
    u32: (v) => `${hex(v)}u`,
    i32: (v) => (v < 0 ? `(${v}i)` : `${v}i`),
    bin: (op, a, b) => `(${a} ${op} ${b})`,
    cast: (a, t) => `${t}(${a})`,
    clz: (a) => `countLeadingZeros(${a})`,
    select: (c, a, b) => `select(${b}, ${a}, ${c})`,
    let: (n, _t, v) => `let ${n} = ${v};`,
    signature: (f, name) => `fn ${name}(${f.params.map((p) => `${p.name}: ${p.t}`).join(", ")}) -> ${f.returns}`,
    constant: (n, v) => `const ${n}: u32 = ${v};`,
  },
  // JavaScript numbers: u32 results normalised with >>> 0, i32 with | 0, logical right shift.
  js: {
    type: { u32: "", i32: "", bool: "" },
    u32: (v) => hex(v),
    i32: (v) => (v < 0 ? `(${v})` : String(v)),
    bin: (op, a, b, t, operand) => {
      if (op === "==" || op === "!=") return `(${a} ${op}= ${b})`;
      const js = op === ">>" && operand === "u32" ? ">>>" : op;
      return t === "u32" ? `((${a} ${js} ${b}) >>> 0)` : `((${a} ${js} ${b}) | 0)`;
    },
    cast: (a, t) => (t === "i32" ? `(${a} | 0)` : `(${a} >>> 0)`),
    clz: (a) => `Math.clz32(${a})`,
    select: (c, a, b) => `(${c} ? ${a} : ${b})`,
    let: (n, _t, v) => `const ${n} = ${v};`,
    signature: (f, name) => `function ${name}(${f.params.map((p) => p.name).join(", ")})`,
    constant: (n, v) => `const ${n} = ${v};`,
  },
};

function expr(d: Dialect, e: Expr): string {
  switch (e.k) {
    case "var":
      return e.name;
    case "lit":
      return e.t === "i32" ? d.i32(e.value) : d.u32(e.value);
    case "bin":
      return d.bin(e.op, expr(d, e.a), expr(d, e.b), e.t, e.a.t);
    case "cast":
      return d.cast(expr(d, e.a), e.t);
    case "clz":
      return d.clz(expr(d, e.a));
    case "select":
      return d.select(expr(d, e.cond), expr(d, e.then), expr(d, e.otherwise));
  }
}

const parenthesised = (e: string): string => (e.startsWith("(") && e.endsWith(")") ? e : `(${e})`);

function stmt(d: Dialect, s: Stmt): string {
  switch (s.k) {
    case "let":
      return d.let(s.name, s.value.t, expr(d, s.value));
    case "returnIf":
      return `if ${parenthesised(expr(d, s.cond))} { return ${expr(d, s.value)}; }`;
    case "return":
      return `return ${expr(d, s.value)};`;
  }
}

/** One function in `lang`, named `sgfp4_<name>`. */
export function emitFunction(lang: ContractLanguage, f: PortableFunction): string {
  const d = DIALECTS[lang];
  return `${d.signature(f, `sgfp4_${f.name}`)} {\n${f.body.map((s) => `  ${stmt(d, s)}`).join("\n")}\n}`;
}

const comment = (text: string): string => `// ${text}`;

const C_PRELUDE = `#include <stdint.h>

/* count of leading zero bits of a nonzero value */
static inline uint32_t sgfp4_clz32(uint32_t v) {
#if defined(__GNUC__) || defined(__clang__)
  return (uint32_t)__builtin_clz(v);
#else
  uint32_t n = 0;
  while (!(v & 0x80000000u)) { v <<= 1; n++; }
  return n;
#endif
}`;

const BANNER = "GENERATED by packages/format/scripts/generate-contract.mjs from packages/format/src/{leaf-table,portable}.ts. Do not edit.";

/** The whole contract as one source file in `lang` (constants, then functions). */
export function emitContract(lang: ContractLanguage): string {
  const d = DIALECTS[lang];
  const constants = PORTABLE_CONSTANTS.map((c) => `${comment(c.doc)}\n${d.constant(`SGFP4_${c.name}`, d.u32(c.value))}`).join("\n");
  const functions = PORTABLE_FUNCTIONS.map((f) => `${comment(f.doc)}\n${emitFunction(lang, f)}`).join("\n\n");
  const body = `${constants}\n\n${functions}\n`;
  const banner = `${comment(BANNER)}\n${comment("The SGFP4 leaf-table contract: docs/ARCHITECTURE.md \"The leaf table\".")}\n`;
  switch (lang) {
    case "c":
      return `${banner}#ifndef SGFP4_LEAF_TABLE_H\n#define SGFP4_LEAF_TABLE_H\n${C_PRELUDE}\n\n${body}\n#endif /* SGFP4_LEAF_TABLE_H */\n`;
    case "glsl":
      return `${banner}#ifndef SGFP4_LEAF_TABLE_GLSL\n#define SGFP4_LEAF_TABLE_GLSL\n\n${body}\n#endif\n`;
    default:
      return `${banner}\n${body}`;
  }
}

/** The contract in WGSL: prepend it to a shader module (WGSL has no include). */
export const LEAF_TABLE_WGSL: string = /* @__PURE__ */ emitContract("wgsl");

/** Generated file names under packages/format/generated/, by language. */
export const CONTRACT_FILES: Readonly<Record<Exclude<ContractLanguage, "js">, string>> = {
  c: "sgfp4_leaf_table.h",
  glsl: "sgfp4_leaf_table.glsl",
  wgsl: "sgfp4_leaf_table.wgsl",
};
