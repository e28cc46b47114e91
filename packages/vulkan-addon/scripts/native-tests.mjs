// Native tests: builds the parser unit tests and the mutation driver with AddressSanitizer and
// UndefinedBehaviorSanitizer, writes a corpus (hand-built containers from @sgfp4/format's
// writer plus the golden vectors) and runs both. Any sanitizer report aborts the run.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeV1, writeV2 } from "@sgfp4/format";
import { formatGenerated } from "./native-sources.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "native", "test", "out"); // not under build/: node-gyp rebuild wipes that
const corpus = join(out, "corpus");
rmSync(corpus, { recursive: true, force: true });
mkdirSync(corpus, { recursive: true });

// Deterministic pseudo-random numbers for the hand-built seeds.
let state = 12345;
const rand = (n) => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) >>> 8) % n;
const codes = (mode, size) => Array.from({ length: size * size }, () => (mode ? rand(3) - 1 : rand(16) - 8));
const leaf = (mode, size) => ({ mode, scaleBits: 0x3000 + rand(0x800), biasBits: (rand(0x7c00) & 0xfff0) | (rand(2) << 15), codes: codes(mode, size) });
const save = (id, profile, [rows, cols], bytes, expect = "OK") => writeFileSync(join(corpus, `${id}.${profile}.${rows}x${cols}.${expect}.bin`), bytes);

// v1: modes mixed, slots permuted, crops.
for (const shape of [[1, 1], [3, 200], [65, 63]]) {
  const B = Math.ceil(shape[0] / 64) * Math.ceil(shape[1] / 64);
  const blocks = Array.from({ length: B }, (_, b) => ({ ...leaf(b & 1, 64), biasBits: rand(0x7c00) }));
  const slots = Array.from({ length: B }, (_, b) => B - 1 - b);
  save(`hand-v1-${shape.join("x")}`, "v1", shape, writeV1({ shape, blocks, slots }));
}
// v2: every layout, a MIXED tree, a gap, trailing bytes.
const tree = [["leaf", "leaf", [ "leaf", "leaf", "leaf", "leaf"], "leaf"], "leaf", "leaf", [["leaf", "leaf", "leaf", "leaf"], "leaf", "leaf", "leaf"]];
const leavesOf = (t, size) => (t === "leaf" ? [size] : t.flatMap((c) => leavesOf(c, size / 2)));
const sizes = { 0: 64, 1: 32, 2: 16, 3: 8, 5: 4 };
const records = [0, 1, 2, 3, 4, 5].map((layout) => {
  const leafSizes = layout === 4 ? leavesOf(tree, 64) : Array.from({ length: (64 / sizes[layout]) ** 2 }, () => sizes[layout]);
  return { layout, ...(layout === 4 ? { tree } : {}), leaves: leafSizes.map((s) => leaf(rand(2), s)), gapBefore: layout === 3 ? 32 : 0 };
});
save("hand-v2-all-layouts", "v2", [65, 190], writeV2({ shape: [65, 190], records, trailing: new Uint8Array([1, 2, 3]) }));
save("hand-v2-4x4", "v2", [3, 5], writeV2({ shape: [3, 5], records: [records[5]] }));
save("hand-v2-odd-B", "v2", [1, 130], writeV2({ shape: [1, 130], records: [records[4], records[0], records[1]] }));

// Golden vectors, when the repository has them.
const vectors = join(root, "..", "..", "golden-vectors", "vectors");
let golden = 0;
if (existsSync(join(vectors, "index.json"))) {
  for (const file of JSON.parse(readFileSync(join(vectors, "index.json"), "utf8")).vectors) {
    const v = JSON.parse(readFileSync(join(vectors, file), "utf8"));
    const expect = v.expect.reject ?? "OK";
    save(`golden-${v.id}`, v.profile, v.shape, readFileSync(join(vectors, v.container)), expect);
    golden++;
  }
}

const flags = [`-I${formatGenerated}`, "-std=c++17", "-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-Wall", "-Wextra"];
const parser = ["sgfp4_parse.cpp", "sgfp4_parse_exact.cpp"].map((f) => join(root, "native", "src", f));
const plan = join(root, "native", "src", "decode_plan.cpp");  // plans from blockPayload against plans from the table
for (const name of ["parser_test", "fuzz_driver"]) {
  execFileSync("g++", [...flags, "-DSGFP4_TEST_PLAN", "-o", join(out, name), join(root, "native", "test", `${name}.cpp`), ...parser, plan], { stdio: "inherit" });
}
// The host copies (streaming stores, work pool threads) against memcpy.
execFileSync("g++", [...flags, "-pthread", "-o", join(out, "host_copy_test"), join(root, "native", "test", "host_copy_test.cpp"), join(root, "native", "src", "host_copy.cpp")], { stdio: "inherit" });
const env = { ...process.env, ASAN_OPTIONS: "detect_leaks=1:abort_on_error=0:halt_on_error=1", UBSAN_OPTIONS: "print_stacktrace=1:halt_on_error=1" };
execFileSync(join(out, "parser_test"), { stdio: "inherit", env });
execFileSync(join(out, "host_copy_test"), { stdio: "inherit", env });
console.log(`native-tests: corpus of ${golden} golden vectors plus hand-built seeds`);
execFileSync(join(out, "fuzz_driver"), [corpus], { stdio: "inherit", env });
