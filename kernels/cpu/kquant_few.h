// The K-quant order (Q4_K, Q5_K, Q6_K, Q2_K, Q3_K, IQ4_XS against Q8xK activations), one
// float order for every token count and for both SIMD levels, and the few-token kernel
// that follows it.
//
// The order. For weight row r and token t, super-block by super-block (b = 0, 1, ..):
//   Q4_K / Q5_K / Q2_K:
//                 S1 = Σ_j sc_j · Σ_{i∈j} q_i·a_i     S2 = Σ_j m_j · Σ_{i∈j} a_i   (int32, exact)
//                 f  = fl(S1) · d_b;   f = f − dmin_b · fl(S2)   (one rounding: fnmadd)
//   Q6_K / Q3_K:  S1 = Σ_j sc_j · (Σ_{i∈j} q_i·a_i − o · Σ_{i∈j} a_i)               (int32, exact)
//                 f  = fl(S1) · d_b      (o = 32 / 4: the quants' offset)
//   IQ4_XS:       S1 = Σ_j sc_j · Σ_{i∈j} w_i·a_i  (w the signed grid values);   f = fl(S1) · d_b
//   then          acc = fma(f, da_b, acc)    (acc starts at 0; the result is acc)
// with j the sub-blocks (32 elements for Q4_K/Q5_K/IQ4_XS, 16 for the others), q the
// unsigned quants, a the token's int8 activations and da_b their scale. Every step is a single IEEE
// operation on values that do not depend on the token's company, so a row's result is
// the same bits whichever kernel computes it, whatever the batch and whether the AVX2 or
// the AVX-512 level runs: the kernels differ only in how they lay the work out.
// tst_cpu_ops checks every kernel against a scalar model of this order, bit for bit. (The
// portable scalar kernels keep their own order, 2e-5 · Σ|W·x̂| from it.)
//
//   - few tokens (here): decode and the last tokens of a tile.
//   - tiles, tokens side by side in the lanes of a register: 8 per register at the AVX2
//     level (gemm_avx2_kquant.cpp, maddubs), 16 at the AVX-512 level
//     (gemm_avx512_kquant.cpp, vpdpbusd; Q4_K, Q5_K and Q6_K: the AVX-512 level runs the
//     others' AVX2 kernels).
//
// The few-token kernel: each weight row is read as the earlier AVX2 kernel read it (a
// super-block unpacked once for up to 8 tokens, maddubs + madd with the sub-block
// scales): per block and token that gives 8 int32 lanes whose sum is the exact S1 (and,
// for Q4_K/Q5_K, 8 lanes summing to S2). Eight rows are read side by side; the lane sums
// of their vectors are transposed into one register (lane i: row i), and the float steps
// of the order run for the 8 rows at once. The weights stream from memory one row after
// another within a chunk of blocks, prefetched ahead.
//
// Include only from the kernel files of a level (AVX2 arithmetic; the AVX-512 files give
// it 32 vector registers); everything is in an unnamed namespace, see avx2_util.h.
#pragma once

#include "cpu/avx2_lanes.h"
#include "cpu/kquant_avx2.h"

