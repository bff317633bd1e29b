// AVX2 kernels for Q8_0 and IQ4_NL weights against Q8x32 activations (Q8_0 sums), in the
// Q8_0 order of the AVX-512 level (gemm_avx512_q8_0.cpp), so both levels give the same
// bits for Q8_0 (IQ4_NL has no AVX-512 kernel of its own):
//
//   for row r and token t, block by block (b = 0, 1, ..):
//     S = Σ_{i<32} w_i·a_i   (int32, exact; IQ4_NL: w_i = kIq4nlValues[index_i])
//     f = fl(S) · dw_b;   acc = fma(f, da_b, acc)     (acc starts at 0; the result is acc)
//
// Both byte operands are signed; maddubs wants one unsigned, so each product is taken as
// |w| · (a with w's sign), a pair sum of at most 2 · 128 · 127 = 32512 (no saturation),
// widened to int32 by madd. An IQ4_NL block is looked up into the 32 signed bytes of a
// Q8_0 block (pshufb on its nibbles) and runs the same code.
//
//   - tiles of 8 tokens or more: tokens in the lanes of a register, as the K-quant tiles
//     (gemm_avx2_kquant.cpp): the product's activations transposed once (ActPacker; 8
//     tokens × 4 bytes per register), a weight row's 4 bytes broadcast straight from the
//     file's rows, 2 rows × 2 groups of 8 tokens per micro-kernel, and the float steps
//     for 8 tokens at once.
//   - fewer tokens (decode, a tile's last few): row after row, one prefetched weight
//     stream, the float steps in scalar registers.
//
// tst_cpu_ops checks both against a scalar model of the order, bit for bit. Built with
// -mavx2 -mfma -mf16c; internal linkage only (see avx2_util.h).
#include "cpu/act_quant.h"
#include "cpu/avx2_lanes.h"
#include "cpu/gemm_kernels.h"

namespace hearth::kernels::cpu {

namespace {

using quant::TensorType;
constexpr std::size_t kBlockBytes = sizeof(quant::BlockQ8_0);  // 34
constexpr int kLanes = 8;                                      // tokens per register
constexpr int kUnit = 8;                                       // blocks per unit (256 elements)
constexpr int kPassRows = avx2::kTileRows;
constexpr int kPassGroups = avx2::kTileTokens / kLanes;
constexpr int kBand = 2;    // rows per micro-kernel
constexpr int kGroups = 2;  // token groups per micro-kernel

// One unit of 8 tokens, packed: q[k][4t..4t+3] = token t's activation bytes 4k..4k+3 of
// the unit; da[j][t]: the scale of its block j. Missing tokens and blocks past the row's
// end are zero.
struct alignas(32) TokensUnit {
    int8_t q[64][kLanes * 4];
    float da[kUnit][kLanes];
};

struct alignas(32) Scratch {
    float d[kPassRows][kUnit];                     // the pass's rows' block scales, one unit
    uint8_t conv[kPassRows][kUnit * kBlockBytes];  // IQ4_NL: the unit as Q8_0 blocks
    float acc[kPassGroups][kPassRows][kLanes];     // acc[g][r][t]: row r, token 8g + t
};                                                 // ~66 KB, one per thread

// Token t of the tile's activations.
static inline Q8x32Token token_q8(const GemmArgs& a, int t) {
    return q8x32_token(a.act, a.act_stride, a.nb, a.group, t, a.n_tokens);
}

static inline std::size_t units(int64_t nb) {
    return static_cast<std::size_t>((nb + kUnit - 1) / kUnit);
}

// |w| · (a with w's sign) over byte pairs, widened to int32 (see top).
static inline __m256i dot4(__m256i w_abs, __m256i w, __m256i a) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(a, w)),
                             _mm256_set1_epi16(1));
}

// ---- Tiles: tokens in register lanes. ----

// ActPacker::bytes and ::pack: token group g (8 tokens) of a's activations, every unit.
static std::size_t packed_bytes(int64_t nb, int n_tokens) {
    const auto groups = static_cast<std::size_t>((n_tokens + kLanes - 1) / kLanes);
    return groups * units(nb) * sizeof(TokensUnit);
}

