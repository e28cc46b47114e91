/**
 * Where a GPU comes from. Browsers: `navigator.gpu`. Node: the `webgpu` package (Dawn), loaded
 * with a computed specifier so that bundlers for the browser never follow it. The object that
 * `create()` returns is kept in a process-wide registry: Dawn crashes later if it is collected.
 */
const REGISTRY = Symbol.for("@sgfp4/webgpu-decoder.gpu");

type Registry = { gpu?: GPU; loading?: Promise<GPU | { error: string }> };

function registry(): Registry {
  const g = globalThis as unknown as Record<symbol, Registry | undefined>;
  return (g[REGISTRY] ??= {});
}

/** The GPU entry point, or why there is none. Never throws. */
export async function getGpu(): Promise<GPU | { error: string }> {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  if (nav?.gpu) return nav.gpu;
  const reg = registry();
  if (reg.gpu) return reg.gpu;
  reg.loading ??= loadNodeGpu(reg);
  return reg.loading;
}

async function loadNodeGpu(reg: Registry): Promise<GPU | { error: string }> {
  const isNode = typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node === "string";
  if (!isNode) return { error: "no navigator.gpu: this browser or worker has no WebGPU" };
  try {
    const specifier = "webgpu";
    const mod = (await import(/* @vite-ignore */ specifier)) as { create: (flags: string[]) => GPU; globals: Record<string, unknown> };
    // Dawn's classes (GPUBufferUsage, ...) as globals, as in a browser; never overwrite.
    for (const [k, v] of Object.entries(mod.globals)) if (!(k in globalThis)) (globalThis as Record<string, unknown>)[k] = v;
    const gpu = mod.create(nodeFlags());
    reg.gpu = gpu;
    return gpu;
  } catch (e) {
    return { error: `could not load the 'webgpu' package (Dawn) for Node: ${(e as Error).message}` };
  }
}

/** Extra Dawn flags from SGFP4_DAWN_FLAGS (comma-free list separated by spaces). */
function nodeFlags(): string[] {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const raw = env?.SGFP4_DAWN_FLAGS;
  return raw ? raw.split(/\s+/).filter(Boolean) : [];
}

export interface DeviceRequest {
  /** Ask for the adapter's largest storage binding and buffer sizes (default true). */
  raiseLimits?: boolean;
  /** Also enable timestamp queries when the adapter has them (benchmarks). */
  timestamps?: boolean;
  powerPreference?: GPUPowerPreference;
}

/** An adapter and a device with raised limits, or the reason there is none. Never throws. */
export async function requestDevice(req: DeviceRequest = {}): Promise<{ device: GPUDevice; adapter: GPUAdapter } | { error: string }> {
  const gpu = await getGpu();
  if ("error" in gpu) return gpu;
  let adapter: GPUAdapter | null;
  try {
    adapter = await gpu.requestAdapter({ powerPreference: req.powerPreference ?? "high-performance" });
  } catch (e) {
    return { error: `requestAdapter failed: ${(e as Error).message}` };
  }
  if (!adapter) return { error: "no WebGPU adapter found (no GPU driver, and no software Vulkan such as Mesa lavapipe)" };
  const requiredLimits: Record<string, number> = {};
  if (req.raiseLimits ?? true) {
    requiredLimits.maxStorageBufferBindingSize = adapter.limits.maxStorageBufferBindingSize;
    requiredLimits.maxBufferSize = adapter.limits.maxBufferSize;
  }
  const requiredFeatures: GPUFeatureName[] = [];
  if (req.timestamps && adapter.features.has("timestamp-query")) requiredFeatures.push("timestamp-query");
  try {
    const device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
    return { device, adapter };
  } catch (e) {
    return { error: `requestDevice failed: ${(e as Error).message}` };
  }
}
