/** Worker-thread entry: runs block jobs for the pool in parallel.ts. */
import { parentPort } from "node:worker_threads";
import { encodeBlockRows, statsBlockRows, type BlockJob } from "./blocks.js";

parentPort!.on("message", (msg: { id: number; kind: "encode" | "stats"; job: BlockJob }) => {
  try {
    if (msg.kind === "stats") {
      const stats = statsBlockRows(msg.job);
      parentPort!.postMessage({ id: msg.id, result: stats }, [stats.buffer as ArrayBuffer]);
    } else {
      const blocks = encodeBlockRows(msg.job);
      const buffers = new Set<ArrayBuffer>();
      for (const b of blocks) for (const l of b.leaves) buffers.add(l.codes.buffer as ArrayBuffer);
      parentPort!.postMessage({ id: msg.id, result: blocks }, [...buffers]);
    }
  } catch (e) {
    parentPort!.postMessage({ id: msg.id, error: (e as Error).message });
  }
});
