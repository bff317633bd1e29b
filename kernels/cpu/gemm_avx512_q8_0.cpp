// AVX-512 kernels for Q8_0 weights against Q8x32 activations (Q8_0 sums), in a float order
// of their own, the AVX2 level's too (gemm_avx2_q8_0.cpp; the scalar fallback keeps
// llama.cpp's):
//
//   for row r and token t, block by block (b = 0, 1, ..):
//     S = Σ_{i<32} w_i·a_i   (int32, exact)
//     f = fl(S) · dw_b;   acc = fma(f, da_b, acc)     (acc starts at 0; the result is acc)
//
// with dw_b the weight block's scale and da_b the activations' (both fp16 values). Every
// step is one IEEE operation on values that do not depend on the token's company, so the
// two kernels below give the same bits whatever the batch:
//
//   - tiles of 16 tokens or more: tokens in the lanes of a register, as the K-quant tiles
//     (gemm_avx512_kquant.cpp): the product's activations transposed once (ActPacker;
//     16 tokens × 4 bytes per register, offset by 128 to be vpdpbusd's unsigned operand),
//     a weight row's 4 bytes broadcast as the signed one, 4 rows × 3 groups of 16 tokens
//     per micro-kernel; the offset's share, 128 · Σ w per row and block, starts each sum.
//   - fewer tokens (decode): row after row, as the AVX2 decode kernel streams them, each
//     block's sum with vpdpbusd (the weights offset by 128, the token's 128 · Σ a taken
//     off) and the float steps in scalar registers.
//
// tst_cpu_ops checks both against a scalar model of the order, bit for bit. Built with
// AVX-512 F/BW/VL/VNNI enabled; internal linkage only (see avx2_util.h).
#include "cpu/act_quant.h"
#include "cpu/avx512_util.h"
#include "cpu/gemm_kernels.h"

namespace hearth::kernels::cpu {

namespace {

using quant::TensorType;
constexpr std::size_t kBlockBytes = sizeof(quant::BlockQ8_0);  // 34
using avx512::kLanes;
constexpr int kBand = 4;  // rows per micro-kernel
constexpr int kUnit = 8;  // blocks per unit (256 elements)
constexpr int kPassRows = avx512::kTileRows;

// One unit of 16 tokens, packed: q[k][lane t] = token t's activation bytes 4k..4k+3 of the
// unit, plus 128 (unsigned); da[j][t]: the scale of its block j. Missing tokens and blocks
// past the row's end are zero.
struct alignas(64) TokensUnit {
    uint8_t q[64][kLanes * 4];
    float da[kUnit][kLanes];
};

// The pass's rows, one unit: 128 · Σ w per block, negated (the sums' starting value), and
// the blocks' scales.
struct alignas(64) RowsUnit {
    int32_t neg_offset[kPassRows][kUnit];
    float d[kPassRows][kUnit];
    uint8_t conv[kPassRows][kUnit * kBlockBytes];  // IQ4_NL: the unit as Q8_0 blocks
};

struct alignas(64) Scratch {
    RowsUnit w;
    float acc[avx512::kTileGroups][kPassRows][kLanes];  // acc[g][r][t]: row r, token 16g + t
};                                                      // ~132 KB, one per thread

// Token t of the tile's activations.
static inline Q8x32Token token_q8(const GemmArgs& a, int t) {
    return q8x32_token(a.act, a.act_stride, a.nb, a.group, t, a.n_tokens);
}

static inline std::size_t units(int64_t nb) {
    return static_cast<std::size_t>((nb + kUnit - 1) / kUnit);
}

// ActPacker::bytes and ::pack: token group g (16 tokens) of a's activations, every unit.
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
    const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
    const std::size_t nu = units(a.nb);
    for (std::size_t u = 0; u < nu; ++u) {
        // Two blocks (16 groups of 4 bytes) per token and transpose.
        for (int h = 0; h < kUnit; h += 2) {
            const int64_t b = static_cast<int64_t>(u) * kUnit + h;
            __m512i r[16];
            for (int t = 0; t < kLanes; ++t) {
                __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
                if (t < n && b < a.nb)
                    lo = _mm256_loadu_si256(
                        reinterpret_cast<const __m256i*>(tok[t].qs + b * tok[t].G * 32));
                if (t < n && b + 1 < a.nb)
                    hi = _mm256_loadu_si256(
                        reinterpret_cast<const __m256i*>(tok[t].qs + (b + 1) * tok[t].G * 32));
                r[t] = _mm512_xor_si512(avx512::join(lo, hi), bias);
            }
            avx512::transpose16(r);
            HEARTH_UNROLL
            for (int k = 0; k < 16; ++k) _mm512_store_si512(tu[u].q[8 * h + k], r[k]);
        }
        for (int j = 0; j < kUnit; ++j) {
            const int64_t b = static_cast<int64_t>(u) * kUnit + j;
            for (int t = 0; t < kLanes; ++t)
                tu[u].da[j][t] = t < n && b < a.nb ? tok[t].ds[b * 2 * tok[t].G] : 0.0f;
        }
    }
}

// Unit u of rows [0, n) of the pass (row i at rows[i]): offsets and scales, and urows[i],
// where row i's Q8_0 blocks of the unit start (IQ4_NL: looked up into ru.conv once for
// every token group).
template <TensorType T>
static void prepare_rows(const uint8_t* const* rows, int n, int64_t nb, int64_t u, RowsUnit& ru,
                         const uint8_t** urows) {
    const __m256i ones8 = _mm256_set1_epi8(1);
    const __m256i ones16 = _mm256_set1_epi16(1);
    for (int i = 0; i < n; ++i) {
        const uint8_t* unit =
            rows[i] + static_cast<std::size_t>(u * kUnit) * avx2::kQ8FileBlockBytes<T>;
        if constexpr (T == TensorType::IQ4_NL) {
            for (int j = 0; j < kUnit && u * kUnit + j < nb; ++j) {
                const uint8_t* p = unit + static_cast<std::size_t>(j) * avx2::kQ8FileBlockBytes<T>;
                uint8_t* q = ru.conv[i] + static_cast<std::size_t>(j) * kBlockBytes;
                q[0] = p[0];
                q[1] = p[1];
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 2),
                                    avx2::q8_block_weights<T>(p));
            }
            unit = ru.conv[i];
        }
        urows[i] = unit;
        for (int j = 0; j < kUnit; ++j) {
            const int64_t b = u * kUnit + j;
            if (b >= nb) {
                ru.neg_offset[i][j] = 0;
                ru.d[i][j] = 0.0f;
                continue;
            }
            const uint8_t* p = unit + static_cast<std::size_t>(j) * kBlockBytes;
            // Σ w over the block: maddubs(1, w) pairs, madd to int32, then the lanes.
            const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2));
            const __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, q), ones16);
            ru.neg_offset[i][j] = -128 * avx2::hsum_i32(s);
            ru.d[i][j] = avx2::fp16(avx2::load_u16(p));
        }
    }
}

