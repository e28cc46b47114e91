/**
 * The model manifest (format "sgfp4-manifest", version 1): per tensor, where its container is,
 * how to decode it (profile, shape) and two sha256 attestations, one over the container bytes
 * and one over the decoded float32 output (little-endian). See docs/manifest.md.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { Sgfp4Error } from "./errors.js";
import type { Profile, Shape } from "./geometry.js";

export const MANIFEST_FORMAT = "sgfp4-manifest";
export const MANIFEST_VERSION = 1;

export interface ManifestTensor {
  /** tensor name in the source model */
  name: string;
  /** container file, relative to the manifest's folder */
  file: string;
  profile: Profile;
  /** decode shape (O, I) */
  shape: [number, number];
  /**
   * the source tensor's shape when it differs from `shape`: not 2-D, or encoded as another 2-D
   * view (same row-major values, e.g. k rows joined to pad less); same number of values
   */
  originalShape?: number[];
  /** the source dtype (F32, F16, BF16) */
  dtype: string;
  sha256: { container: string; decoded: string };
  /** encoder statistics (bits per weight, SNR, leaf counts...) */
  stats?: Record<string, number | string>;
}

export interface Manifest {
  format: typeof MANIFEST_FORMAT;
  version: typeof MANIFEST_VERSION;
  encoder: { name: string; version: string; settings: Record<string, unknown> };
  tensors: ManifestTensor[];
  /** tensors kept unquantized, in one safetensors file */
  passthrough?: { file: string; tensors: string[] };
  stats?: Record<string, number | string>;
}

export function sha256Hex(bytes: Uint8Array): string {
  return bytesToHex(sha256(bytes));
}

/** sha256 of a decoded tensor's little-endian float32 bytes (the attestation hash). */
export function decodedSha256(out: Float32Array): string {
  const le = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  if (!isLittleEndian) {
    const copy = new Uint8Array(le.length);
    const dv = new DataView(copy.buffer);
    out.forEach((v, i) => dv.setFloat32(4 * i, v, true));
    return sha256Hex(copy);
  }
  return sha256Hex(le);
}
const isLittleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

const HEX64 = /^[0-9a-f]{64}$/;

function bad(path: string, why: string): never {
  throw new Sgfp4Error("INVALID_MANIFEST", `${path}: ${why}`);
}

function isShape(s: unknown): s is [number, number] {
  return Array.isArray(s) && s.length === 2 && s.every((d) => Number.isSafeInteger(d) && d >= 1);
}

/** Parse and check a manifest (JSON text or an already parsed object). */
export function parseManifest(input: string | unknown): Manifest {
  let m: unknown = input;
  if (typeof input === "string") {
    try {
      m = JSON.parse(input);
    } catch (e) {
      bad("manifest", `not JSON (${(e as Error).message})`);
    }
  }
  if (typeof m !== "object" || m === null) bad("manifest", "not an object");
  const o = m as Record<string, unknown>;
  if (o.format !== MANIFEST_FORMAT) bad("format", `expected "${MANIFEST_FORMAT}"`);
  if (o.version !== MANIFEST_VERSION) bad("version", `unsupported version ${String(o.version)} (this reader knows ${MANIFEST_VERSION})`);
  const enc = o.encoder as Record<string, unknown> | undefined;
  if (!enc || typeof enc.name !== "string" || typeof enc.version !== "string" || typeof enc.settings !== "object") bad("encoder", "needs name, version and settings");
  if (!Array.isArray(o.tensors)) bad("tensors", "must be an array");
  const names = new Set<string>();
  o.tensors.forEach((t: unknown, i: number) => {
    const p = `tensors[${i}]`;
    const e = t as Record<string, unknown>;
    if (typeof e !== "object" || e === null) bad(p, "not an object");
    if (typeof e.name !== "string" || !e.name) bad(`${p}.name`, "must be a non-empty string");
    if (names.has(e.name)) bad(`${p}.name`, `duplicate tensor name ${e.name}`);
    names.add(e.name);
    if (typeof e.file !== "string" || !e.file || e.file.includes("..") || e.file.startsWith("/")) bad(`${p}.file`, "must be a relative path inside the manifest's folder");
    if (e.profile !== "v1" && e.profile !== "v2") bad(`${p}.profile`, "must be v1 or v2");
    if (!isShape(e.shape)) bad(`${p}.shape`, "must be [O, I] with integers >= 1");
    if (e.originalShape !== undefined && !(Array.isArray(e.originalShape) && e.originalShape.every((d) => Number.isSafeInteger(d) && d >= 0))) bad(`${p}.originalShape`, "must be an array of integers");
    if (e.originalShape !== undefined && (e.originalShape as number[]).reduce((a, b) => a * b, 1) !== (e.shape as number[])[0]! * (e.shape as number[])[1]!) {
      bad(`${p}.originalShape`, `holds ${(e.originalShape as number[]).join("x")} values, not the ${(e.shape as number[]).join("x")} of shape`);
    }
    if (typeof e.dtype !== "string") bad(`${p}.dtype`, "must be a string");
    const h = e.sha256 as Record<string, unknown> | undefined;
    if (!h || typeof h.container !== "string" || !HEX64.test(h.container) || typeof h.decoded !== "string" || !HEX64.test(h.decoded)) bad(`${p}.sha256`, "needs container and decoded as 64 lowercase hex digits");
  });
  if (o.passthrough !== undefined) {
    const pt = o.passthrough as Record<string, unknown>;
    if (typeof pt.file !== "string" || !Array.isArray(pt.tensors)) bad("passthrough", "needs file and tensors");
  }
  return o as unknown as Manifest;
}

export function serializeManifest(m: Manifest): string {
  parseManifest(m); // never write what we would refuse to read
  return JSON.stringify(m, null, 2) + "\n";
}

export interface TensorVerification {
  name: string;
  ok: boolean;
  /** what failed: container hash, decode error, decoded hash */
  problem?: string;
}

export interface VerifyReport {
  ok: boolean;
  tensors: TensorVerification[];
}

/**
 * Check every tensor: the container bytes hash to sha256.container, and the decoded output
 * (from the given decoder, any backend) hashes to sha256.decoded.
 */
export async function verifyManifest(
  manifest: Manifest,
  readContainer: (file: string) => Promise<Uint8Array> | Uint8Array,
  decode: (bytes: Uint8Array, opts: { profile: Profile; shape: Shape }) => Promise<Float32Array> | Float32Array,
  onProgress?: (done: number, total: number, name: string) => void,
): Promise<VerifyReport> {
  const tensors: TensorVerification[] = [];
  for (const [i, t] of manifest.tensors.entries()) {
    onProgress?.(i, manifest.tensors.length, t.name);
    let problem: string | undefined;
    try {
      const bytes = await readContainer(t.file);
      const got = sha256Hex(bytes);
      if (got !== t.sha256.container) problem = `container sha256 ${got} != manifest ${t.sha256.container}`;
      else {
        const dec = decodedSha256(await decode(bytes, { profile: t.profile, shape: t.shape }));
        if (dec !== t.sha256.decoded) problem = `decoded sha256 ${dec} != manifest ${t.sha256.decoded}`;
      }
    } catch (e) {
      problem = (e as Error).message;
    }
    tensors.push(problem ? { name: t.name, ok: false, problem } : { name: t.name, ok: true });
  }
  onProgress?.(manifest.tensors.length, manifest.tensors.length, "");
  return { ok: tensors.every((t) => t.ok), tensors };
}
