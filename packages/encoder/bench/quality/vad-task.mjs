// Task-level check: Silero VAD run in onnxruntime-node on a real recording with its original
// weights and with quantized weights put back into the model; how far the speech probabilities
// move and how often the speech / non-speech decision (probability > 0.5) still agrees.
import * as ort from "onnxruntime-node";
import { LENA_WAV, loadRecording, replaceOnnxTensors, resample } from "@sgfp4/testkit/workloads";

const RATE = 16000;
const FRAME = 512; // samples per call at 16 kHz, as @ricky0123/vad-web feeds Silero v5
const THRESHOLD = 0.5;

export const VAD_RECORDING = `${LENA_WAV.pkg}@${LENA_WAV.version}/${LENA_WAV.path}, resampled to 16 kHz, ${FRAME}-sample frames, speech = probability > ${THRESHOLD}`;

/** Speech probability per frame of the recording, for one model file. */
async function probabilities(onnx, frames) {
  const session = await ort.InferenceSession.create(onnx, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  try {
    const out = new Float32Array(frames.length);
    let state = new ort.Tensor("float32", new Float32Array(2 * 128), [2, 1, 128]);
    const sr = new ort.Tensor("int64", BigInt64Array.from([BigInt(RATE)]), []);
    for (let i = 0; i < frames.length; i++) {
      const r = await session.run({ input: new ort.Tensor("float32", frames[i], [1, FRAME]), state, sr });
      out[i] = r.output.data[0];
      state = r.stateN;
    }
    return out;
  } finally {
    await session.release();
  }
}

/** The check for one model input: `compare(decodedTensors)` gives the row's task figures. */
export async function vadTask(model) {
  const audio = resample(loadRecording(), RATE).samples;
  const frames = [];
  for (let s = 0; s + FRAME <= audio.length; s += FRAME) frames.push(audio.slice(s, s + FRAME));
  const reference = await probabilities(model.onnx, frames);
  const speechFrames = reference.reduce((n, p) => n + (p > THRESHOLD ? 1 : 0), 0);
  return {
    frames: frames.length,
    speechFrames,
    async compare(decodedTensors) {
      const onnx = replaceOnnxTensors(model.onnx, model.weights.map((tensor, i) => ({ tensor, data: decodedTensors[i] })));
      const p = await probabilities(onnx, frames);
      let maxAbs = 0, sumAbs = 0, agree = 0;
      for (let i = 0; i < p.length; i++) {
        const d = Math.abs(p[i] - reference[i]);
        maxAbs = Math.max(maxAbs, d);
        sumAbs += d;
        if (p[i] > THRESHOLD === reference[i] > THRESHOLD) agree++;
      }
      return { maxAbsDiff: maxAbs, meanAbsDiff: sumAbs / p.length, agreement: agree / p.length };
    },
  };
}