// Rows [r0, r0 + 4) (row i's Q8_0 blocks of the unit at urows[r0 + i]) against G ≤ 3
// groups of 16 tokens (xs[q], accumulators accs[q]): the unit's nj blocks.
template <int G>
static inline void micro(const uint8_t* const* urows, const RowsUnit& ru, int r0, int nj,
                         const TokensUnit* const* xs, float (*const* accs)[kLanes]) {
    __m512 acc[kBand][G];
    HEARTH_UNROLL
    for (int i = 0; i < kBand; ++i) {
        HEARTH_UNROLL
        for (int q = 0; q < G; ++q) acc[i][q] = _mm512_load_ps(accs[q][r0 + i]);
    }
    for (int j = 0; j < nj; ++j) {
        const std::size_t blk = static_cast<std::size_t>(j) * kBlockBytes + 2;
        __m512i dot[kBand][G];
        HEARTH_UNROLL
        for (int i = 0; i < kBand; ++i) {
            const __m512i start = _mm512_set1_epi32(ru.neg_offset[r0 + i][j]);
            HEARTH_UNROLL
            for (int q = 0; q < G; ++q) dot[i][q] = start;
        }
        HEARTH_UNROLL
        for (int g = 0; g < 8; ++g) {
            __m512i x[G];
            HEARTH_UNROLL
            for (int q = 0; q < G; ++q) x[q] = _mm512_load_si512(xs[q]->q[8 * j + g]);
            HEARTH_UNROLL
            for (int i = 0; i < kBand; ++i) {
                const __m512i wq = _mm512_set1_epi32(
                    static_cast<int>(avx2::load_u32(urows[r0 + i] + blk + 4 * g)));
                HEARTH_UNROLL
                for (int q = 0; q < G; ++q) dot[i][q] = _mm512_dpbusd_epi32(dot[i][q], x[q], wq);
            }
        }
        HEARTH_UNROLL
        for (int q = 0; q < G; ++q) {
            const __m512 da = _mm512_load_ps(xs[q]->da[j]);
            HEARTH_UNROLL
            for (int i = 0; i < kBand; ++i) {
                const __m512 f =
                    _mm512_mul_ps(_mm512_cvtepi32_ps(dot[i][q]), _mm512_set1_ps(ru.d[r0 + i][j]));
                acc[i][q] = _mm512_fmadd_ps(f, da, acc[i][q]);
            }
        }
    }
    HEARTH_UNROLL
    for (int i = 0; i < kBand; ++i) {
        HEARTH_UNROLL
        for (int q = 0; q < G; ++q) _mm512_store_ps(accs[q][r0 + i], acc[i][q]);
    }
}

