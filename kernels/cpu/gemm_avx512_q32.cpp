// AVX-512 (VNNI) kernels for the unsigned 32-element weight formats (Q4_1, Q5_0, Q5_1;
// Q8_0 has its own, gemm_avx512_q8_0.cpp) against Q8x32 activations: two weight rows side
// by side in one 512-bit register (row r in lanes 0-7, row r+1 in lanes 8-15) against the
// token's 32 activation bytes in both halves, and vpdpbusd for the byte products where
// AVX2 needs maddubs and madd. Lane j of a row then holds gemm_avx2_q32.cpp's integer lane
// j exactly, and the float operations per row and token are that file's, in its order, so
// the results are the AVX2 kernels' bits (and llama.cpp's order, which the goldens rely
// on).
//
// Prefill only (more than kGroup tokens). Built with AVX-512 F/BW/VL/VNNI enabled; called
// only when cpu_has_avx512(). Everything here has internal linkage and no std:: templates
// are instantiated (see avx2_util.h).
#include "cpu/avx512_util.h"
#include "cpu/q32_avx2.h"

namespace hearth::kernels::cpu {

namespace {

using avx512::join;
using avx512::upper;

// One token's 32 activation bytes of a block in both halves.
static inline __m512i act2(const int8_t* p) {
    return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// The unsigned weight bytes of a row pair.
template <TensorType T>
static inline __m512i weight_u8x2(const uint8_t* p0, const uint8_t* p1) {
    return join(load_q<T>(p0), load_q<T>(p1));
}

// Lane-wise Σ q·qa of a row pair and a token, as floats.
template <TensorType T>
static inline __m512 block_dot2(__m512i u, __m512i a) {
    return _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), u, a));
}

// A pair's second row: the next one, or the first again past the last row (its result is
// not stored).
static inline const uint8_t* second_row(const uint8_t* w0, std::size_t ws, int r, int n_rows) {
    return r + 1 < n_rows ? w0 + ws : w0;
}

// P row pairs × one group of kGroup tokens. qs [nb][4][32], ds [nb][2][4];
// out[t·os + r] for r < n_rows, t < nt. gemm4_rows' operations per row and token.
template <TensorType T, int P>
static inline void gemm4_pairs(const uint8_t* w, std::size_t ws, int n_rows, int64_t nb,
                               const int8_t* qs, const float* ds, float* out, std::size_t os,
                               int nt) {
    __m512 acc[P][4];
    __m128 acc_m[2 * P];
    const uint8_t* rows[2 * P];
    HEARTH_UNROLL
    for (int k = 0; k < P; ++k) {
        HEARTH_UNROLL
        for (int t = 0; t < 4; ++t) acc[k][t] = _mm512_setzero_ps();
        acc_m[2 * k] = acc_m[2 * k + 1] = _mm_setzero_ps();
        rows[2 * k] = w + static_cast<std::size_t>(2 * k) * ws;
        rows[2 * k + 1] = second_row(rows[2 * k], ws, 2 * k, n_rows);
    }
    for (int64_t b = 0; b < nb; ++b) {
        const __m128 da4 = _mm_loadu_ps(ds + 8 * b);
        const __m128 s4 = _mm_loadu_ps(ds + 8 * b + 4);
        const int8_t* qb = qs + 128 * b;
        __m512i a[4];
        HEARTH_UNROLL
        for (int t = 0; t < 4; ++t) a[t] = act2(qb + 32 * t);
        HEARTH_UNROLL
        for (int k = 0; k < P; ++k) {
            const std::size_t at = static_cast<std::size_t>(b) * Fmt<T>::kBytes;
            const uint8_t* p0 = rows[2 * k] + at;
            const uint8_t* p1 = rows[2 * k + 1] + at;
            const __m512i u = weight_u8x2<T>(p0, p1);
            const __m128 dm0 = load_dm<T>(p0), dm1 = load_dm<T>(p1);
            if constexpr (Fmt<T>::kM != 0.0f) {
                acc_m[2 * k] = _mm_fmadd_ps(_mm_shuffle_ps(dm0, dm0, 0x55), s4, acc_m[2 * k]);
                acc_m[2 * k + 1] =
                    _mm_fmadd_ps(_mm_shuffle_ps(dm1, dm1, 0x55), s4, acc_m[2 * k + 1]);
            }
            // dw·da per token: row 2k's four in each 128-bit lane of the low half, row
            // 2k+1's in the high half.
            const __m128 sc0 = _mm_mul_ps(_mm_shuffle_ps(dm0, dm0, 0x00), da4);
            const __m128 sc1 = _mm_mul_ps(_mm_shuffle_ps(dm1, dm1, 0x00), da4);
            const __m512 sc = join(_mm256_insertf128_ps(_mm256_castps128_ps256(sc0), sc0, 1),
                                   _mm256_insertf128_ps(_mm256_castps128_ps256(sc1), sc1, 1));
            acc[k][0] =
                _mm512_fmadd_ps(_mm512_permute_ps(sc, 0x00), block_dot2<T>(u, a[0]), acc[k][0]);
            acc[k][1] =
                _mm512_fmadd_ps(_mm512_permute_ps(sc, 0x55), block_dot2<T>(u, a[1]), acc[k][1]);
            acc[k][2] =
                _mm512_fmadd_ps(_mm512_permute_ps(sc, 0xaa), block_dot2<T>(u, a[2]), acc[k][2]);
            acc[k][3] =
                _mm512_fmadd_ps(_mm512_permute_ps(sc, 0xff), block_dot2<T>(u, a[3]), acc[k][3]);
        }
    }
    HEARTH_UNROLL
    for (int k = 0; k < P; ++k) {
        HEARTH_UNROLL
        for (int h = 0; h < 2; ++h) {
            if (2 * k + h >= n_rows) break;
            alignas(16) float m[4];
            _mm_store_ps(m, acc_m[2 * k + h]);
            for (int t = 0; t < nt; ++t) {
                const __m512 v512 = acc[k][t];
                float v = avx2::hsum(h == 0 ? _mm512_castps512_ps256(v512) : upper(v512));
                if constexpr (Fmt<T>::kM != 0.0f) v += Fmt<T>::kM * m[t];
                out[static_cast<std::size_t>(t) * os + 2 * k + h] = v;
            }
        }
    }
}

