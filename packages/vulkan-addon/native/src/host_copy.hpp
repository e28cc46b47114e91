// The one host copy of a decode's output (from mapped readback memory into the caller's
// array), spread over a few threads for large outputs: one core's memcpy (and the page faults
// of a fresh array) runs well below a GPU's device-to-host rate.
#pragma once
#include <cstddef>

namespace sgfp4 {

void copyParallel(void* dst, const void* src, size_t bytes);

}  // namespace sgfp4