// Rows [r0, r0 + nr) against tokens [t0, t0 + nt) (a multiple of 16 from the tile's
// first token), nr ≤ 64, nt ≤ 256.
template <TensorType T>
static void pass(const GemmArgs& a, Scratch& s, int r0, int nr, int t0, int nt) {
    const int groups = (nt + kLanes - 1) / kLanes;
    const int bands = (nr + kBand - 1) / kBand;
    const uint8_t* rows[kPassRows];
    for (int i = 0; i < bands * kBand; ++i)  // rows past the last: the last, lanes unused
        rows[i] = a.w + static_cast<std::size_t>(r0 + (i < nr ? i : nr - 1)) * a.w_stride;
    for (int g = 0; g < groups; ++g)
        for (int i = 0; i < bands * kBand; ++i) _mm512_store_ps(s.acc[g][i], _mm512_setzero_ps());
    const std::size_t nu = units(a.nb);
    const auto* packed = reinterpret_cast<const TokensUnit*>(a.act_packed);
    for (std::size_t u = 0; u < nu; ++u) {
        const auto ui = static_cast<int64_t>(u);
        const uint8_t* urows[kPassRows];
        prepare_rows<T>(rows, nr, a.nb, ui, s.w, urows);
        for (int i = nr; i < bands * kBand; ++i) {
            urows[i] = urows[nr - 1];
            for (int j = 0; j < kUnit; ++j) {
                s.w.neg_offset[i][j] = s.w.neg_offset[nr - 1][j];
                s.w.d[i][j] = s.w.d[nr - 1][j];
            }
        }
        const int nj = a.nb - ui * kUnit < kUnit ? static_cast<int>(a.nb - ui * kUnit) : kUnit;
        for (int g0 = 0; g0 < groups; g0 += 3) {
            const TokensUnit* xs[3];
            float(*accs[3])[kLanes];
            const int ng = groups - g0 < 3 ? groups - g0 : 3;
            for (int q = 0; q < ng; ++q) {
                xs[q] = packed + static_cast<std::size_t>(t0 / kLanes + g0 + q) * nu + u;
                accs[q] = s.acc[g0 + q];
            }
            avx512::with_groups(ng, [&](auto G) {
                for (int band = 0; band < bands; ++band)
                    micro<decltype(G)::value>(urows, s.w, band * kBand, nj, xs, accs);
            });
        }
    }
    // Out: 16 rows × 16 tokens at a time, transposed to the tokens' rows of out.
    for (int g = 0; g < groups; ++g) {
        const int n_t = nt - g * kLanes < kLanes ? nt - g * kLanes : kLanes;
        for (int i0 = 0; i0 < nr; i0 += 16)
            avx512::store_rows_x16(
                s.acc[g] + i0, nr - i0 < 16 ? nr - i0 : 16, n_t,
                a.out + static_cast<std::size_t>(t0 + g * kLanes) * a.out_stride + r0 + i0,
                a.out_stride);
    }
}

// ---- Few tokens: row by row. ----

// 128 · Σ a of each block of token q8 (blocks [0, nb)), into off[b]: what the weights'
// +128 (which makes them vpdpbusd's unsigned operand) adds to a block's sum.
static void activation_offsets(const Q8x32Token& q8, int64_t nb, int32_t* off) {
    const __m256i ones = _mm256_set1_epi8(1);
    for (int64_t b = 0; b < nb; ++b) {
        const __m256i x =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8.qs + b * q8.G * 32));
        off[b] = 128 * avx2::hsum_i32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), ones, x));
    }
}

