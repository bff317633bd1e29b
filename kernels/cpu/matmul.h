// The CPU matmul driver: out[t, r] = Σ_c W[r, c] · x[t, c] (+ bias[r]) for a weight in
// any supported type, run on the thread pool.
//
// Steps: (1) quantise every activation row once into scratch memory in the format the
// weight type's kernel wants (act_quant.h), (2) split the output [n_tokens, rows] into
// tiles of row chunks × token chunks and run the kernels (gemm_kernels.h) on them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cpu/aligned_buffer.h"
#include "cpu/cpu_features.h"
#include "cpu/kernel_choice.h"
#include "cpu/thread_pool.h"
#include "quant/quant_types.h"

namespace hearth::kernels::cpu {

// A weight matrix in its file layout: rows of row_bytes bytes, contiguous; and the copy
// repacked for the kernel (weight_pack.h) where the kernel asks for one.
struct WeightView {
    quant::TensorType type = quant::TensorType::F32;
    int64_t rows = 0;
    int64_t cols = 0;
    const uint8_t* data = nullptr;  // [rows][row_bytes]
    std::size_t row_bytes = 0;
    const uint8_t* packed = nullptr;  // matmul_packed_bytes() bytes from matmul_pack(), or null
    std::size_t packed_group_bytes = 0;
};

// True when matmul supports the type (every type of quant_types.h), and cols is a
// multiple of its block size.
bool matmul_supports(quant::TensorType type, int64_t cols);

// Bytes of the packed copy of w the kernel at `level` reads (0: it reads the file layout),
// and that copy made at dst (64-byte aligned); matmul_pack also sets w.packed_group_bytes.
// Without the copy (w.packed null) matmul runs the portable kernel: the same bits for
// Q4_0, not for IQ4_NL (whose portable kernel keeps llama.cpp's order).
std::size_t matmul_packed_bytes(SimdLevel level, const WeightView& w);
void matmul_pack(SimdLevel level, WeightView& w, uint8_t* dst);

// x [n_tokens, w.cols], out [n_tokens, w.rows], bias [w.rows] or null, with the kernel
// the plan chose for the weight's type and the product's shape class. `scratch` holds
// the quantised activations (owned by the caller so it is reused across calls).
void matmul(ThreadPool& pool, const KernelPlan& plan, AlignedBuffer& scratch, const WeightView& w,
            const float* x, int32_t n_tokens, float* out, const float* bias);

}  // namespace hearth::kernels::cpu
