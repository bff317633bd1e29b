// AVX2 kernels for float weights (F32, F16 via F16C, BF16 by shifting into the high
// half of a float) against float activations: plain FMA dot products. A tile of R rows ×
// TT tokens keeps R·TT accumulators in registers so each weight vector, converted once,
// feeds TT tokens and each activation vector feeds R rows.
#include "cpu/avx2_util.h"
#include "cpu/gemm_kernels.h"

namespace hearth::kernels::cpu {

namespace {

using quant::TensorType;

template <TensorType T>
static inline __m256 load8(const uint8_t* row, int64_t c) {
    if constexpr (T == TensorType::F32) {
        return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + c);
    } else {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * c));
        if constexpr (T == TensorType::F16) return _mm256_cvtph_ps(h);
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
}

template <TensorType T>
static inline float load1(const uint8_t* row, int64_t c) {
    if constexpr (T == TensorType::F32) {
        float v;
        std::memcpy(&v, row + 4 * c, 4);
        return v;
    } else {
        const uint16_t h = avx2::load_u16(row + 2 * c);
        if constexpr (T == TensorType::F16) return avx2::fp16(h);
        const uint32_t bits = static_cast<uint32_t>(h) << 16;
        float v;
        std::memcpy(&v, &bits, 4);
        return v;
    }
}

// out[t·os + r] = Σ_c W[r, c] · x_t[c] for r < R, t < TT. x_t = act + t·as bytes.
template <TensorType T, int R, int TT>
static inline void tile(const uint8_t* w, std::size_t ws, int64_t n, const uint8_t* act,
                        std::size_t as, float* out, std::size_t os) {
    __m256 acc[R][TT];
    HEARTH_UNROLL
    for (int r = 0; r < R; ++r) HEARTH_UNROLL
    for (int t = 0; t < TT; ++t) acc[r][t] = _mm256_setzero_ps();
    const float* x[TT];
    HEARTH_UNROLL
    for (int t = 0; t < TT; ++t)
        x[t] = reinterpret_cast<const float*>(act + static_cast<std::size_t>(t) * as);
    const int64_t n8 = n & ~int64_t{7};
    for (int64_t c = 0; c < n8; c += 8) {
        __m256 wv[R];
        HEARTH_UNROLL
        for (int r = 0; r < R; ++r) wv[r] = load8<T>(w + static_cast<std::size_t>(r) * ws, c);
        HEARTH_UNROLL
        for (int t = 0; t < TT; ++t) {
            const __m256 xv = _mm256_loadu_ps(x[t] + c);
            HEARTH_UNROLL
            for (int r = 0; r < R; ++r) acc[r][t] = _mm256_fmadd_ps(wv[r], xv, acc[r][t]);
        }
    }
    HEARTH_UNROLL
    for (int r = 0; r < R; ++r) {
        const uint8_t* wr = w + static_cast<std::size_t>(r) * ws;
        HEARTH_UNROLL
        for (int t = 0; t < TT; ++t) {
            float v = avx2::hsum(acc[r][t]);
            for (int64_t c = n8; c < n; ++c) v += load1<T>(wr, c) * x[t][c];
            out[static_cast<std::size_t>(t) * os + r] = v;
        }
    }
}

template <TensorType T, int TT>
static inline void rows_x_tokens(const GemmArgs& a, const uint8_t* act, float* out) {
    const std::size_t ws = a.w_stride;
    if constexpr (TT == 1) {
        // NOTE: the same tile, one accumulator per output, as for several tokens: a token's
        // result must not depend on how many tokens share its product (batch invariance,
        // docs/architecture.md). Four interleaved accumulators decoded faster but summed
        // in another order than the multi-token tiles.
        for (int r = 0; r < a.n_rows; ++r)
            tile<T, 1, 1>(a.w + r * ws, ws, a.nb, act, a.act_stride, out + r, a.out_stride);
    } else {
        constexpr int R = 2;
        int r = 0;
        for (; r + R <= a.n_rows; r += R)
            tile<T, R, TT>(a.w + r * ws, ws, a.nb, act, a.act_stride, out + r, a.out_stride);
        for (; r < a.n_rows; ++r)
            tile<T, 1, TT>(a.w + r * ws, ws, a.nb, act, a.act_stride, out + r, a.out_stride);
    }
}

template <TensorType T>
void gemm_float(const GemmArgs& a) {
    for (int t0 = 0; t0 < a.n_tokens; t0 += 4) {
        const uint8_t* act = a.act + static_cast<std::size_t>(t0) * a.act_stride;
        float* out = a.out + static_cast<std::size_t>(t0) * a.out_stride;
        switch (a.n_tokens - t0) {
            case 1:
                rows_x_tokens<T, 1>(a, act, out);
                break;
            case 2:
                rows_x_tokens<T, 2>(a, act, out);
                break;
            case 3:
                rows_x_tokens<T, 3>(a, act, out);
                break;
            default:
                rows_x_tokens<T, 4>(a, act, out);
                break;
        }
    }
}

}  // namespace

void gemm_avx2_f32(const GemmArgs& a) {
    gemm_float<TensorType::F32>(a);
}
void gemm_avx2_f16(const GemmArgs& a) {
    gemm_float<TensorType::F16>(a);
}
void gemm_avx2_bf16(const GemmArgs& a) {
    gemm_float<TensorType::BF16>(a);
}

}  // namespace hearth::kernels::cpu
