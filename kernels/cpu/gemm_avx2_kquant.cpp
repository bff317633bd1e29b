// AVX2 kernels for the K-quants (Q4_K, Q5_K, Q6_K) against Q8xK activations
// (act_quant.h): one weight row against up to 8 tokens at a time, each super-block
// unpacked once for all of them (prefill); the driver keeps a tile of rows in cache while
// the tile's tokens stream past.
//
// Per 256-element super-block: the quants are unpacked to bytes (Q4_K 0..15, Q5_K 0..31,
// Q6_K 0..63), multiplied with the activation bytes by maddubs into int16 pair sums, and
// those are weighted with the sub-block scales by madd (int16 × int16 → int32). The
// sub-block minimums (Q4_K/Q5_K) and the −32 offset (Q6_K) only need Σ qa per sub-block,
// which the activations carry in bsums.
#include <algorithm>

#include "cpu/kquant_avx2.h"

namespace hearth::kernels::cpu {

namespace {

using quant::TensorType;

// Q4_K (kFive = false) and Q5_K (kFive = true): one weight row against N ≤ 8 tokens. Each
// super-block is unpacked once and used for every token; each token's sums are the same
// operations in the same order whatever N is (the integer sums are exact, the float
// accumulation runs block by block per token), so a token's result does not depend on the
// tokens beside it. Per block and token, the scaled sums and the minimums' term are folded
// into one 8-lane float accumulator (lane j: sub-block j's minimum), reduced at the end.
template <bool kFive, int N>
static inline void dot_q45k(const uint8_t* w, const TokenAct* t_act, int64_t nb, float* out) {
    constexpr std::size_t kBytes = kFive ? sizeof(quant::BlockQ5_K) : sizeof(quant::BlockQ4_K);
    __m256 acc[N];
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* p = w + static_cast<std::size_t>(b) * kBytes;
        for (std::size_t line = 0; line < kBytes; line += 64) avx2::prefetch_ahead(p + line);
        __m256i sumi[N], mins16;
        q45k_block_sums<kFive, N>(p, t_act, b, sumi, mins16);
        const __m256 wd = _mm256_set1_ps(avx2::fp16(avx2::load_u16(p)));
        const __m256 wmin = _mm256_set1_ps(avx2::fp16(avx2::load_u16(p + 2)));
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) {
            const __m256 da = _mm256_broadcast_ss(t_act[t].da + b);
            // Σ_j m_j · Σ qa over sub-block j, one sub-block per int32 lane.
            const __m256i bs =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t_act[t].bsums + 16 * b));
            const __m256 mins = _mm256_cvtepi32_ps(_mm256_madd_epi16(mins16, bs));
            acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(wd, da), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
            acc[t] = _mm256_fnmadd_ps(_mm256_mul_ps(wmin, da), mins, acc[t]);
        }
    }
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) out[t] = avx2::hsum(acc[t]);
}

// Q6_K: one weight row against N ≤ 8 tokens, unpacked once per super-block (as dot_q45k).
template <int N>
static inline void dot_q6k(const uint8_t* w, const TokenAct* t_act, int64_t nb, float* out) {
    __m256 acc[N];
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* p = w + static_cast<std::size_t>(b) * sizeof(quant::BlockQ6_K);
        for (std::size_t line = 0; line < sizeof(quant::BlockQ6_K); line += 64)
            avx2::prefetch_ahead(p + line);
        __m256i sumi[N], sc16;
        q6k_block_sums<N>(p, t_act, b, sumi, sc16);
        const float wd = avx2::fp16(avx2::load_u16(p + 208));
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) {
            // The −32 offset: 32 · Σ_j sc_j · bsums_j.
            const __m256i bs =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t_act[t].bsums + 16 * b));
            const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(sc16, bs), 5);
            const float d = wd * t_act[t].da[b];
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d),
                                     _mm256_cvtepi32_ps(_mm256_sub_epi32(sumi[t], offset)), acc[t]);
        }
    }
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) out[t] = avx2::hsum(acc[t]);
}

template <TensorType T, int N>
void rows_x_tokens(const GemmArgs& a, const TokenAct* acts, float* const* outs) {
    float r_out[N];
    for (int r = 0; r < a.n_rows; ++r) {
        const uint8_t* w = a.w + static_cast<std::size_t>(r) * a.w_stride;
        if constexpr (T == TensorType::Q6_K) {
            dot_q6k<N>(w, acts, a.nb, r_out);
        } else {
            dot_q45k<T == TensorType::Q5_K, N>(w, acts, a.nb, r_out);
        }
        for (int t = 0; t < N; ++t) outs[t][r] = r_out[t];
    }
}

// Tokens in groups of up to 8 (the weight rows of the tile stay in cache meanwhile): 8
// tokens per super-block unpack ran the 1B-shaped Q4_K/Q5_K/Q6_K products 6-18 % faster
// than 4 (hearth-kernel-bench --llama-1b, alternating runs), though the float
// accumulators of 8 tokens no longer all fit in registers.
template <TensorType T>
void gemm_k(const GemmArgs& a) {
    constexpr int kTokens = 8;
    for (int t0 = 0; t0 < a.n_tokens; t0 += kTokens) {
        const int n = std::min(kTokens, a.n_tokens - t0);
        TokenAct acts[kTokens];
        float* outs[kTokens];
        for (int i = 0; i < n; ++i) {
            acts[i] = token_act(a, t0 + i);
            outs[i] = a.out + static_cast<std::size_t>(t0 + i) * a.out_stride;
        }
        switch (n) {
            case 8:
                rows_x_tokens<T, 8>(a, acts, outs);
                break;
            case 7:
                rows_x_tokens<T, 7>(a, acts, outs);
                break;
            case 6:
                rows_x_tokens<T, 6>(a, acts, outs);
                break;
            case 5:
                rows_x_tokens<T, 5>(a, acts, outs);
                break;
            case 4:
                rows_x_tokens<T, 4>(a, acts, outs);
                break;
            case 3:
                rows_x_tokens<T, 3>(a, acts, outs);
                break;
            case 2:
                rows_x_tokens<T, 2>(a, acts, outs);
                break;
            default:
                rows_x_tokens<T, 1>(a, acts, outs);
                break;
        }
    }
}

}  // namespace

void gemm_avx2_q4_k(const GemmArgs& a) {
    gemm_k<TensorType::Q4_K>(a);
}
void gemm_avx2_q5_k(const GemmArgs& a) {
    gemm_k<TensorType::Q5_K>(a);
}
void gemm_avx2_q6_k(const GemmArgs& a) {
    gemm_k<TensorType::Q6_K>(a);
}

}  // namespace hearth::kernels::cpu
