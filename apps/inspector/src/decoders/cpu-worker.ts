/// <reference lib="webworker" />
/** Runs CPU decodes off the main thread so a 4096x4096 tensor never freezes the page. */
import { cpuDecoderLabel, decodeOnCpu } from "./cpu-impl";
import type { Profile, Shape } from "@sgfp4/format";

export interface DecodeRequest {
  id: number;
  bytes: Uint8Array;
  profile: Profile;
  shape: [number, number];
}
export type DecodeReply = { id: number; ok: true; out: Float32Array; ms: number; label: string } | { id: number; ok: false; code: string; message: string };

const scope = self as unknown as DedicatedWorkerGlobalScope;

scope.onmessage = async (ev: MessageEvent<DecodeRequest>) => {
  const { id, bytes, profile, shape } = ev.data;
  const t0 = performance.now();
  try {
    const out = await decodeOnCpu(bytes, { profile, shape: shape as Shape });
    const reply: DecodeReply = { id, ok: true, out, ms: performance.now() - t0, label: cpuDecoderLabel() };
    scope.postMessage(reply, [out.buffer]);
  } catch (e) {
    const o = e as { code?: unknown; message?: unknown };
    const reply: DecodeReply = { id, ok: false, code: typeof o?.code === "string" ? o.code : "BACKEND_FAILURE", message: String(o?.message ?? e) };
    scope.postMessage(reply);
  }
};
