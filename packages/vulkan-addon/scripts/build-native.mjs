// Builds the native part into build/Release/sgfp4_vulkan.node: shaders and source hash
// (scripts/gen-shaders.mjs), then node-gyp with Node's own headers (no download). With
// --prebuild it also refreshes the committed prebuilds/linux-x64/node.napi.node (stripped).
// pnpm and npm may skip install scripts, so `build` calls this.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { nodedirArgs, packageRoot as root, prebuilt } from "./native-sources.mjs";

function have(cmd) {
  try {
    execFileSync(cmd, ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

if (!have("glslc") || !have("g++")) {
  const missing = !have("glslc") ? "glslc (apt-get install glslc)" : "a C++ compiler (apt-get install g++)";
  if (existsSync(prebuilt) && !process.argv.includes("--prebuild")) {
    console.warn(`vulkan-addon: ${missing} not found; using the shipped prebuilt ${prebuilt}`);
    process.exit(0);
  }
  console.error(`vulkan-addon: cannot build: ${missing} not found`);
  process.exit(1);
}

execFileSync(process.execPath, [join(root, "scripts", "gen-shaders.mjs")], { stdio: "inherit" });
const require = createRequire(import.meta.url);
execFileSync(process.execPath, [require.resolve("node-gyp/bin/node-gyp.js"), "rebuild", "--release", "--jobs=max", ...nodedirArgs()], { cwd: root, stdio: "inherit" });

if (process.argv.includes("--prebuild")) {
  mkdirSync(dirname(prebuilt), { recursive: true });
  execFileSync("strip", ["--strip-unneeded", "-o", prebuilt, join(root, "build", "Release", "sgfp4_vulkan.node")]);
  console.log(`vulkan-addon: refreshed ${prebuilt}`);
}
