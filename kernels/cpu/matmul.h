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
#include "cpu/thread_pool.h"
#include "quant/quant_types.h"

namespace hearth::kernels::cpu {

// A weight matrix in its file layout: rows of row_bytes bytes, contiguous.
struct WeightView {
    quant::TensorType type = quant::TensorType::F32;
    int64_t rows = 0;
    int64_t cols = 0;
    const uint8_t* data = nullptr;  // [rows][row_bytes]
    std::size_t row_bytes = 0;
};

// True when matmul supports the type (every type of quant_types.h), and cols is a
// multiple of its block size.
bool matmul_supports(quant::TensorType type, int64_t cols);

// x [n_tokens, w.cols], out [n_tokens, w.rows], bias [w.rows] or null. `scratch` holds
// the quantised activations (owned by the caller so it is reused across calls).
void matmul(ThreadPool& pool, SimdLevel level, AlignedBuffer& scratch, const WeightView& w,
            const float* x, int32_t n_tokens, float* out, const float* bias);

}  // namespace hearth::kernels::cpu
