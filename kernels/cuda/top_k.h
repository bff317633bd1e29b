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
// touching the device. One CUDA block per row and one pass over it: each of the block's 8
// warps keeps the best k of its contiguous segment in a sorted list spread over its lanes
// (an element that ranks before the list's k-th is inserted, by ballot and shuffles; after
// the first few hundred elements of a segment almost none does), then one warp merges the
// 8 lists. Before, k block-wide rounds read the row k times (about 64 MB of L2 traffic per
// row at a 262,144 vocabulary and k = 64).
cudaError_t top_k_cuda(const float* d_logits, int32_t rows, int32_t n, int32_t k, int32_t* d_ids,
                       float* d_values, int32_t* d_invalid, cudaStream_t stream);

// The kernel's algorithm on the host with `n_warps` segments per row (the kernel has 8):
// the same segments, the same lists and insertions in the same order, the same merge.
// Host pointers; false where top_k_cuda would return an error.
inline constexpr int32_t kTopKWarps = 8;
bool top_k_on_host(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids,
                   float* values, int32_t* invalid, int32_t n_warps);

}  // namespace hearth::gpu
