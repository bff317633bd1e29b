// AVX-512 attention kernels (attention_fns.h), for head_dim % 8 == 0: the AVX2 kernels'
// operations on two 8-float vectors per 512-bit register, so every lane sees the same
// operations in the same order and the results are the AVX2 (and scalar) bits.
// Scores: two queries share a register (query 2p below, 2p + 1 above) against each K row
// broadcast to both halves; four queries run at once, 16 FMA chains per 8 positions.
// P · V: the chunk's transposed V keeps two dimensions side by side per 8-position group
// ([d: 8 positions | d + 1: 8 positions]), so one register holds a query's lanes of two
// dimensions and each probability vector is broadcast to both halves: up to four queries
// × eight dimensions stay in registers across the chunk. One-token steps (32 lanes,
// ggml_vec_dot_f16's order) and exp / normalise / max keep the AVX2 kernels.
//
// Built with AVX-512 F/BW/VL enabled; called only when cpu_has_avx512().
#include "cpu/attention_simd.h"
#include "cpu/avx512_util.h"

namespace hearth::kernels::cpu {

namespace {

// 8 floats at p in both halves.
static inline __m512 broadcast8(const float* p) {
    return _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(_mm256_loadu_ps(p))));
}

// The queries' fp16-rounded vectors, in groups of four from query 0: group g's block of
// 8 dimensions d .. d + 7 holds its nq ≤ 4 queries' values one after the other, at
// qh + 4g·D + d·nq + 8q. (Same size as the AVX2 layout, M·D floats.)
static inline void pack_queries(const AttnTile& t) {
    for (int i0 = 0; i0 < t.M; i0 += 4) {
        const int nq = t.M - i0 < 4 ? t.M - i0 : 4;
        float* g = t.qh + static_cast<std::size_t>(i0) * t.D;
        for (int q = 0; q < nq; ++q)
            for (int d = 0; d < t.D; d += 8)
                _mm256_storeu_ps(g + d * nq + 8 * q, round_fp16(_mm256_loadu_ps(t.q[i0 + q] + d)));
    }
}

// Queries i0 .. i0 + NQ − 1 (packed at qg) against the 8 positions j0 .. j0 + 7 in kf
// [8][D]: eight FMA chains per query over the dimensions, as in scores_avx2; an odd NQ
// leaves the upper half of its last register zero.
template <int NQ>
static inline void scores_group(const AttnTile& t, const float* qg, const float* kf, int i0,
                                int32_t j0) {
    constexpr int NP = (NQ + 1) / 2;
    const int D = t.D;
    __m512 a[NP][8];
    HEARTH_UNROLL
    for (int p = 0; p < NP; ++p) {
        HEARTH_UNROLL
        for (int r = 0; r < 8; ++r) a[p][r] = _mm512_setzero_ps();
    }
    for (int d = 0; d < D; d += 8) {
        const float* qd = qg + d * NQ;
        __m512 qv[NP];
        HEARTH_UNROLL
        for (int p = 0; p < NP; ++p)
            qv[p] = 2 * p + 1 < NQ ? _mm512_loadu_ps(qd + 16 * p)
                                   : _mm512_maskz_loadu_ps(0x00ff, qd + 16 * p);
        HEARTH_UNROLL
        for (int r = 0; r < 8; ++r) {
            const __m512 k = broadcast8(kf + r * D + d);
            HEARTH_UNROLL
            for (int p = 0; p < NP; ++p) a[p][r] = _mm512_fmadd_ps(qv[p], k, a[p][r]);
        }
    }
    HEARTH_UNROLL
    for (int p = 0; p < NP; ++p) {
        __m256 h[8];
        for (int half = 0; half < 2 && 2 * p + half < NQ; ++half) {
            const int i = i0 + 2 * p + half;
            const int32_t v = visible(t, i);
            if (j0 >= v) continue;
            HEARTH_UNROLL
            for (int r = 0; r < 8; ++r)
                h[r] = half ? avx512::upper(a[p][r]) : _mm512_castps512_ps256(a[p][r]);
            store_scores8(t, i, j0, v, hsum8x8(h));
        }
    }
}

void scores_avx512(const AttnTile& t) {
    if (t.single) {
        attn_fns_avx2().scores(t);
        return;
    }
    pack_queries(t);
    int32_t n_vis = 0;
    for (int i = 0; i < t.M; ++i) n_vis = visible(t, i) > n_vis ? visible(t, i) : n_vis;
    float* kf = t.vf;
    KRows8 krows(t, n_vis);
    for (int32_t j0 = 0; j0 < n_vis; j0 += 8) {
        krows.next(kf);
        for (int i0 = 0; i0 < t.M; i0 += 4) {
            // Queries are in position order: the group's last sees the most.
            const int nq = t.M - i0 < 4 ? t.M - i0 : 4;
            if (j0 >= visible(t, i0 + nq - 1)) continue;
            const float* qg = t.qh + static_cast<std::size_t>(i0) * t.D;
            switch (nq) {
                case 4:
                    scores_group<4>(t, qg, kf, i0, j0);
                    break;
                case 3:
                    scores_group<3>(t, qg, kf, i0, j0);
                    break;
                case 2:
                    scores_group<2>(t, qg, kf, i0, j0);
                    break;
                default:
                    scores_group<1>(t, qg, kf, i0, j0);
                    break;
            }
        }
    }
}

