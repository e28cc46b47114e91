// Repeated decodes through the addon on the Vulkan device (lavapipe in CI) must not grow the
// process: after a warm-up (pipelines, the device, allocator pools), many more passes over the
// golden vectors (accepted ones through decode(), rejected ones straight into the native
// addon so its own parser rejects them) may add at most a small bound of RSS.
// Run with node --expose-gc (scripts/leak-check.mjs does).
import { availability, decode, nativeAddon } from "../dist/index.js";
import { goldenVectors } from "./fuzz-seeds.mjs";

const boundMiB = Number(process.env.SGFP4_RSS_BOUND_MIB ?? 24);
const a = availability();
if (!a.ok) {
  console.log(`vulkan-rss: skipped, no Vulkan device (${a.reason})`);
  process.exit(process.env.SGFP4_REQUIRE_VULKAN ? 1 : 0);
}
const vectors = goldenVectors();
const addon = nativeAddon();
let decodes = 0, rejects = 0;
function pass() {
  for (const v of vectors) {
    if (v.reject === undefined) {
      decode(v.bytes, { profile: v.profile, shape: v.shape });
      decodes++;
    } else {
      const out = new Float32Array(v.shape[0] * v.shape[1] <= 1 << 20 ? v.shape[0] * v.shape[1] : 1);
      try {
        addon.decodeInto(v.bytes, v.profile, v.shape[0], v.shape[1], out, {});
        throw new Error(`vulkan-rss: ${v.id} was accepted by the native addon, expected ${v.reject}`);
      } catch (e) {
        if (typeof e.code !== "string" || e.message.startsWith("vulkan-rss")) throw e;
        rejects++;
      }
    }
  }
}
const rss = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().rss;
};
// Warm-up: on lavapipe RSS climbs for about 30 passes (allocator and driver pools), then stays flat.
for (let i = 0; i < 30; i++) pass();
const before = rss();
const passes = 200;
const d0 = decodes, r0 = rejects;
for (let i = 0; i < passes; i++) pass();
const after = rss();
const growMiB = (after - before) / 2 ** 20;
console.log(
  `vulkan-rss: ${a.detail}: ${decodes - d0} decodes + ${rejects - r0} native rejects after a warm-up of ${d0 + r0}; ` +
    `RSS ${(before / 2 ** 20).toFixed(1)} -> ${(after / 2 ** 20).toFixed(1)} MiB (growth ${growMiB.toFixed(2)} MiB, bound ${boundMiB} MiB)`,
);
if (growMiB > boundMiB) {
  console.error("vulkan-rss: FAILED, RSS grew past the bound");
  process.exit(1);
}
