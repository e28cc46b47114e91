/**
 * The golden-vector schema (shared/spec/VECTORS.md, version 1), read through a VectorSource so
 * that the same checks run on a folder in Node, on files a browser page fetched, or on a picked
 * folder. Every problem is a VectorSetError naming the file and the field, so a broken set is
 * never mistaken for a failing decoder.
 */
import { STREAM_ERROR_CODES, sha256Hex, type Profile } from "@sgfp4/format";

export class VectorSetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VectorSetError";
  }
}

/** Where a vector set's files come from; paths are relative to the set's folder, '/'-separated. */
export interface VectorSource {
  /** the folder or URL, for reports and errors */
  readonly label: string;
  text(path: string): Promise<string>;
  bytes(path: string): Promise<Uint8Array>;
  /** size in bytes, undefined when missing or not a file; optional (lets the loader check containers up front) */
  size?(path: string): Promise<number | undefined>;
}

/** A section-3 code, or "ANY" (any section-3 code is accepted). */
export type ExpectedRejectCode = (typeof STREAM_ERROR_CODES)[number] | "ANY";

export type VectorExpectation =
  | { kind: "decode"; sha256: string; /** expected float32 file in the set; undefined when only the hash is kept */ output?: string }
  | { kind: "reject"; code: ExpectedRejectCode };

export interface Vector {
  id: string;
  profile: Profile;
  shape: readonly [number, number];
  clauses: readonly string[];
  description: string;
  /** the container file in the set */
  container: string;
  expect: VectorExpectation;
}

export interface VectorSet {
  /** the source's label (for a folder: its absolute path) */
  dir: string;
  source: VectorSource;
  vectors: readonly Vector[];
}

export const VECTOR_SET_FORMAT = "sgfp4-golden-vectors";
export const VECTOR_SET_VERSION = 1;

/** Largest expected output we accept from a vector file (the same bound decoders use). */
const MAX_OUTPUT_BYTES = 2 ** 31;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const where = (src: VectorSource, rel: string): string => `${src.label.replace(/[\\/]+$/, "")}/${rel}`;

