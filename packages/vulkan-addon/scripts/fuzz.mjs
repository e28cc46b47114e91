// Coverage-guided fuzzing of the native parser (fuzz/parse_fuzzer.cpp) with libFuzzer, ASan and
// UBSan (clang). Seeds: every golden vector, with the 5-byte shape prefix the target reads,
// plus the kept corpus in fuzz/corpus/. A crash, sanitizer report or broken invariant exits
// non-zero, so it fails `pnpm test`.
//
//   node scripts/fuzz.mjs                  bounded CI run (fixed seed, fixed run count)
//   node scripts/fuzz.mjs --time 3600      long local run (fresh seed, stops after 3600 s)
//   node scripts/fuzz.mjs --time 600 --merge   ... then merge what grew into fuzz/corpus/
//
// New inputs go to native/test/out/fuzz/work/ (ignored by git); only --merge writes to
// fuzz/corpus/, keeping just the inputs that add coverage over the golden seeds.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot as root, writeGoldenSeeds } from "./fuzz-seeds.mjs";
import { formatGenerated } from "./native-sources.mjs";

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const longTime = opt("--time", null);
const merge = args.includes("--merge");
// CI: a fixed seed and a fixed number of runs, so two runs try the same inputs; the time
// limit only guards a slow machine.
const runs = opt("--runs", longTime ? "-1" : "400000");
const seed = opt("--seed", longTime ? "0" : "1");
const maxTime = longTime ?? "120";

const out = join(root, "native", "test", "out", "fuzz");
const seeds = join(out, "seeds"), work = join(out, "work");
const kept = join(root, "fuzz", "corpus");
for (const d of [seeds, work]) rmSync(d, { recursive: true, force: true }), mkdirSync(d, { recursive: true });
mkdirSync(kept, { recursive: true });

const golden = writeGoldenSeeds(seeds);

const bin = join(out, "parse_fuzzer");
const flags = [`-I${formatGenerated}`, "-std=c++17", "-O1", "-g", "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"];
const sources = ["fuzz/parse_fuzzer.cpp", "native/src/sgfp4_parse.cpp", "native/src/sgfp4_parse_exact.cpp", "native/src/decode_plan.cpp"].map((f) => join(root, f));
const build = spawnSync("clang++", [...flags, "-DSGFP4_TEST_PLAN", "-o", bin, ...sources], { encoding: "utf8" });
if (build.status !== 0) {
  const why = build.error ? build.error.message : build.stderr.trim();
  console.error(`fuzz: libFuzzer target did not build (${why}).`);
  console.error("fuzz: install clang and libclang-rt-dev (Debian: apt-get install clang libclang-rt-14-dev); the ASan/UBSan mutation driver in scripts/native-tests.mjs still ran.");
  process.exit(process.env.SGFP4_FUZZ_REQUIRE ? 1 : 0);
}

// -max_len covers the largest golden vector; the malloc limit catches any allocation out of
// proportion to an input of that size (DECISIONS.md section 5).
const libFuzzerArgs = [`-seed=${seed}`, `-runs=${runs}`, `-max_total_time=${maxTime}`, "-max_len=20000", "-timeout=10", "-rss_limit_mb=1024", "-malloc_limit_mb=256", "-print_final_stats=1", `-artifact_prefix=${out}/`];
const env = { ...process.env, ASAN_OPTIONS: "detect_leaks=1:abort_on_error=0", UBSAN_OPTIONS: "print_stacktrace=1:halt_on_error=1" };
console.log(`fuzz: ${golden} golden seeds + ${readdirSync(kept).length} kept inputs; ${libFuzzerArgs.join(" ")}`);
const run = spawnSync(bin, [...libFuzzerArgs, work, kept, seeds], { encoding: "utf8", env, maxBuffer: 1 << 28 });
const log = run.stderr;
const lines = log.split("\n");
// The INITED line (coverage of the seeds alone) and the DONE line, plus final stats.
for (const l of lines) if (/INITED|DONE|^stat::|ERROR|INVARIANT|SUMMARY|runtime error|Test unit written/.test(l)) console.log(`  ${l}`);
if (run.status !== 0) {
  console.error(lines.slice(-60).join("\n"));
  console.error(`fuzz: FAILED (exit ${run.status}); the crashing input is named in the log above (crash-* in ${out})`);
  process.exit(1);
}

if (merge) {
  // Minimal set of the kept and grown inputs that adds coverage over the golden seeds alone.
  const next = join(out, "merged");
  rmSync(next, { recursive: true, force: true });
  mkdirSync(next);
  for (const f of readdirSync(seeds)) writeFileSync(join(next, f), readFileSync(join(seeds, f)));
  execFileSync(bin, ["-merge=1", "-max_len=20000", next, kept, work], { stdio: "inherit", env });
  for (const f of readdirSync(seeds)) rmSync(join(next, f), { force: true });
  rmSync(kept, { recursive: true, force: true });
  renameSync(next, kept);
  console.log(`fuzz: fuzz/corpus/ now holds ${readdirSync(kept).length} inputs beyond the golden seeds`);
}
console.log("fuzz: no crash, no sanitizer report, no broken invariant");
