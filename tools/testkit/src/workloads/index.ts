// Workload builders for the benchmarks (Node only: they read files and run the npm client).
export { npmCacheDir, npmFile } from "./npm-file.js";
export type { NpmFile } from "./npm-file.js";
export { onnxFloatTensors, onnxWeightTensors, replaceOnnxTensors } from "./onnx.js";
export type { OnnxTensor, OnnxWeight } from "./onnx.js";
export { readWav, resample } from "./wav.js";
export type { Audio } from "./wav.js";
export { JFK_WAV, LENA_WAV, PPOCR_REC, REAL_MODELS, RECORDINGS, SILERO_VAD, loadRealModel, loadRecording } from "./catalog.js";
export type { RealModel } from "./catalog.js";
