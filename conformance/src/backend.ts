/** The one interface every backend implements (docs/ARCHITECTURE.md, "Conformance backend interface"). */

import type { Availability, ConformanceBackend, DecodeRequest } from "@sgfp4/format";

export type { Availability, ConformanceBackend, DecodeRequest };
export type VectorProfile = DecodeRequest["profile"];

/** A backend that could not be loaded: listed as skipped with the reason, never as passing. */
export function unavailableBackend(name: string, reason: string): ConformanceBackend {
  return {
    name,
    available: async () => ({ ok: false, reason }),
    decode: async () => {
      throw new Error(`backend ${name} is unavailable: ${reason}`);
    },
  };
}

/** Duck-typed check of a module's export, so errors name what is missing. */
export function checkBackendShape(candidate: unknown, where: string): ConformanceBackend {
  if (typeof candidate !== "object" || candidate === null) throw new Error(`${where} is not an object`);
  const b = candidate as Partial<ConformanceBackend>;
  if (typeof b.name !== "string" || b.name === "") throw new Error(`${where} has no string "name"`);
  if (typeof b.available !== "function") throw new Error(`${where} has no available() method`);
  if (typeof b.decode !== "function") throw new Error(`${where} has no decode() method`);
  if (b.close !== undefined && typeof b.close !== "function") throw new Error(`${where}.close is not a function`);
  return b as ConformanceBackend;
}