// The exact sums of four blocks' 8-lane vectors, [S0, S1, S2, S3].
static inline __m128i sums4(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// IQ4_NL, few tokens. Its 18-byte blocks make the products compute- and latency-bound
// where Q8_0's are memory-bound, so: two rows at a time (two independent chains of float
// steps per token, where one row's chain alone waited on each fma), and four blocks'
// sums reduced together, their float products made in one register; the fma chain
// itself is unchanged, block by block, so the bits are those of the per-block kernel.
// (A last odd row runs twice, its copy discarded; the blocks past a multiple of 4 one by
// one.)
template <int N>
static void nl_rows(const GemmArgs& a, int t0, const Q8x32Token* tok, const int32_t* const* offs) {
    constexpr std::size_t kNl = sizeof(quant::BlockIQ4_NL);
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
    const auto x_at = [&](int t, int64_t b) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tok[t].qs + b * 32 * tok[t].G));
    };
    const auto da_at = [&](int t, int64_t b) { return tok[t].ds[b * 2 * tok[t].G]; };
    for (int r = 0; r < a.n_rows; r += 2) {
        const uint8_t* rows[2] = {
            a.w + static_cast<std::size_t>(r) * a.w_stride,
            a.w + static_cast<std::size_t>(r + 1 < a.n_rows ? r + 1 : r) * a.w_stride};
        __m128 acc[2][N];
        HEARTH_UNROLL
        for (int k = 0; k < 2; ++k) {
            HEARTH_UNROLL
            for (int t = 0; t < N; ++t) acc[k][t] = _mm_setzero_ps();
        }
        int64_t b = 0;
        for (; b + 4 <= a.nb; b += 4) {
            HEARTH_UNROLL
            for (int k = 0; k < 2; ++k) {
                const uint8_t* p = rows[k] + static_cast<std::size_t>(b) * kNl;
                avx2::prefetch_ahead(p);
                avx2::prefetch_ahead(p + 64);
                __m256i u[4];
                HEARTH_UNROLL
                for (int j = 0; j < 4; ++j)
                    u[j] = _mm256_xor_si256(avx2::iq4_values(p + j * kNl + 2), flip);
                const __m128 dw = _mm_cvtph_ps(
                    _mm_setr_epi16(static_cast<short>(avx2::load_u16(p)),
                                   static_cast<short>(avx2::load_u16(p + kNl)),
                                   static_cast<short>(avx2::load_u16(p + 2 * kNl)),
                                   static_cast<short>(avx2::load_u16(p + 3 * kNl)), 0, 0, 0, 0));
                HEARTH_UNROLL
                for (int t = 0; t < N; ++t) {
                    const __m256i z = _mm256_setzero_si256();
                    const __m128i s = _mm_sub_epi32(
                        sums4(_mm256_dpbusd_epi32(z, u[0], x_at(t, b)),
                              _mm256_dpbusd_epi32(z, u[1], x_at(t, b + 1)),
                              _mm256_dpbusd_epi32(z, u[2], x_at(t, b + 2)),
                              _mm256_dpbusd_epi32(z, u[3], x_at(t, b + 3))),
                        _mm_loadu_si128(reinterpret_cast<const __m128i*>(offs[t] + b)));
                    const __m128 f = _mm_mul_ps(_mm_cvtepi32_ps(s), dw);
                    __m128 c = acc[k][t];
                    c = _mm_fmadd_ss(f, _mm_set_ss(da_at(t, b)), c);
                    c = _mm_fmadd_ss(_mm_movehdup_ps(f), _mm_set_ss(da_at(t, b + 1)), c);
                    c = _mm_fmadd_ss(_mm_movehl_ps(f, f), _mm_set_ss(da_at(t, b + 2)), c);
                    c = _mm_fmadd_ss(_mm_shuffle_ps(f, f, 3), _mm_set_ss(da_at(t, b + 3)), c);
                    acc[k][t] = c;
                }
            }
        }
        for (; b < a.nb; ++b) {
            HEARTH_UNROLL
            for (int k = 0; k < 2; ++k) {
                const uint8_t* p = rows[k] + static_cast<std::size_t>(b) * kNl;
                const __m256i u = _mm256_xor_si256(avx2::iq4_values(p + 2), flip);
                const __m128 dw = _mm_set_ss(avx2::fp16(avx2::load_u16(p)));
                HEARTH_UNROLL
                for (int t = 0; t < N; ++t) {
                    const int32_t sum =
                        avx2::hsum_i32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), u, x_at(t, b))) -
                        offs[t][b];
                    const __m128 f = _mm_mul_ss(_mm_cvtsi32_ss(_mm_setzero_ps(), sum), dw);
                    acc[k][t] = _mm_fmadd_ss(f, _mm_set_ss(da_at(t, b)), acc[k][t]);
                }
            }
        }
        for (int k = 0; k < 2 && r + k < a.n_rows; ++k) {
            HEARTH_UNROLL
            for (int t = 0; t < N; ++t)
                a.out[static_cast<std::size_t>(t0 + t) * a.out_stride +
                      static_cast<std::size_t>(r + k)] = _mm_cvtss_f32(acc[k][t]);
        }
    }
}

