// The source build from the published package (issue 17): packs the package (pnpm pack, as
// published), unpacks it in a temporary folder, removes the prebuilt binary, checks the load
// error lists what it tried and what to do, builds from source with node-gyp (the package's
// binding.gyp, the shipped generated headers, no glslc), loads the result and decodes with it.
// The runtime dependencies are linked from this workspace (no registry needed).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { nodedirArgs, packageRoot as root, sourceHash } from "./native-sources.mjs";

const tmp = mkdtempSync(join(tmpdir(), "sgfp4-vulkan-pack-"));
const fail = (msg) => {
  console.error(`pack-test: FAILED: ${msg} (left in ${tmp})`);
  process.exit(1);
};
execFileSync("pnpm", ["pack", "--pack-destination", tmp], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
const tarball = readdirSync(tmp).find((f) => f.endsWith(".tgz"));
if (!tarball) fail("pnpm pack wrote no tarball");
execFileSync("tar", ["-xzf", join(tmp, tarball), "-C", tmp]);
const pkg = join(tmp, "package");
const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));

// What the tarball holds: the generated headers yes, bench-only code no; an honest install script.
for (const f of ["native/gen/shaders.h", "native/gen/source_hash.h", "binding.gyp", "dist/index.js", "prebuilds/linux-x64/node.napi.node"])
  if (!existsSync(join(pkg, f))) fail(`the tarball lacks ${f}`);
for (const f of ["native/bench", "native/gen/bench_shaders.h", "scripts/build-bench.mjs", "test"]) if (existsSync(join(pkg, f))) fail(`the tarball ships ${f}`);
if (manifest.scripts.install !== "node-gyp-build") fail(`install script is ${JSON.stringify(manifest.scripts.install)}, expected plain node-gyp-build (a failure must fail the install)`);
rmSync(join(pkg, "prebuilds"), { recursive: true });

// Runtime dependencies from the workspace, as an install would place them.
const require = createRequire(join(root, "package.json"));
for (const dep of [...Object.keys(manifest.dependencies), "node-gyp"]) {
  const dir = realpathSync(dirname(require.resolve(`${dep}/package.json`)));
  const link = join(pkg, "node_modules", dep);
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync(dir, link, "dir");
}

const probe = (code) => execFileSync(process.execPath, ["--input-type=module", "-e", code], { cwd: pkg, encoding: "utf8", env: { ...process.env, SGFP4_VULKAN_ADDON: "" } }).trim();
const availability = `const m = await import(${JSON.stringify(join(pkg, "dist", "index.js"))}); console.log(JSON.stringify(m.availability()));`;

const before = JSON.parse(probe(availability));
if (before.ok) fail("the addon loaded before it was built");
for (const want of ["Tried:", "build/Release/sgfp4_vulkan.node: not present", "prebuilds/linux-x64/node.napi.node: not present", "npm rebuild @sgfp4/vulkan-addon --build-from-source"])
  if (!before.reason.includes(want)) fail(`the load error lacks "${want}":\n${before.reason}`);
if (before.reason.includes("pnpm --filter")) fail("the load error names a monorepo-only command");
console.log("pack-test: without a binary, the load error lists what it tried and what to do");

const t0 = Date.now();
try {
  execFileSync(process.execPath, [join(pkg, "node_modules", "node-gyp", "bin", "node-gyp.js"), "rebuild", "--release", "--jobs=max", ...nodedirArgs()], { cwd: pkg, encoding: "utf8", stdio: "pipe" });
} catch (e) {
  fail(`node-gyp failed on the packed sources:\n${e.stdout}\n${e.stderr}`);
}
console.log(`pack-test: node-gyp built the packed sources in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

const decoded = probe(`
  const m = await import(${JSON.stringify(join(pkg, "dist", "index.js"))});
  const { writeV1 } = await import("@sgfp4/format");
  const codes = Array.from({ length: 4096 }, (_, i) => (i % 16) - 8);
  const bytes = writeV1({ shape: [2, 3], blocks: [{ mode: 0, scaleBits: 0x3800, biasBits: 0xbc00, codes }] });
  console.log(JSON.stringify({ out: Array.from(m.decode(bytes, { profile: "v1", shape: [2, 3] })), hash: m.nativeAddon().sourceHash }));`);
const { out, hash } = JSON.parse(decoded);
if (JSON.stringify(out) !== JSON.stringify([-5, -4.5, -4, -5, -4.5, -4])) fail(`the source build decoded ${JSON.stringify(out)}`);
if (hash !== sourceHash()) fail(`the source build reports source hash ${hash}, the sources hash to ${sourceHash()}`);
console.log("pack-test: the source build of the packed package loads and decodes (bit-exact, same source hash)");
rmSync(tmp, { recursive: true, force: true });
