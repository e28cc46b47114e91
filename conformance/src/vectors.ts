/**
 * Loads and validates a golden-vector folder (shared/spec/VECTORS.md, version 1). Every
 * problem is a VectorSetError naming the file and the field, so a broken set is never
 * mistaken for a failing backend.
 */
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { STREAM_ERROR_CODES } from "@sgfp4/format";
import type { VectorProfile } from "./backend.js";

export class VectorSetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VectorSetError";
  }
}

/** A section-3 code, or "ANY" (any section-3 code is accepted). */
export type ExpectedRejectCode = (typeof STREAM_ERROR_CODES)[number] | "ANY";

export type VectorExpectation =
  | { kind: "decode"; sha256: string; /** absolute path, or undefined when only the hash is kept */ outputPath?: string }
  | { kind: "reject"; code: ExpectedRejectCode };

export interface Vector {
  id: string;
  profile: VectorProfile;
  shape: readonly [number, number];
  clauses: readonly string[];
  description: string;
  /** absolute path of the container bytes */
  containerPath: string;
  expect: VectorExpectation;
}

export interface VectorSet {
  /** absolute path of the folder */
  dir: string;
  vectors: readonly Vector[];
}

export const VECTOR_SET_FORMAT = "sgfp4-golden-vectors";
export const VECTOR_SET_VERSION = 1;

/** Largest expected output we accept from a vector file (the same bound decoders use). */
const MAX_OUTPUT_BYTES = 2 ** 31;

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    throw new VectorSetError(`cannot read ${file}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new VectorSetError(`${file} is not valid JSON: ${(e as Error).message}`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Resolve a path from a vector file, refusing ones that leave the folder. */
function insideDir(dir: string, rel: unknown, file: string, field: string): string {
  if (typeof rel !== "string" || rel === "") throw new VectorSetError(`${file}: "${field}" must be a non-empty relative path`);
  if (path.isAbsolute(rel)) throw new VectorSetError(`${file}: "${field}" must be relative to the vector folder, got ${rel}`);
  const abs = path.resolve(dir, rel);
  const back = path.relative(dir, abs);
  if (back.startsWith("..") || path.isAbsolute(back)) throw new VectorSetError(`${file}: "${field}" (${rel}) points outside the vector folder`);
  return abs;
}

async function fileSize(abs: string, file: string, what: string): Promise<number> {
  try {
    const s = await stat(abs);
    if (!s.isFile()) throw new VectorSetError(`${file}: ${what} ${abs} is not a file`);
    return s.size;
  } catch (e) {
    if (e instanceof VectorSetError) throw e;
    throw new VectorSetError(`${file}: ${what} ${abs} is missing (${(e as Error).message})`);
  }
}

export async function sha256File(abs: string): Promise<string> {
  return createHash("sha256").update(await readFile(abs)).digest("hex");
}

function parseVector(raw: unknown, file: string, dir: string): Omit<Vector, "expect"> & { expectRaw: Record<string, unknown> } {
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
  return {
    id,
    profile,
    shape: [rows, cols],
    clauses: clauses as string[],
    description,
    containerPath: insideDir(dir, container, file, "container"),
    expectRaw: expect,
  };
}

async function parseExpectation(expect: Record<string, unknown>, file: string, dir: string, shape: readonly [number, number]): Promise<VectorExpectation> {
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
  const outputPath = insideDir(dir, decode.output, file, "expect.decode.output");
  const size = await fileSize(outputPath, file, "expected output");
  const want = shape[0] * shape[1] * 4;
  if (size !== want) throw new VectorSetError(`${file}: expected output ${outputPath} has ${size} bytes, shape [${shape[0]}, ${shape[1]}] needs ${want}`);
  const actualSha = await sha256File(outputPath);
  if (actualSha !== sha) throw new VectorSetError(`${file}: sha256 of ${outputPath} is ${actualSha}, the vector says ${sha}`);
  return { kind: "decode", sha256: sha, outputPath };
}

/** Read and check index.json and every vector it lists. */
export async function loadVectorSet(dirArg: string): Promise<VectorSet> {
  const dir = path.resolve(dirArg);
  const indexFile = path.join(dir, "index.json");
  const index = await readJson(indexFile);
  if (!isObject(index)) throw new VectorSetError(`${indexFile}: must be a JSON object`);
  if (index.format !== VECTOR_SET_FORMAT) throw new VectorSetError(`${indexFile}: "format" must be "${VECTOR_SET_FORMAT}", got ${JSON.stringify(index.format)}`);
  if (index.version !== VECTOR_SET_VERSION) throw new VectorSetError(`${indexFile}: "version" ${JSON.stringify(index.version)} is not supported (this runner reads version ${VECTOR_SET_VERSION})`);
  if (!Array.isArray(index.vectors) || !index.vectors.every((v) => typeof v === "string")) throw new VectorSetError(`${indexFile}: "vectors" must be an array of file names`);
  const seenFiles = new Set<string>();
  const seenIds = new Set<string>();
  const vectors: Vector[] = [];
  for (const rel of index.vectors as string[]) {
    if (seenFiles.has(rel)) throw new VectorSetError(`${indexFile}: ${rel} is listed twice`);
    seenFiles.add(rel);
    const file = insideDir(dir, rel, indexFile, "vectors[]");
    const v = parseVector(await readJson(file), file, dir);
    if (seenIds.has(v.id)) throw new VectorSetError(`${file}: id ${v.id} is used by another vector`);
    seenIds.add(v.id);
    await fileSize(v.containerPath, file, "container");
    const expect = await parseExpectation(v.expectRaw, file, dir, v.shape);
    vectors.push({ id: v.id, profile: v.profile, shape: v.shape, clauses: v.clauses, description: v.description, containerPath: v.containerPath, expect });
  }
  return { dir, vectors };
}
