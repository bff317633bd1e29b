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
        const uint8_t* qh = p + 4 + quant::kKScaleBytes;
        const uint8_t* qs = kFive ? qh + 32 : qh;
        const __m128i sm = k4_scales_mins(p + 4);  // bytes [sc0..7, m0..7]
        // [sc0, sc1, .., sc7] in both 128-bit halves, and the minimums doubled to pair with
        // the 16 bsums: [m0, m0, m1, m1, .., m7, m7] (int16).
        const __m256i sc16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi64(sm, sm));
        const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(sm, sm));
        const __m256i hbits = kFive ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh))
                                    : _mm256_setzero_si256();
        __m256i sumi[N];
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) sumi[t] = _mm256_setzero_si256();
        const auto step = [&](auto c_const) {
            constexpr int c = decltype(c_const)::value;
            __m256i lo, hi;
            q45k_quants<kFive, c>(qs, hbits, lo, hi);
            // Sub-block scales 2c and 2c+1 in every int16 lane.
            const __m256i s_lo =
                _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(0x0100 + 0x0202 * 2 * c));
            const __m256i s_hi =
                _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(0x0100 + 0x0202 * (2 * c + 1)));
            HEARTH_UNROLL
            for (int t = 0; t < N; ++t) {
                const int8_t* q8 = t_act[t].qa + 256 * b;
                const __m256i a_lo =
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 64 * c));
                const __m256i a_hi =
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 64 * c + 32));
                const __m256i p_lo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, a_lo), s_lo);
                const __m256i p_hi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, a_hi), s_hi);
                sumi[t] = _mm256_add_epi32(sumi[t], _mm256_add_epi32(p_lo, p_hi));
                avx2::pin(sumi[t]);
            }
        };
        step(std::integral_constant<int, 0>{});
        step(std::integral_constant<int, 1>{});
        step(std::integral_constant<int, 2>{});
        step(std::integral_constant<int, 3>{});
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
    // Per 32-element group k the scales of sub-blocks 2k (low 128 bits) and 2k+1 (high).
    const __m256i pick = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2,
                                          3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
    __m256 acc[N];
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* p = w + static_cast<std::size_t>(b) * sizeof(quant::BlockQ6_K);
        for (std::size_t line = 0; line < sizeof(quant::BlockQ6_K); line += 64)
            avx2::prefetch_ahead(p + line);
        const uint8_t* ql = p;
        const uint8_t* qh = p + 128;
        const auto* scales = reinterpret_cast<const int8_t*>(p + 192);
        const __m256i sc16 =
            _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales)));
        __m256i sumi[N];
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) sumi[t] = _mm256_setzero_si256();
        HEARTH_UNROLL
        for (int n = 0; n < 2; ++n) {
            const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 64 * n));
            const __m256i l1 =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 64 * n + 32));
            const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh + 32 * n));
            HEARTH_UNROLL
            for (int i = 0; i < 4; ++i) {
                const int k = 4 * n + i;  // 32-element group: sub-blocks 2k, 2k+1
                // The 6-bit quants of group k, made only when used (fewer live registers).
                const __m256i q = q6k_quants(l0, l1, h, i);
                const __m256i scv = _mm256_shuffle_epi8(
                    _mm256_permutevar8x32_epi32(sc16, _mm256_set1_epi32(k)), pick);
                HEARTH_UNROLL
                for (int t = 0; t < N; ++t) {
                    const __m256i a = _mm256_loadu_si256(
                        reinterpret_cast<const __m256i*>(t_act[t].qa + 256 * b + 32 * k));
                    sumi[t] = _mm256_add_epi32(sumi[t],
                                               _mm256_madd_epi16(_mm256_maddubs_epi16(q, a), scv));
                    avx2::pin(sumi[t]);
                }
            }
        }
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
