/// <reference types="node" />
/**
 * Worker body of the Node validator pool (worker-pool.ts): validates one stream per message with
 * @sgfp4/cpu-decoder's validator and sends back the leaf table (transferred, not copied), or the
 * Sgfp4Error's code and detail.
 */
import { parentPort } from "node:worker_threads";
import { Sgfp4Error, type Shape } from "@sgfp4/format";
import { buildLeafTable } from "@sgfp4/cpu-decoder/validate";
import type { ValidationRequest } from "./validation.js";

export interface ValidateMessage {
  id: number;
  bytes: Uint8Array;
  opts: ValidationRequest;
}

export type ValidateReply =
  | { id: number; profile: "v1" | "v2"; shape: Shape; leafTable: Uint32Array }
  | { id: number; error: { code?: Sgfp4Error["code"]; message: string } };

parentPort?.on("message", (m: ValidateMessage) => {
  let reply: ValidateReply;
  let transfer: ArrayBuffer[] = [];
  try {
    const t = buildLeafTable(m.bytes, m.opts);
    const whole = t.leafTable.byteOffset === 0 && t.leafTable.byteLength === t.leafTable.buffer.byteLength && t.leafTable.buffer instanceof ArrayBuffer;
    const leafTable = whole ? t.leafTable : t.leafTable.slice();
    reply = { id: m.id, profile: t.profile, shape: t.shape, leafTable };
    transfer = [leafTable.buffer as ArrayBuffer];
  } catch (e) {
    reply = { id: m.id, error: e instanceof Sgfp4Error ? { code: e.code, message: e.message.slice(e.code.length + 2) } : { message: e instanceof Error ? e.message : String(e) } };
  }
  parentPort!.postMessage(reply, transfer);
});
