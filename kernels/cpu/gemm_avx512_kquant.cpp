// AVX-512 kernels for the K-quants (Q4_K, Q5_K, Q6_K, Q2_K, Q3_K, IQ4_XS) against Q8xK
// activations, in the K-quant order (kquant_few.h). Tiles of 16 tokens or more run here; fewer
// tokens (and a tile's last few) run the few-token kernel of kquant_few.h, which gives the same
// bits.
//
// Tokens lie in the lanes of a register: 16 tokens × 4 activation bytes per 512-bit
// register, and one vpdpbusd adds a weight row's 4 bytes (broadcast, unsigned quants)
// times each token's 4 bytes into that token's lane. The product's tokens are transposed
// into that lane layout once (ActPacker: per 16 tokens and super-block, with their
// per-sub-block activation sums and scales alongside); a super-block at a time, the
// tile's rows are unpacked to quant bytes, their sub-block scales and mins widened. A
// micro-kernel then runs 4 rows against 3 groups of 16 tokens: per sub-block the vpdpbusd
// sums are weighted with the row's scale (vpmulld) into S1, the mins (Q4_K/Q5_K) or the
// −32 offset (Q6_K) come from the activation sums (vpdpwssd), and the float steps update
// one accumulator per (row, token) in a tile-sized buffer. Compared with the AVX2 layout (a token's
// 8 lanes per register), the float work per super-block is one register per 16 tokens instead of
// one per token.
//
// vpdpbusd takes unsigned weights and sums in int32 (no int16 saturation), so IQ4_XS's
// signed grid values are unpacked with 128 added and, as Q6_K's 32 and Q3_K's 4, that
// offset comes off S1 through the activation sums (kOffsetShift).
//
// Built with AVX-512 F/BW/VL/VNNI enabled; called only when cpu_has_avx512(). Internal
// linkage only, and no std:: templates instantiated (see avx2_util.h).
#include <type_traits>

#include "cpu/avx512_util.h"
#include "cpu/kquant_few.h"

namespace hearth::kernels::cpu {

namespace {

using quant::TensorType;

using avx512::kLanes;
constexpr int kBand = 4;  // rows per micro-kernel

// The weights' offset here, as a power of two: KTraits::shift, and IQ4_XS's +128.
template <TensorType T>
inline constexpr int kOffsetShift = T == TensorType::IQ4_XS ? 7 : kK<T>.shift;
constexpr int kPassRows = avx512::kTileRows;

// The pass's rows, one super-block unpacked: quant bytes in element order, sub-block
// scales (Q4_K/Q5_K: 8, Q6_K: 16, signed) as int32, the weights of the activation sums'
// term as int16 pairs (Q4_K/Q5_K: the mins m_2p, m_2p+1, p < 4; Q6_K: the scales sc_2p,
// sc_2p+1, p < 8), d and dmin. Rows past the last real one of a band are zero.
struct alignas(64) RowsBlock {
    uint8_t q[kPassRows][256];
    int32_t scale[kPassRows][16];
    int32_t pairs[kPassRows][8];
    float d[kPassRows];
    float dmin[kPassRows];
};

// The pass's tokens, one super-block, per group of 16: q[k][lane t] = token t's
// activation bytes 4k..4k+3; pairs[p][t] = the sums of token t's activations over
// sub-blocks 2p and 2p+1 as two int16 (Q4_K/Q5_K: 32 elements each, p < 4; Q6_K: 16,
// p < 8; |sum| ≤ 32 · 127); da[t]: their scale. Tokens past the last real one are zero.
struct alignas(64) TokensBlock {
    int8_t q[64][kLanes * 4];
    int32_t pairs[8][kLanes];
    float da[kLanes];
};

struct alignas(64) Scratch {
    RowsBlock w;
    float acc[avx512::kTileGroups][kPassRows][kLanes];  // acc[g][r][t]: row r, token 16g + t
};                                                      // ~150 KB, one per thread

// Unpacks super-block b of rows [0, n) of the pass (row i at w + i·w_stride) into rb;
// rows [n, n rounded up to the band) are zeroed.
template <TensorType T>
static void unpack_rows(const uint8_t* w, std::size_t w_stride, int n, int64_t b, RowsBlock& rb) {
    for (int i = 0; i < n; ++i) {
        const uint8_t* p = w + static_cast<std::size_t>(i) * w_stride +
                           static_cast<std::size_t>(b) * kKBlockBytes<T>;
        unpack_quant_bytes<T>(p, rb.q[i]);
        if constexpr (kLowK<T>) {
            if constexpr (T == TensorType::IQ4_XS)  // signed grid values + 128: 1..241
                for (int k = 0; k < 256; k += 64)
                    _mm512_store_si512(rb.q[i] + k,
                                       _mm512_xor_si512(_mm512_load_si512(rb.q[i] + k),
                                                        _mm512_set1_epi8(static_cast<char>(0x80))));
            __m256i sc16, aux16;
            lowk_scales<T>(p, sc16, aux16);
            _mm512_store_si512(rb.scale[i], _mm512_cvtepi16_epi32(sc16));
            // The activation sums' weights: Q2_K's mins, Q3_K's scales, and IQ4_XS's scales
            // (its +128 offset).
            _mm256_store_si256(reinterpret_cast<__m256i*>(rb.pairs[i]),
                               T == TensorType::IQ4_XS ? sc16 : aux16);
            rb.d[i] = avx2::fp16(avx2::load_u16(p + kK<T>.d));
            rb.dmin[i] = kK<T>.mins ? avx2::fp16(avx2::load_u16(p + kK<T>.dmin)) : 0.0f;
        } else if constexpr (T == TensorType::Q6_K) {
            const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 192));
            _mm512_store_si512(rb.scale[i], _mm512_cvtepi8_epi32(sc8));
            _mm256_store_si256(reinterpret_cast<__m256i*>(rb.pairs[i]), _mm256_cvtepi8_epi16(sc8));
            rb.d[i] = avx2::fp16(avx2::load_u16(p + 208));
            rb.dmin[i] = 0.0f;
        } else {
            // Bytes [sc0..7, m0..7]: scales to int32, mins to int16 pairs.
            const __m128i sm = k4_scales_mins(p + 4);
            _mm512_store_si512(rb.scale[i], _mm512_cvtepu8_epi32(sm));
            _mm_store_si128(reinterpret_cast<__m128i*>(rb.pairs[i]),
                            _mm_cvtepu8_epi16(_mm_unpackhi_epi64(sm, sm)));
            rb.d[i] = avx2::fp16(avx2::load_u16(p));
            rb.dmin[i] = avx2::fp16(avx2::load_u16(p + 2));
        }
    }
    const int padded = (n + kBand - 1) / kBand * kBand;
    for (int i = n; i < padded; ++i) {
        for (int k = 0; k < 256; k += 64) _mm512_store_si512(rb.q[i] + k, _mm512_setzero_si512());
        _mm512_store_si512(rb.scale[i], _mm512_setzero_si512());
        _mm256_store_si256(reinterpret_cast<__m256i*>(rb.pairs[i]), _mm256_setzero_si256());
        rb.d[i] = 0.0f;
        rb.dmin[i] = 0.0f;
    }
}

