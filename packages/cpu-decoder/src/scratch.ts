/** Kernel memory reused across calls on this thread (only while a call's needs fit SCRATCH_KEEP_BYTES). */
import { MAX_WASM_BYTES, WASM_PAGE, instantiate, pagesFor, type KernelExports } from "./kernel.js";

export interface KernelMemory {
  memory: WebAssembly.Memory;
  kernel: KernelExports;
}

let kept: KernelMemory | undefined;
const SCRATCH_KEEP_BYTES = 128 * 1024 * 1024;

/** A memory of at least `bytes` with the kernel instantiated on it (the kept one, grown, when small enough). */
export function scratchMemory(module: WebAssembly.Module, bytes: number): KernelMemory {
  if (bytes > MAX_WASM_BYTES) throw new RangeError(`${bytes} bytes exceed the kernel's 4 GiB memory`);
  const pages = pagesFor(bytes);
  if (bytes > SCRATCH_KEEP_BYTES) {
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
    return { memory, kernel: instantiate(module, memory) };
  }
  if (!kept) {
    const memory = new WebAssembly.Memory({ initial: pages, maximum: SCRATCH_KEEP_BYTES / WASM_PAGE });
    kept = { memory, kernel: instantiate(module, memory) };
  } else if (kept.memory.buffer.byteLength < bytes) {
    kept.memory.grow(pages - kept.memory.buffer.byteLength / WASM_PAGE);
  }
  return kept;
}
