// CUDA matrix products on GGUF weights (Backend::matmul): out[t, r] = Σ_c W[r, c] · x[t, c]
// (+ bias[r]) for every weight type the CPU backend reads. Weights stay in their file
// format in device memory and are decoded in registers (kernels/cuda/quant_decode.cuh).
//
// fp16 operands that stay finite: the tensor cores multiply fp16, whose range ends at
// 65504 (Gemma's GeGLU products and some Qwen3 activations pass it). Each token's row is
// scaled by a power of two 2^-e_t taken from its largest |x| (so that it stays below
// 2^14) before rounding to fp16, and the product is multiplied back by 2^e_t: exact, and a
// function of the token's own row only, so batch invariance holds. F32 and BF16 weight
// rows, which may be far outside fp16's range either way (large, or below its 6e-5 normal
// limit), get a power-of-two scale per row the same way (matmul_row_scales, computed once
// when the weight is loaded). Quantised weights are fp16 scales times small integers.
//
// Three kernels:
//  - split-K (decode, ≤ 16 tokens): the K dimension is cut at multiples of 32 columns
//    into plan.splits ranges; each CUDA block computes one 64-row tile of one range with
//    WMMA 16×16×16 (fp32 accumulation), partial sums go to the workspace, and a second
//    kernel adds them in range order. The split count comes from the weight's shape and the
//    device's SM count only (matmul_plan), never from the batch: a 1024-row projection on
//    a 132-SM GPU launches 528 blocks instead of 16.
//  - tensor cores, tiled (prefill and larger steps): tiles of 64 weight rows × 16 or 64
//    tokens; each block walks the same K ranges in order, accumulating each range from
//    zero and adding it to the total as the split-K reduction does. Every output element
//    is therefore the same sequence of 16-column products and the same sum of ranges in
//    both kernels: a token's result does not depend on its company (batch invariant).
//  - matrix-vector (MatmulMode::Fastest only): a warp per weight row, up to 8 tokens,
//    fp32 fused multiply-adds, a shuffle tree. Not equal to the tensor-core results.
#pragma once

#include <cuda_runtime_api.h>
#include <math.h>

#include <cstddef>
#include <cstdint>

#include "quant/quant_types.h"

namespace hearth::gpu {

enum class MatmulMode { Invariant, Fastest };

enum class MatmulKernel { TensorCore, SplitK, MatVec };

inline constexpr int32_t kMatVecMaxTokens = 8;
inline constexpr int32_t kSplitKMaxTokens = 16;
inline constexpr int64_t kMatmulTileRows = 64;  // weight rows per CUDA block
inline constexpr int64_t kSplitColumns = 32;    // K ranges start at multiples of this
inline constexpr int32_t kMaxSplits = 64;
// Blocks a decode product aims at per SM (at least 2 where the shape allows: the launch
// plan test checks the shapes of the models Hearth is used with).
inline constexpr int32_t kSplitBlocksPerSm = 4;

// How a weight's K dimension is cut: `splits` ranges of whole 32-column chunks (chunks in
// all), range s covering chunks [first_chunk(s), first_chunk(s + 1)).
struct MatmulPlan {
    int32_t splits = 1;
    int64_t chunks = 1;
};

// The plan for a rows × cols weight on a device with `sm_count` multiprocessors: enough
// ranges that a decode product launches kSplitBlocksPerSm blocks per SM, at most one per
// 32-column chunk and kMaxSplits. A pure function of the shape and the device.
MatmulPlan matmul_plan(int64_t rows, int64_t cols, int sm_count);
int64_t split_first_chunk(const MatmulPlan& plan, int32_t s);

// The kernel a call runs: Invariant runs split-K for ≤ 16 tokens and the tiled kernel
// above (the same bits); Fastest runs the matrix-vector kernel for ≤ 8 tokens.
MatmulKernel matmul_kernel_for(MatmulMode mode, int32_t n_tokens);

// CUDA blocks the kernel launches for a step of n_tokens (the main kernel; split-K adds
// one reduction launch).
int64_t matmul_blocks(MatmulKernel kernel, const MatmulPlan& plan, int64_t rows, int32_t n_tokens);

// Device workspace a call needs: the fp16 activations and their scales, and split-K's
// partial sums (0 for the matrix-vector kernel).
std::size_t matmul_workspace_bytes(MatmulKernel kernel, const MatmulPlan& plan, int64_t rows,
                                   int64_t cols, int32_t n_tokens);

// The most workspace any product of these shapes needs in steps of at most max_tokens
// tokens on a device of sm_count SMs (either kernel the mode may choose). For the VRAM plan.
struct MatmulShape {
    int64_t rows = 0, cols = 0;
};
std::size_t matmul_workspace_bound(const MatmulShape* shapes, std::size_t n_shapes,
                                   int32_t max_tokens, int sm_count);

// The power of two e such that |v| < 2^(e + 14) for every |v| ≤ amax: operands scaled by
// 2^-e stay below 2^14 in fp16 (products and their fp32 sums far from any limit). 0 for
// amax 0, inf or NaN (nothing to gain; inf and NaN propagate as on the CPU); clamped to
// ±126 so that 2^e and 2^-e are normal floats (every finite amax from 2^-112 up is covered;
// a row below that is zero to fp16 either way).
__host__ __device__ inline int fp16_operand_exponent(float amax) {
    if (!(amax > 0.0f) || !(amax <= 3.4028235e38f)) return 0;
    int p = 0;
    (void)frexpf(amax, &p);  // amax = m · 2^p, 0.5 ≤ m < 1: amax < 2^p
    const int e = p - 14;
    return e < -126 ? -126 : (e > 126 ? 126 : e);
}

// Types whose rows carry a scale (F32, BF16); their scales: 2^e per row, from the row's
// largest |w| (fp16_operand_exponent). False for another type or bad arguments.
bool matmul_needs_row_scales(quant::TensorType type);
bool matmul_row_scales(quant::TensorType type, const void* w, int64_t rows, int64_t cols,
                       float* scales);

// A weight as the kernels see it (device pointers for matmul_cuda, host ones for the
// host twins). row_scales: rows floats, required for the types that need them.
struct MatmulWeight {
    quant::TensorType type = quant::TensorType::F32;
    const void* data = nullptr;  // rows × row bytes (2-byte aligned; F32 4-byte)
    int64_t rows = 0, cols = 0;
    const float* row_scales = nullptr;
    MatmulPlan plan;
};

// d_x [n_tokens, cols], d_out [n_tokens, rows], d_bias [rows] or null; d_workspace at
// least matmul_workspace_bytes (256-byte aligned). cudaErrorInvalidValue before touching
// the device for an unsupported type, bad sizes, pointers or plan, a missing row scale or
// a short workspace; n_tokens = 0 is a no-op.
cudaError_t matmul_cuda(const MatmulWeight& w, const float* d_x, int32_t n_tokens, float* d_out,
                        const float* d_bias, MatmulMode mode, void* d_workspace,
                        std::size_t workspace_bytes, cudaStream_t stream);

// The kernels' per-thread code on the host. The matrix-vector twin is the kernel's
// arithmetic exactly (its lanes and shuffle tree in order); the tensor-core twins fill the
// same shared-memory tiles with the kernels' code and replace each 16×16×16 product by
// float sums of the fp16 products (the hardware's summation order inside one product is
// not specified, so the device may differ from them by float rounding), then sum the K
// ranges and scale as the kernels do.
bool matmul_on_host(const MatmulWeight& w, const float* x, int32_t n_tokens, float* out,
                    const float* bias, MatmulKernel kernel);

}  // namespace hearth::gpu
