/**
 * The NVIDIA GPU's SM clock while rows run, where `nvidia-smi` exists (the GPU machine), so that a
 * row says at what clock it was measured. Session 15 (H100, h100-s15-final-smi.csv): the SM clock
 * sat at its idle 345 MHz for most of a run and rose to 1980 MHz only for a few seconds after a
 * burst of work; the WebGPU kernel rows measured at 1980 MHz gave 0.86 of the copy kernel and
 * those at the idle clock 0.34-0.60 (the "order-dependent slowdown" of sessions 8-14).
 * Elsewhere (no nvidia-smi) every note is empty and nothing is spawned.
 */
import { spawn, type ChildProcess } from "node:child_process";

interface Sample {
  at: number; // performance.now() when read
  mhz: number;
}

export class GpuClock {
  private readonly samples: Sample[] = [];
  private readonly child: ChildProcess | undefined;

  private constructor(child: ChildProcess | undefined) {
    this.child = child;
    child?.stdout?.setEncoding("utf8").on("data", (text: string) => {
      for (const line of text.split("\n")) {
        const mhz = Number(line.trim());
        if (line.trim() && Number.isFinite(mhz)) this.samples.push({ at: performance.now(), mhz });
      }
    });
  }

  /** Samples every 100 ms from now until stop(); a clock that reads nothing where nvidia-smi is missing. */
  static start(): GpuClock {
    try {
      const child = spawn("nvidia-smi", ["--query-gpu=clocks.sm", "--format=csv,noheader,nounits", "-lms", "100"], { stdio: ["ignore", "pipe", "ignore"] });
      child.on("error", () => {}); // not installed: no samples
      child.unref();
      return new GpuClock(child);
    } catch {
      return new GpuClock(undefined);
    }
  }

  /** Run `fn`; its result with the SM clock's range over the samples read meanwhile ("" when none). */
  async during<T>(fn: () => Promise<T>): Promise<{ value: T; clock: string }> {
    const t0 = performance.now();
    const value = await fn();
    const seen = this.samples.filter((s) => s.at >= t0).map((s) => s.mhz);
    if (!seen.length) return { value, clock: "" };
    const lo = Math.min(...seen), hi = Math.max(...seen);
    return { value, clock: lo === hi ? `SM clock ${lo} MHz` : `SM clock ${lo}-${hi} MHz` };
  }

  stop(): void {
    this.child?.kill();
  }
}

/** `rows` with the clock range appended to each note (unchanged when no clock was read). */
export function withClock<R extends { note?: string }>(rows: R[], clock: string): R[] {
  if (!clock) return rows;
  return rows.map((r) => ({ ...r, note: r.note ? `${r.note}; ${clock}` : clock }));
}