// Super-block b of tokens [t0, t0 + n), n ≤ 16, into tb (see TokensBlock).
template <TensorType T>
static void pack_tokens(const GemmArgs& a, int t0, int n, int64_t b, TokensBlock& tb) {
    TokenAct act[kLanes];
    for (int t = 0; t < n; ++t) act[t] = token_act(a, t0 + t);
    __m512i r[16];
    HEARTH_UNROLL
    for (int c = 0; c < 4; ++c) {  // 64 activation bytes (16 groups of 4) per token
        for (int t = 0; t < kLanes; ++t)
            r[t] =
                t < n ? _mm512_loadu_si512(act[t].qa + 256 * b + 64 * c) : _mm512_setzero_si512();
        avx512::transpose16(r);
        HEARTH_UNROLL
        for (int k = 0; k < 16; ++k) _mm512_store_si512(tb.q[16 * c + k], r[k]);
    }
    for (int t = 0; t < kLanes; ++t) {
        if (t >= n) {
            r[t] = _mm512_setzero_si512();
            continue;
        }
        const __m256i bs =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act[t].bsums + 16 * b));
        if constexpr (kK<T>.sub16) {  // 16-element sub-blocks: the bsums as they are
            r[t] = _mm512_castsi256_si512(bs);
        } else {  // 32-element sub-blocks: pairs of the 16-element sums, packed to int16
            const __m256i s32 = _mm256_madd_epi16(bs, _mm256_set1_epi16(1));
            const __m128i s16 =
                _mm_packs_epi32(_mm256_castsi256_si128(s32), _mm256_extracti128_si256(s32, 1));
            r[t] = _mm512_castsi128_si512(s16);
        }
        r[t] = _mm512_maskz_mov_epi32(kK<T>.sub16 ? 0x00ff : 0x000f, r[t]);
    }
    avx512::transpose16(r);
    HEARTH_UNROLL
    for (int p = 0; p < 8; ++p) _mm512_store_si512(tb.pairs[p], r[p]);
    for (int t = 0; t < kLanes; ++t) tb.da[t] = t < n ? act[t].da[b] : 0.0f;
}

