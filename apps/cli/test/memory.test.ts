/**
 * The encode's working set, measured: peak RSS of a child process encoding one 256 MiB float32
 * tensor from a file, less the peak of the same process encoding a tiny model (the runtime and the
 * loaded modules), stays within the bound the README states: the container plus a constant (a
 * few bands of rows, the garbage the collector lets build up, the heap), plus a constant per
 * worker thread; never the tensor. Reading the tensor whole, keeping its decode, copying the
 * container whole or keeping rate control's statistics in memory (half the tensor) breaks it.
 */
import { spawnSync } from "node:child_process";
import { open, rm, stat } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { BIN, tempDir } from "./helpers.js";

const MiB = 2 ** 20;
/** The README's bound: container + CONSTANT on one thread, + PER_WORKER for each worker thread. */
const CONSTANT = 160 * MiB;
const PER_WORKER = 120 * MiB;

/** Peak RSS in bytes of `sgfp4 ARGS` run in a fresh process (through the CLI's main()). */
function peakRss(args: string[]): number {
  const program = pathToFileURL(path.join(path.dirname(BIN), "program.js")).href;
  const script = `const { main } = await import(${JSON.stringify(program)}); const code = await main(["node", "sgfp4", ...${JSON.stringify(args)}]); if (code) process.exit(code); console.log(process.resourceUsage().maxRSS * 1024);`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 400_000 });
  if (r.status !== 0) throw new Error(`sgfp4 ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return Number(r.stdout.trim().split("\n").at(-1));
}

/** A safetensors file with one [rows, cols] float32 tensor of pseudo-random weights, written in bands. */
async function bigModel(file: string, rows: number, cols: number): Promise<void> {
  const json = Buffer.from(JSON.stringify({ w: { dtype: "F32", shape: [rows, cols], data_offsets: [0, rows * cols * 4] } }));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  const fh = await open(file, "w");
  try {
    await fh.write(Buffer.concat([len, json]));
    let s = 1;
    const band = new Float32Array(64 * cols);
    for (let r = 0; r < rows; r += 64) {
      for (let i = 0; i < band.length; i++) {
        s = (Math.imul(s, 1103515245) + 12345) >>> 0;
        band[i] = ((s >>> 8) / 16777216 - 0.5) * 0.1;
      }
      await fh.write(new Uint8Array(band.buffer));
    }
  } finally {
    await fh.close();
  }
}

describe("encode memory", () => {
  it("peak working set for a 256 MiB float32 tensor: its container + 160 MiB, + 120 MiB per worker thread", async () => {
    const dir = await tempDir();
    const [rows, cols] = [4096, 16384];
    const tensorBytes = rows * cols * 4;
    const big = path.join(dir, "big.safetensors");
    await bigModel(big, rows, cols);
    const tiny = path.join(dir, "tiny.safetensors");
    await bigModel(tiny, 64, 64);
    const base = peakRss(["encode", tiny, "-o", path.join(dir, "tiny-out"), "--threads", "1"]);
    const runs: [string, string[], number][] = [
      ["rd, 1 thread", ["--threads", "1"], 0],
      ["rd, 2 worker threads", ["--threads", "2"], 2],
      ["rd --bpw 4, 1 thread", ["--threads", "1", "--bpw", "4"], 0],
    ];
    for (const [i, [label, args, workers]] of runs.entries()) {
      const out = path.join(dir, `big-out-${i}`);
      const peak = peakRss(["encode", big, "-o", out, ...args]);
      const container = (await stat(path.join(out, "tensors", "00000-w.sgfp4"))).size;
      await rm(out, { recursive: true, force: true });
      const working = peak - base;
      const bound = container + CONSTANT + workers * PER_WORKER;
      console.log(`${label}: ${rows}x${cols} float32 (${tensorBytes / MiB} MiB), container ${(container / MiB).toFixed(1)} MiB: peak RSS ${(peak / MiB).toFixed(0)} MiB, runtime ${(base / MiB).toFixed(0)} MiB, working set ${(working / MiB).toFixed(0)} MiB = container + ${((working - container) / MiB).toFixed(0)} MiB (${(working / tensorBytes).toFixed(2)} x the tensor; bound ${(bound / MiB).toFixed(0)} MiB)`);
      expect(working).toBeGreaterThan(container); // it holds the container: a measurement that saw nothing fails
      expect(working).toBeLessThanOrEqual(bound);
    }
    await rm(dir, { recursive: true, force: true });
  }, 900_000);
});
