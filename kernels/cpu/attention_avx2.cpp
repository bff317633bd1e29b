// AVX2 attention kernels (attention_fns.h), for head_dim % 8 == 0: the operations of the
// scalar ones in attention.cpp eight lanes at a time, so the results are the same bits.
// Scores: per context position, the K row is converted from fp16 once and dotted with
// the tile's queries four at a time, each in one 8-lane accumulator (lane l takes dims
// ≡ l mod 8, as tinyBLAS does; 32 lanes for a one-token batch, as ggml_vec_dot_f16),
// then horizontal sums. P · V: per chunk of positions the V rows are converted once, and
// each (query, lane) accumulates its positions with the lane's vectors in registers.
#include <limits>

#include "cpu/attention_fns.h"
#include "cpu/avx2_util.h"

namespace hearth::kernels::cpu {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

static inline int n_lanes(const AttnTile& t) {
    return t.single ? 32 : 8;
}
static inline int32_t visible(const AttnTile& t, int m) {
    const int32_t n = t.qpos[m] + 1 - t.c0;
    return n < 0 ? 0 : (n < t.c1 - t.c0 ? n : t.c1 - t.c0);
}
static inline int32_t round_up8(int32_t n) {
    return HEARTH_ROUND_UP8(n);
}

// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)).
static inline float hsum8(__m256 x) {
    __m128 h = _mm_add_ps(_mm256_extractf128_ps(x, 1), _mm256_castps256_ps128(x));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

// ggml_vec_dot_f16's reduction of its four vectors (attention_fns.h: reduce32).
static inline float reduce32(const __m256 a[4]) {
    const __m256 x = _mm256_add_ps(_mm256_add_ps(a[0], a[2]), _mm256_add_ps(a[1], a[3]));
    const __m128 t = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    const __m128 h = _mm_hadd_ps(t, t);
    return _mm_cvtss_f32(_mm_hadd_ps(h, h));
}

static inline __m256 round_fp16(__m256 x) {
    return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
}

static inline __m256 load_fp16x8(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

static inline const uint16_t* kv_row(const AttnTile& t, const uint16_t* base, int32_t p) {
    return base +
           (static_cast<std::size_t>(t.table[p / t.block_size]) * t.block_size + p % t.block_size) *
               t.row_stride +
           t.head_offset;
}

// The hsum8 of four vectors at once, in hsum8's order for each: out[j] = hsum8(a[j]).
static inline void hsum8x4(const __m256 a[4], float out[4]) {
    // [a0: l0+l4 .. l3+l7 | a1: ...], [a2 | a3]
    const __m256 b01 = _mm256_add_ps(_mm256_permute2f128_ps(a[0], a[1], 0x20),
                                     _mm256_permute2f128_ps(a[0], a[1], 0x31));
    const __m256 b23 = _mm256_add_ps(_mm256_permute2f128_ps(a[2], a[3], 0x20),
                                     _mm256_permute2f128_ps(a[2], a[3], 0x31));
    // [a0: w0+w2, w1+w3, a2: w0+w2, w1+w3 | a1: ..., a3: ...]
    const __m256 c = _mm256_add_ps(_mm256_shuffle_ps(b01, b23, _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm256_shuffle_ps(b01, b23, _MM_SHUFFLE(3, 2, 3, 2)));
    const __m256 r = _mm256_add_ps(_mm256_shuffle_ps(c, c, _MM_SHUFFLE(2, 0, 2, 0)),
                                   _mm256_shuffle_ps(c, c, _MM_SHUFFLE(3, 1, 3, 1)));
    alignas(32) float v[8];
    _mm256_store_ps(v, r);
    out[0] = v[0];
    out[1] = v[4];
    out[2] = v[1];
    out[3] = v[5];
}

void scores_avx2(const AttnTile& t) {
    const int M = t.M, D = t.D;
    for (int i = 0; i < M; ++i)
        for (int d = 0; d < D; d += 8)
            _mm256_storeu_ps(t.qh + i * D + d, round_fp16(_mm256_loadu_ps(t.q[i] + d)));
    int32_t n_vis = 0;
    for (int i = 0; i < M; ++i) {
        const int32_t v = visible(t, i);
        for (int32_t j = v; j < round_up8(v); ++j) t.s[i * t.s_stride + j] = kNegInf;
        if (v > n_vis) n_vis = v;
    }
    float* kf = t.vf;  // one K row as floats
    for (int32_t p = t.c0; p < t.c0 + n_vis; ++p) {
        const uint16_t* kr = kv_row(t, t.k, p);
        for (int d = 0; d < D; d += 8) _mm256_storeu_ps(kf + d, load_fp16x8(kr + d));
        if (t.single) {
            for (int i = 0; i < M; ++i) {
                if (p > t.qpos[i]) continue;
                const float* qi = t.qh + i * D;
                __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                               _mm256_setzero_ps()};
                int d = 0;
                for (; d + 32 <= D; d += 32)
                    for (int j = 0; j < 4; ++j)
                        a[j] = _mm256_fmadd_ps(_mm256_loadu_ps(qi + d + 8 * j),
                                               _mm256_loadu_ps(kf + d + 8 * j), a[j]);
                double sum = reduce32(a);
                for (; d < D; ++d) sum += static_cast<double>(qi[d] * kf[d]);
                t.s[i * t.s_stride + (p - t.c0)] = static_cast<float>(sum) * t.scale;
            }
            continue;
        }
        // Four queries at a time: four independent FMA chains over the dimensions.
        int i = 0;
        for (; i + 4 <= M; i += 4) {
            if (p > t.qpos[i + 3] && p > t.qpos[i] && p > t.qpos[i + 1] && p > t.qpos[i + 2])
                continue;
            const float* q0 = t.qh + i * D;
            __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                           _mm256_setzero_ps()};
            for (int d = 0; d < D; d += 8) {
                const __m256 kv = _mm256_loadu_ps(kf + d);
                HEARTH_UNROLL
                for (int j = 0; j < 4; ++j)
                    a[j] = _mm256_fmadd_ps(_mm256_loadu_ps(q0 + j * D + d), kv, a[j]);
            }
            float dots[4];
            hsum8x4(a, dots);
            for (int j = 0; j < 4; ++j)
                if (p <= t.qpos[i + j]) t.s[(i + j) * t.s_stride + (p - t.c0)] = dots[j] * t.scale;
        }
        for (; i < M; ++i) {
            if (p > t.qpos[i]) continue;
            const float* qi = t.qh + i * D;
            __m256 acc = _mm256_setzero_ps();
            for (int d = 0; d < D; d += 8)
                acc = _mm256_fmadd_ps(_mm256_loadu_ps(qi + d), _mm256_loadu_ps(kf + d), acc);
            t.s[i * t.s_stride + (p - t.c0)] = hsum8(acc) * t.scale;
        }
    }
}

double exp_sum_avx2(float* s, int n, float max, double sum) {
    const __m256 mx = _mm256_set1_ps(max);
    for (int j = 0; j < n; j += 8) {
        const __m256 e = avx2::expv(_mm256_sub_ps(_mm256_loadu_ps(s + j), mx));
        _mm256_storeu_ps(s + j, e);
        sum += static_cast<double>(hsum8(e));
    }
    return sum;
}

void normalise_avx2(float* s, int n, float inv) {
    const __m256 iv = _mm256_set1_ps(inv);
    for (int j = 0; j < n; j += 8)
        _mm256_storeu_ps(s + j, round_fp16(_mm256_mul_ps(_mm256_loadu_ps(s + j), iv)));
}

// lane += Σ p_q · vf[q][0, 8·NK) over q = first, first + step, ... < end (positions
// relative to the chunk), the lane's NK vectors in registers.
template <int NK>
static inline void pv_lane(float* lane, const float* pr, const float* vf, int D, int first, int end,
                           int step) {
    __m256 a[NK];
    HEARTH_UNROLL
    for (int k = 0; k < NK; ++k) a[k] = _mm256_loadu_ps(lane + 8 * k);
    for (int q = first; q < end; q += step) {
        const __m256 pq = _mm256_broadcast_ss(pr + q);
        const float* v = vf + static_cast<std::size_t>(q) * D;
        HEARTH_UNROLL
        for (int k = 0; k < NK; ++k) a[k] = _mm256_fmadd_ps(pq, _mm256_loadu_ps(v + 8 * k), a[k]);
    }
    HEARTH_UNROLL
    for (int k = 0; k < NK; ++k) _mm256_storeu_ps(lane + 8 * k, a[k]);
}

// Per chunk of positions, the V rows are converted once; then per query and lane, the
// lane's positions (every n_lanes-th) stream through registers in position order.
void pv_avx2(const AttnTile& t) {
    const int M = t.M, D = t.D, nl = n_lanes(t);
    int32_t last = t.qpos[0];
    for (int i = 1; i < M; ++i) last = t.qpos[i] > last ? t.qpos[i] : last;
    for (int32_t p0 = t.c0; p0 < t.c1 && p0 <= last; p0 += kAttnVChunk) {
        const int32_t p1 = p0 + kAttnVChunk < t.c1 ? p0 + kAttnVChunk : t.c1;
        for (int32_t p = p0; p < p1; ++p) {
            const uint16_t* vr = kv_row(t, t.v, p);
            for (int d = 0; d < D; d += 8)
                _mm256_storeu_ps(t.vf + static_cast<std::size_t>(p - p0) * D + d,
                                 load_fp16x8(vr + d));
        }
        for (int i = 0; i < M; ++i) {
            const int end = (t.qpos[i] + 1 < p1 ? t.qpos[i] + 1 : p1) - p0;
            if (end <= 0) continue;
            const float* pr = t.s + i * t.s_stride + (p0 - t.c0);
            for (int l = 0; l < nl; ++l) {
                const int first = (l - p0) & (nl - 1);  // first chunk position in lane l
                if (first >= end) continue;
                float* lane = t.lanes + (static_cast<std::size_t>(i) * nl + l) * D;
                for (int d0 = 0; d0 < D; d0 += 64) {
                    const float* vf = t.vf + d0;
                    switch ((D - d0) / 8) {
                        case 1:
                            pv_lane<1>(lane + d0, pr, vf, D, first, end, nl);
                            break;
                        case 2:
                            pv_lane<2>(lane + d0, pr, vf, D, first, end, nl);
                            break;
                        case 3:
                            pv_lane<3>(lane + d0, pr, vf, D, first, end, nl);
                            break;
                        case 4:
                            pv_lane<4>(lane + d0, pr, vf, D, first, end, nl);
                            break;
                        case 5:
                            pv_lane<5>(lane + d0, pr, vf, D, first, end, nl);
                            break;
                        case 6:
                            pv_lane<6>(lane + d0, pr, vf, D, first, end, nl);
                            break;
                        case 7:
                            pv_lane<7>(lane + d0, pr, vf, D, first, end, nl);
                            break;
                        default:
                            pv_lane<8>(lane + d0, pr, vf, D, first, end, nl);
                            break;
                    }
                }
            }
        }
    }
}

const AttnFns kAvx2Fns{scores_avx2, exp_sum_avx2, normalise_avx2, pv_avx2};

}  // namespace

const AttnFns& attn_fns_avx2() {
    return kAvx2Fns;
}

}  // namespace hearth::kernels::cpu