static void pack_group(const GemmArgs& a, int g, uint8_t* dst) {
    auto* tu = reinterpret_cast<TokensUnit*>(dst);
    const int t0 = g * kLanes;
    const int n = a.n_tokens - t0 < kLanes ? a.n_tokens - t0 : kLanes;
    Q8x32Token tok[kLanes];
    for (int t = 0; t < n; ++t) tok[t] = token_q8(a, t0 + t);
    const std::size_t nu = units(a.nb);
    for (std::size_t u = 0; u < nu; ++u) {
        for (int j = 0; j < kUnit; ++j) {  // a block (8 groups of 4 bytes) per token, transposed
            const int64_t b = static_cast<int64_t>(u) * kUnit + j;
            __m256i r[kLanes];
            for (int t = 0; t < kLanes; ++t)
                r[t] = t < n && b < a.nb ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
                                               tok[t].qs + b * tok[t].G * 32))
                                         : _mm256_setzero_si256();
            avx2::transpose8(r);
            HEARTH_UNROLL
            for (int k = 0; k < 8; ++k)
                _mm256_store_si256(reinterpret_cast<__m256i*>(tu[u].q[8 * j + k]), r[k]);
            for (int t = 0; t < kLanes; ++t)
                tu[u].da[j][t] = t < n && b < a.nb ? tok[t].ds[b * 2 * tok[t].G] : 0.0f;
        }
    }
}

// Rows [r0, r0 + kBand) (row i's Q8_0 blocks of the unit at urows[r0 + i]) against G ≤ 2
// groups of 8 tokens (xs[q], accumulators accs[q]): the unit's nj blocks; d: the rows'
// block scales.
template <int G>
static inline void micro(const uint8_t* const* urows, const float (*d)[kUnit], int r0, int nj,
                         const TokensUnit* const* xs, float (*const* accs)[kLanes]) {
    for (int j = 0; j < nj; ++j) {
        const std::size_t blk = static_cast<std::size_t>(j) * kBlockBytes + 2;
        __m256i dot[kBand][G];
        HEARTH_UNROLL
        for (int g = 0; g < 8; ++g) {
            __m256i x[G];
            HEARTH_UNROLL
            for (int q = 0; q < G; ++q)
                x[q] = _mm256_load_si256(reinterpret_cast<const __m256i*>(xs[q]->q[8 * j + g]));
            HEARTH_UNROLL
            for (int i = 0; i < kBand; ++i) {
                const __m256i w = _mm256_set1_epi32(
                    static_cast<int>(avx2::load_u32(urows[r0 + i] + blk + 4 * g)));
                const __m256i w_abs = _mm256_abs_epi8(w);
                HEARTH_UNROLL
                for (int q = 0; q < G; ++q) {
                    const __m256i p = dot4(w_abs, w, x[q]);
                    dot[i][q] = g == 0 ? p : _mm256_add_epi32(dot[i][q], p);
                    avx2::pin(dot[i][q]);
                }
            }
        }
        HEARTH_UNROLL
        for (int q = 0; q < G; ++q) {
            const __m256 da = _mm256_load_ps(xs[q]->da[j]);
            HEARTH_UNROLL
            for (int i = 0; i < kBand; ++i) {
                const __m256 f =
                    _mm256_mul_ps(_mm256_cvtepi32_ps(dot[i][q]), _mm256_set1_ps(d[r0 + i][j]));
                float* acc = accs[q][r0 + i];
                _mm256_store_ps(acc, _mm256_fmadd_ps(f, da, _mm256_load_ps(acc)));
            }
        }
    }
}

