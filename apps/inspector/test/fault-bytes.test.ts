import { describe, expect, it } from "vitest";
import { hexWindow, hexWindowHtml } from "../src/fault-bytes";

const stream = Uint8Array.from({ length: 200 }, (_, i) => i);

describe("bytes around a fault", () => {
  it("whole 16-byte lines around the offset, clamped to the stream", () => {
    const lines = hexWindow(stream, 100, 48, 48);
    expect(lines.map((l) => l.offset)).toEqual([48, 64, 80, 96, 112, 128, 144]); // [52, 148) in whole lines
    expect(lines[3]!.bytes[4]).toEqual({ offset: 100, value: 100 });
    expect(hexWindow(stream, 3).map((l) => l.offset)).toEqual([0, 16, 32, 48]); // [0, 51)
    expect(hexWindow(stream, 199).at(-1)!.bytes.at(-1)!.offset).toBe(199);
  });

  it("marks the failing byte, or the end of a truncated stream", () => {
    const html = hexWindowHtml(stream, 100);
    expect(html).toContain("00000060  60 61 62 63 <mark>64</mark> 65");
    expect(html.match(/<mark>/g)).toHaveLength(1);
    const end = hexWindowHtml(stream.subarray(0, 40), 40);
    expect(end).toContain("<mark>end of stream (40 bytes)</mark>");
    expect(end).toContain("00000020  20 21 22 23 24 25 26 27");
  });
});
