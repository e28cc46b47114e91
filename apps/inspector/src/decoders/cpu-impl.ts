/**
 * Which CPU decode the worker runs. Until @sgfp4/cpu-decoder is built this is the page's own
 * leaf-table walk; once it lands this file imports its browser-safe main entry instead.
 */
import { referenceDecode } from "./reference-decode";

export const CPU_DECODER_LABEL = "inspector reference walk (stand-in until @sgfp4/cpu-decoder)";
export const decodeOnCpu = referenceDecode;
