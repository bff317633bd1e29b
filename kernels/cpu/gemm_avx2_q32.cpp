// AVX2 kernels for the 32-element weight formats Q4_1, Q5_0 and Q5_1 against Q8x32
// activations (act_quant.h), in llama.cpp's order. Per weight block and token:
//     int32 Σ q·qa   (maddubs + madd: 32 byte products, 8 lane partial sums)
//     acc += (dw·da) · Σ q·qa          (8-lane float accumulator)
//     acc_m += mw · s                  (the block offset term, see act_quant.h)
// Q5_0 is handled as unsigned quants with offset m = -16·d, so every format is an
// unsigned × signed byte product. (Q4_0 has its own kernel on a repacked layout,
// gemm_avx2_q4_0x8.cpp, and Q8_0 its own order, gemm_avx2_q8_0.cpp.)
//
// Tiles: one token (decode) runs 4 weight rows side by side (see gemv_rows); several tokens
// run R weight rows × 4 tokens, so each weight block is unpacked once and reused 4 times
// from registers.
#include "cpu/q32_avx2.h"

namespace hearth::kernels::cpu {

namespace {

using quant::TensorType;

static inline __m256 block_dot(__m256i u, __m256i s) {
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
}

// R weight rows × 1 token. qa [nb][32], ds [nb][2] = {d, s}. One accumulator per row and
// kind, blocks in order, as ggml_vec_dot_q4_1_q8_1 and gemm4_rows: two interleaved
// accumulators per row would hide FMA latency but sum in a different order, and the
// decode steps then drift from llama.cpp's (see act_quant.h on why the bits matter).
// Several rows side by side hide the latency instead (each row's chain is unchanged)
// and share the activation loads; each row's stream is prefetched.
template <TensorType T, int R>
static inline void gemv_rows(const uint8_t* w, std::size_t ws, int64_t nb, const int8_t* qa,
                             const float* ds, float* out) {
    __m256 acc[R];
    __m128 acc_m[R];
    HEARTH_UNROLL
    for (int r = 0; r < R; ++r) {
        acc[r] = _mm256_setzero_ps();
        acc_m[r] = _mm_setzero_ps();
    }
    for (int64_t b = 0; b < nb; ++b) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qa + 32 * b));
        const __m128 das =
            _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(ds + 2 * b)));  // [da, s]
        const __m128 s = _mm_shuffle_ps(das, das, 0x55);
        HEARTH_UNROLL
        for (int r = 0; r < R; ++r) {
            const uint8_t* p =
                w + static_cast<std::size_t>(r) * ws + static_cast<std::size_t>(b) * Fmt<T>::kBytes;
            if ((b & 1) == 0) avx2::prefetch_ahead(p);
            const __m256i q = load_q<T>(p);
            const __m128 dm = load_dm<T>(p);  // [dw, m]
            if constexpr (Fmt<T>::kM != 0.0f)
                acc_m[r] = _mm_fmadd_ps(_mm_shuffle_ps(dm, dm, 0x55), s, acc_m[r]);
            const __m128 sc = _mm_mul_ss(dm, das);  // dw·da
            acc[r] = _mm256_fmadd_ps(_mm256_broadcastss_ps(sc), block_dot(q, a), acc[r]);
        }
    }
    HEARTH_UNROLL
    for (int r = 0; r < R; ++r) {
        float v = avx2::hsum(acc[r]);
        if constexpr (Fmt<T>::kM != 0.0f) v += Fmt<T>::kM * _mm_cvtss_f32(acc_m[r]);
        out[r] = v;
    }
}

