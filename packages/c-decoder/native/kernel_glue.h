/*
 * What the WebAssembly kernel assumes and a native build replaces (the amalgamation script
 * rewrites the kernel text to use these names, and nothing else):
 * - its exported functions become file-local (SGFP4__KERNEL_API);
 * - a leaf table's payload word is a wasm32 address, `(const u8 *)word`; natively it is an offset
 *   into the stream the current call decodes (sgfp4__stream, set by the API functions below), and
 *   the kernel's `(u32)in` address base becomes 0.
 */
#define SGFP4__KERNEL_API static __attribute__((unused))
static __thread const unsigned char *sgfp4__stream;
#define SGFP4__LEAF_PAYLOAD(word) (sgfp4__stream + (word))
#define SGFP4__STREAM_ADDR(in) ((void)(in), 0u)
