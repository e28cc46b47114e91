/// <reference lib="webworker" />
/** Runs CPU decodes off the main thread so a 4096x4096 tensor never freezes the page; the decoder comes from the registry. */
import { browserDecoders } from "@sgfp4/decoders";
import type { Profile, Shape } from "@sgfp4/format";

export interface WorkerRequest {
  id: number;
  bytes: Uint8Array;
  profile: Profile;
  shape: [number, number];
}
export type WorkerReply = { id: number; ok: true; out: Float32Array; ms: number; label: string } | { id: number; ok: false; code: string; message: string };

const scope = self as unknown as DedicatedWorkerGlobalScope;
const cpu = browserDecoders.open("cpu");
const label = cpu.then(async (d) => {
  const a = await d.available();
  return a.ok ? `@sgfp4/cpu-decoder, ${a.detail ?? "ready"}` : `@sgfp4/cpu-decoder unavailable: ${a.reason}`;
});

scope.onmessage = async (ev: MessageEvent<WorkerRequest>) => {
  const { id, bytes, profile, shape } = ev.data;
  const t0 = performance.now();
  try {
    const out = (await (await cpu).decode(bytes, { profile, shape: shape as Shape, format: "f32" })) as Float32Array;
    const reply: WorkerReply = { id, ok: true, out, ms: performance.now() - t0, label: await label };
    scope.postMessage(reply, [out.buffer]);
  } catch (e) {
    const o = e as { code?: unknown; message?: unknown };
    const reply: WorkerReply = { id, ok: false, code: typeof o?.code === "string" ? o.code : "BACKEND_FAILURE", message: String(o?.message ?? e) };
    scope.postMessage(reply);
  }
};
