/// <reference types="@webgpu/types" />
/**
 * GPU failure behaviour (issue 7): a lost device, tiny limits and a missing adapter surface as
 * Sgfp4Error BACKEND_FAILURE (or decode correctly), and the process stays usable afterwards.
 *
 * Vulkan's missing-loader, no-device and SGFP4_VULKAN_DEVICE cases (info() and available() in a
 * child process) are covered by packages/vulkan-addon/test/errors.test.ts; here only the decode
 * path through the wrapper is added.
 */
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Sgfp4Error, writeV1 } from "@sgfp4/format";
import { decodeReference } from "@sgfp4/cpu-decoder";
import { WebGpuDecoder, createConformanceBackend, requestDevice } from "@sgfp4/webgpu-decoder";
import { createNodeDevice } from "@sgfp4/webgpu-decoder/node";
import * as vulkan from "@sgfp4/vulkan-addon";
import { Rng, generateValid, type GeneratedCase } from "../src/index.js";

// decoding 24 containers in 64-element windows on lavapipe takes seconds
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const codeOf = (e: unknown) => (e instanceof Sgfp4Error ? e.code : `not an Sgfp4Error: ${String(e)}`);

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  return undefined;
}

/** 64x64, one v1 block, codes 1 with scale 2.0 and bias 0.5: every value is 2.5. */
const small = writeV1({ shape: [64, 64], blocks: [{ mode: 0, scaleBits: 0x4000, biasBits: 0x3800, codes: new Array(4096).fill(1) }] });
const smallCall = { profile: "v1" as const, shape: [64, 64] as const };
const allValues = (a: Float32Array, v: number) => a.length === 4096 && a.every((x) => x === v);

/** Valid containers (both profiles, every layout, crops, subnormal and signed-zero parameters). */
const cases: GeneratedCase[] = Array.from({ length: 24 }, (_, i) => generateValid(new Rng(4242, i), { maxTiles: 3 }));

const bits = (a: Float32Array) => new Uint32Array(a.buffer, a.byteOffset, a.length);

/** Runs `work` with navigator.gpu replaced (getGpu prefers it, as in a browser), then restores. */
async function withNavigatorGpu<T>(gpu: Partial<GPU>, work: () => Promise<T>): Promise<T> {
  const saved = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  Object.defineProperty(globalThis, "navigator", { value: { gpu }, configurable: true, writable: true });
  try {
    return await work();
  } finally {
    if (saved) Object.defineProperty(globalThis, "navigator", saved);
    else delete (globalThis as { navigator?: unknown }).navigator;
  }
}

let webgpuReason = "";
const webgpuProbe = await requestDevice({ raiseLimits: false }).then(
  (r) => {
    if ("error" in r) webgpuReason = r.error;
    else r.device.destroy();
    return !("error" in r);
  },
  (e: unknown) => ((webgpuReason = String(e)), false),
);

describe("webgpu: destroyed device", () => {
  let device: GPUDevice | undefined;
  let fresh: GPUDevice | undefined;
  beforeAll(async () => {
    if (webgpuProbe) {
      device = await createNodeDevice();
      fresh = await createNodeDevice();
    }
  });
  afterAll(() => {
    device?.destroy();
    fresh?.destroy();
  });

  it("decode after device.destroy() rejects with BACKEND_FAILURE naming the lost device, then a new device decodes", async (ctx) => {
    if (!device || !fresh) return ctx.skip(`WebGPU unavailable here: ${webgpuReason}`);
    const decoder = new WebGpuDecoder(device);
    expect(allValues(await decoder.decode(small, smallCall), 2.5)).toBe(true);
    device.destroy();
    const first = await rejection(decoder.decode(small, smallCall));
    expect(codeOf(first)).toBe("BACKEND_FAILURE");
    expect((first as Error).message).toMatch(/device was lost.*destroyed/);
    expect(decoder.lost?.reason).toBe("destroyed");
    // once known lost, it fails at once without touching the device
    const second = await rejection(decoder.decode(small, smallCall));
    expect(codeOf(second)).toBe("BACKEND_FAILURE");
    // a host-side rejection still reports its own code first
    expect(codeOf(await rejection(decoder.decode(small.subarray(1), smallCall)))).toBe("SIZE_MISMATCH");

    const replacement = new WebGpuDecoder(fresh);
    expect(allValues(await replacement.decode(small, smallCall), 2.5)).toBe(true);
  });

  it("a device destroyed while a decode is in flight: correct bits or BACKEND_FAILURE, never a hang or a raw error", async (ctx) => {
    if (!webgpuProbe) return ctx.skip(`WebGPU unavailable here: ${webgpuReason}`);
    const d = await createNodeDevice();
    const decoder = new WebGpuDecoder(d);
    const pending = decoder.decode(small, smallCall).then(
      (out) => (allValues(out, 2.5) ? "correct" : "wrong bits"),
      (e: unknown) => codeOf(e),
    );
    d.destroy();
    expect(["correct", "BACKEND_FAILURE"]).toContain(await pending);
  });
});