// Tokens [t0, t0 + N) against every row. Each row's chains run in scalar float steps,
// the rows one after another: one weight stream, as the AVX2 decode kernel reads them (8
// rows side by side, their sums transposed for vector float steps, decoded the 1B-shaped
// Q8_0 file ~30 % slower). The activation offsets live on the stack for up to 32768
// columns, else on the heap.
template <TensorType T, int N>
static void tokens_n(const GemmArgs& a, int t0) {
    constexpr std::size_t kFileBytes = avx2::kQ8FileBlockBytes<T>;
    constexpr int64_t kMaxBlocks = 1024;
    int32_t stack[N][kMaxBlocks];
    int32_t* heap = a.nb > kMaxBlocks ? new int32_t[static_cast<std::size_t>(a.nb) * N] : nullptr;
    const int32_t* offs[N];
    Q8x32Token tok[N];
    for (int t = 0; t < N; ++t) {
        int32_t* o =
            heap ? heap + static_cast<std::size_t>(a.nb) * static_cast<std::size_t>(t) : stack[t];
        tok[t] = token_q8(a, t0 + t);
        activation_offsets(tok[t], a.nb, o);
        offs[t] = o;
    }
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
    if constexpr (T == TensorType::IQ4_NL) {
        nl_rows<N>(a, t0, tok, offs);
        delete[] heap;
        return;
    }
    for (int r = 0; r < a.n_rows; ++r) {
        const uint8_t* row = a.w + static_cast<std::size_t>(r) * a.w_stride;
        __m128 acc[N];
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) acc[t] = _mm_setzero_ps();
        for (int64_t b = 0; b < a.nb; ++b) {
            const uint8_t* p = row + static_cast<std::size_t>(b) * kFileBytes;
            if ((b & 1) == 0) avx2::prefetch_ahead(p);  // a line per two blocks
            const __m256i u = _mm256_xor_si256(avx2::q8_block_weights<T>(p), flip);
            const __m128 dw = _mm_set_ss(avx2::fp16(avx2::load_u16(p)));
            HEARTH_UNROLL
            for (int t = 0; t < N; ++t) {
                const __m256i x = _mm256_loadu_si256(
                    reinterpret_cast<const __m256i*>(tok[t].qs + b * 32 * tok[t].G));
                const int32_t sum =
                    avx2::hsum_i32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), u, x)) - offs[t][b];
                const __m128 f = _mm_mul_ss(_mm_cvtsi32_ss(_mm_setzero_ps(), sum), dw);
                acc[t] = _mm_fmadd_ss(f, _mm_set_ss(tok[t].ds[b * 2 * tok[t].G]), acc[t]);
            }
        }
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t)
            a.out[static_cast<std::size_t>(t0 + t) * a.out_stride + static_cast<std::size_t>(r)] =
                _mm_cvtss_f32(acc[t]);
    }
    delete[] heap;
}

// Tiles of 16 tokens or more with the activations packed by matmul (TypeKernels::pack_act);
// fewer tokens, a tile's last few, or a caller that did not pack: the few-token kernel,
// same bits.
template <TensorType T>
static void gemm_q8_512(const GemmArgs& a) {
    int done = 0;
    if (a.act_packed) {
        Scratch& s = avx512::thread_scratch<Scratch>();
        done = avx512::run_tile_passes(a.n_rows, a.n_tokens, [&](int r0, int nr, int t0, int nt) {
            pass<T>(a, s, r0, nr, t0, nt);
        });
    }
    // Up to 4 tokens per pass over the weights.
    avx2::token_runs<4>(done, a.n_tokens,
                        [&](auto n, int t0) { tokens_n<T, decltype(n)::value>(a, t0); });
}

}  // namespace

const ActPacker kAvx512PackQ8_0{packed_bytes, pack_group, kLanes};

void gemm_avx512_q8_0(const GemmArgs& a) {
    gemm_q8_512<TensorType::Q8_0>(a);
}
void gemm_avx512_iq4_nl(const GemmArgs& a) {
    gemm_q8_512<TensorType::IQ4_NL>(a);
}

}  // namespace hearth::kernels::cpu
