// The one host copy of a decode's output (from mapped readback memory into the caller's
// array, and the staging of the inputs), spread over the work pool for large copies, with
// streaming stores: one core's memcpy (and the page faults
// of a fresh array) runs well below a GPU's device-to-host rate.
#pragma once
#include <cstddef>

namespace sgfp4 {

void copyParallel(void* dst, const void* src, size_t bytes);
// The same copy on the calling thread only (a part of a larger job already spread over the pool).
void copySerial(void* dst, const void* src, size_t bytes);

}  // namespace sgfp4
