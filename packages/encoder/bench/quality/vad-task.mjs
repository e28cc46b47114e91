// Task-level check: Silero VAD run in onnxruntime-node on real recordings with its original
// weights and with quantized weights put back into the model; how far the speech probabilities
// move and how often the speech / non-speech decision (probability > 0.5) still agrees.
import * as ort from "onnxruntime-node";
import { RECORDINGS, loadRecording, replaceOnnxTensors, resample } from "@sgfp4/testkit/workloads";

const RATE = 16000;
const FRAME = 512; // samples per call at 16 kHz, as @ricky0123/vad-web feeds Silero v5
const THRESHOLD = 0.5;

/** Speech probability per frame of one recording (the recurrent state starts at zero), for one model file. */
async function probabilities(session, frames) {
  const out = new Float32Array(frames.length);
  let state = new ort.Tensor("float32", new Float32Array(2 * 128), [2, 1, 128]);
  const sr = new ort.Tensor("int64", BigInt64Array.from([BigInt(RATE)]), []);
  for (let i = 0; i < frames.length; i++) {
    const r = await session.run({ input: new ort.Tensor("float32", frames[i], [1, FRAME]), state, sr });
    out[i] = r.output.data[0];
    state = r.stateN;
  }
  return out;
}

async function run(onnx, recordings) {
  const session = await ort.InferenceSession.create(onnx, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  try {
    const out = [];
    for (const r of recordings) out.push(await probabilities(session, r.frames));
    return out;
  } finally {
    await session.release();
  }
}

/** The check for one model input: `compare(decodedTensors)` gives the row's task figures. */
export async function vadTask(model) {
  const recordings = RECORDINGS.map(({ name, file }) => {
    const audio = resample(loadRecording(file), RATE).samples;
    const frames = [];
    for (let s = 0; s + FRAME <= audio.length; s += FRAME) frames.push(audio.slice(s, s + FRAME));
    return { name, source: `${file.pkg}@${file.version}/${file.path}`, frames };
  });
  const reference = await run(model.onnx, recordings);
  return {
    description: `Silero VAD in onnxruntime-node (one thread) on ${recordings.map((r, i) => `${r.name} (${r.source}: ${r.frames.length} frames, ${reference[i].filter((p) => p > THRESHOLD).length} speech)`).join(" and ")}, resampled to 16 kHz, ${FRAME}-sample frames, speech = probability > ${THRESHOLD}`,
    recordings: recordings.map((r) => r.name),
    async compare(decodedTensors) {
      const onnx = replaceOnnxTensors(model.onnx, model.weights.map((tensor, i) => ({ tensor, data: decodedTensors[i] })));
      const got = await run(onnx, recordings);
      let maxAbs = 0, sumAbs = 0, n = 0;
      const agreement = {};
      recordings.forEach((r, k) => {
        let agree = 0;
        for (let i = 0; i < got[k].length; i++) {
          const d = Math.abs(got[k][i] - reference[k][i]);
          maxAbs = Math.max(maxAbs, d);
          sumAbs += d;
          if (got[k][i] > THRESHOLD === reference[k][i] > THRESHOLD) agree++;
        }
        n += got[k].length;
        agreement[r.name] = agree / got[k].length;
      });
      return { maxAbsDiff: maxAbs, meanAbsDiff: sumAbs / n, agreement };
    },
  };
}
