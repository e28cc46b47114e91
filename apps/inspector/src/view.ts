/**
 * A canvas showing a rows x cols grid with zoom (wheel), pan (drag) and fit (double click).
 * Each redraw maps every screen pixel to one grid element and lets a painter colour it, so
 * the cost is the canvas size, never the tensor size.
 */

/** Fill `out` (ABGR, w*h) given each screen column's grid column and each row's grid row (-1 = outside). */
export type Painter = (out: Uint32Array, w: number, h: number, rowOf: Int32Array, colOf: Int32Array, pixelsPerElement: number) => void;

export const BACKGROUND = 0xff2a211c; // ABGR of #1c212a

export class TensorCanvas {
  readonly canvas: HTMLCanvasElement;
  private ctx: CanvasRenderingContext2D;
  private rows = 1;
  private cols = 1;
  private painter: Painter | undefined;
  /** screen pixels per grid element, and the grid coordinate at the canvas's top-left */
  scale = 1;
  originRow = 0;
  originCol = 0;
  private image: ImageData;
  onHover?: (row: number, col: number, ev: MouseEvent) => void;
  onLeave?: () => void;
  onViewChange?: () => void;

  constructor(canvas: HTMLCanvasElement) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d")!;
    this.image = this.ctx.createImageData(canvas.width, canvas.height);
    this.listen();
  }

  setGrid(rows: number, cols: number, painter: Painter, keepView = false): void {
    const sameGrid = rows === this.rows && cols === this.cols;
    this.rows = rows;
    this.cols = cols;
    this.painter = painter;
    if (!(keepView && sameGrid)) this.fit();
    else this.draw();
  }

  setPainter(painter: Painter): void {
    this.painter = painter;
    this.draw();
  }

  fit(): void {
    const { width: w, height: h } = this.canvas;
    this.scale = Math.min(w / this.cols, h / this.rows);
    this.originRow = -(h / this.scale - this.rows) / 2;
    this.originCol = -(w / this.scale - this.cols) / 2;
    this.draw();
  }

  /** Copy another view's zoom and pan (used to keep structure and values views in step). */
  copyView(o: TensorCanvas): void {
    this.scale = o.scale;
    this.originRow = o.originRow;
    this.originCol = o.originCol;
    this.draw();
  }

  /** Grid coordinate under a canvas pixel. */
  elementAt(px: number, py: number): [number, number] {
    return [Math.floor(this.originRow + py / this.scale), Math.floor(this.originCol + px / this.scale)];
  }

  draw(): void {
    const { width: w, height: h } = this.canvas;
    if (this.image.width !== w || this.image.height !== h) this.image = this.ctx.createImageData(w, h);
    const out = new Uint32Array(this.image.data.buffer);
    const rowOf = new Int32Array(h);
    const colOf = new Int32Array(w);
    for (let y = 0; y < h; y++) {
      const r = Math.floor(this.originRow + (y + 0.5) / this.scale);
      rowOf[y] = r >= 0 && r < this.rows ? r : -1;
    }
    for (let x = 0; x < w; x++) {
      const c = Math.floor(this.originCol + (x + 0.5) / this.scale);
      colOf[x] = c >= 0 && c < this.cols ? c : -1;
    }
    if (this.painter) this.painter(out, w, h, rowOf, colOf, this.scale);
    else out.fill(BACKGROUND);
    this.ctx.putImageData(this.image, 0, 0);
  }

  private listen(): void {
    const c = this.canvas;
    const pos = (ev: MouseEvent): [number, number] => {
      const r = c.getBoundingClientRect();
      return [((ev.clientX - r.left) * c.width) / r.width, ((ev.clientY - r.top) * c.height) / r.height];
    };
    let drag: { x: number; y: number; row: number; col: number } | undefined;
    c.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const [px, py] = pos(ev);
      const before = [this.originRow + py / this.scale, this.originCol + px / this.scale] as const;
      const factor = Math.exp(-ev.deltaY * 0.0015);
      const fitScale = Math.min(c.width / this.cols, c.height / this.rows);
      this.scale = Math.min(64, Math.max(fitScale / 4, this.scale * factor));
      this.originRow = before[0] - py / this.scale;
      this.originCol = before[1] - px / this.scale;
      this.draw();
      this.onViewChange?.();
    }, { passive: false });
    c.addEventListener("mousedown", (ev) => {
      const [x, y] = pos(ev);
      drag = { x, y, row: this.originRow, col: this.originCol };
    });
    window.addEventListener("mouseup", () => (drag = undefined));
    c.addEventListener("mousemove", (ev) => {
      const [x, y] = pos(ev);
      if (drag && ev.buttons & 1) {
        this.originRow = drag.row - (y - drag.y) / this.scale;
        this.originCol = drag.col - (x - drag.x) / this.scale;
        this.draw();
        this.onViewChange?.();
      }
      const [r, col] = this.elementAt(x, y);
      if (r >= 0 && col >= 0 && r < this.rows && col < this.cols) this.onHover?.(r, col, ev);
      else this.onLeave?.();
    });
    c.addEventListener("mouseleave", () => this.onLeave?.());
    c.addEventListener("dblclick", () => {
      this.fit();
      this.onViewChange?.();
    });
  }
}
