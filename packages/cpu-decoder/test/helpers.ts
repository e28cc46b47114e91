/** Shapes that crop at the edges (1x1, 3x200, 65x63, 130x70), exact tiles, and wide ones that need several bands. */
export const SHAPES: ReadonlyArray<readonly [number, number]> = [
  [1, 1],
  [3, 200],
  [65, 63],
  [130, 70],
  [64, 64],
  [128, 192],
  [200, 1100],
  [70, 2051],
  [257, 5],
];
