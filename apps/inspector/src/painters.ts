/** Painters for TensorCanvas: structure (leaves to scale, with borders) and value heat maps. */
import { BACKGROUND, type Painter } from "./view";
import { DIVERGING, MODE_COLORS, PADDING_DIM, SEQUENTIAL, SIZE_COLORS, dim, rgb } from "./colors";
import type { StructureModel } from "./model";
import { scalePosition, type ValueScale } from "./value-scale";

export type ColorBy = "mode" | "size" | "bpw";

const LEAF_BORDER = rgb(20, 20, 24);
const BLOCK_BORDER = rgb(255, 255, 255);
/** borders appear once a leaf is this many screen pixels wide, else they would cover it */
const MIN_PIXELS_FOR_BORDER = 4;

export function leafColors(m: StructureModel, by: ColorBy): { colors: Uint32Array; range?: [number, number] } {
  const colors = new Uint32Array(m.leafCount);
  if (by === "mode") for (let i = 0; i < m.leafCount; i++) colors[i] = MODE_COLORS[m.leafMode[i]!]!;
  else if (by === "size") for (let i = 0; i < m.leafCount; i++) colors[i] = SIZE_COLORS[m.leafSize[i]!]!;
  else {
    let hi = 0;
    for (const v of m.leafBpw) hi = Math.max(hi, v);
    hi = Math.max(hi, 1);
    for (let i = 0; i < m.leafCount; i++) colors[i] = SEQUENTIAL[Math.min(255, Math.round((m.leafBpw[i]! / hi) * 255))]!;
    return { colors, range: [0, hi] };
  }
  return { colors };
}

export function structurePainter(m: StructureModel, colors: Uint32Array): Painter {
  return (out, w, h, rowOf, colOf, pxPerElement) => {
    const cellLeaf = m.cellLeaf;
    const cellsX = m.cellsX;
    const blockBorders = 64 * pxPerElement >= MIN_PIXELS_FOR_BORDER;
    const leafBorders = pxPerElement * 4 >= MIN_PIXELS_FOR_BORDER;
    const dimmed = new Uint32Array(colors.length);
    for (let i = 0; i < colors.length; i++) dimmed[i] = dim(colors[i]!, PADDING_DIM);
    let prevRowLeaf = new Int32Array(w).fill(-2);
    let prevR = -1;
    for (let y = 0; y < h; y++) {
      const r = rowOf[y]!;
      const rowLeaf = new Int32Array(w);
      let o = y * w;
      if (r < 0) {
        out.fill(BACKGROUND, o, o + w);
        prevRowLeaf.fill(-2);
        prevR = -1;
        continue;
      }
      const cellRow = (r >>> 2) * cellsX;
      let prevLeaf = -2;
      let prevC = -1;
      for (let x = 0; x < w; x++, o++) {
        const c = colOf[x]!;
        if (c < 0) {
          out[o] = BACKGROUND;
          rowLeaf[x] = -2;
          prevLeaf = -2;
          continue;
        }
        const leaf = cellLeaf[cellRow + (c >>> 2)]!;
        rowLeaf[x] = leaf;
        let color = leaf < 0 ? BACKGROUND : r >= m.rows || c >= m.cols ? dimmed[leaf]! : colors[leaf]!;
        // A border pixel is the first screen pixel of a new macroblock or leaf.
        if (blockBorders && ((c % 64 === 0 && c !== prevC && prevLeaf !== -2) || (r % 64 === 0 && r !== prevR && prevR >= 0))) color = BLOCK_BORDER;
        else if (leafBorders && leaf >= 0 && m.leafSize[leaf]! * pxPerElement >= MIN_PIXELS_FOR_BORDER) {
          if ((prevLeaf >= 0 && prevLeaf !== leaf) || (prevRowLeaf[x]! >= 0 && prevRowLeaf[x] !== leaf)) color = LEAF_BORDER;
        }
        out[o] = color;
        prevLeaf = leaf;
        prevC = c;
      }
      prevRowLeaf = rowLeaf;
      prevR = r;
    }
  };
}

/** Paints each visible tensor element with `color(value)`; padding and off-tensor pixels get the background. */
function elementPainter(data: Float32Array, cols: number, color: (v: number) => number): Painter {
  return (out, w, h, rowOf, colOf) => {
    for (let y = 0; y < h; y++) {
      const r = rowOf[y]!;
      let o = y * w;
      if (r < 0) {
        out.fill(BACKGROUND, o, o + w);
        continue;
      }
      const base = r * cols;
      for (let x = 0; x < w; x++, o++) {
        const c = colOf[x]!;
        out[o] = c < 0 ? BACKGROUND : color(data[base + c]!);
      }
    }
  };
}

const NAN_COLOR = rgb(255, 0, 255);

/** Colour of a signed value on the diverging map (value-scale.ts); NaN shows magenta. */
export function valueColor(v: number, scale: ValueScale): number {
  const p = scalePosition(v, scale);
  return p !== p ? NAN_COLOR : DIVERGING[Math.max(0, Math.min(255, Math.round(127.5 + 127.5 * p)))]!;
}

/** Signed values, symmetric around 0 on the diverging map. */
export function valuesPainter(data: Float32Array, cols: number, scale: ValueScale): Painter {
  return elementPainter(data, cols, (v) => valueColor(v, scale));
}

/** Magnitudes (errors) from 0 up on the sequential map, same scale shape. */
export function magnitudePainter(data: Float32Array, cols: number, scale: ValueScale): Painter {
  return elementPainter(data, cols, (v) => {
    const p = scalePosition(v, scale);
    return p !== p ? NAN_COLOR : SEQUENTIAL[Math.max(0, Math.min(255, Math.round(255 * p)))]!;
  });
}
