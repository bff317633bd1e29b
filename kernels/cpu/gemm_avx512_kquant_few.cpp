// AVX-512 level K-quant products for a few tokens (decode, short tiles), in the float
// order of kquant_avx512.h.
//
// Each weight row is read as the AVX2 kernel reads it (a super-block unpacked once for up
// to 8 tokens, maddubs + madd with the sub-block scales): per block and token that gives
// 8 int32 lanes whose sum is the exact S1 (and, for Q4_K/Q5_K, 8 lanes summing to S2).
// Eight rows are read side by side; the lane sums of their vectors are transposed into
// one register (lane i: row i), and the float steps of the order run for the 8 rows at
// once. The weights stream from memory one row after another within a chunk of blocks,
// prefetched ahead as in the AVX2 kernel.
//
// Built with AVX-512 F/BW/VL/VNNI enabled (for the 32 vector registers; the arithmetic is
// AVX2's); internal linkage only, see avx2_util.h.
#include "cpu/kquant_avx2.h"
#include "cpu/kquant_avx512.h"

namespace hearth::kernels::cpu {

namespace {

using quant::TensorType;

// Blocks per chunk: one row's chunk is read, then the next row's; the chunk's integer
// vectors of the 8 rows wait in a stack buffer (16 KB) for the float steps.
constexpr int kRows = 8;
template <int N>
inline constexpr int kChunk = 32 / N;

// Row i's vectors of block b for token t, at [b][t][i].
template <int N>
struct ChunkSums {
    __m256i s1[kChunk<N>][N][kRows];
    __m256i s2[kChunk<N>][N][kRows];
};

// Block p of one row against N tokens: per token the 8-lane vectors whose lane sums are
// S1 and S2 (Q4_K/Q5_K) or S1 (Q6_K), written to s1[t·kRows], s2[t·kRows].
template <TensorType T, int N>
static inline void block_sums(const uint8_t* p, const TokenAct* act, int64_t b, __m256i* s1,
                              __m256i* s2) {
    for (std::size_t line = 0; line < kKBlockBytes<T>; line += 64) avx2::prefetch_ahead(p + line);
    __m256i sumi[N];
    if constexpr (T == TensorType::Q6_K) {
        __m256i sc16;
        q6k_block_sums<N>(p, act, b, sumi, sc16);
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) {
            const __m256i bs =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act[t].bsums + 16 * b));
            s1[t * kRows] =
                _mm256_sub_epi32(sumi[t], _mm256_slli_epi32(_mm256_madd_epi16(sc16, bs), 5));
        }
    } else {
        __m256i mins16;
        q45k_block_sums<T == TensorType::Q5_K, N>(p, act, b, sumi, mins16);
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) {
            const __m256i bs =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act[t].bsums + 16 * b));
            s1[t * kRows] = sumi[t];
            s2[t * kRows] = _mm256_madd_epi16(mins16, bs);
        }
    }
}

// Lane i of the result: the sum of v[i]'s 8 lanes (exact int32 adds).
static inline __m256i lane_sums(const __m256i* v) {
    const __m256i h01 = _mm256_hadd_epi32(v[0], v[1]);
    const __m256i h23 = _mm256_hadd_epi32(v[2], v[3]);
    const __m256i h45 = _mm256_hadd_epi32(v[4], v[5]);
    const __m256i h67 = _mm256_hadd_epi32(v[6], v[7]);
    // Per 128-bit half: rows 0-3 (h03) and 4-7 (h47), each half one half of the lanes.
    const __m256i h03 = _mm256_hadd_epi32(h01, h23);
    const __m256i h47 = _mm256_hadd_epi32(h45, h67);
    return _mm256_add_epi32(_mm256_permute2x128_si256(h03, h47, 0x20),
                            _mm256_permute2x128_si256(h03, h47, 0x31));
}

// The fp16 at byte offset off of 8 rows (a block's d or dmin) as floats.
static inline __m256 row_halves(const uint8_t* const* rows, std::size_t off) {
    return _mm256_cvtph_ps(_mm_setr_epi16(static_cast<short>(avx2::load_u16(rows[0] + off)),
                                          static_cast<short>(avx2::load_u16(rows[1] + off)),
                                          static_cast<short>(avx2::load_u16(rows[2] + off)),
                                          static_cast<short>(avx2::load_u16(rows[3] + off)),
                                          static_cast<short>(avx2::load_u16(rows[4] + off)),
                                          static_cast<short>(avx2::load_u16(rows[5] + off)),
                                          static_cast<short>(avx2::load_u16(rows[6] + off)),
                                          static_cast<short>(avx2::load_u16(rows[7] + off))));
}

