/**
 * A registry turns a decoder's name into a Decoder. Entries open their backend lazily, so a
 * program only loads the backends it asks for, and a backend package that is not installed
 * (they are optional) gives an unavailable decoder that says why, never a crash.
 */
import { decoderFormats, type Decoder } from "@sgfp4/format";

export interface DecoderEntry {
  readonly name: string;
  /** one line: where the decoder comes from */
  readonly description: string;
  /** Never rejects for a missing or broken backend: the decoder is then unavailable, with the reason. */
  open(options?: Record<string, unknown>): Promise<Decoder>;
}

/** A name no entry has, or a decoder module the user named that does not load. */
export class DecoderLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DecoderLoadError";
  }
}

/** A decoder that cannot run here: listed as skipped with the reason, never as passing. */
export function unavailableDecoder(name: string, reason: string): Decoder {
  return {
    name,
    formats: ["f32"],
    available: async () => ({ ok: false, reason }),
    decode: async () => {
      throw new Error(`decoder ${name} is unavailable: ${reason}`);
    },
  };
}

/** Duck-typed check of an object claimed to be a decoder, so errors name what is missing. */
export function asDecoder(candidate: unknown, where: string): Decoder {
  if (typeof candidate !== "object" || candidate === null) throw new Error(`${where} is not an object`);
  const d = candidate as Partial<Decoder>;
  if (typeof d.name !== "string" || d.name === "") throw new Error(`${where} has no string "name"`);
  if (typeof d.available !== "function") throw new Error(`${where} has no available() method`);
  if (typeof d.decode !== "function") throw new Error(`${where} has no decode() method`);
  if (d.close !== undefined && typeof d.close !== "function") throw new Error(`${where}.close is not a function`);
  if (d.formats !== undefined && (!Array.isArray(d.formats) || !d.formats.includes("f32"))) throw new Error(`${where}.formats must be an array that includes "f32"`);
  return d.formats === undefined ? named(d.name, d as Decoder) : (d as Decoder);
}

/** The same decoder under another name (what --require and reports use); formats default to f32. */
export function named(name: string, d: Decoder): Decoder {
  return {
    name,
    formats: decoderFormats(d),
    available: () => d.available(),
    decode: (bytes, req) => d.decode(bytes, req),
    ...(d.close ? { close: () => d.close!() } : {}),
  };
}

/** Call a module's createDecoder() (or the deprecated createConformanceBackend()). */
export async function decoderFromModule(mod: Record<string, unknown>, where: string, options?: Record<string, unknown>): Promise<Decoder> {
  const factory = mod.createDecoder ?? mod.createConformanceBackend;
  if (typeof factory !== "function") throw new Error(`${where} exports no createDecoder()`);
  return asDecoder(await (factory as (o?: unknown) => unknown)(options), `the object returned by ${where} createDecoder()`);
}

function isMissingPackage(e: unknown, specifier: string): boolean {
  const err = e as { code?: string; message?: string };
  if (err?.code === "ERR_MODULE_NOT_FOUND" || err?.code === "MODULE_NOT_FOUND") return String(err.message).includes(specifier);
  return err?.code === "ERR_PACKAGE_PATH_NOT_EXPORTED";
}

/** An entry whose decoder is `createDecoder()` of a backend package, imported on first open. */
export function packageEntry(name: string, specifier: string, importer: () => Promise<unknown>): DecoderEntry {
  return {
    name,
    description: `${specifier} createDecoder()`,
    async open(options) {
      let mod: Record<string, unknown>;
      try {
        mod = (await importer()) as Record<string, unknown>;
      } catch (e) {
        const reason = isMissingPackage(e, specifier)
          ? `package ${specifier} is not installed (npm install ${specifier}) or not built`
          : `importing ${specifier} failed: ${(e as Error)?.message ?? String(e)}`;
        return unavailableDecoder(name, reason);
      }
      try {
        return named(name, await decoderFromModule(mod, specifier, options));
      } catch (e) {
        return unavailableDecoder(name, `${specifier}: ${(e as Error).message}`);
      }
    },
  };
}

/** A decoder built in place (an adapter, a command), as a registry entry. */
export function factoryEntry(name: string, description: string, create: (options?: Record<string, unknown>) => Decoder | Promise<Decoder>): DecoderEntry {
  return {
    name,
    description,
    async open(options) {
      try {
        return named(name, asDecoder(await create(options), `decoder ${name}`));
      } catch (e) {
        return unavailableDecoder(name, (e as Error).message);
      }
    },
  };
}

export class DecoderRegistry {
  private readonly entries: ReadonlyMap<string, DecoderEntry>;

  constructor(entries: readonly DecoderEntry[]) {
    this.entries = new Map(entries.map((e) => [e.name, e]));
  }

  /** Entry names, in registration order. */
  get names(): string[] {
    return [...this.entries.keys()];
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  entry(name: string): DecoderEntry | undefined {
    return this.entries.get(name);
  }

  /** A registry with these entries added (an entry of the same name is replaced). */
  with(...entries: DecoderEntry[]): DecoderRegistry {
    return new DecoderRegistry([...[...this.entries.values()].filter((e) => !entries.some((n) => n.name === e.name)), ...entries]);
  }

  /** The decoder of that name; an unknown name throws DecoderLoadError, a missing backend is unavailable. */
  async open(name: string, options?: Record<string, unknown>): Promise<Decoder> {
    const entry = this.entries.get(name);
    if (!entry) throw new DecoderLoadError(`unknown decoder "${name}" (known: ${this.names.join(", ")})`);
    return entry.open(options);
  }
}
