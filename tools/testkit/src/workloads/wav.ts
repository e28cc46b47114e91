/** Reading a PCM WAV recording as mono float samples, and resampling it for a model. */

export interface Audio {
  sampleRate: number;
  /** mono samples in [-1, 1) (channels averaged) */
  samples: Float32Array;
}

/** A RIFF/WAVE file with 16-bit integer PCM (format 1), any channel count. */
export function readWav(bytes: Uint8Array): Audio {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (bytes.length < 12 || tag(0) !== "RIFF" || tag(8) !== "WAVE") throw new Error("WAV: not a RIFF/WAVE file");
  let channels = 0;
  let sampleRate = 0;
  for (let pos = 12; pos + 8 <= bytes.length; ) {
    const id = tag(pos);
    const size = dv.getUint32(pos + 4, true);
    const body = pos + 8;
    if (body + size > bytes.length) throw new Error(`WAV: chunk ${id} runs past the end`);
    if (id === "fmt ") {
      const format = dv.getUint16(body, true);
      const bits = dv.getUint16(body + 14, true);
      if (format !== 1 || bits !== 16) throw new Error(`WAV: only 16-bit PCM is read (format ${format}, ${bits} bits)`);
      channels = dv.getUint16(body + 2, true);
      sampleRate = dv.getUint32(body + 4, true);
    } else if (id === "data") {
      if (!channels) throw new Error("WAV: data before fmt");
      const frames = Math.floor(size / (2 * channels));
      const samples = new Float32Array(frames);
      for (let i = 0; i < frames; i++) {
        let s = 0;
        for (let c = 0; c < channels; c++) s += dv.getInt16(body + 2 * (i * channels + c), true);
        samples[i] = s / channels / 32768;
      }
      return { sampleRate, samples };
    }
    pos = body + size + (size & 1); // chunks are padded to even sizes
  }
  throw new Error("WAV: no data chunk");
}

/**
 * Resampled to `rate` by linear interpolation after a moving-average low-pass as wide as one
 * output sample (enough for a speech model's input; not a studio resampler).
 */
export function resample(audio: Audio, rate: number): Audio {
  const { samples, sampleRate } = audio;
  if (sampleRate === rate) return audio;
  const ratio = sampleRate / rate;
  const width = Math.max(1, Math.round(ratio));
  const smooth = new Float32Array(samples.length);
  let acc = 0;
  for (let i = 0; i < samples.length; i++) {
    acc += samples[i]!;
    if (i >= width) acc -= samples[i - width]!;
    smooth[i] = acc / Math.min(i + 1, width);
  }
  const n = Math.floor(samples.length / ratio);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const x = i * ratio + (width - 1) / 2; // centre of the averaging window
    const j = Math.min(Math.floor(x), samples.length - 2);
    const f = x - j;
    out[i] = smooth[j]! * (1 - f) + smooth[j + 1]! * f;
  }
  return { sampleRate: rate, samples: out };
}
