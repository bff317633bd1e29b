// CUDA matrix products on GGUF weights (Backend::matmul): out[t, r] = Σ_c W[r, c] · x[t, c]
// (+ bias[r]) for every weight type the CPU backend reads. Weights stay in their file
// format in device memory and are decoded in registers (kernels/cuda/quant_decode.cuh).
//
// Two kernels:
//  - tensor cores: tiles of 64 weight rows × 16 or 64 tokens, the K dimension in steps
//    of 32 (weights decoded to fp16 into shared memory, activations rounded to fp16, fp32
//    accumulation with WMMA 16×16×16). Every output element is accumulated over K in the
//    same order whatever the tile shape and the number of tokens, so a token's result does
//    not depend on its company (batch invariant). Prefill and batched decode.
//  - matrix-vector: a warp per weight row, up to 8 tokens at a time, fp32 fused
//    multiply-adds; each lane takes every 32nd group of 16 columns, then a shuffle tree.
//    Also independent of the number of tokens, but not equal to the tensor-core result.
//
// The mode chooses: Invariant always runs the tensor-core kernel (the engine's default:
// a token's KV must not depend on whether it was computed in a decode step or a prefill
// chunk); Fastest runs the matrix-vector kernel for steps of ≤ 8 tokens.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "quant/quant_types.h"

namespace hearth::gpu {

enum class MatmulMode { Invariant, Fastest };

enum class MatmulKernel { TensorCore, MatVec };

inline constexpr int32_t kMatVecMaxTokens = 8;

// The kernel a call runs.
MatmulKernel matmul_kernel_for(MatmulMode mode, int32_t n_tokens);

// d_w: rows × row bytes of `type` (a GGUF tensor's data as uploaded, 2-byte aligned; F32
// 4-byte aligned). cols must be a multiple of the type's block size. d_x [n_tokens, cols],
// d_out [n_tokens, rows], d_bias [rows] or null. cudaErrorInvalidValue before touching the
// device for an unsupported type or bad sizes / pointers; n_tokens = 0 is a no-op.
cudaError_t matmul_cuda(quant::TensorType type, const void* d_w, int64_t rows, int64_t cols,
                        const float* d_x, int32_t n_tokens, float* d_out, const float* d_bias,
                        MatmulMode mode, cudaStream_t stream);

// The kernels' per-thread code on the host. The matrix-vector twin is the kernel's
// arithmetic exactly (its lanes and shuffle tree in order); the tensor-core twin fills
// the same shared-memory tiles with the kernel's code and replaces each 16×16×16 product
// by float sums of the fp16 products (the hardware's summation order inside one product
// is not specified, so the device may differ from it by float rounding).
bool matmul_on_host(quant::TensorType type, const void* w, int64_t rows, int64_t cols,
                    const float* x, int32_t n_tokens, float* out, const float* bias,
                    MatmulKernel kernel);

}  // namespace hearth::gpu
