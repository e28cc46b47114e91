// Leak checks. (1) The native parser under LeakSanitizer: fuzz/leak_check.cpp parses the golden
// vectors and fuzz/corpus/ (as is, truncated, bit-flipped, other profile) 1,000 times with
// -fsanitize=address; any leak fails the process. (2) The same driver without sanitizers under
// valgrind --leak-check=full (skipped with a note when valgrind is not installed). (3) The
// Vulkan path: scripts/vulkan-rss.mjs decodes through the addon repeatedly and bounds RSS growth.
import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";
import { packageRoot as root, writeGoldenSeeds } from "./fuzz-seeds.mjs";
import { formatGenerated } from "./native-sources.mjs";

const out = join(root, "native", "test", "out", "leak");
const seeds = join(out, "seeds");
writeGoldenSeeds(seeds);
const dirs = [seeds, join(root, "fuzz", "corpus")];
const sources = [join(root, "fuzz", "leak_check.cpp"), join(root, "native", "src", "sgfp4_parse.cpp"), join(root, "native", "src", "sgfp4_parse_exact.cpp")];
const common = [`-I${formatGenerated}`, "-std=c++17", "-O1", "-g", "-fno-omit-frame-pointer"];

execFileSync("g++", [...common, "-fsanitize=address", "-o", join(out, "leak_check_asan"), ...sources], { stdio: "inherit" });
execFileSync(join(out, "leak_check_asan"), ["1000", ...dirs], {
  stdio: "inherit",
  env: { ...process.env, ASAN_OPTIONS: "detect_leaks=1:halt_on_error=1" },
});
console.log("leak-check: LeakSanitizer found no leak");

if (spawnSync("valgrind", ["--version"]).status === 0) {
  execFileSync("g++", [...common, "-o", join(out, "leak_check_plain"), ...sources], { stdio: "inherit" });
  const r = spawnSync(
    "valgrind",
    ["--leak-check=full", "--show-leak-kinds=definite,indirect,possible", "--errors-for-leak-kinds=definite,indirect,possible", "--error-exitcode=1", "-q", join(out, "leak_check_plain"), "200", ...dirs],
    { encoding: "utf8" },
  );
  process.stdout.write(r.stdout);
  if (r.status !== 0) {
    console.error(r.stderr);
    console.error("leak-check: valgrind reported errors or leaks");
    process.exit(1);
  }
  console.log("leak-check: valgrind --leak-check=full: no leak, no memory error");
} else {
  console.log("leak-check: valgrind not installed, its pass skipped (apt-get install valgrind)");
}

execFileSync(process.execPath, ["--expose-gc", join(root, "scripts", "vulkan-rss.mjs")], { stdio: "inherit" });