// Rows [r0, r0 + 4) of rb against G ≤ 3 groups of 16 tokens (xs[q], accumulators
// accs[q]): one super-block's step of the order for each (row, token), into
// accs[q][r][t].
//
// Per 4 activation bytes: G token registers, 4 weight broadcasts, 4G vpdpbusd. The same
// loop on L1-resident data (hearth-kernel-bench --bandwidth: int8_tile_*) ran at ~85 % of
// the vpdpbusd peak with one token register against 8 rows and ~100 % with 3 against 4
// on Zen 5; the products gained 5-10 % (Q4_K/Q5_K). 4 × 3 keeps 12 + 12 accumulators and
// the operands in the 32 vector registers. Per sub-block the sums are weighted with the row's scale
// (vpmulld); the activation-sum term (mins, or Q6_K's −32 offset) is one vpdpwssd per two
// sub-blocks, once per super-block.
template <TensorType T, int G>
static inline void micro(const RowsBlock& rb, int r0, const TokensBlock* const* xs,
                         float (*const* accs)[kLanes]) {
    constexpr int kSubs = kK<T>.sub16 ? 16 : 8;
    constexpr int kGroupsPerSub = 64 / kSubs;  // 4-byte groups per sub-block
    constexpr int R = kBand;
    __m512i s1[R][G];
    HEARTH_UNROLL
    for (int i = 0; i < R; ++i) {
        HEARTH_UNROLL
        for (int q = 0; q < G; ++q) s1[i][q] = _mm512_setzero_si512();
    }
    for (int j = 0; j < kSubs; ++j) {
        __m512i dot[R][G];
        HEARTH_UNROLL
        for (int i = 0; i < R; ++i) {
            HEARTH_UNROLL
            for (int q = 0; q < G; ++q) dot[i][q] = _mm512_setzero_si512();
        }
        HEARTH_UNROLL
        for (int g = 0; g < kGroupsPerSub; ++g) {
            const int k = j * kGroupsPerSub + g;
            __m512i x[G];
            HEARTH_UNROLL
            for (int q = 0; q < G; ++q) x[q] = _mm512_load_si512(xs[q]->q[k]);
            HEARTH_UNROLL
            for (int i = 0; i < R; ++i) {
                const __m512i wq =
                    _mm512_set1_epi32(static_cast<int>(avx2::load_u32(rb.q[r0 + i] + 4 * k)));
                HEARTH_UNROLL
                for (int q = 0; q < G; ++q) dot[i][q] = _mm512_dpbusd_epi32(dot[i][q], wq, x[q]);
            }
        }
        HEARTH_UNROLL
        for (int i = 0; i < R; ++i) {
            const __m512i sc = _mm512_set1_epi32(rb.scale[r0 + i][j]);
            HEARTH_UNROLL
            for (int q = 0; q < G; ++q)
                s1[i][q] = _mm512_add_epi32(s1[i][q], _mm512_mullo_epi32(dot[i][q], sc));
        }
    }
    constexpr int kPairs = kSubs / 2;
    HEARTH_UNROLL
    for (int q = 0; q < G; ++q) {
        const __m512 da = _mm512_load_ps(xs[q]->da);
        HEARTH_UNROLL
        for (int i = 0; i < R; ++i) {
            // Q4_K/Q5_K/Q2_K: S2 = Σ_j m_j·Σa; the others: Σ_j sc_j·Σa, 2^kOffsetShift
            // times which comes off S1.
            __m512i s2 = _mm512_setzero_si512();
            HEARTH_UNROLL
            for (int p = 0; p < kPairs; ++p)
                s2 = _mm512_dpwssd_epi32(s2, _mm512_load_si512(xs[q]->pairs[p]),
                                         _mm512_set1_epi32(rb.pairs[r0 + i][p]));
            float* acc = accs[q][r0 + i];
            __m512 f;
            if constexpr (!kK<T>.mins) {
                f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(
                                      s1[i][q], _mm512_slli_epi32(s2, kOffsetShift<T>))),
                                  _mm512_set1_ps(rb.d[r0 + i]));
            } else {
                f = _mm512_mul_ps(_mm512_cvtepi32_ps(s1[i][q]), _mm512_set1_ps(rb.d[r0 + i]));
                f = _mm512_fnmadd_ps(_mm512_set1_ps(rb.dmin[r0 + i]), _mm512_cvtepi32_ps(s2), f);
            }
            _mm512_store_ps(acc, _mm512_fmadd_ps(f, da, _mm512_load_ps(acc)));
        }
    }
}

// Token group g of a's activations (all nb blocks) into dst, as ActPacker::pack.
template <TensorType T>
static void pack_group(const GemmArgs& a, int g, uint8_t* dst) {
    auto* tb = reinterpret_cast<TokensBlock*>(dst);
    const int n = a.n_tokens - g * kLanes < kLanes ? a.n_tokens - g * kLanes : kLanes;
    for (int64_t b = 0; b < a.nb; ++b) pack_tokens<T>(a, g * kLanes, n, b, tb[b]);
}

