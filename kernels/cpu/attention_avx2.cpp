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

// The rows of consecutive positions from p on, without a division per row.
struct RowWalk {
    const AttnTile& t;
    const uint16_t* base;
    int32_t block, row;
    RowWalk(const AttnTile& tile, const uint16_t* b, int32_t p)
        : t(tile), base(b), block(p / tile.block_size), row(p % tile.block_size) {}
    const uint16_t* get() const {
        return base +
               (static_cast<std::size_t>(t.table[block]) * t.block_size + row) * t.row_stride +
               t.head_offset;
    }
    void next() {
        if (++row == t.block_size) row = 0, ++block;
    }
};

// Prefetches a row (this KV head's D fp16 values) into L1.
static inline void prefetch_row(const uint16_t* r, int D) {
    const char* c = reinterpret_cast<const char*>(r);
    for (int b = 0; b < D * 2; b += 64) _mm_prefetch(c + b, _MM_HINT_T0);
}
constexpr int32_t kPrefetchAhead = 16;  // positions

// The hsum8 of eight vectors at once, in hsum8's order for each, as one vector:
// out[r] = hsum8(a[r]).
static inline __m256 hsum8x8(const __m256 a[8]) {
    // [x: w0..w3 | y: w0..w3], w_l = l_l + l_{l+4}
    const auto fold = [](__m256 x, __m256 y) {
        return _mm256_add_ps(_mm256_permute2f128_ps(x, y, 0x20),
                             _mm256_permute2f128_ps(x, y, 0x31));
    };
    const __m256 b01 = fold(a[0], a[1]), b23 = fold(a[2], a[3]);
    const __m256 b45 = fold(a[4], a[5]), b67 = fold(a[6], a[7]);
    // [a0: w0+w2, w1+w3, a2: w0+w2, w1+w3 | a1: ..., a3: ...], and a4..a7 likewise
    const __m256 c0 = _mm256_add_ps(_mm256_shuffle_ps(b01, b23, _MM_SHUFFLE(1, 0, 1, 0)),
                                    _mm256_shuffle_ps(b01, b23, _MM_SHUFFLE(3, 2, 3, 2)));
    const __m256 c1 = _mm256_add_ps(_mm256_shuffle_ps(b45, b67, _MM_SHUFFLE(1, 0, 1, 0)),
                                    _mm256_shuffle_ps(b45, b67, _MM_SHUFFLE(3, 2, 3, 2)));
    // [a0, a2, a4, a6 | a1, a3, a5, a7]: (w0 + w2) + (w1 + w3) of each
    const __m256 r = _mm256_add_ps(_mm256_shuffle_ps(c0, c1, _MM_SHUFFLE(2, 0, 2, 0)),
                                   _mm256_shuffle_ps(c0, c1, _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm256_permutevar8x32_ps(r, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

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
    const __m256 scale = _mm256_set1_ps(t.scale);
    const __m256 neg_inf = _mm256_set1_ps(kNegInf);
    const __m256i lane_idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    RowWalk rows(t, t.k, t.c0), ahead(t, t.k, t.c0);
    for (int32_t j = 0; j < kPrefetchAhead && j < n_vis; ++j) ahead.next();
    for (int32_t j0 = 0; j0 < n_vis; j0 += 8) {
        for (int r = 0; r < 8; ++r) {
            float* row = kf + r * D;
            if (j0 + r < n_vis) {
                if (j0 + r + kPrefetchAhead < n_vis) prefetch_row(ahead.get(), D), ahead.next();
                const uint16_t* kr = rows.get();
                rows.next();
                for (int d = 0; d < D; d += 8) _mm256_storeu_ps(row + d, load_fp16x8(kr + d));
            } else {
                for (int d = 0; d < D; d += 8) _mm256_storeu_ps(row + d, _mm256_setzero_ps());
            }
        }
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
            __m256 dots = _mm256_mul_ps(hsum8x8(a), scale);
            if (v - j0 < 8) {
                const __m256 seen =
                    _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(v - j0), lane_idx));
                dots = _mm256_blendv_ps(neg_inf, dots, seen);
            }
            _mm256_storeu_ps(t.s + i * t.s_stride + j0, dots);
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

// Columns of the 8 × 8 block of rows r[0..7]: r[k] becomes (r0[k], ..., r7[k]).
static inline void transpose8(__m256 r[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
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
        for (int32_t r0 = 0; r0 < rows; r0 += 8) {
            const uint16_t* src[8];
            for (int r = 0; r < 8; ++r) {
                src[r] = nullptr;
                if (r0 + r >= rows) continue;
                if (p0 + r0 + r + kPrefetchAhead < stop) prefetch_row(ahead.get(), D), ahead.next();
                src[r] = walk.get();
                walk.next();
            }
            for (int d = 0; d < D; d += 8) {
                __m256 blk[8];
                for (int r = 0; r < 8; ++r)
                    blk[r] = src[r] ? load_fp16x8(src[r] + d) : _mm256_setzero_ps();
                transpose8(blk);
                for (int k = 0; k < 8; ++k)
                    _mm256_storeu_ps(t.vf + static_cast<std::size_t>(d + k) * C + r0, blk[k]);
            }
        }
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
