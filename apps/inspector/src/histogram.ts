/** Small bar charts drawn on a canvas: one bar per bucket, count above, label below. */
import { css } from "./colors";

export interface Bar {
  label: string;
  value: number;
  color?: number;
  /** text above the bar; default the value */
  note?: string;
}

export function drawBars(canvas: HTMLCanvasElement, title: string, bars: Bar[]): void {
  const ctx = canvas.getContext("2d")!;
  const { width: w, height: h } = canvas;
  ctx.clearRect(0, 0, w, h);
  ctx.fillStyle = "#d8dee9";
  ctx.font = "12px system-ui, sans-serif";
  ctx.textAlign = "left";
  ctx.fillText(title, 4, 14);
  const top = 34;
  const bottom = h - 20;
  const max = Math.max(1, ...bars.map((b) => b.value));
  const slot = (w - 8) / Math.max(1, bars.length);
  ctx.textAlign = "center";
  bars.forEach((b, i) => {
    const bh = ((bottom - top) * b.value) / max;
    const x = 4 + i * slot;
    ctx.fillStyle = b.color !== undefined ? css(b.color) : "#88c0d0";
    ctx.fillRect(x + slot * 0.15, bottom - bh, slot * 0.7, bh);
    ctx.fillStyle = "#d8dee9";
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillText(b.note ?? String(b.value), x + slot / 2, bottom - bh - 4);
    ctx.font = "10px system-ui, sans-serif";
    ctx.fillText(b.label, x + slot / 2, h - 6, slot - 2);
  });
}