// Rows per call: 2 pairs.
constexpr int kPairs = 2;

// Prefill: more than kGroup tokens. Decode and a few tokens run the AVX2 kernels: a
// row-pair AVX-512 decode (not kept) took the default model's 1-token products 3.4-3.7 ms
// against AVX2's 3.1-3.5 ms (hearth-kernel-bench, 2 threads, when AVX2 still decoded 4
// rows side by side).
template <TensorType T>
void gemm_q32_512(const GemmArgs& a) {
    const std::size_t ws = a.w_stride;
    const auto rows_from = [&](int r) { return a.w + static_cast<std::size_t>(r) * ws; };
    // Rows outer, token groups inner, as gemm_avx2_q32.cpp.
    const int n_groups = (a.n_tokens + kGroup - 1) / kGroup;
    for (int r = 0; r < a.n_rows; r += 2 * kPairs) {
        const int n = a.n_rows - r;
        for (int g = 0; g < n_groups; ++g) {
            const auto [qs, ds, nt] = q8x32_group(a.act, a.act_stride, a.nb, kGroup, g, a.n_tokens);
            float* out = a.out + static_cast<std::size_t>(g) * kGroup * a.out_stride + r;
            if (n >= 2 * kPairs) {
                gemm4_pairs<T, kPairs>(rows_from(r), ws, n, a.nb, qs, ds, out, a.out_stride, nt);
            } else {
                for (int rr = 0; rr < n; rr += 2)
                    gemm4_pairs<T, 1>(rows_from(r + rr), ws, n - rr, a.nb, qs, ds, out + rr,
                                      a.out_stride, nt);
            }
        }
    }
}

}  // namespace

void gemm_avx512_q4_1(const GemmArgs& a) {
    if (a.n_tokens <= kGroup) return gemm_avx2_q4_1(a);
    gemm_q32_512<TensorType::Q4_1>(a);
}
void gemm_avx512_q5_0(const GemmArgs& a) {
    if (a.n_tokens <= kGroup) return gemm_avx2_q5_0(a);
    gemm_q32_512<TensorType::Q5_0>(a);
}
void gemm_avx512_q5_1(const GemmArgs& a) {
    if (a.n_tokens <= kGroup) return gemm_avx2_q5_1(a);
    gemm_q32_512<TensorType::Q5_1>(a);
}

}  // namespace hearth::kernels::cpu
