// The matrix products' launch plan, workspace and weight row scales (see matmul.h): host
// arithmetic, tested without a device.
#include <algorithm>
#include <cmath>

#include "cuda/matmul.h"
#include "quant/fp16.h"

namespace hearth::gpu {

namespace {

std::size_t aligned(std::size_t bytes) {
    return (bytes + 255) & ~std::size_t{255};
}

}  // namespace

MatmulPlan matmul_plan(int64_t rows, int64_t cols, int sm_count) {
    MatmulPlan plan;
    plan.chunks = std::max<int64_t>(1, (cols + kSplitColumns - 1) / kSplitColumns);
    const int64_t tiles = std::max<int64_t>(1, (rows + kMatmulTileRows - 1) / kMatmulTileRows);
    const int64_t target = int64_t{kSplitBlocksPerSm} * std::max(sm_count, 1);
    const int64_t splits = (target + tiles - 1) / tiles;
    plan.splits = static_cast<int32_t>(
        std::clamp<int64_t>(splits, 1, std::min<int64_t>(plan.chunks, kMaxSplits)));
    return plan;
}

int64_t split_first_chunk(const MatmulPlan& plan, int32_t s) {
    return plan.chunks * s / plan.splits;
}

MatmulKernel matmul_kernel_for(MatmulMode mode, int32_t n_tokens) {
    if (mode == MatmulMode::Fastest)
        return n_tokens <= kMatVecMaxTokens ? MatmulKernel::MatVec : MatmulKernel::TensorCore;
    return n_tokens <= kSplitKMaxTokens ? MatmulKernel::SplitK : MatmulKernel::TensorCore;
}

int64_t matmul_blocks(MatmulKernel kernel, const MatmulPlan& plan, int64_t rows, int32_t n_tokens) {
    const int64_t tiles = (rows + kMatmulTileRows - 1) / kMatmulTileRows;
    switch (kernel) {
        case MatmulKernel::SplitK:
            return tiles * plan.splits;
        case MatmulKernel::TensorCore:
            return tiles * (n_tokens <= 16 ? 1 : (n_tokens + 63) / 64);
        case MatmulKernel::MatVec:
            return (rows + 3) / 4;
    }
    return 0;
}

std::size_t matmul_workspace_bytes(MatmulKernel kernel, const MatmulPlan& plan, int64_t rows,
                                   int64_t cols, int32_t n_tokens) {
    if (kernel == MatmulKernel::MatVec || n_tokens <= 0) return 0;
    const auto n = static_cast<std::size_t>(n_tokens);
    std::size_t bytes = aligned(n * static_cast<std::size_t>(cols) * 2) + aligned(n * 4);
    if (kernel == MatmulKernel::SplitK)
        bytes +=
            aligned(static_cast<std::size_t>(plan.splits) * n * static_cast<std::size_t>(rows) * 4);
    return bytes;
}

std::size_t matmul_workspace_bound(const MatmulShape* shapes, std::size_t n_shapes,
                                   int32_t max_tokens, int sm_count) {
    std::size_t most = 0;
    for (std::size_t i = 0; i < n_shapes; ++i) {
        const MatmulShape& s = shapes[i];
        if (s.rows < 1 || s.cols < 1) continue;
        const MatmulPlan plan = matmul_plan(s.rows, s.cols, sm_count);
        // Split-K at its largest step, the tiled kernel at the largest step: the
        // activations grow with the tokens, split-K's partial sums with the rows.
        most = std::max(most, matmul_workspace_bytes(MatmulKernel::SplitK, plan, s.rows, s.cols,
                                                     std::min(max_tokens, kSplitKMaxTokens)));
        most = std::max(most, matmul_workspace_bytes(MatmulKernel::TensorCore, plan, s.rows, s.cols,
                                                     max_tokens));
    }
    return most;
}

bool matmul_needs_row_scales(quant::TensorType type) {
    return type == quant::TensorType::F32 || type == quant::TensorType::BF16;
}

bool matmul_row_scales(quant::TensorType type, const void* w, int64_t rows, int64_t cols,
                       float* scales) {
    if (!matmul_needs_row_scales(type) || !w || !scales || rows < 0 || cols < 1) return false;
    for (int64_t r = 0; r < rows; ++r) {
        float amax = 0.0f;
        for (int64_t c = 0; c < cols; ++c) {
            const int64_t i = r * cols + c;
            const float v = type == quant::TensorType::F32
                                ? static_cast<const float*>(w)[i]
                                : quant::bf16_to_f32(static_cast<const uint16_t*>(w)[i]);
            amax = std::fmax(amax, std::fabs(v));
        }
        scales[r] = std::ldexp(1.0f, fp16_operand_exponent(amax));
    }
    return true;
}

}  // namespace hearth::gpu
