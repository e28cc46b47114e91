/** Worker-thread entry: runs block jobs for the pool in parallel.ts. */
import { parentPort } from "node:worker_threads";
import { encodeBlockRows, statsBlockRows, type BlockJob } from "./blocks.js";

parentPort!.on("message", (msg: { id: number; kind: "encode" | "stats"; job: BlockJob }) => {
  try {
    if (msg.kind === "stats") {
      const stats = statsBlockRows(msg.job);
      parentPort!.postMessage({ id: msg.id, result: stats }, [stats.buffer as ArrayBuffer]);
    } else {
      const r = encodeBlockRows(msg.job);
      parentPort!.postMessage({ id: msg.id, result: r }, [r.bytes, r.recordBytes, r.v1Headers, r.lweArea, r.counts, r.signalError, r.decoded].map((a) => a.buffer as ArrayBuffer));
    }
  } catch (e) {
    parentPort!.postMessage({ id: msg.id, error: (e as Error).message });
  }
});