// Rows [r0, r0 + 8) (fewer at the end: the last real row stands in, its lanes unused)
// against tokens [t0, t0 + N).
template <TensorType T, int N>
static void rows8_x_tokens(const GemmArgs& a, int r0, int t0) {
    constexpr std::size_t kBytes = kKBlockBytes<T>;
    TokenAct act[N];
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) act[t] = token_act(a, t0 + t);
    const int nr = a.n_rows - r0 < kRows ? a.n_rows - r0 : kRows;
    const uint8_t* rows[kRows];
    for (int i = 0; i < kRows; ++i)
        rows[i] = a.w + static_cast<std::size_t>(r0 + (i < nr ? i : nr - 1)) * a.w_stride;
    __m256 acc[N];
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) acc[t] = _mm256_setzero_ps();
    ChunkSums<N> cs;
    for (int64_t b0 = 0; b0 < a.nb; b0 += kChunk<N>) {
        const int64_t b1 = b0 + kChunk<N> < a.nb ? b0 + kChunk<N> : a.nb;
        for (int i = 0; i < kRows; ++i)
            for (int64_t b = b0; b < b1; ++b)
                block_sums<T, N>(rows[i] + static_cast<std::size_t>(b) * kBytes, act, b,
                                 &cs.s1[b - b0][0][i], &cs.s2[b - b0][0][i]);
        for (int64_t b = b0; b < b1; ++b) {
            const std::size_t blk = static_cast<std::size_t>(b) * kBytes;
            const __m256 d = row_halves(rows, blk + (T == TensorType::Q6_K ? 208 : 0));
            __m256 dmin = _mm256_setzero_ps();
            if constexpr (T != TensorType::Q6_K) dmin = row_halves(rows, blk + 2);
            HEARTH_UNROLL
            for (int t = 0; t < N; ++t) {
                __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(lane_sums(cs.s1[b - b0][t])), d);
                if constexpr (T != TensorType::Q6_K)
                    f = _mm256_fnmadd_ps(dmin, _mm256_cvtepi32_ps(lane_sums(cs.s2[b - b0][t])), f);
                acc[t] = _mm256_fmadd_ps(f, _mm256_broadcast_ss(act[t].da + b), acc[t]);
            }
        }
    }
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) {
        alignas(32) float lanes[kRows];
        _mm256_store_ps(lanes, acc[t]);
        float* o = a.out + static_cast<std::size_t>(t0 + t) * a.out_stride + r0;
        for (int i = 0; i < nr; ++i) o[i] = lanes[i];
    }
}

template <TensorType T, int N>
static void tokens_n(const GemmArgs& a, int t0) {
    for (int r0 = 0; r0 < a.n_rows; r0 += kRows) rows8_x_tokens<T, N>(a, r0, t0);
}

template <TensorType T>
static void few(const GemmArgs& a) {
    constexpr int kTokens = 8;
    for (int t0 = 0; t0 < a.n_tokens; t0 += kTokens) {
        switch (a.n_tokens - t0 < kTokens ? a.n_tokens - t0 : kTokens) {
            case 8:
                tokens_n<T, 8>(a, t0);
                break;
            case 7:
                tokens_n<T, 7>(a, t0);
                break;
            case 6:
                tokens_n<T, 6>(a, t0);
                break;
            case 5:
                tokens_n<T, 5>(a, t0);
                break;
            case 4:
                tokens_n<T, 4>(a, t0);
                break;
            case 3:
                tokens_n<T, 3>(a, t0);
                break;
            case 2:
                tokens_n<T, 2>(a, t0);
                break;
            default:
                tokens_n<T, 1>(a, t0);
                break;
        }
    }
}

}  // namespace

void kquant_few_avx512(TensorType type, const GemmArgs& a) {
    switch (type) {
        case TensorType::Q4_K:
            return few<TensorType::Q4_K>(a);
        case TensorType::Q5_K:
            return few<TensorType::Q5_K>(a);
        case TensorType::Q6_K:
            return few<TensorType::Q6_K>(a);
        default:
            return;
    }
}

}  // namespace hearth::kernels::cpu
