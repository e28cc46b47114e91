import type { Command } from "commander";
import { LAYOUT_NAMES, halfToFloat, leafAt, parse, type Container } from "@sgfp4/format";
import { parseProfile, parseShape, readInput } from "../util.js";
import { describeWarning } from "./validate.js";

export interface Fp16Range {
  min: number;
  max: number;
  minBits: string;
  maxBits: string;
}

export interface Inspection {
  file: string;
  profile: "v1" | "v2";
  shape: [number, number];
  tiles: [number, number];
  blocks: number;
  leaves: number;
  bytes: number;
  /** v2 layout name -> records; v1: {"V1_BLOCK_64": B} */
  layouts: Record<string, number>;
  /** mode -> { leaves, weights } (weights of the padded grid) */
  modes: Record<"FP4_AFFINE" | "T158_AFFINE", { leaves: number; weights: number }>;
  /** leaf edge ("4".."64") -> count */
  leafSizes: Record<string, number>;
  bitsPerWeight: number;
  bitsPerPaddedWeight: number;
  scale: Fp16Range | null;
  bias: Fp16Range | null;
  warnings: string[];
}

const hex4 = (b: number): string => "0x" + b.toString(16).padStart(4, "0");

/** Track the FP16 patterns with the smallest and largest value (by float value). */
class RangeOf {
  min = Infinity;
  max = -Infinity;
  minBits = 0;
  maxBits = 0;
  add(bits: number): void {
    const v = halfToFloat(bits);
    // -0 < +0 for the range, so a signed zero shows as such
    if (v < this.min || (v === this.min && Object.is(v, -0))) {
      this.min = v;
      this.minBits = bits;
    }
    if (v > this.max || (v === this.max && Object.is(this.max, -0))) {
      this.max = v;
      this.maxBits = bits;
    }
  }
  result(): Fp16Range | null {
    return this.min === Infinity ? null : { min: this.min, max: this.max, minBits: hex4(this.minBits), maxBits: hex4(this.maxBits) };
  }
}

export function inspectContainer(file: string, c: Container): Inspection {
  const [O, I] = c.shape;
  const layouts: Record<string, number> = {};
  for (const b of c.blocks) {
    const name = b.layout === -1 ? "V1_BLOCK_64" : (LAYOUT_NAMES[b.layout] ?? String(b.layout));
    layouts[name] = (layouts[name] ?? 0) + 1;
  }
  const modes = { FP4_AFFINE: { leaves: 0, weights: 0 }, T158_AFFINE: { leaves: 0, weights: 0 } };
  const sizes = new Map<number, number>();
  const scale = new RangeOf();
  const bias = new RangeOf();
  for (let i = 0; i < c.leafCount; i++) {
    const leaf = leafAt(c, i);
    const m = leaf.mode === 0 ? modes.FP4_AFFINE : modes.T158_AFFINE;
    m.leaves++;
    m.weights += leaf.size * leaf.size;
    sizes.set(leaf.size, (sizes.get(leaf.size) ?? 0) + 1);
    scale.add(leaf.scaleBits);
    bias.add(leaf.biasBits);
  }
  const leafSizes: Record<string, number> = {};
  for (const s of [...sizes.keys()].sort((a, b) => a - b)) leafSizes[String(s)] = sizes.get(s)!;
  return {
    file,
    profile: c.profile,
    shape: [O, I],
    tiles: [c.tilesY, c.tilesX],
    blocks: c.blockCount,
    leaves: c.leafCount,
    bytes: c.byteLength,
    layouts,
    modes,
    leafSizes,
    bitsPerWeight: (c.byteLength * 8) / (O * I),
    bitsPerPaddedWeight: (c.byteLength * 8) / (c.blockCount * 64 * 64),
    scale: scale.result(),
    bias: bias.result(),
    warnings: c.warnings.map(describeWarning),
  };
}

const fmtNum = (x: number): string => (Object.is(x, -0) ? "-0" : String(x));
const pct = (n: number, d: number): string => (d ? `${((100 * n) / d).toFixed(1)}%` : "-");

export function formatInspection(r: Inspection): string {
  const lines: string[] = [];
  const totalLeaves = r.leaves;
  lines.push(`file            ${r.file}`);
  lines.push(`profile         ${r.profile}`);
  lines.push(`shape           ${r.shape[0]}x${r.shape[1]} (${r.tiles[0]}x${r.tiles[1]} macroblocks, B = ${r.blocks})`);
  lines.push(`bytes           ${r.bytes}`);
  lines.push(`bits/weight     ${r.bitsPerWeight.toFixed(4)} (per padded weight ${r.bitsPerPaddedWeight.toFixed(4)})`);
  lines.push(`layouts         ${Object.entries(r.layouts).map(([k, v]) => `${k} ${v} (${pct(v, r.blocks)})`).join(", ")}`);
  lines.push(`modes           ${Object.entries(r.modes).map(([k, v]) => `${k} ${v.leaves} leaves / ${v.weights} weights`).join(", ")}`);
  lines.push(`leaf sizes      ${Object.entries(r.leafSizes).map(([k, v]) => `${k}x${k} ${v} (${pct(v, totalLeaves)})`).join(", ")}  [${totalLeaves} leaves]`);
  const range = (x: Fp16Range | null) => (x ? `[${fmtNum(x.min)}, ${fmtNum(x.max)}]  (${x.minBits} .. ${x.maxBits})` : "-");
  lines.push(`scale (FP16)    ${range(r.scale)}`);
  lines.push(`bias (FP16)     ${range(r.bias)}`);
  for (const w of r.warnings) lines.push(w);
  return lines.join("\n") + "\n";
}

export function registerInspect(program: Command): void {
  program
    .command("inspect")
    .description("describe a container: layouts, modes, leaf sizes, bits per weight, FP16 ranges")
    .argument("<file>", "container")
    .requiredOption("--shape <OxI>", "shape: rows x columns")
    .option("--profile <profile>", "v1, v2 or auto", "auto")
    .option("--json", "print JSON instead of text")
    .action(async (file: string, opts: { shape: string; profile: string; json?: boolean }) => {
      const shape = parseShape(opts.shape);
      const profile = parseProfile(opts.profile);
      const bytes = await readInput(file);
      const info = inspectContainer(file, parse(bytes, { profile, shape }));
      if (opts.json) {
        // JSON has no -0: signed zeros are visible in the bit patterns
        process.stdout.write(JSON.stringify(info, null, 2) + "\n");
      } else process.stdout.write(formatInspection(info));
    });
}