static std::size_t packed_bytes(int64_t nb, int n_tokens) {
    const auto groups = static_cast<std::size_t>((n_tokens + kLanes - 1) / kLanes);
    return groups * static_cast<std::size_t>(nb) * sizeof(TokensBlock);
}

// Rows [r0, r0 + nr) against tokens [t0, t0 + nt), nr ≤ 64, nt ≤ 256.
template <TensorType T>
static void pass(const GemmArgs& a, Scratch& s, int r0, int nr, int t0, int nt) {
    const int groups = (nt + kLanes - 1) / kLanes;
    const int bands = (nr + kBand - 1) / kBand;
    for (int g = 0; g < groups; ++g)
        for (int i = 0; i < bands * kBand; ++i) _mm512_store_ps(s.acc[g][i], _mm512_setzero_ps());
    const uint8_t* w = a.w + static_cast<std::size_t>(r0) * a.w_stride;
    for (int64_t b = 0; b < a.nb; ++b) {
        unpack_rows<T>(w, a.w_stride, nr, b, s.w);
        // Up to 3 token groups at a time (their activations stay in L1 while every band
        // of the tile runs against them), packed once for the product (t0: a multiple
        // of 16).
        for (int g0 = 0; g0 < groups; g0 += 3) {
            const TokensBlock* xs[3];
            float(*accs[3])[kLanes];
            const int ng = groups - g0 < 3 ? groups - g0 : 3;
            for (int q = 0; q < ng; ++q) {
                xs[q] = reinterpret_cast<const TokensBlock*>(a.act_packed) +
                        static_cast<std::size_t>(t0 / kLanes + g0 + q) *
                            static_cast<std::size_t>(a.nb) +
                        static_cast<std::size_t>(b);
                accs[q] = s.acc[g0 + q];
            }
            avx512::with_groups(ng, [&](auto G) {
                for (int band = 0; band < bands; ++band) {
                    if (g0 == 0 && b + 1 < a.nb)
                        prefetch_block<T>(w, a.w_stride, band * kBand,
                                          nr - band * kBand < kBand ? nr - band * kBand : kBand,
                                          b + 1);
                    micro<T, decltype(G)::value>(s.w, band * kBand, xs, accs);
                }
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

// Tiles of 16 tokens or more with the activations packed by matmul (TypeKernels::pack_act);
// fewer tokens, a tile's last few, or a caller that did not pack: the few-token kernel,
// same bits.
template <TensorType T>
static void gemm_k512(const GemmArgs& a) {
    int done = 0;
    if (a.act_packed) {
        Scratch& s = avx512::thread_scratch<Scratch>();
        done = avx512::run_tile_passes(a.n_rows, a.n_tokens, [&](int r0, int nr, int t0, int nt) {
            pass<T>(a, s, r0, nr, t0, nt);
        });
    }
    if (done == a.n_tokens) return;
    GemmArgs tail = a;
    tail.act = a.act + static_cast<std::size_t>(done) * a.act_stride;
    tail.out = a.out + static_cast<std::size_t>(done) * a.out_stride;
    tail.act_packed = nullptr;
    tail.n_tokens = a.n_tokens - done;
    kquant_few<T>(tail);
}

}  // namespace

const ActPacker kAvx512PackQ4_K{packed_bytes, pack_group<TensorType::Q4_K>, kLanes};
const ActPacker kAvx512PackQ5_K{packed_bytes, pack_group<TensorType::Q5_K>, kLanes};
const ActPacker kAvx512PackQ6_K{packed_bytes, pack_group<TensorType::Q6_K>, kLanes};
const ActPacker kAvx512PackQ2_K{packed_bytes, pack_group<TensorType::Q2_K>, kLanes};
const ActPacker kAvx512PackQ3_K{packed_bytes, pack_group<TensorType::Q3_K>, kLanes};
const ActPacker kAvx512PackIQ4_XS{packed_bytes, pack_group<TensorType::IQ4_XS>, kLanes};

void gemm_avx512_q4_k(const GemmArgs& a) {
    gemm_k512<TensorType::Q4_K>(a);
}
void gemm_avx512_q5_k(const GemmArgs& a) {
    gemm_k512<TensorType::Q5_K>(a);
}
void gemm_avx512_q6_k(const GemmArgs& a) {
    gemm_k512<TensorType::Q6_K>(a);
}

void gemm_avx512_q2_k(const GemmArgs& a) {
    gemm_k512<TensorType::Q2_K>(a);
}
void gemm_avx512_q3_k(const GemmArgs& a) {
    gemm_k512<TensorType::Q3_K>(a);
}
void gemm_avx512_iq4_xs(const GemmArgs& a) {
    gemm_k512<TensorType::IQ4_XS>(a);
}

}  // namespace hearth::kernels::cpu
