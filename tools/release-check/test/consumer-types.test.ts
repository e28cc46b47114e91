/**
 * A consumer's strict TypeScript build over the packed declarations: @sgfp4/webgpu-decoder's .d.ts
 * name GPUDevice, GPUBuffer, ... and must bring the WebGPU types themselves (a reference to
 * @webgpu/types, its dependency), so the consumer adds nothing. The consumer has the packed
 * tarballs and the dependencies the registry would install, `types: []` (no ambient types of
 * its own) and `skipLibCheck: false`.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../../..");
const scratch = mkdtempSync(join(tmpdir(), "sgfp4-consumer-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `pnpm pack` the package and unpack it as node_modules/<name> of the consumer. */
function install(packageDir: string, name: string): void {
  const packs = join(scratch, "packs");
  mkdirSync(packs, { recursive: true });
  execFileSync("pnpm", ["pack", "--pack-destination", packs], { cwd: packageDir, stdio: "ignore" });
  const tgz = readdirSync(packs).find((f) => f.startsWith(name.replace("@", "").replace("/", "-")) && f.endsWith(".tgz"))!;
  const target = join(scratch, "node_modules", name);
  mkdirSync(target, { recursive: true });
  execFileSync("tar", ["-xzf", join(packs, tgz), "-C", target, "--strip-components=1"]);
}

describe("consumer's strict build over the packed declarations", () => {
  it("@sgfp4/webgpu-decoder compiles without the consumer adding @webgpu/types", () => {
    install(join(root, "packages/format"), "@sgfp4/format");
    install(join(root, "packages/webgpu-decoder"), "@sgfp4/webgpu-decoder");
    // what the registry would install beside it: its dependencies
    cpSync(realpathSync(join(root, "packages/webgpu-decoder/node_modules/@webgpu/types")), join(scratch, "node_modules/@webgpu/types"), { recursive: true });
    cpSync(realpathSync(join(root, "packages/format/node_modules/@noble/hashes")), join(scratch, "node_modules/@noble/hashes"), { recursive: true });
    writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "consumer", type: "module", private: true }));
    writeFileSync(
      join(scratch, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: false, types: [], lib: ["ES2022", "DOM"] }, files: ["main.ts"] }),
    );
    writeFileSync(
      join(scratch, "main.ts"),
      `import { WebGpuDecoder } from "@sgfp4/webgpu-decoder";\n` +
        `export async function run(device: GPUDevice, bytes: Uint8Array): Promise<Float32Array> {\n` +
        `  const decoder = new WebGpuDecoder(device);\n  return decoder.decode(bytes, { profile: "v2", shape: [64, 64] });\n}\n`,
    );
    let output = "";
    try {
      execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", scratch], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    } catch (e) {
      output = String((e as { stdout?: string }).stdout ?? e);
    }
    expect(output).toBe("");
  }, 120_000);
});
