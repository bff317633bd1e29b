// AVX2 kernels for Q8_0 and IQ4_NL weights against Q8x32 activations (Q8_0 sums), in the
// Q8_0 order of the AVX-512 level (gemm_avx512_q8_0.cpp), so both levels give the same
// bits:
//
//   for row r and token t, block by block (b = 0, 1, ..):
//     S = Σ_{i<32} w_i·a_i   (int32, exact; IQ4_NL: w_i = kIq4nlValues[index_i])
//     f = fl(S) · dw_b;   acc = fma(f, da_b, acc)     (acc starts at 0; the result is acc)
//
// Both byte operands are signed; maddubs wants one unsigned, so each product is taken as
// |w| · (a with w's sign), a pair sum of at most 2 · 128 · 127 = 32512 (no saturation),
// widened to int32 by madd. IQ4_NL rows are read repacked 8 at a time (weight_pack.h),
// their indices looked up into signed bytes (pshufb).
//
//   - tiles of 8 tokens or more: tokens in the lanes of a register, as the K-quant tiles
//     (gemm_avx2_kquant.cpp): the product's activations transposed once (ActPacker; 8
//     tokens × 4 bytes per register), a weight row's 4 bytes broadcast (Q8_0: straight
//     from the file's rows; IQ4_NL: from a pass's rows looked up once into Q8_0 blocks),
//     2 rows × 2 groups of 8 tokens per micro-kernel, and the float steps for 8 tokens at
//     once.
//   - fewer tokens (decode, a tile's last few): Q8_0 row after row, one prefetched weight
//     stream, the float steps in scalar registers; IQ4_NL 8 rows side by side in the
//     lanes (nl_x8_tokens), its 18-byte blocks being too few bytes to hide the per-row
//     reductions behind the memory.
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
    const int groups = nt / kLanes;
    const int bands = (nr + kBand - 1) / kBand;
    const uint8_t* rows[kPassRows];  // Q8_0: the row; IQ4_NL: its group of 8 (weight_pack.h)
    int lanes[kPassRows];            // IQ4_NL: the row's place in its group
    for (int i = 0; i < bands * kBand; ++i) {  // rows past the last: the last, lanes unused
        const int r = r0 + (i < nr ? i : nr - 1);
        if constexpr (T == TensorType::IQ4_NL) {
            rows[i] = a.w + static_cast<std::size_t>(r / kQ4_0x8Rows) * a.w_stride;
            lanes[i] = r % kQ4_0x8Rows;
        } else {
            rows[i] = a.w + static_cast<std::size_t>(r) * a.w_stride;
            lanes[i] = 0;
        }
    }
    for (int g = 0; g < groups; ++g)
        for (int i = 0; i < bands * kBand; ++i) _mm256_store_ps(s.acc[g][i], _mm256_setzero_ps());
    const std::size_t nu = units(a.nb);
    const auto* packed = reinterpret_cast<const TokensUnit*>(a.act_packed);
    for (std::size_t u = 0; u < nu; ++u) {
        const auto ui = static_cast<int64_t>(u);
        const int nj = a.nb - ui * kUnit < kUnit ? static_cast<int>(a.nb - ui * kUnit) : kUnit;
        const uint8_t* urows[kPassRows];
        for (int i = 0; i < bands * kBand; ++i) {
            if constexpr (T == TensorType::IQ4_NL) {  // looked up once for every token group
                for (int j = 0; j < nj; ++j) {
                    const int64_t b = ui * kUnit + j;
                    s.d[i][j] = avx2::fp16(avx2::iq4_x8_scale(rows[i], lanes[i], b));
                    _mm256_storeu_si256(
                        reinterpret_cast<__m256i*>(s.conv[i] +
                                                   static_cast<std::size_t>(j) * kBlockBytes + 2),
                        avx2::iq4_x8_values(rows[i], lanes[i], b));
                }
                urows[i] = s.conv[i];
            } else {
                const uint8_t* unit = rows[i] + static_cast<std::size_t>(ui * kUnit) * kBlockBytes;
                for (int j = 0; j < nj; ++j)
                    s.d[i][j] = avx2::fp16(
                        avx2::load_u16(unit + static_cast<std::size_t>(j) * kBlockBytes));
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
template <int N>
static void q8_tokens(const GemmArgs& a, int t0) {
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
            const uint8_t* p = row + static_cast<std::size_t>(b) * kBlockBytes;
            avx2::prefetch_ahead(p);
            const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2));
            const __m256i w1 =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + kBlockBytes + 2));
            const __m256i a0 = _mm256_abs_epi8(w0), a1 = _mm256_abs_epi8(w1);
            // [dw0, dw1] as floats.
            const __m128 dw = _mm_cvtph_ps(_mm_insert_epi16(_mm_cvtsi32_si128(avx2::load_u16(p)),
                                                            avx2::load_u16(p + kBlockBytes), 1));
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
            const uint8_t* p = row + static_cast<std::size_t>(b) * kBlockBytes;
            const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2));
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

