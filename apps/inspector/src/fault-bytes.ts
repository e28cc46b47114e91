/** The bytes around a stream fault, 16 a line, for the page's hex view of a refused stream. */

export interface HexLine {
  /** offset of the line's first byte */
  offset: number;
  bytes: { offset: number; value: number }[];
}

/**
 * Whole 16-byte lines covering [offset - before, offset + after), clamped to the stream. An
 * offset at or past the end (a truncated stream) shows the stream's last bytes.
 */
export function hexWindow(bytes: Uint8Array, offset: number, before = 48, after = 48): HexLine[] {
  const at = Math.max(0, Math.min(offset, bytes.length));
  const from = Math.max(0, Math.floor((at - before) / 16) * 16);
  const to = Math.min(bytes.length, Math.ceil((at + after) / 16) * 16);
  const lines: HexLine[] = [];
  for (let line = from; line < to; line += 16) {
    const cells = [];
    for (let o = line; o < Math.min(line + 16, to); o++) cells.push({ offset: o, value: bytes[o]! });
    lines.push({ offset: line, bytes: cells });
  }
  return lines;
}

const hex = (n: number, width: number): string => n.toString(16).padStart(width, "0");

/** HTML of the window: the byte at `offset` marked, or a marker after the last byte when the stream ends there. */
export function hexWindowHtml(bytes: Uint8Array, offset: number): string {
  const lines = hexWindow(bytes, offset);
  const html = lines.map((l) => `${hex(l.offset, 8)}  ${l.bytes.map((b) => (b.offset === offset ? `<mark>${hex(b.value, 2)}</mark>` : hex(b.value, 2))).join(" ")}`);
  if (offset >= bytes.length) html.push(`${hex(bytes.length, 8)}  <mark>end of stream (${bytes.length} bytes)</mark>`);
  return html.join("\n");
}