// NQ ≤ 4 queries with the same position × 8 dimensions d0 .. d0 + 7: a[q][k] holds query
// q's lanes of dimensions d0 + 2k (below) and d0 + 2k + 1 (above), += p[j .. j + 8) ·
// V[d][j .. j + 8) over the chunk's 8-position groups j = 0, 8, ... < n8 in order
// (pv_tile of the AVX2 kernels, two dimensions per register).
//   lane[q]: query q's lanes at d0 (8 floats per dimension); pr[q]: its probabilities at
//   the chunk's first position; vt: the chunk's V pairs at d0 (vt_pair floats per pair of
//   dimensions, 16 per 8-position group).
template <int NQ>
static inline void pv_group(float* const* lane, const float* const* pr, const float* vt,
                            std::size_t vt_pair, int n8) {
    __m512 a[NQ][4];
    HEARTH_UNROLL
    for (int q = 0; q < NQ; ++q) {
        HEARTH_UNROLL
        for (int k = 0; k < 4; ++k) a[q][k] = _mm512_loadu_ps(lane[q] + 16 * k);
    }
    for (int j = 0; j < n8; j += 8) {
        __m512 p[NQ];
        HEARTH_UNROLL
        for (int q = 0; q < NQ; ++q) p[q] = broadcast8(pr[q] + j);
        HEARTH_UNROLL
        for (int k = 0; k < 4; ++k) {
            const __m512 v = _mm512_loadu_ps(vt + k * vt_pair + 2 * j);
            HEARTH_UNROLL
            for (int q = 0; q < NQ; ++q) a[q][k] = _mm512_fmadd_ps(p[q], v, a[q][k]);
        }
    }
    HEARTH_UNROLL
    for (int q = 0; q < NQ; ++q) {
        HEARTH_UNROLL
        for (int k = 0; k < 4; ++k) _mm512_storeu_ps(lane[q] + 16 * k, a[q][k]);
    }
}

// Per chunk of up to kAttnVChunk positions, its V rows converted and transposed once into
// pairs of dimensions (vf + (d / 2)·2C + 16·(j / 8) + 8·(d % 2) holds dimension d of
// positions j .. j + 7); then, per eight dimensions and per group of up to four queries
// with the same position, pv_group.
void pv_avx512(const AttnTile& t) {
    if (t.single) {
        attn_fns_avx2().pv(t);
        return;
    }
    const int M = t.M, D = t.D;
    constexpr int C = kAttnVChunk;
    constexpr std::size_t kPair = 2 * C;  // floats per pair of dimensions
    int32_t last = t.qpos[0];
    for (int i = 1; i < M; ++i) last = t.qpos[i] > last ? t.qpos[i] : last;
    const int32_t stop = last + 1 < t.c1 ? last + 1 : t.c1;  // positions [c0, stop) are used
    RowWalk walk(t, t.v, t.c0), ahead(t, t.v, t.c0);
    for (int32_t p = t.c0; p < t.c0 + kPrefetchAhead && p < stop; ++p) ahead.next();
    for (int32_t p0 = t.c0; p0 < stop; p0 += C) {
        const int32_t rows = (stop < p0 + C ? stop : p0 + C) - p0;
        v_chunk(t, walk, ahead, p0, rows, stop, [&](int d, int32_t r0, __m256 v) {
            _mm256_storeu_ps(t.vf + static_cast<std::size_t>(d / 2) * kPair + 2 * r0 + 8 * (d % 2),
                             v);
        });
        for (int d0 = 0; d0 < D; d0 += 8) {
            const float* vt = t.vf + static_cast<std::size_t>(d0 / 2) * kPair;
            for (int i = 0; i < M;) {
                int nq = 1;
                while (nq < 4 && i + nq < M && t.qpos[i + nq] == t.qpos[i]) ++nq;
                const int32_t end = (t.qpos[i] + 1 < p0 + rows ? t.qpos[i] + 1 : p0 + rows) - p0;
                if (end > 0) {
                    float* lane[4];
                    const float* pr[4];
                    for (int q = 0; q < nq; ++q) {
                        lane[q] = t.lanes + (static_cast<std::size_t>(i + q) * D + d0) * 8;
                        pr[q] = t.s + static_cast<std::size_t>(i + q) * t.s_stride + (p0 - t.c0);
                    }
                    const int n8 = round_up8(end);
                    switch (nq) {
                        case 4:
                            pv_group<4>(lane, pr, vt, kPair, n8);
                            break;
                        case 3:
                            pv_group<3>(lane, pr, vt, kPair, n8);
                            break;
                        case 2:
                            pv_group<2>(lane, pr, vt, kPair, n8);
                            break;
                        default:
                            pv_group<1>(lane, pr, vt, kPair, n8);
                            break;
                    }
                }
                i += nq;
            }
        }
    }
}

}  // namespace

const AttnFns& attn_fns_avx512() {
    static const AttnFns fns{scores_avx512, attn_fns_avx2().exp_sum, attn_fns_avx2().normalise,
                             attn_fns_avx2().max, pv_avx512};
    return fns;
}

}  // namespace hearth::kernels::cpu
