// Helpers of the AVX2 and AVX-512 attention kernels (attention_avx2.cpp,
// attention_avx512.cpp): llama.cpp's reductions on 8-float vectors, fp16 conversions, the
// walk over a sequence's paged rows. Internal linkage only, as in avx2_util.h: each file
// compiles its own copy with its own instruction set.
#pragma once

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

// The K rows of a tile's positions [c0, c0 + n_vis), 8 at a time, as floats: next(kf)
// fills kf [8][D] with the next 8 (zeros past n_vis), prefetching rows ahead.
struct KRows8 {
    const AttnTile& t;
    int32_t n_vis, j0 = 0;
    RowWalk rows, ahead;
    KRows8(const AttnTile& tile, int32_t n)
        : t(tile), n_vis(n), rows(tile, tile.k, tile.c0), ahead(tile, tile.k, tile.c0) {
        for (int32_t j = 0; j < kPrefetchAhead && j < n_vis; ++j) ahead.next();
    }
    void next(float* kf) {
        const int D = t.D;
        for (int r = 0; r < 8; ++r, ++j0) {
            float* row = kf + r * D;
            if (j0 < n_vis) {
                if (j0 + kPrefetchAhead < n_vis) prefetch_row(ahead.get(), D), ahead.next();
                const uint16_t* kr = rows.get();
                rows.next();
                for (int d = 0; d < D; d += 8) _mm256_storeu_ps(row + d, load_fp16x8(kr + d));
            } else {
                for (int d = 0; d < D; d += 8) _mm256_storeu_ps(row + d, _mm256_setzero_ps());
            }
        }
    }
};

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

// Query i's scores of the positions j0 .. j0 + 7 from their dot products: times the
// scale, −inf past the v positions it sees.
static inline void store_scores8(const AttnTile& t, int i, int32_t j0, int32_t v, __m256 dots) {
    dots = _mm256_mul_ps(dots, _mm256_set1_ps(t.scale));
    if (v - j0 < 8) {
        const __m256i lane_idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256 seen =
            _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(v - j0), lane_idx));
        dots = _mm256_blendv_ps(_mm256_set1_ps(kNegInf), dots, seen);
    }
    _mm256_storeu_ps(t.s + static_cast<std::size_t>(i) * t.s_stride + j0, dots);
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

// The V rows of a chunk's positions [p0, p0 + rows) (walk's next rows), converted from
// fp16 and transposed 8 × 8 at a time: put(d, r0, v) receives dimension d of the chunk's
// positions r0 .. r0 + 7 (zeros past rows). ahead prefetches up to position stop.
template <class Put>
static inline void v_chunk(const AttnTile& t, RowWalk& walk, RowWalk& ahead, int32_t p0,
                           int32_t rows, int32_t stop, Put&& put) {
    const int D = t.D;
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
            for (int k = 0; k < 8; ++k) put(d + k, r0, blk[k]);
        }
    }
}

}  // namespace
}  // namespace hearth::kernels::cpu
