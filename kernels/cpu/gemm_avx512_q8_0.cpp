// AVX-512 kernels for Q8_0 and IQ4_NL weights against Q8x32 activations (Q8_0 sums), in
// a float order of their own, the AVX2 level's too (gemm_avx2_q8_0.cpp; the scalar
// fallback keeps llama.cpp's):
//
//   for row r and token t, block by block (b = 0, 1, ..):
//     S = Σ_{i<32} w_i·a_i   (int32, exact; IQ4_NL: w_i = kIq4nlValues[index_i])
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
//     off) and the float steps in scalar registers. IQ4_NL's rows are read repacked 8 at
//     a time (weight_pack.h): the tiles look a pass's rows up once into Q8_0 blocks, and
//     decode runs 8 rows side by side in the lanes (nl_x8_tokens).
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
static void prepare_rows(const uint8_t* const* rows, const int* lanes, int n, int64_t nb, int64_t u,
                         RowsUnit& ru, const uint8_t** urows) {
    const __m256i ones8 = _mm256_set1_epi8(1);
    const __m256i ones16 = _mm256_set1_epi16(1);
    for (int i = 0; i < n; ++i) {
        const uint8_t* unit;
        if constexpr (T == TensorType::IQ4_NL) {
            for (int j = 0; j < kUnit && u * kUnit + j < nb; ++j) {
                const int64_t b = u * kUnit + j;
                uint8_t* q = ru.conv[i] + static_cast<std::size_t>(j) * kBlockBytes;
                const uint16_t d = avx2::iq4_x8_scale(rows[i], lanes[i], b);
                std::memcpy(q, &d, 2);
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 2),
                                    avx2::iq4_x8_values(rows[i], lanes[i], b));
            }
            unit = ru.conv[i];
        } else {
            unit = rows[i] + static_cast<std::size_t>(u * kUnit) * kBlockBytes;
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
        for (int i = 0; i < bands * kBand; ++i) _mm512_store_ps(s.acc[g][i], _mm512_setzero_ps());
    const std::size_t nu = units(a.nb);
    const auto* packed = reinterpret_cast<const TokensUnit*>(a.act_packed);
    for (std::size_t u = 0; u < nu; ++u) {
        const auto ui = static_cast<int64_t>(u);
        const uint8_t* urows[kPassRows];
        prepare_rows<T>(rows, lanes, nr, a.nb, ui, s.w, urows);
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

// IQ4_NL, few tokens, on its rows repacked 8 at a time (weight_pack.h), as the AVX2
// kernel (gemm_avx2_q8_0.cpp, nl_x8_tokens): the 8 rows of a group in the lanes, the
// look-up once per block for the N tokens. Here the grid is looked up as w + 128, which
// makes the weights vpdpbusd's unsigned operand, and each sum starts at −128 · Σ a
// (offs), so it is the exact S; the float steps are the per-block order's, lane by lane.
template <int N>
static void nl_x8_tokens(const GemmArgs& a, int t0, const Q8x32Token* tok,
                         const int32_t* const* offs) {
    constexpr std::size_t kX8 = kQ4_0x8BlockBytes;
    const __m256i grid =
        _mm256_xor_si256(avx2::iq4_grid(), _mm256_set1_epi8(static_cast<char>(0x80)));
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
            __m256i lo_sum[N], hi_sum[N];  // two chains per token
            HEARTH_UNROLL
            for (int t = 0; t < N; ++t) {
                lo_sum[t] = _mm256_set1_epi32(-offs[t][b]);
                hi_sum[t] = _mm256_setzero_si256();
            }
            HEARTH_UNROLL
            for (int c = 0; c < 4; ++c) {
                const __m256i v =
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16 + 32 * c));
                const __m256i lo = _mm256_shuffle_epi8(grid, _mm256_and_si256(v, m4));
                const __m256i hi =
                    _mm256_shuffle_epi8(grid, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
                HEARTH_UNROLL
                for (int t = 0; t < N; ++t) {
                    lo_sum[t] = _mm256_dpbusd_epi32(lo_sum[t], lo, act4(t, b, c));
                    hi_sum[t] = _mm256_dpbusd_epi32(hi_sum[t], hi, act4(t, b, 4 + c));
                }
            }
            const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
            HEARTH_UNROLL
            for (int t = 0; t < N; ++t) {
                const __m256 f =
                    _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(lo_sum[t], hi_sum[t])), dw);
                acc[t] = _mm256_fmadd_ps(f, _mm256_set1_ps(tok[t].ds[b * 2 * tok[t].G]), acc[t]);
            }
        }
        const int r = g * kQ4_0x8Rows;
        const int n = a.n_rows - r < kQ4_0x8Rows ? a.n_rows - r : kQ4_0x8Rows;
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t)
            _mm256_mask_storeu_ps(a.out + static_cast<std::size_t>(t0 + t) * a.out_stride + r,
                                  static_cast<__mmask8>((1u << n) - 1u), acc[t]);
    }
}

// Tokens [t0, t0 + N) against every row. Each row's chains run in scalar float steps,
// the rows one after another: one weight stream, as the AVX2 decode kernel reads them (8
// rows side by side, their sums transposed for vector float steps, decoded the 1B-shaped
// Q8_0 file ~30 % slower). The activation offsets live on the stack for up to 32768
// columns, else on the heap.
template <TensorType T, int N>
static void tokens_n(const GemmArgs& a, int t0) {
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
        nl_x8_tokens<N>(a, t0, tok, offs);
        delete[] heap;
        return;
    }
    for (int r = 0; r < a.n_rows; ++r) {
        const uint8_t* row = a.w + static_cast<std::size_t>(r) * a.w_stride;
        __m128 acc[N];
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) acc[t] = _mm_setzero_ps();
        for (int64_t b = 0; b < a.nb; ++b) {
            const uint8_t* p = row + static_cast<std::size_t>(b) * kBlockBytes;
            if ((b & 1) == 0) avx2::prefetch_ahead(p);  // a line per two blocks
            const __m256i u =
                _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2)), flip);
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