// IQ4_NL, few tokens, on its rows repacked 8 at a time (weight_pack.h): the 8 rows of a
// group side by side in the lanes, so a block's 8 exact sums end in one register with no
// horizontal adds and its float steps are one 8-lane multiply and fma. Each lane runs the
// order above, block by block, so the bits are the row-by-row kernel's. The look-up is
// made once per block for the N tokens: one 32-byte load holds 4 indices of each row
// (weight bytes 4c..4c+3: elements 4c.. in the low nibbles and 16 + 4c.. in the high),
// multiplied against those 4 activation bytes broadcast to every lane.
template <int N>
static void nl_x8_tokens(const GemmArgs& a, int t0) {
    constexpr std::size_t kX8 = kQ4_0x8BlockBytes;
    Q8x32Token tok[N];
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) tok[t] = token_q8(a, t0 + t);
    const __m256i grid = avx2::iq4_grid();
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const auto act4 = [&](int t, int64_t b, int k) {
        return _mm256_set1_epi32(
            static_cast<int>(avx2::load_u32(tok[t].qs + b * 32 * tok[t].G + 4 * k)));
    };
    const int n_groups = (a.n_rows + kQ4_0x8Rows - 1) / kQ4_0x8Rows;
    for (int g = 0; g < n_groups; ++g) {
        const uint8_t* w = a.w + static_cast<std::size_t>(g) * a.w_stride;
        __m256 acc[N];
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) acc[t] = _mm256_setzero_ps();
        for (int64_t b = 0; b < a.nb; ++b) {
            const uint8_t* p = w + static_cast<std::size_t>(b) * kX8;
            avx2::prefetch_ahead(p);
            avx2::prefetch_ahead(p + 64);
            avx2::prefetch_ahead(p + 128);
            __m256i sum[N];
            HEARTH_UNROLL
            for (int c = 0; c < 4; ++c) {
                const __m256i v =
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16 + 32 * c));
                const __m256i lo = _mm256_shuffle_epi8(grid, _mm256_and_si256(v, m4));
                const __m256i hi =
                    _mm256_shuffle_epi8(grid, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
                const __m256i lo_abs = _mm256_abs_epi8(lo), hi_abs = _mm256_abs_epi8(hi);
                HEARTH_UNROLL
                for (int t = 0; t < N; ++t) {
                    const __m256i s = _mm256_add_epi32(dot4(lo_abs, lo, act4(t, b, c)),
                                                       dot4(hi_abs, hi, act4(t, b, 4 + c)));
                    sum[t] = c == 0 ? s : _mm256_add_epi32(sum[t], s);
                }
            }
            const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
            HEARTH_UNROLL
            for (int t = 0; t < N; ++t) {
                const __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(sum[t]), dw);
                acc[t] = _mm256_fmadd_ps(f, _mm256_set1_ps(tok[t].ds[b * 2 * tok[t].G]), acc[t]);
            }
        }
        const int r = g * kQ4_0x8Rows;
        const int n = a.n_rows - r < kQ4_0x8Rows ? a.n_rows - r : kQ4_0x8Rows;
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) {
            float* o = a.out + static_cast<std::size_t>(t0 + t) * a.out_stride + r;
            if (n == kQ4_0x8Rows) {
                _mm256_storeu_ps(o, acc[t]);
            } else {
                alignas(32) float tmp[kQ4_0x8Rows];
                _mm256_store_ps(tmp, acc[t]);
                for (int i = 0; i < n; ++i) o[i] = tmp[i];
            }
        }
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
    avx2::token_runs<4>(done, a.n_tokens, [&](auto n, int t0) {
        if constexpr (T == TensorType::IQ4_NL) {
            nl_x8_tokens<decltype(n)::value>(a, t0);
        } else {
            q8_tokens<decltype(n)::value>(a, t0);
        }
    });
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
