// AVX2 attention kernels (attention_fns.h), for head_dim % 8 == 0: the operations of the
// scalar ones in attention.cpp eight lanes at a time, so the results are the same bits.
// Scores: per 8 context positions, their K rows are converted from fp16 once; each query
// then runs eight FMA chains over the dimensions (one per position, lane l taking dims
// ≡ l mod 8, as tinyBLAS does) reduced together into eight contiguous scores. (A
// one-token step's 32 lanes, ggml_vec_dot_f16's order, go position by position.)
// P · V: the lanes of each (query, dimension) are one 8-float vector over positions mod 8
// (four for 32 lanes), so with the chunk's V transposed (vT [dimension][position]) each is
// a dot product over positions: groups of three queries × four dimensions keep theirs in
// registers across the chunk. Rows are walked without a division per row and prefetched
// a few positions ahead (paged blocks are not contiguous).
#include "cpu/attention_simd.h"

namespace hearth::kernels::cpu {

namespace {

// One-token steps (AttnTile::single): per position, ggml_vec_dot_f16's 32 lanes.
static void scores_single(const AttnTile& t, int32_t n_vis) {
    const int M = t.M, D = t.D;
    float* kf = t.vf;  // one K row as floats
    RowWalk rows(t, t.k, t.c0);
    for (int32_t p = t.c0; p < t.c0 + n_vis; ++p, rows.next()) {
        const uint16_t* kr = rows.get();
        for (int d = 0; d < D; d += 8) _mm256_storeu_ps(kf + d, load_fp16x8(kr + d));
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
    }
}

// Batched steps: eight positions at a time. Their K rows are converted once into
// kf [8][D]; each query then runs eight independent FMA chains over the dimensions (one
// per position, lane l taking dims ≡ l mod 8), reduced together into eight contiguous
// scores, −inf past the positions it sees.
void scores_avx2(const AttnTile& t) {
    const int M = t.M, D = t.D;
    for (int i = 0; i < M; ++i)
        for (int d = 0; d < D; d += 8)
            _mm256_storeu_ps(t.qh + i * D + d, round_fp16(_mm256_loadu_ps(t.q[i] + d)));
    int32_t n_vis = 0;
    for (int i = 0; i < M; ++i) n_vis = visible(t, i) > n_vis ? visible(t, i) : n_vis;
    if (t.single) {
        for (int i = 0; i < M; ++i) {
            const int32_t v = visible(t, i);
            for (int32_t j = v; j < round_up8(v); ++j) t.s[i * t.s_stride + j] = kNegInf;
        }
        scores_single(t, n_vis);
        return;
    }
    float* kf = t.vf;
    KRows8 krows(t, n_vis);
    for (int32_t j0 = 0; j0 < n_vis; j0 += 8) {
        krows.next(kf);
        for (int i = 0; i < M; ++i) {
            const int32_t v = visible(t, i);
            if (j0 >= v) continue;
            const float* qi = t.qh + i * D;
            __m256 a[8];
            HEARTH_UNROLL
            for (int r = 0; r < 8; ++r) a[r] = _mm256_setzero_ps();
            for (int d = 0; d < D; d += 8) {
                const __m256 qv = _mm256_loadu_ps(qi + d);
                HEARTH_UNROLL
                for (int r = 0; r < 8; ++r)
                    a[r] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(kf + r * D + d), a[r]);
            }
            store_scores8(t, i, j0, v, hsum8x8(a));
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

// For NQ queries that see the same positions (the heads of one query position) and ND
// dimensions: the 8-lane vector of each (query, dimension) pair, lanes = positions mod 8,
// += p[j .. j + 8) · vT[d][j .. j + 8) over the chunk's 8-position groups j = first,
// first + step, ... < n8, in position order. The vectors stay in registers; each
// probability and V vector is loaded once for all the pairs that use it.
//   lane[q]: query q's lanes at the first dimension, lane_stride floats per dimension;
//   pr[q]: its probabilities at the chunk's first position; vt: the transposed V of the
//   first dimension, vt_stride floats per dimension.
template <int NQ, int ND>
static inline void pv_tile(float* const* lane, std::size_t lane_stride, const float* const* pr,
                           const float* vt, std::size_t vt_stride, int first, int n8, int step) {
    __m256 a[NQ][ND];
    HEARTH_UNROLL
    for (int q = 0; q < NQ; ++q) {
        HEARTH_UNROLL
        for (int d = 0; d < ND; ++d) a[q][d] = _mm256_loadu_ps(lane[q] + d * lane_stride);
    }
    for (int j = first; j < n8; j += step) {
        __m256 p[NQ];
        HEARTH_UNROLL
        for (int q = 0; q < NQ; ++q) p[q] = _mm256_loadu_ps(pr[q] + j);
        HEARTH_UNROLL
        for (int d = 0; d < ND; ++d) {
            const __m256 v = _mm256_loadu_ps(vt + d * vt_stride + j);
            HEARTH_UNROLL
            for (int q = 0; q < NQ; ++q) a[q][d] = _mm256_fmadd_ps(p[q], v, a[q][d]);
        }
    }
    HEARTH_UNROLL
    for (int q = 0; q < NQ; ++q) {
        HEARTH_UNROLL
        for (int d = 0; d < ND; ++d) _mm256_storeu_ps(lane[q] + d * lane_stride, a[q][d]);
    }
}

// Per chunk of up to kAttnVChunk positions, its V rows are converted and transposed once
// into vT [D][kAttnVChunk] (positions past the last used one zero); then, per four
// dimensions and per group of up to three queries with the same position, pv_tile. A
// one-token step's 32 lanes are four 8-lane vectors, vector k taking the 8-position
// groups whose absolute index is ≡ k (mod 4): each vector is its own pass.
void pv_avx2(const AttnTile& t) {
    const int M = t.M, D = t.D, nl = n_lanes(t), nv = nl / 8;
    constexpr int C = kAttnVChunk;
    int32_t last = t.qpos[0];
    for (int i = 1; i < M; ++i) last = t.qpos[i] > last ? t.qpos[i] : last;
    const int32_t stop = last + 1 < t.c1 ? last + 1 : t.c1;  // positions [c0, stop) are used
    RowWalk walk(t, t.v, t.c0), ahead(t, t.v, t.c0);
    for (int32_t p = t.c0; p < t.c0 + kPrefetchAhead && p < stop; ++p) ahead.next();
    const std::size_t lane_stride = static_cast<std::size_t>(nl);
    for (int32_t p0 = t.c0; p0 < stop; p0 += C) {
        const int32_t rows = (stop < p0 + C ? stop : p0 + C) - p0;
        v_chunk(t, walk, ahead, p0, rows, stop, [&](int d, int32_t r0, __m256 v) {
            _mm256_storeu_ps(t.vf + static_cast<std::size_t>(d) * C + r0, v);
        });
        for (int d0 = 0; d0 < D; d0 += 4) {
            const float* vt = t.vf + static_cast<std::size_t>(d0) * C;
            for (int i = 0; i < M;) {
                int nq = 1;
                while (nq < 3 && i + nq < M && t.qpos[i + nq] == t.qpos[i]) ++nq;
                const int32_t end = (t.qpos[i] + 1 < p0 + rows ? t.qpos[i] + 1 : p0 + rows) - p0;
                const int n8 = round_up8(end);
                for (int k = 0; k < nv && end > 0; ++k) {
                    // The first 8-position group of the chunk in vector k.
                    const int first = 8 * ((k - p0 / 8) & (nv - 1));
                    if (first >= n8) continue;
                    float* lane[3];
                    const float* pr[3];
                    for (int q = 0; q < nq; ++q) {
                        lane[q] = t.lanes + (static_cast<std::size_t>(i + q) * D + d0) * nl + 8 * k;
                        pr[q] = t.s + static_cast<std::size_t>(i + q) * t.s_stride + (p0 - t.c0);
                    }
                    if (nq == 3)
                        pv_tile<3, 4>(lane, lane_stride, pr, vt, C, first, n8, 8 * nv);
                    else if (nq == 2)
                        pv_tile<2, 4>(lane, lane_stride, pr, vt, C, first, n8, 8 * nv);
                    else
                        pv_tile<1, 4>(lane, lane_stride, pr, vt, C, first, n8, 8 * nv);
                }
                i += nq;
            }
        }
    }
}

float max_avx2(const float* s, int n) {
    __m256 m = _mm256_set1_ps(kNegInf);
    for (int j = 0; j < n; j += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(s + j));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
}

const AttnFns kAvx2Fns{scores_avx2, exp_sum_avx2, normalise_avx2, max_avx2, pv_avx2};

}  // namespace

const AttnFns& attn_fns_avx2() {
    return kAvx2Fns;
}

}  // namespace hearth::kernels::cpu
