// Host validation speed (issue 15): the native parser (through the addon's `parse`, which also
// copies the leaf table to JS) against @sgfp4/format's parse, on the worst case for per-leaf cost:
// a 2048x2048 v2 container of FULL_4x4 records (262,144 leaves of 4x4). Median of 9 after 3 warm-ups.
// Usage: node bench/parse.mjs   (after pnpm --filter @sgfp4/vulkan-addon build)
import { parse, writeV2 } from "@sgfp4/format";
import { nativeAddon } from "../dist/index.js";

const shape = [2048, 2048];
const leaf = (k) => ({ mode: k & 1, scaleBits: 0x3000 + (k & 0xff), biasBits: 0x1230, codes: new Array(16).fill((k % 3) - 1) });
const records = Array.from({ length: 32 * 32 }, (_, b) => ({ layout: 5, leaves: Array.from({ length: 256 }, (_, i) => leaf(b + i)) }));
const bytes = writeV2({ shape, records });
const leaves = records.length * 256;
const addon = nativeAddon();
const median = (f) => {
  for (let i = 0; i < 3; i++) f();
  const t = [];
  for (let i = 0; i < 9; i++) {
    const t0 = performance.now();
    f();
    t.push(performance.now() - t0);
  }
  return t.sort((a, b) => a - b)[4];
};
for (const [name, f] of [
  ["native parser (addon parse)", () => addon.parse(bytes, "v2", shape[0], shape[1])],
  ["@sgfp4/format parse", () => parse(bytes, { profile: "v2", shape })],
]) {
  const ms = median(f);
  console.log(`${name}: ${ms.toFixed(2)} ms, ${((ms * 1e6) / leaves).toFixed(1)} ns/leaf, ${(bytes.length / ms / 1e6).toFixed(2)} GB/s of container (${(bytes.length / 2 ** 20).toFixed(1)} MiB)`);
}