describe("webgpu: tiny limits still decode bit-exactly", () => {
  let device: GPUDevice | undefined;
  beforeAll(async () => {
    // default (unraised) limits: 128 MiB storage bindings
    if (webgpuProbe) device = await createNodeDevice({ raiseLimits: false });
  });
  afterAll(() => device?.destroy());

  const variants: [string, ConstructorParameters<typeof WebGpuDecoder>[1]][] = [
    ["default device limits", {}],
    ["maxChunkBytes 256 (64-element output windows)", { maxChunkBytes: 256 }],
    ["maxChunkBytes 256 and maxInputBytes 16 (every window gets its own compact inputs)", { maxChunkBytes: 256, maxInputBytes: 16 }],
    ["maxChunkBytes 16384 (whole macroblock rows of narrow shapes), maxInputBytes 4096", { maxChunkBytes: 16384, maxInputBytes: 4096 }],
  ];
  for (const [name, options] of variants) {
    it(`${name}: ${cases.length} generated containers equal the construction and decodeReference`, async (ctx) => {
      if (!device) return ctx.skip(`WebGPU unavailable here: ${webgpuReason}`);
      const decoder = new WebGpuDecoder(device, options);
      for (const c of cases) {
        const call = { profile: c.profile, shape: c.shape };
        const got = await decoder.decode(c.bytes, call);
        expect(bits(got)).toEqual(bits(c.expected));
        expect(bits(got)).toEqual(bits(decodeReference(c.bytes, call)));
      }
    });
  }

  it("a device whose storage bindings hold only 4096 bytes: bit-exact, or a clean LIMIT_EXCEEDED", async (ctx) => {
    if (!device) return ctx.skip(`WebGPU unavailable here: ${webgpuReason}`);
    // WebGPU cannot request limits below the defaults, so the limits the decoder reads are narrowed
    const real = device;
    const limits = new Proxy(real.limits, { get: (t, k) => (k === "maxStorageBufferBindingSize" ? 4096 : (Reflect.get(t, k) as unknown)) });
    const narrow = new Proxy(real, {
      get: (t, k) => {
        if (k === "limits") return limits;
        const v = Reflect.get(t, k) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      },
    });
    const decoder = new WebGpuDecoder(narrow);
    let decoded = 0;
    for (const c of cases) {
      const call = { profile: c.profile, shape: c.shape };
      const outcome = await decoder.decode(c.bytes, call).then(
        (got) => bits(got),
        (e: unknown) => codeOf(e),
      );
      if (outcome === "LIMIT_EXCEEDED") continue;
      expect(outcome).toEqual(bits(c.expected));
      decoded++;
    }
    // v1 blocks (2048-byte payloads) fit such a binding one window at a time
    expect(decoded).toBeGreaterThan(0);
  });
});

