// Build (from this folder):
//   g++ -O2 -shared -fPIC -std=c++17 -DNAPI_DISABLE_CPP_EXCEPTIONS -I"$(dirname $(dirname $(which node)))/include/node" \
//     -I"$(node -p 'require("node-addon-api").include' | tr -d '"')" -o handover.node handover.cpp
// Run, counting the marking starts V8 attributes to external memory:
//   node --expose-gc --trace-incremental-marking probe.mjs 0 | grep -c "external memory pressure"   # plain
//   node --expose-gc --trace-incremental-marking probe.mjs 1 | grep -c "external memory pressure"   # compensated
// Session 16 (2-core container, Node 20.20.2): 12 of 12 arrays started marking either way, and
// each make() took 0.6-22 ms (the container under load): lowering the count first also lowers V8's limit (the low point since
// the last full collection + 64 MiB), so the 128 MiB rise still crosses it.
import { createRequire } from "node:module";

const { make } = createRequire(import.meta.url)("./handover.node");
const compensate = process.argv[2] === "1";
globalThis.heap = Array.from({ length: 3e5 }, (_, i) => ({ a: i, b: [i] })); // some JS heap to mark
let result;
const ms = [];
for (let i = 0; i < 12; i++) {
  result = undefined;
  for (let k = 0; k < 3; k++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  const t0 = performance.now();
  result = make(128 * 2 ** 20, compensate);
  ms.push((performance.now() - t0).toFixed(2));
}
console.log(`${compensate ? "compensated" : "plain"}: make() ms ${ms.join(" ")} (last array ${result.length} floats)`);