namespace hearth::kernels::cpu {

namespace {

using quant::TensorType;

constexpr int kRows = 8;  // rows side by side
// Blocks per chunk: one row's chunk is read, then the next row's; the chunk's integer
// vectors of the 8 rows wait in a stack buffer (16 KB) for the float steps.
template <int N>
inline constexpr int kChunk = 32 / N;

// How far ahead of the row being read the weights are prefetched by default (a kernel
// choice, kernel_choice.h, may set another distance: GemmArgs::prefetch_bytes): twice the
// other kernels' distance. On the Zen 5 test machine (2 threads, alternating builds, 128
// tokens after a 4-token prompt) 6 KB decoded the Qwen2.5-1.5B-shaped Q4_K_M file at
// 52.9-55.1 tokens/s against 46.0-49.0 with 3 KB, and the 1B-shaped one at 67.5-73.0
// against 64.6-68.9; the 32-element formats' kernels were no faster with it (the default
// model's Q4_1 ~3 % slower).
inline constexpr int kKQuantPrefetchBytes = 6144;

// Row i's vectors of block b for token t, at [b][t][i].
template <int N>
struct ChunkSums {
    __m256i s1[kChunk<N>][N][kRows];
    __m256i s2[kChunk<N>][N][kRows];
};

// Block p of one row against N tokens: per token the 8-lane vectors whose lane sums are
// S1 and S2 (Q4_K/Q5_K) or S1 (Q6_K), written to s1[t·kRows], s2[t·kRows].
template <TensorType T, int N>
static inline void block_sums(const uint8_t* p, std::size_t ahead, const TokenAct* act, int64_t b,
                              __m256i* s1, __m256i* s2) {
    for (std::size_t line = 0; line < kKBlockBytes<T>; line += 64)
        _mm_prefetch(reinterpret_cast<const char*>(p + ahead + line), _MM_HINT_T0);
    __m256i sumi[N];
    if constexpr (T == TensorType::IQ4_XS) {
        __m256i sc16;
        iq4xs_block_sums<N>(p, act, b, sumi, sc16);
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) s1[t * kRows] = sumi[t];
    } else if constexpr (kLowK<T>) {
        __m256i sc16, aux16;
        lowk_block_sums<T, N>(p, act, b, sumi, sc16, aux16);
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) {
            const __m256i bs =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act[t].bsums + 16 * b));
            if constexpr (kK<T>.mins) {  // Q2_K
                s1[t * kRows] = sumi[t];
                s2[t * kRows] = _mm256_madd_epi16(aux16, bs);
            } else {  // Q3_K
                s1[t * kRows] = _mm256_sub_epi32(
                    sumi[t], _mm256_slli_epi32(_mm256_madd_epi16(aux16, bs), kK<T>.shift));
            }
        }
    } else if constexpr (T == TensorType::Q6_K) {
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
    const std::size_t ahead = a.prefetch_bytes > 0 ? static_cast<std::size_t>(a.prefetch_bytes)
                                                   : std::size_t{kKQuantPrefetchBytes};
    for (int64_t b0 = 0; b0 < a.nb; b0 += kChunk<N>) {
        const int64_t b1 = b0 + kChunk<N> < a.nb ? b0 + kChunk<N> : a.nb;
        for (int i = 0; i < kRows; ++i)
            for (int64_t b = b0; b < b1; ++b)
                block_sums<T, N>(rows[i] + static_cast<std::size_t>(b) * kBytes, ahead, act, b,
                                 &cs.s1[b - b0][0][i], &cs.s2[b - b0][0][i]);
        for (int64_t b = b0; b < b1; ++b) {
            const std::size_t blk = static_cast<std::size_t>(b) * kBytes;
            const __m256 d = avx2::row_halves(rows, blk + kK<T>.d);
            __m256 dmin = _mm256_setzero_ps();
            if constexpr (kK<T>.mins) dmin = avx2::row_halves(rows, blk + kK<T>.dmin);
            HEARTH_UNROLL
            for (int t = 0; t < N; ++t) {
                __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(avx2::lane_sums(cs.s1[b - b0][t])), d);
                if constexpr (kK<T>.mins)
                    f = _mm256_fnmadd_ps(dmin,
                                         _mm256_cvtepi32_ps(avx2::lane_sums(cs.s2[b - b0][t])), f);
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

// Any number of tokens (meant for fewer than a tile's group), any K-quant type:
// up to 8 per pass over the weights.
template <TensorType T>
static void kquant_few(const GemmArgs& a) {
    avx2::token_runs<8>(0, a.n_tokens, [&](auto n, int t0) {
        for (int r0 = 0; r0 < a.n_rows; r0 += kRows)
            rows8_x_tokens<T, decltype(n)::value>(a, r0, t0);
    });
}

}  // namespace

}  // namespace hearth::kernels::cpu