describe("webgpu: no adapter", () => {
  it("requestAdapter returning null: available() says why, decode rejects with BACKEND_FAILURE, createNodeDevice too", async () => {
    await withNavigatorGpu({ requestAdapter: async () => null }, async () => {
      const backend = createConformanceBackend();
      const a = await backend.available();
      expect(a.ok).toBe(false);
      expect(!a.ok && a.reason).toMatch(/no WebGPU adapter found/);
      const e = await rejection(backend.decode(small, smallCall));
      expect(codeOf(e)).toBe("BACKEND_FAILURE");
      expect((e as Error).message).toMatch(/no WebGPU adapter found/);
      expect(codeOf(await rejection(createNodeDevice()))).toBe("BACKEND_FAILURE");
    });
  });

  it("requestAdapter throwing: reported as the reason, not thrown", async () => {
    const failing = {
      requestAdapter: async (): Promise<GPUAdapter | null> => {
        throw new Error("adapter enumeration failed");
      },
    };
    const a = await withNavigatorGpu(failing, () => createConformanceBackend().available());
    expect(a).toEqual({ ok: false, reason: "requestAdapter failed: adapter enumeration failed" });
  });

  it("with the real GPU back, a new backend decodes", async (ctx) => {
    if (!webgpuProbe) return ctx.skip(`WebGPU unavailable here: ${webgpuReason}`);
    const backend = createConformanceBackend();
    try {
      expect(allValues((await backend.decode(small, smallCall)) as Float32Array, 2.5)).toBe(true);
    } finally {
      await backend.close!();
    }
  });
});

describe("vulkan: failures on the decode path (info()/available() are in packages/vulkan-addon/test/errors.test.ts)", () => {
  const availability = vulkan.availability();
  const skipReason = availability.ok ? "" : `Vulkan unavailable here: ${availability.reason}`;

  it("an unknown device option rejects decode with BACKEND_FAILURE listing the devices; the next decode works", (ctx) => {
    if (!availability.ok) return ctx.skip(skipReason);
    let e: unknown;
    try {
      vulkan.decode(small, { ...smallCall, device: "no-such-device-xyz" });
    } catch (err) {
      e = err;
    }
    expect(codeOf(e)).toBe("BACKEND_FAILURE");
    expect((e as { reason?: string }).reason).toBe("no-device");
    expect((e as Error).message).toContain(vulkan.info().name);
    expect(allValues(vulkan.decode(small, smallCall), 2.5)).toBe(true);
  });

  it("SGFP4_VULKAN_LOADER naming a missing file: decode in a child rejects with BACKEND_FAILURE no-loader", (ctx) => {
    let entry: string;
    try {
      entry = createRequire(import.meta.url).resolve("@sgfp4/vulkan-addon/package.json").replace(/package\.json$/, "dist/index.js");
      vulkan.nativeAddon();
    } catch (err) {
      return ctx.skip(`the Vulkan addon is not built here: ${(err as Error).message}`);
    }
    const script = `
      const { writeV1 } = await import(${JSON.stringify(createRequire(import.meta.url).resolve("@sgfp4/format"))});
      const v = await import(${JSON.stringify(entry)});
      const bytes = writeV1({ shape: [64, 64], blocks: [{ mode: 0, scaleBits: 0x3c00, biasBits: 0, codes: new Array(4096).fill(1) }] });
      try { v.decode(bytes, { profile: "v1", shape: [64, 64] }); console.log(JSON.stringify({ ok: true })); }
      catch (e) { console.log(JSON.stringify({ ok: false, name: e.name, code: e.code, reason: e.reason, message: e.message })); }`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      env: { ...process.env, SGFP4_VULKAN_LOADER: "/nonexistent/libvulkan.so.1" },
      encoding: "utf8",
    });
    const r = JSON.parse(out.trim().split("\n").pop()!) as { ok: boolean; code?: string; reason?: string; message?: string };
    expect(r).toMatchObject({ ok: false, code: "BACKEND_FAILURE", reason: "no-loader" });
    expect(r.message).toContain("/nonexistent/libvulkan.so.1");
  });
});
