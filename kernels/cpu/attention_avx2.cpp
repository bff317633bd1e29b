// AVX2 attention tile kernel (attention_fns.h), for head_dim % 8 == 0.
//
// Per chunk of 16 context positions: the K rows are converted from fp16 and transposed
// into kT [D][16], so the scores of one query for all 16 positions are D broadcast-FMAs
// into two vectors (no horizontal sums), computed for four queries at once; the V rows
// are converted into vf [16][D]. Then per query vector: mask, online-softmax update
// (running max m, running sum l, rescale of acc by e^(m_old − m_new)), and
// acc += p_j · v_j with acc held in registers in slabs of 64 dimensions.
#include <cmath>

#include "cpu/attention_fns.h"
#include "cpu/avx2_util.h"

namespace hearth::kernels::cpu {

namespace {

static_assert(kAttnChunk == 16, "the kernel handles 16 positions as two vectors of 8");

static inline void transpose8(__m256 r[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

static inline float hmax(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

// s[b][0, 16) = q[b] · kT[:, 0, 16) for the QB queries b (raw dot products).
template <int QB>
static inline void scores(const float* const* q, const float* kT, int D, float* s) {
    __m256 a[QB][2];
    HEARTH_UNROLL
    for (int b = 0; b < QB; ++b) a[b][0] = a[b][1] = _mm256_setzero_ps();
    for (int d = 0; d < D; ++d) {
        const __m256 k0 = _mm256_loadu_ps(kT + d * 16), k1 = _mm256_loadu_ps(kT + d * 16 + 8);
        HEARTH_UNROLL
        for (int b = 0; b < QB; ++b) {
            const __m256 qd = _mm256_broadcast_ss(q[b] + d);
            a[b][0] = _mm256_fmadd_ps(qd, k0, a[b][0]);
            a[b][1] = _mm256_fmadd_ps(qd, k1, a[b][1]);
        }
    }
    HEARTH_UNROLL
    for (int b = 0; b < QB; ++b) {
        _mm256_storeu_ps(s + 16 * b, a[b][0]);
        _mm256_storeu_ps(s + 16 * b + 8, a[b][1]);
    }
}

// acc[0, 8·NK) = acc · alpha + Σ_{j<n} p[j] · vf[j][0, 8·NK)   (vf rows D floats apart)
template <int NK>
static inline void pv_slab(float* acc, float alpha, const float* p, const float* vf, int n, int D) {
    __m256 a[NK];
    const __m256 al = _mm256_set1_ps(alpha);
    HEARTH_UNROLL
    for (int k = 0; k < NK; ++k) a[k] = _mm256_mul_ps(_mm256_loadu_ps(acc + 8 * k), al);
    for (int j = 0; j < n; ++j) {
        const __m256 pj = _mm256_broadcast_ss(p + j);
        const float* v = vf + static_cast<std::size_t>(j) * D;
        HEARTH_UNROLL
        for (int k = 0; k < NK; ++k) a[k] = _mm256_fmadd_ps(pj, _mm256_loadu_ps(v + 8 * k), a[k]);
    }
    HEARTH_UNROLL
    for (int k = 0; k < NK; ++k) _mm256_storeu_ps(acc + 8 * k, a[k]);
}

static inline void pv(float* acc, float alpha, const float* p, const float* vf, int n, int D) {
    for (int d0 = 0; d0 < D; d0 += 64) {
        switch ((D - d0) / 8) {
            case 1:
                pv_slab<1>(acc + d0, alpha, p, vf + d0, n, D);
                break;
            case 2:
                pv_slab<2>(acc + d0, alpha, p, vf + d0, n, D);
                break;
            case 3:
                pv_slab<3>(acc + d0, alpha, p, vf + d0, n, D);
                break;
            case 4:
                pv_slab<4>(acc + d0, alpha, p, vf + d0, n, D);
                break;
            case 5:
                pv_slab<5>(acc + d0, alpha, p, vf + d0, n, D);
                break;
            case 6:
                pv_slab<6>(acc + d0, alpha, p, vf + d0, n, D);
                break;
            case 7:
                pv_slab<7>(acc + d0, alpha, p, vf + d0, n, D);
                break;
            default:
                pv_slab<8>(acc + d0, alpha, p, vf + d0, n, D);
                break;
        }
    }
}

}  // namespace

void attend_avx2(const AttnTile& t) {
    const int M = t.M, D = t.D;
    float* kT = t.scratch;                              // [D][16]
    float* vf = kT + static_cast<std::size_t>(D) * 16;  // [16][D]
    float* S = vf + static_cast<std::size_t>(D) * 16;   // [M][16]
    const __m256 neg_inf = _mm256_set1_ps(-HUGE_VALF);
    const __m256i iota0 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i iota1 = _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15);
    for (int i = 0; i < M; ++i) {
        for (int d = 0; d < D; d += 8) _mm256_storeu_ps(t.acc + i * D + d, _mm256_setzero_ps());
        t.m[i] = -HUGE_VALF;
        t.l[i] = 0.0f;
    }
    // Offset of the K/V vector of context position p (fp16 elements).
    const auto row_of = [&t](int32_t p) {
        return (static_cast<std::size_t>(t.table[p / t.block_size]) * t.block_size +
                p % t.block_size) *
                   t.row_stride +
               t.head_offset;
    };
    const std::size_t row_bytes = static_cast<std::size_t>(D) * 2;
    const uint16_t* kr[16];
    const uint16_t* vr[16];
    for (int32_t p0 = t.c0; p0 < t.c1; p0 += 16) {
        const int n = t.c1 - p0 < 16 ? t.c1 - p0 : 16;
        for (int j = 0; j < 16; ++j) {
            // Positions past the range reuse the last row; their scores are masked out.
            const std::size_t row = row_of(p0 + (j < n ? j : n - 1));
            kr[j] = t.k + row;
            vr[j] = t.v + row;
        }
        // Decode reads the cache from DRAM (the weights stream through the caches
        // between layers) as scattered 2-line rows the hardware prefetcher does not
        // follow: fetch the next chunk's rows while this one is computed.
        for (int32_t p = p0 + 16; p < p0 + 32 && p < t.c1; ++p) {
            const std::size_t row = row_of(p);
            for (std::size_t b = 0; b < row_bytes; b += 64) {
                _mm_prefetch(reinterpret_cast<const char*>(t.k + row) + b, _MM_HINT_T0);
                _mm_prefetch(reinterpret_cast<const char*>(t.v + row) + b, _MM_HINT_T0);
            }
        }
        for (int d0 = 0; d0 < D; d0 += 8) {
            for (int jg = 0; jg < 16; jg += 8) {
                __m256 r[8];
                HEARTH_UNROLL
                for (int i = 0; i < 8; ++i)
                    r[i] = _mm256_cvtph_ps(
                        _mm_loadu_si128(reinterpret_cast<const __m128i*>(kr[jg + i] + d0)));
                transpose8(r);
                HEARTH_UNROLL
                for (int k = 0; k < 8; ++k) _mm256_storeu_ps(kT + (d0 + k) * 16 + jg, r[k]);
            }
        }
        for (int j = 0; j < n; ++j)
            for (int d0 = 0; d0 < D; d0 += 8)
                _mm256_storeu_ps(
                    vf + j * D + d0,
                    _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(vr[j] + d0))));

        // Raw scores of all queries, four at a time: 8 independent FMA chains (a single
        // query's two would leave the FMA units waiting on their latency) sharing each
        // kT load.
        for (int i0 = 0; i0 < M; i0 += 4) {
            switch (M - i0) {
                case 1:
                    scores<1>(t.q + i0, kT, D, S + i0 * 16);
                    break;
                case 2:
                    scores<2>(t.q + i0, kT, D, S + i0 * 16);
                    break;
                case 3:
                    scores<3>(t.q + i0, kT, D, S + i0 * 16);
                    break;
                default:
                    scores<4>(t.q + i0, kT, D, S + i0 * 16);
                    break;
            }
        }
        for (int i = 0; i < M; ++i) {
            // Positions j < lim are visible to query i.
            int lim = t.qpos[i] - p0 + 1;
            lim = lim < n ? lim : n;
            if (lim <= 0) continue;
            __m256 s0 = _mm256_loadu_ps(S + i * 16), s1 = _mm256_loadu_ps(S + i * 16 + 8);
            const __m256 sc = _mm256_set1_ps(t.scale);
            const __m256i lv = _mm256_set1_epi32(lim);
            s0 = _mm256_blendv_ps(neg_inf, _mm256_mul_ps(s0, sc),
                                  _mm256_castsi256_ps(_mm256_cmpgt_epi32(lv, iota0)));
            s1 = _mm256_blendv_ps(neg_inf, _mm256_mul_ps(s1, sc),
                                  _mm256_castsi256_ps(_mm256_cmpgt_epi32(lv, iota1)));
            const float mx = hmax(_mm256_max_ps(s0, s1));
            const float m_new = t.m[i] > mx ? t.m[i] : mx;
            // 0 on the first visible chunk (e^−inf). exp_ps rather than std::exp: see avx2_util.h.
            const float alpha = _mm256_cvtss_f32(avx2::exp_ps(_mm256_set1_ps(t.m[i] - m_new)));
            const __m256 mv = _mm256_set1_ps(m_new);
            const __m256 p0v = avx2::exp_ps(_mm256_sub_ps(s0, mv));
            const __m256 p1v = avx2::exp_ps(_mm256_sub_ps(s1, mv));
            t.l[i] = t.l[i] * alpha + avx2::hsum(_mm256_add_ps(p0v, p1v));
            t.m[i] = m_new;
            float* p = S + i * 16;
            _mm256_storeu_ps(p, p0v);
            _mm256_storeu_ps(p + 8, p1v);
            pv(t.acc + i * D, alpha, p, vf, lim, D);
        }
    }
}

}  // namespace hearth::kernels::cpu
