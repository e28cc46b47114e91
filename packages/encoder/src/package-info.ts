/**
 * This package's name and version as published, read from its package.json (beside dist/ and
 * src/), so a manifest records the version that wrote it without a constant to keep in step.
 */
import { createRequire } from "node:module";

export interface PackageIdentity {
  readonly name: string;
  readonly version: string;
}

let identity: PackageIdentity | undefined;

/** Read on first use (not at import, so bundles of the encoding code alone need no package.json). */
export function encoderPackage(): PackageIdentity {
  if (!identity) {
    const { name, version } = createRequire(import.meta.url)("../package.json") as PackageIdentity;
    identity = { name, version };
  }
  return identity;
}
