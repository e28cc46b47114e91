/**
 * sgfp4.h beyond the command protocol (test/c/api-check.c): the status names are @sgfp4/format's
 * codes; sgfp4_validate gives every golden vector's expected verdict; argument, limit and
 * floating-point-mode checks. Built under the sanitizers where the compiler has them.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { STREAM_ERROR_CODES } from "@sgfp4/format";
import { vectorsDir } from "@sgfp4/golden-vectors";
import { describe, expect, it } from "vitest";
import { CC, SANITIZE, WARNINGS, compile, pkgRoot, sanitizerUnavailable } from "./native.js";

const exe = compile("api-check", ["test/c/api-check.c"], sanitizerUnavailable() === null ? SANITIZE : ["-O2"]);
const check = (...args: string[]): string => execFileSync(exe, args, { encoding: "utf8" });

interface Vector {
  id: string;
  profile: "v1" | "v2";
  container: string;
  shape: [number, number];
  expect: { decode?: unknown; reject?: string };
}

describe("sgfp4.h API", () => {
  it("names its statuses with @sgfp4/format's codes, in DECISIONS.md order", () => {
    expect(check("names").trim().split("\n")).toEqual(["OK", ...STREAM_ERROR_CODES, "INVALID_ARGUMENT", "LIMIT_EXCEEDED", "BACKEND_FAILURE"]);
  });

  it("sgfp4_validate accepts every decodable golden vector and names each rejected one's code", () => {
    const index = JSON.parse(readFileSync(path.join(vectorsDir, "index.json"), "utf8")) as { vectors: string[] };
    const vectors = index.vectors.map((f) => JSON.parse(readFileSync(path.join(vectorsDir, f), "utf8")) as Vector);
    const got = vectors.map((v) => `${v.id}: ${check("validate", path.join(vectorsDir, v.container), v.profile, String(v.shape[0]), String(v.shape[1])).trim()}`);
    const want = vectors.map((v) => `${v.id}: ${v.expect.reject ?? "OK"}`);
    expect(got).toEqual(want);
    expect(vectors.filter((v) => v.expect.reject).length).toBeGreaterThan(20);
    expect(vectors.filter((v) => !v.expect.reject).length).toBeGreaterThan(20);
  }, 120_000); // one sanitized process per vector

  it("the declarations compile as C++ (extern \"C\"); the implementation refuses -ffast-math", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "sgfp4-h-"));
    const cxxFile = path.join(dir, "use.cpp");
    writeFileSync(cxxFile, `#include "sgfp4.h"\nconst char *name() { return sgfp4_status_name(SGFP4_TRUNCATED); }\n`);
    const cxx = spawnSync(process.env.CXX ?? "c++", ["-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I", pkgRoot, cxxFile], { encoding: "utf8" });
    expect(cxx.error ? String(cxx.error) : cxx.stderr).toBe("");
    const implFile = path.join(dir, "impl.c");
    writeFileSync(implFile, `#define SGFP4_IMPLEMENTATION\n#include "sgfp4.h"\n`);
    const fast = spawnSync(CC, [...WARNINGS, "-ffast-math", "-c", "-o", path.join(dir, "impl.o"), "-I", pkgRoot, implFile], { encoding: "utf8" });
    expect(fast.status).not.toBe(0);
    expect(fast.stderr).toContain("without -ffast-math");
  });

  it("refuses bad arguments, outputs over the limit, short buffers and flush-to-zero modes; zeroes the output on a fault", () => {
    expect(check("calls")).toBe("PASS\n");
  });
});
