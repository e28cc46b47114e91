// The wide same-bytes check: sha256 over container bytes + exact decode of 264 encodes (6 families x 3 shapes x 11
// settings, a Gaussian scaled by 1e-30 / 1e-6 / 1e6 / 1e30, an exact grid and a constant tensor, each under the 11
// settings). Run it on the dist of two commits: equal digests mean equal bytes on all of them.
// Usage: node bench/wide-digest.mjs [dist folder] [policy]   (8eb44f9a... for every commit of issue 3 steps 4-5, and for
// `spec` since 0.2: node bench/wide-digest.mjs dist spec; builds before 0.2 ignore the policy option)
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const m = await import(pathToFileURL(resolve(process.argv[2] ?? new URL("../dist", import.meta.url).pathname, "index.js")).href);
const policy = process.argv[3];
const hash = createHash("sha256");
const settings = [
  { profile: "v1" },
  { profile: "v2" },
  { profile: "v2", bpw: 2.2 },
  { profile: "v2", bpw: 3 },
  { profile: "v2", bpw: 4.5 },
  { profile: "v1", fit: { refit: false } },
  { profile: "v2", fit: { refit: false } },
  { profile: "v2", fit: { selection: "l2" } },
  { profile: "v2", quadtree: { thresholdMode: "absolute" } },
  { profile: "v2", quadtree: { thresholdScale: 0.25 } },
  { profile: "v2", quadtree: { thresholdScale: 4 } },
];
let encodes = 0;
async function add(data, shape, options) {
  const r = await m.encodeTensor(data, shape, policy ? { ...options, policy } : options);
  hash.update(r.bytes);
  hash.update(new Uint8Array(r.decoded.buffer));
  encodes++;
}
for (const family of m.FAMILIES) {
  for (const [i, shape] of [[96, 160], [130, 200], [256, 256]].entries()) {
    for (const s of settings) await add(m.synthetic(family, shape[0], shape[1], 11 + i), shape, s);
  }
}
for (const scale of [1e-30, 1e-6, 1e6, 1e30]) {
  const scaled = m.synthetic("gaussian", 128, 128, 5).map((x) => x * scale);
  for (const s of settings) await add(scaled, [128, 128], s);
}
const grid = new Float32Array(128 * 128).map((_, i) => ((i % 16) - 8) * 0.25);
const constant = new Float32Array(128 * 128).fill(0.3);
for (const s of settings) {
  await add(grid, [128, 128], s);
  await add(constant, [128, 128], s);
}
console.log(encodes, hash.digest("hex"));
