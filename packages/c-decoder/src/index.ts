/**
 * Where this package's files lie once installed, for build tools and tests that compile or embed
 * them: the single-header C decoder, the GPU kernels folder and the command-protocol program.
 * The package is mostly files (see README.md); this entry only locates them.
 */
import { fileURLToPath } from "node:url";

/** Absolute path of sgfp4.h (the single-header C decoder). */
export const headerPath: string = fileURLToPath(new URL("../sgfp4.h", import.meta.url));
/** Absolute path of kernels/ (glsl/, spirv/, wgsl/, contract/). */
export const kernelsDir: string = fileURLToPath(new URL("../kernels", import.meta.url));
/** Absolute path of cli/sgfp4-decode.c, the conformance command-protocol program over sgfp4.h. */
export const cliSourcePath: string = fileURLToPath(new URL("../cli/sgfp4-decode.c", import.meta.url));