// Rows [r0, r0 + nr) against whole groups of tokens [t0, t0 + nt) (t0 a multiple of 8),
// nr ≤ 64, nt ≤ 256.
template <TensorType T>
static void pass(const GemmArgs& a, Scratch& s, int r0, int nr, int t0, int nt) {
    constexpr std::size_t kFileBytes = avx2::kQ8FileBlockBytes<T>;
    const int groups = nt / kLanes;
    const int bands = (nr + kBand - 1) / kBand;
    const uint8_t* rows[kPassRows];
    for (int i = 0; i < bands * kBand; ++i)  // rows past the last: the last, lanes unused
        rows[i] = a.w + static_cast<std::size_t>(r0 + (i < nr ? i : nr - 1)) * a.w_stride;
    for (int g = 0; g < groups; ++g)
        for (int i = 0; i < bands * kBand; ++i) _mm256_store_ps(s.acc[g][i], _mm256_setzero_ps());
    const std::size_t nu = units(a.nb);
    const auto* packed = reinterpret_cast<const TokensUnit*>(a.act_packed);
    for (std::size_t u = 0; u < nu; ++u) {
        const auto ui = static_cast<int64_t>(u);
        const int nj = a.nb - ui * kUnit < kUnit ? static_cast<int>(a.nb - ui * kUnit) : kUnit;
        const uint8_t* urows[kPassRows];
        for (int i = 0; i < bands * kBand; ++i) {
            const uint8_t* unit = rows[i] + static_cast<std::size_t>(ui * kUnit) * kFileBytes;
            for (int j = 0; j < nj; ++j)
                s.d[i][j] =
                    avx2::fp16(avx2::load_u16(unit + static_cast<std::size_t>(j) * kFileBytes));
            if constexpr (T == TensorType::IQ4_NL) {  // looked up once for every token group
                for (int j = 0; j < nj; ++j)
                    _mm256_storeu_si256(
                        reinterpret_cast<__m256i*>(s.conv[i] +
                                                   static_cast<std::size_t>(j) * kBlockBytes + 2),
                        avx2::q8_block_weights<T>(unit + static_cast<std::size_t>(j) * kFileBytes));
                urows[i] = s.conv[i];
            } else {
                urows[i] = unit;
            }
        }
        for (int g0 = 0; g0 < groups; g0 += kGroups) {
            const TokensUnit* xs[kGroups];
            float(*accs[kGroups])[kLanes];
            const int ng = groups - g0 < kGroups ? groups - g0 : kGroups;
            for (int q = 0; q < ng; ++q) {
                xs[q] = packed + static_cast<std::size_t>(t0 / kLanes + g0 + q) * nu + u;
                accs[q] = s.acc[g0 + q];
            }
            for (int band = 0; band < bands; ++band) {
                if (ng == kGroups) {
                    micro<kGroups>(urows, s.d, band * kBand, nj, xs, accs);
                } else {
                    micro<1>(urows, s.d, band * kBand, nj, xs, accs);
                }
            }
        }
    }
    for (int g = 0; g < groups; ++g) {
        float* o = a.out + static_cast<std::size_t>(t0 + g * kLanes) * a.out_stride + r0;
        for (int i0 = 0; i0 < nr; i0 += 8)
            avx2::store_rows_x8(s.acc[g] + i0, nr - i0 < 8 ? nr - i0 : 8, o + i0, a.out_stride);
    }
}

// ---- Few tokens: row after row. ----

// The exact sums of two blocks' 8-lane vectors: S of v0 in lane 0, of v1 in lane 1.
static inline __m128i pair_sums(__m256i v0, __m256i v1) {
    const __m256i h = _mm256_hadd_epi32(v0, v1);  // per half: v0 pairs, v1 pairs
    const __m128i q = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    return _mm_hadd_epi32(q, q);  // [S0, S1, S0, S1]
}

