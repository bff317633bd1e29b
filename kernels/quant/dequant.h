// Dequantisation of GGUF tensor data to float, one row (or any whole number of blocks)
// at a time. Used by the model loader, by tests, and as the building block of the CPU
// backend's fallback paths.
#pragma once

#include <cstdint>

#include "quant/quant_types.h"

namespace hearth::quant {

// Converts n elements of `type` starting at src into dst. n must be a multiple of the
// type's block size; src must hold n / block_elems * block_bytes bytes. Returns false
// (and writes nothing) for an unsupported type or a bad n.
bool dequantize(TensorType type, const void* src, float* dst, int64_t n);

}  // namespace hearth::quant