// R weight rows × one group of kGroup tokens. qs [nb][4][32], ds [nb][2][4];
// out[t·os + r] for r < R, t < nt.
template <TensorType T, int R>
static inline void gemm4_rows(const uint8_t* w, std::size_t ws, int64_t nb, const int8_t* qs,
                              const float* ds, float* out, std::size_t os, int nt, bool stream) {
    __m256 acc[R][4];
    __m128 acc_m[R];
    HEARTH_UNROLL
    for (int r = 0; r < R; ++r) {
        HEARTH_UNROLL
        for (int t = 0; t < 4; ++t) acc[r][t] = _mm256_setzero_ps();
        acc_m[r] = _mm_setzero_ps();
    }
    for (int64_t b = 0; b < nb; ++b) {
        const __m128 da4 = _mm_loadu_ps(ds + 8 * b);
        const __m128 s4 = _mm_loadu_ps(ds + 8 * b + 4);
        const int8_t* qb = qs + 128 * b;
        if (stream) avx2::prefetch_ahead(w + static_cast<std::size_t>(b) * Fmt<T>::kBytes);
        HEARTH_UNROLL
        for (int r = 0; r < R; ++r) {
            const uint8_t* p =
                w + static_cast<std::size_t>(r) * ws + static_cast<std::size_t>(b) * Fmt<T>::kBytes;
            const __m256i q = load_q<T>(p);
            const __m256i u = q;
            const __m128 dm = load_dm<T>(p);
            const __m128 sc4 = _mm_mul_ps(_mm_shuffle_ps(dm, dm, 0x00), da4);  // dw·da per token
            if constexpr (Fmt<T>::kM != 0.0f)
                acc_m[r] = _mm_fmadd_ps(_mm_shuffle_ps(dm, dm, 0x55), s4, acc_m[r]);
            const __m256 sc8 = _mm256_insertf128_ps(_mm256_castps128_ps256(sc4), sc4, 1);
            const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb));
            acc[r][0] = _mm256_fmadd_ps(_mm256_permute_ps(sc8, 0x00), block_dot(u, a0), acc[r][0]);
            const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb + 32));
            acc[r][1] = _mm256_fmadd_ps(_mm256_permute_ps(sc8, 0x55), block_dot(u, a1), acc[r][1]);
            const __m256i a2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb + 64));
            acc[r][2] = _mm256_fmadd_ps(_mm256_permute_ps(sc8, 0xaa), block_dot(u, a2), acc[r][2]);
            const __m256i a3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb + 96));
            acc[r][3] = _mm256_fmadd_ps(_mm256_permute_ps(sc8, 0xff), block_dot(u, a3), acc[r][3]);
        }
    }
    HEARTH_UNROLL
    for (int r = 0; r < R; ++r) {
        alignas(16) float m[4];
        _mm_store_ps(m, acc_m[r]);
        for (int t = 0; t < nt; ++t) {
            float v = avx2::hsum(acc[r][t]);
            if constexpr (Fmt<T>::kM != 0.0f) v += Fmt<T>::kM * m[t];
            out[static_cast<std::size_t>(t) * os + r] = v;
        }
    }
}

// Rows per gemv_rows call in decode: one stream at a time. On the Zen 5 test machine
// (hearth-kernel-bench, 2 threads, cold 1B-shaped Q8_0 products, when this kernel ran
// Q8_0) one row streamed at 57-67 GB/s against 28-43 GB/s for 4 rows side by side and 34-48 GB/s
// for 8, and the default model's decode products took 2.7-3.1 ms against 3.3-3.8 ms; 4 had been
// chosen on Zen 3 for Q4_0, which has its own kernel since. Each row's chain is the same either
// way.
constexpr int kGemvRows = 1;

template <TensorType T>
void gemm_q32(const GemmArgs& a) {
    const std::size_t ws = a.w_stride;
    if (a.group == 1) {
        for (int t = 0; t < a.n_tokens; ++t) {
            const uint8_t* row = a.act + static_cast<std::size_t>(t) * a.act_stride;
            const auto* qa = reinterpret_cast<const int8_t*>(row);
            const auto* ds = reinterpret_cast<const float*>(row + q8x32_ds_offset(a.nb, 1));
            float* out = a.out + static_cast<std::size_t>(t) * a.out_stride;
            int r = 0;
            for (; r + kGemvRows <= a.n_rows; r += kGemvRows)
                gemv_rows<T, kGemvRows>(a.w + r * ws, ws, a.nb, qa, ds, out + r);
            for (; r < a.n_rows; ++r) gemv_rows<T, 1>(a.w + r * ws, ws, a.nb, qa, ds, out + r);
        }
        return;
    }
    // Rows outer, token groups inner: the R rows (nb blocks each, a few hundred bytes)
    // stay in L1 while every group of the tile streams past. Two rows at a time when
    // several groups reuse them; one when a single group streams them from memory (a few
    // tokens of decode), read as one prefetched stream.
    const int n_groups = (a.n_tokens + kGroup - 1) / kGroup;
    constexpr int R = 2;
    int r = 0;
    for (; r < a.n_rows; r += R) {
        const bool full = r + R <= a.n_rows && n_groups > 1;
        for (int g = 0; g < n_groups; ++g) {
            const auto [qs, ds, nt] = q8x32_group(a.act, a.act_stride, a.nb, kGroup, g, a.n_tokens);
            float* out = a.out + static_cast<std::size_t>(g) * kGroup * a.out_stride + r;
            if (full) {
                gemm4_rows<T, R>(a.w + r * ws, ws, a.nb, qs, ds, out, a.out_stride, nt, false);
            } else {
                for (int rr = r; rr < a.n_rows && rr < r + R; ++rr)
                    gemm4_rows<T, 1>(a.w + rr * ws, ws, a.nb, qs, ds, out + (rr - r), a.out_stride,
                                     nt, n_groups == 1);
            }
        }
    }
}

}  // namespace

void gemm_avx2_q4_1(const GemmArgs& a) {
    gemm_q32<TensorType::Q4_1>(a);
}
void gemm_avx2_q5_0(const GemmArgs& a) {
    gemm_q32<TensorType::Q5_0>(a);
}
void gemm_avx2_q5_1(const GemmArgs& a) {
    gemm_q32<TensorType::Q5_1>(a);
}

}  // namespace hearth::kernels::cpu