async function readJson(src: VectorSource, rel: string): Promise<unknown> {
  let text: string;
  try {
    text = await src.text(rel);
  } catch (e) {
    throw new VectorSetError(`cannot read ${where(src, rel)}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new VectorSetError(`${where(src, rel)} is not valid JSON: ${(e as Error).message}`);
  }
}

/** A path from a vector file, refused when absolute or when it climbs out of the folder. */
export function setPath(rel: unknown, file: string, field: string): string {
  if (typeof rel !== "string" || rel === "") throw new VectorSetError(`${file}: "${field}" must be a non-empty relative path`);
  if (/^([\\/]|[A-Za-z]:)/.test(rel)) throw new VectorSetError(`${file}: "${field}" must be relative to the vector folder, got ${rel}`);
  const parts = rel.split(/[\\/]+/).filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) throw new VectorSetError(`${file}: "${field}" (${rel}) points outside the vector folder`);
  if (parts.length === 0) throw new VectorSetError(`${file}: "${field}" must name a file, got ${rel}`);
  return parts.join("/");
}

function parseVector(raw: unknown, file: string): Omit<Vector, "expect"> & { expectRaw: Record<string, unknown> } {
  if (!isObject(raw)) throw new VectorSetError(`${file}: a vector must be a JSON object`);
  const { id, profile, container, shape, clauses = [], description = "", expect } = raw;
  if (typeof id !== "string" || !/^[A-Za-z0-9._-]+$/.test(id)) throw new VectorSetError(`${file}: "id" must be a string of letters, digits, '.', '_' or '-'`);
  if (profile !== "v1" && profile !== "v2") throw new VectorSetError(`${file}: "profile" must be "v1" or "v2", got ${JSON.stringify(profile)}`);
  if (!Array.isArray(shape) || shape.length !== 2 || !shape.every((d) => Number.isSafeInteger(d) && (d as number) >= 1)) {
    throw new VectorSetError(`${file}: "shape" must be [O, I] with integers >= 1, got ${JSON.stringify(shape)}`);
  }
  const [rows, cols] = shape as [number, number];
  if (rows * cols * 4 > MAX_OUTPUT_BYTES) throw new VectorSetError(`${file}: shape [${rows}, ${cols}] is over the 2^31-byte output bound`);
  if (!Array.isArray(clauses) || !clauses.every((c) => typeof c === "string")) throw new VectorSetError(`${file}: "clauses" must be an array of strings`);
  if (typeof description !== "string") throw new VectorSetError(`${file}: "description" must be a string`);
  if (!isObject(expect)) throw new VectorSetError(`${file}: "expect" must be {"decode": {...}} or {"reject": "CODE"}`);
  return { id, profile, shape: [rows, cols], clauses: clauses as string[], description, container: setPath(container, file, "container"), expectRaw: expect };
}

async function parseExpectation(src: VectorSource, expect: Record<string, unknown>, file: string, shape: readonly [number, number]): Promise<VectorExpectation> {
  const keys = Object.keys(expect);
  if (keys.length !== 1 || (keys[0] !== "decode" && keys[0] !== "reject")) {
    throw new VectorSetError(`${file}: "expect" must have exactly one key, "decode" or "reject" (got ${keys.join(", ") || "none"})`);
  }
  if ("reject" in expect) {
    const code = expect.reject;
    if (code !== "ANY" && !(STREAM_ERROR_CODES as readonly unknown[]).includes(code)) {
      throw new VectorSetError(`${file}: "expect.reject" must be a DECISIONS.md section 3 code or "ANY", got ${JSON.stringify(code)}`);
    }
    return { kind: "reject", code: code as ExpectedRejectCode };
  }
  const decode = expect.decode;
  if (!isObject(decode)) throw new VectorSetError(`${file}: "expect.decode" must be an object with "sha256"`);
  const sha = decode.sha256;
  if (typeof sha !== "string" || !/^[0-9a-f]{64}$/.test(sha)) throw new VectorSetError(`${file}: "expect.decode.sha256" must be 64 lowercase hex digits`);
  if (decode.output === undefined) return { kind: "decode", sha256: sha };
  const output = setPath(decode.output, file, "expect.decode.output");
  let bytes: Uint8Array;
  try {
    bytes = await src.bytes(output);
  } catch (e) {
    throw new VectorSetError(`${file}: expected output ${where(src, output)} is missing (${(e as Error).message})`);
  }
  const want = shape[0] * shape[1] * 4;
  if (bytes.length !== want) throw new VectorSetError(`${file}: expected output ${where(src, output)} has ${bytes.length} bytes, shape [${shape[0]}, ${shape[1]}] needs ${want}`);
  const actual = sha256Hex(bytes);
  if (actual !== sha) throw new VectorSetError(`${file}: sha256 of ${where(src, output)} is ${actual}, the vector says ${sha}`);
  return { kind: "decode", sha256: sha, output };
}

/** Read and check index.json and every vector it lists. A set with no vectors is an error. */
export async function readVectorSet(src: VectorSource): Promise<VectorSet> {
  const indexFile = where(src, "index.json");
  const index = await readJson(src, "index.json");
  if (!isObject(index)) throw new VectorSetError(`${indexFile}: must be a JSON object`);
  if (index.format !== VECTOR_SET_FORMAT) throw new VectorSetError(`${indexFile}: "format" must be "${VECTOR_SET_FORMAT}", got ${JSON.stringify(index.format)}`);
  if (index.version !== VECTOR_SET_VERSION) throw new VectorSetError(`${indexFile}: "version" ${JSON.stringify(index.version)} is not supported (this runner reads version ${VECTOR_SET_VERSION})`);
  if (!Array.isArray(index.vectors) || !index.vectors.every((v) => typeof v === "string")) throw new VectorSetError(`${indexFile}: "vectors" must be an array of file names`);
  if (index.vectors.length === 0) throw new VectorSetError(`${indexFile}: "vectors" is empty: a set with no vectors checks nothing`);
  const seenFiles = new Set<string>();
  const seenIds = new Set<string>();
  const vectors: Vector[] = [];
  for (const listed of index.vectors as string[]) {
    const rel = setPath(listed, indexFile, "vectors[]");
    if (seenFiles.has(rel)) throw new VectorSetError(`${indexFile}: ${listed} is listed twice`);
    seenFiles.add(rel);
    const file = where(src, rel);
    const v = parseVector(await readJson(src, rel), file);
    if (seenIds.has(v.id)) throw new VectorSetError(`${file}: id ${v.id} is used by another vector`);
    seenIds.add(v.id);
    if (src.size && (await src.size(v.container)) === undefined) throw new VectorSetError(`${file}: container ${where(src, v.container)} is missing`);
    const expect = await parseExpectation(src, v.expectRaw, file, v.shape);
    vectors.push({ id: v.id, profile: v.profile, shape: v.shape, clauses: v.clauses, description: v.description, container: v.container, expect });
  }
  return { dir: src.label, source: src, vectors };
}