// Tokens [t0, t0 + N) against every row: each row streams from memory once, its blocks
// in pairs (one reduction for both sums), the float steps in scalar registers. (8 rows
// side by side with their sums transposed for vector float steps, as the K-quants do,
// left memory idle during the float steps: 1B-shaped decode products at ~45 % of this
// kernel's bandwidth.)
template <TensorType T, int N>
static void tokens_n(const GemmArgs& a, int t0) {
    constexpr std::size_t kFileBytes = avx2::kQ8FileBlockBytes<T>;
    Q8x32Token tok[N];
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) tok[t] = token_q8(a, t0 + t);
    const auto x_at = [&](int t, int64_t b) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tok[t].qs + b * 32 * tok[t].G));
    };
    const auto da_at = [&](int t, int64_t b) { return _mm_set_ss(tok[t].ds[b * 2 * tok[t].G]); };
    for (int r = 0; r < a.n_rows; ++r) {
        const uint8_t* row = a.w + static_cast<std::size_t>(r) * a.w_stride;
        __m128 acc[N];
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) acc[t] = _mm_setzero_ps();
        int64_t b = 0;
        for (; b + 2 <= a.nb; b += 2) {
            const uint8_t* p = row + static_cast<std::size_t>(b) * kFileBytes;
            avx2::prefetch_ahead(p);
            const __m256i w0 = avx2::q8_block_weights<T>(p);
            const __m256i w1 = avx2::q8_block_weights<T>(p + kFileBytes);
            const __m256i a0 = _mm256_abs_epi8(w0), a1 = _mm256_abs_epi8(w1);
            // [dw0, dw1] as floats.
            const __m128 dw = _mm_cvtph_ps(_mm_insert_epi16(_mm_cvtsi32_si128(avx2::load_u16(p)),
                                                            avx2::load_u16(p + kFileBytes), 1));
            HEARTH_UNROLL
            for (int t = 0; t < N; ++t) {
                const __m128 f =
                    _mm_mul_ps(_mm_cvtepi32_ps(pair_sums(dot4(a0, w0, x_at(t, b)),
                                                         dot4(a1, w1, x_at(t, b + 1)))),
                               dw);
                acc[t] = _mm_fmadd_ss(f, da_at(t, b), acc[t]);
                acc[t] = _mm_fmadd_ss(_mm_movehdup_ps(f), da_at(t, b + 1), acc[t]);
            }
        }
        if (b < a.nb) {  // an odd last block
            const uint8_t* p = row + static_cast<std::size_t>(b) * kFileBytes;
            const __m256i w0 = avx2::q8_block_weights<T>(p);
            const __m256i a0 = _mm256_abs_epi8(w0);
            const __m128 dw = _mm_set_ss(avx2::fp16(avx2::load_u16(p)));
            HEARTH_UNROLL
            for (int t = 0; t < N; ++t) {
                const __m128 f = _mm_mul_ss(
                    _mm_cvtsi32_ss(_mm_setzero_ps(), avx2::hsum_i32(dot4(a0, w0, x_at(t, b)))), dw);
                acc[t] = _mm_fmadd_ss(f, da_at(t, b), acc[t]);
            }
        }
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t)
            a.out[static_cast<std::size_t>(t0 + t) * a.out_stride + static_cast<std::size_t>(r)] =
                _mm_cvtss_f32(acc[t]);
    }
}

// Whole groups of 8 tokens with the activations packed by matmul (TypeKernels::pack_act);
// the rest (fewer than 8), or a caller that did not pack: the few-token kernel, same bits.
template <TensorType T>
static void gemm_q8(const GemmArgs& a) {
    int done = 0;
    if (a.act_packed) {
        Scratch& s = avx2::thread_scratch<Scratch>();
        done = avx2::run_tile_passes(a.n_rows, a.n_tokens, [&](int r0, int nr, int t0, int nt) {
            pass<T>(a, s, r0, nr, t0, nt);
        });
    }
    // Up to 4 tokens per pass over the weights.
    avx2::token_runs<4>(done, a.n_tokens,
                        [&](auto n, int t0) { tokens_n<T, decltype(n)::value>(a, t0); });
}

}  // namespace

const ActPacker kAvx2PackQ8_0{packed_bytes, pack_group, kLanes};

void gemm_avx2_q8_0(const GemmArgs& a) {
    gemm_q8<TensorType::Q8_0>(a);
}
void gemm_avx2_iq4_nl(const GemmArgs& a) {
    gemm_q8<TensorType::IQ4_NL>(a);
}

}  // namespace hearth::kernels::cpu
