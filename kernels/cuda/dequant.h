// CUDA dequantisation of GGUF tensor data to float, the device counterpart of
// quant/dequant.h, with bit-identical results (see quant/dequant_rows.h on exactness).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "quant/quant_types.h"

namespace hearth::gpu {

// Enqueues on `stream` the conversion of n elements of `type` into floats.
//   d_src: device memory, n / block_elems blocks of `type` packed back to back in GGUF
//          order (block b holds elements [b·block_elems, (b+1)·block_elems)); aligned to
//          alignof the block struct (2 bytes, 4 for F32). A GGUF tensor's data, uploaded
//          as is, qualifies.
//   d_dst: device memory, n floats, 4-byte aligned; element i of the tensor lands in
//          d_dst[i]. Must not overlap d_src.
// Returns cudaErrorInvalidValue, before touching the device, for an unsupported type,
// a negative n or one that is not a multiple of the block size, null or misaligned
// pointers (n = 0 is a no-op returning cudaSuccess); otherwise the launch status. Like
// any kernel launch, errors while the kernel runs surface at the next synchronisation.
cudaError_t dequantize_cuda(quant::TensorType type, const void* d_src, float* d_dst, int64_t n,
                            cudaStream_t stream);

// Runs the kernels' per-thread code on the host, sequentially, as `n_threads` virtual
// threads striding over the work items (pass fewer threads than items to exercise the
// grid-stride loop). Host pointers; same validation as dequantize_cuda, false where it
// would return an error. Lets tests check the kernels' indexing without a GPU; not a
// production path (quant/dequant.h is the fast CPU code).
bool dequantize_on_host(quant::TensorType type, const void* src, float* dst, int64_t n,
                        int64_t n_threads);

// The embedding lookup: out[t, :] = row ids[t] of a [rows, cols] table of `type`,
// dequantised (Backend::embed). cols must be a multiple of the type's block size; ids are
// trusted to be < rows (the model checks them); d_table aligned as for dequantize_cuda.
// Same results as dequantize_cuda on each row, bit for bit.
cudaError_t embed_cuda(quant::TensorType type, const void* d_table, int64_t cols,
                       const int32_t* d_ids, int32_t n_tokens, float* d_out, cudaStream_t stream);
// The kernel's per-thread code on the host as n_threads virtual threads.
bool embed_on_host(quant::TensorType type, const void* table, int64_t cols, const int32_t* ids,
                   int32_t n_tokens, float* out, int64_t n_threads);

}  // namespace hearth::gpu
