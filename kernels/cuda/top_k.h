// The CUDA counterpart of Backend::top_k (kernels/backend.h): each row's k best logits,
// largest first, equal values by lower id, -inf never taken (short rows pad with id -1,
// value -inf), and the index of the row's first NaN or +inf (-1 when none). The same
// result as the CPU backend, element for element: only comparisons, no arithmetic.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace hearth::gpu {

// Enqueues on `stream`. d_logits [rows, n], d_ids and d_values [rows, k], d_invalid [rows]:
// device memory. 1 ≤ k ≤ 64, k ≤ n, rows ≥ 0; otherwise cudaErrorInvalidValue before
// touching the device. One CUDA block per row; k rounds, each a block-wide search for the
// best element ranked after the previous round's pick (exact, and cheap next to the
// forward pass at k ≤ 64: the row stays in L2 between rounds).
cudaError_t top_k_cuda(const float* d_logits, int32_t rows, int32_t n, int32_t k, int32_t* d_ids,
                       float* d_values, int32_t* d_invalid, cudaStream_t stream);

// The kernel's per-thread code run on the host as `n_threads` virtual threads per row and
// the block reduction done in order: the kernel's logic tested without a GPU. Host
// pointers; false where top_k_cuda would return an error.
bool top_k_on_host(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids,
                   float* values, int32_t* invalid, int32_t n_threads);

}  // namespace hearth::gpu
