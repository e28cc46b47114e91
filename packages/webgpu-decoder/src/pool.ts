/**
 * Device buffers a decoder keeps between calls: grown when a call needs more (to the next power
 * of two, so a run of growing tensors reallocates a few times only), freed by `destroy()`.
 * Upload staging buffers stay mapped for writing between calls: after each use the next mapping
 * is requested at once, and the next call waits for it (it resolves when the GPU is done reading).
 */
const MAP_WRITE = 0x2;
const COPY_SRC = 0x4;

interface Staging {
  buffer: GPUBuffer;
  /** resolves when the buffer is mapped for writing again */
  ready: Promise<void>;
}

export interface StagingUse {
  buffer: GPUBuffer;
  range: Uint8Array;
  /** call once the copy out of it is submitted */
  done(): void;
}

export class BufferPool {
  private readonly buffers = new Map<string, GPUBuffer>();
  private readonly stagings = new Map<string, Staging>();

  constructor(private readonly device: GPUDevice) {}

  /** A buffer of at least `size` bytes with `usage`, kept under `key`. */
  get(key: string, size: number, usage: number): GPUBuffer {
    const have = this.buffers.get(key);
    if (have && have.size >= size && have.usage === usage) return have;
    have?.destroy();
    const buffer = this.device.createBuffer({ size: grow(size), usage, label: `sgfp4-${key}` });
    this.buffers.set(key, buffer);
    return buffer;
  }

  /** A MAP_WRITE staging buffer of at least `size` bytes, mapped, with its whole range. */
  async staging(key: string, size: number): Promise<StagingUse> {
    await this.stagings.get(key)?.ready;
    return this.stagingNow(key, size)!;
  }

  /** `staging` without waiting: undefined while the buffer under `key` is still being mapped again. */
  stagingNow(key: string, size: number): StagingUse | undefined {
    let s = this.stagings.get(key);
    if (s && s.buffer.mapState === "pending") return undefined;
    if (!s || s.buffer.size < size || s.buffer.mapState !== "mapped") {
      s?.buffer.destroy();
      const buffer = this.device.createBuffer({ size: grow(size), usage: MAP_WRITE | COPY_SRC, mappedAtCreation: true, label: `sgfp4-${key}` });
      s = { buffer, ready: Promise.resolve() };
      this.stagings.set(key, s);
    }
    const staging = s;
    return {
      buffer: staging.buffer,
      range: new Uint8Array(staging.buffer.getMappedRange(0, size)),
      // after the copy out of it is submitted: map again for the next call
      done: () => {
        // handled here: on a lost or destroyed device it rejects, and the next call makes a new one
        staging.ready = staging.buffer.mapAsync(MAP_WRITE).catch(() => undefined);
      },
    };
  }

  destroy(): void {
    for (const b of this.buffers.values()) b.destroy();
    for (const s of this.stagings.values()) s.buffer.destroy();
    this.buffers.clear();
    this.stagings.clear();
  }
}

/** Sizes kept: the next power of two from 64 KiB, in steps of 1/4 above 64 MiB (less waste). */
function grow(size: number): number {
  const min = Math.max(size, 64 * 1024);
  if (min <= 64 * 1024 * 1024) return 2 ** Math.ceil(Math.log2(min));
  const step = 2 ** Math.floor(Math.log2(min)) / 4;
  return Math.ceil(min / step) * step;
}

/** Runs async tasks one after another (the pooled buffers serve one call at a time). */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => Promise<T>): Promise<T> {
    const next = this.tail.then(task, task);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
