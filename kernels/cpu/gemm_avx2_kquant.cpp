// AVX2 kernels for the K-quants (Q4_K, Q5_K, Q6_K, Q2_K, Q3_K, IQ4_XS) against Q8xK
// activations, in the K-quant order (kquant_few.h), the same bits as the AVX-512 level. Tiles of 8
// tokens or more run here; fewer tokens (decode, a tile's last few) run the few-token kernel of
// kquant_few.h.
//
// Tokens lie in the lanes of a register: 8 tokens × 4 activation bytes per 256-bit
// register (ActPacker: transposed once per product, with the per-sub-block activation
// sums and scales alongside). A super-block at a time, a pass's rows are unpacked to
// quant bytes (unsigned) and their scales widened. Per 4 activation bytes, maddubs
// multiplies a row's 4 quant bytes (broadcast) with each token's 4 bytes into two int16
// pair sums per token; those add up in int16 for as many groups as cannot overflow
// (Q4_K: a whole 32-element sub-block, Q5_K: half, Q6_K: 8 elements), and one madd with
// the sub-block's scale widens them into S1. The float steps then run for 8 tokens at
// once. IQ4_XS's signed grid values multiply as |w| · (a with w's sign), one maddubs at a
// time (a pair sum reaches 32258). Against the earlier row-major kernel (a token's 32 bytes per
// register, a madd with the scales after every maddubs and a float epilogue per token and
// super-block) that is half the multiplies for Q4_K and a vector float epilogue.
//
// maddubs saturates int16 pair sums: with activations in [−127, 127] (act_quant.h) a pair
// is at most 2 · 63 · 127 = 16002 (Q6_K), 7874 (Q5_K), 3810 (Q4_K); KTraits::flush
// (kquant_avx2.h) keeps every int16 partial within 32767.
//
// Built with -mavx2 -mfma -mf16c; internal linkage only (see avx2_util.h).
#include <type_traits>

#include "cpu/avx2_lanes.h"
#include "cpu/kquant_few.h"

namespace hearth::kernels::cpu {

namespace {

using quant::TensorType;

constexpr int kLanes = 8;  // tokens per register
constexpr int kPassRows = avx2::kTileRows;
constexpr int kPassGroups = avx2::kTileTokens / kLanes;
// The micro-kernel: 2 rows × 2 token groups, 4 loads (2 activation registers, 2 row
// broadcasts) per 4 maddubs. 4 rows × 1 group (5 loads) ran the 1B-shaped products as
// fast on Zen 5 (hearth-kernel-bench, alternating); 2 × 2 suits cores with 2 load ports.
constexpr int kBand = 2;    // rows per micro-kernel
constexpr int kGroups = 2;  // token groups per micro-kernel

// The pass's rows, one super-block unpacked: quant bytes in element order; per sub-block
// the scale as an int16 pair (sc, sc) (Q4_K/Q5_K: 8, unsigned; the 16-element ones: 16);
// the weights of the activation sums' term as int16 pairs (Q4_K/Q5_K: the mins m_2p,
// m_2p+1, p < 4; Q2_K its mins, Q6_K/Q3_K the scales, p < 8), d and dmin. Rows past the
// last real one of a band are zero.
struct alignas(32) RowsBlock {
    uint8_t q[kPassRows][256];
    int32_t scale[kPassRows][16];
    int32_t pairs[kPassRows][8];
    float d[kPassRows];
    float dmin[kPassRows];
};

// Tokens of one group of 8, one super-block: q[k][4t..4t+3] = token t's activation bytes
// 4k..4k+3; pairs[p][t] = the sums of token t's activations over sub-blocks 2p and 2p+1
// as two int16 (Q4_K/Q5_K: 32 elements each, p < 4; Q6_K: 16, p < 8); da[t]: their
// scale. Tokens past the last real one are zero.
struct alignas(32) TokensBlock {
    int8_t q[64][kLanes * 4];
    int32_t pairs[8][kLanes];
    float da[kLanes];
};

struct alignas(32) Scratch {
    RowsBlock w;
    float acc[kPassGroups][kPassRows][kLanes];  // acc[g][r][t]: row r, token 8g + t
};                                              // ~87 KB, one per thread

// Unpacks super-block b of rows [0, n) of the pass (row i at w + i·w_stride) into rb;
// rows [n, n rounded up to the band) are zeroed.
template <TensorType T>
static void unpack_rows(const uint8_t* w, std::size_t w_stride, int n, int64_t b, RowsBlock& rb) {
    const auto store = [](void* dst, __m256i v) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(dst), v);
    };
    const auto store128 = [](void* dst, __m128i v) {
        _mm_store_si128(reinterpret_cast<__m128i*>(dst), v);
    };
    for (int i = 0; i < n; ++i) {
        const uint8_t* p = w + static_cast<std::size_t>(i) * w_stride +
                           static_cast<std::size_t>(b) * kKBlockBytes<T>;
        unpack_quant_bytes<T>(p, rb.q[i]);
        if constexpr (kLowK<T>) {
            __m256i sc16, aux16;
            lowk_scales<T>(p, sc16, aux16);
            const __m128i s_lo = _mm256_castsi256_si128(sc16);       // sc0..7
            const __m128i s_hi = _mm256_extracti128_si256(sc16, 1);  // sc8..15
            store128(rb.scale[i], _mm_unpacklo_epi16(s_lo, s_lo));
            store128(rb.scale[i] + 4, _mm_unpackhi_epi16(s_lo, s_lo));
            store128(rb.scale[i] + 8, _mm_unpacklo_epi16(s_hi, s_hi));
            store128(rb.scale[i] + 12, _mm_unpackhi_epi16(s_hi, s_hi));
            store(rb.pairs[i], aux16);
            rb.d[i] = avx2::fp16(avx2::load_u16(p + kK<T>.d));
            rb.dmin[i] = kK<T>.mins ? avx2::fp16(avx2::load_u16(p + kK<T>.dmin)) : 0.0f;
        } else if constexpr (T == TensorType::Q6_K) {
            const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 192));
            const __m128i s_lo = _mm_cvtepi8_epi16(sc8);                     // sc0..7
            const __m128i s_hi = _mm_cvtepi8_epi16(_mm_srli_si128(sc8, 8));  // sc8..15
            store128(rb.scale[i], _mm_unpacklo_epi16(s_lo, s_lo));
            store128(rb.scale[i] + 4, _mm_unpackhi_epi16(s_lo, s_lo));
            store128(rb.scale[i] + 8, _mm_unpacklo_epi16(s_hi, s_hi));
            store128(rb.scale[i] + 12, _mm_unpackhi_epi16(s_hi, s_hi));
            store(rb.pairs[i], _mm256_cvtepi8_epi16(sc8));
            rb.d[i] = avx2::fp16(avx2::load_u16(p + 208));
            rb.dmin[i] = 0.0f;
        } else {
            // Bytes [sc0..7, m0..7]: scales to (sc, sc) pairs, mins to int16 pairs.
            const __m128i sm = k4_scales_mins(p + 4);
            const __m128i sc = _mm_cvtepu8_epi16(sm);
            store128(rb.scale[i], _mm_unpacklo_epi16(sc, sc));
            store128(rb.scale[i] + 4, _mm_unpackhi_epi16(sc, sc));
            store128(rb.pairs[i], _mm_cvtepu8_epi16(_mm_unpackhi_epi64(sm, sm)));
            rb.d[i] = avx2::fp16(avx2::load_u16(p));
            rb.dmin[i] = avx2::fp16(avx2::load_u16(p + 2));
        }
    }
    const int padded = (n + kBand - 1) / kBand * kBand;
    for (int i = n; i < padded; ++i) {
        for (int k = 0; k < 256; k += 32) store(rb.q[i] + k, _mm256_setzero_si256());
        store(rb.scale[i], _mm256_setzero_si256());
        store(rb.scale[i] + 8, _mm256_setzero_si256());
        store(rb.pairs[i], _mm256_setzero_si256());
        rb.d[i] = 0.0f;
        rb.dmin[i] = 0.0f;
    }
}

// Super-block b of tokens [t0, t0 + n), n ≤ 8, into tb (see TokensBlock).
template <TensorType T>
static void pack_tokens(const GemmArgs& a, int t0, int n, int64_t b, TokensBlock& tb) {
    TokenAct act[kLanes];
    for (int t = 0; t < n; ++t) act[t] = token_act(a, t0 + t);
    __m256i r[kLanes];
    HEARTH_UNROLL
    for (int c = 0; c < 8; ++c) {  // 32 activation bytes (8 groups of 4) per token
        for (int t = 0; t < kLanes; ++t)
            r[t] = t < n ? _mm256_loadu_si256(
                               reinterpret_cast<const __m256i*>(act[t].qa + 256 * b + 32 * c))
                         : _mm256_setzero_si256();
        avx2::transpose8(r);
        HEARTH_UNROLL
        for (int k = 0; k < 8; ++k)
            _mm256_store_si256(reinterpret_cast<__m256i*>(tb.q[8 * c + k]), r[k]);
    }
    for (int t = 0; t < kLanes; ++t) {
        if (t >= n) {
            r[t] = _mm256_setzero_si256();
            continue;
        }
        const __m256i bs =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act[t].bsums + 16 * b));
        if constexpr (kK<T>.sub16) {  // 16-element sub-blocks: the bsums as they are
            r[t] = bs;
        } else {  // 32-element sub-blocks: pairs of the 16-element sums, packed to int16
            const __m256i s32 = _mm256_madd_epi16(bs, _mm256_set1_epi16(1));
            r[t] = _mm256_castsi128_si256(
                _mm_packs_epi32(_mm256_castsi256_si128(s32), _mm256_extracti128_si256(s32, 1)));
            r[t] = _mm256_blend_epi32(r[t], _mm256_setzero_si256(), 0xf0);
        }
    }
    avx2::transpose8(r);
    HEARTH_UNROLL
    for (int p = 0; p < 8; ++p) _mm256_store_si256(reinterpret_cast<__m256i*>(tb.pairs[p]), r[p]);
    for (int t = 0; t < kLanes; ++t) tb.da[t] = t < n ? act[t].da[b] : 0.0f;
}

// Rows [r0, r0 + R) of rb against G groups of 8 tokens (xs[q], accumulators accs[q]):
// one super-block's step of the order for each (row, token), into accs[q][r][t].
template <TensorType T, int R, int G>
static inline void micro(const RowsBlock& rb, int r0, const TokensBlock* const* xs,
                         float (*const* accs)[kLanes]) {
    constexpr int kSubs = kK<T>.sub16 ? 16 : 8;
    constexpr int kGroupsPerSub = 64 / kSubs;  // 4-byte groups per sub-block
    // 4-byte groups whose maddubs pair sums add up in int16 without overflow (see top).
    constexpr int kFlush = kK<T>.flush;
    __m256i s1[R][G];
    HEARTH_UNROLL
    for (int i = 0; i < R; ++i) {
        HEARTH_UNROLL
        for (int q = 0; q < G; ++q) s1[i][q] = _mm256_setzero_si256();
    }
    for (int j = 0; j < kSubs; ++j) {
        HEARTH_UNROLL
        for (int h = 0; h < kGroupsPerSub / kFlush; ++h) {
            __m256i d16[R][G];
            HEARTH_UNROLL
            for (int g = 0; g < kFlush; ++g) {
                const int k = j * kGroupsPerSub + h * kFlush + g;
                __m256i xq[G];
                HEARTH_UNROLL
                for (int q = 0; q < G; ++q)
                    xq[q] = _mm256_load_si256(reinterpret_cast<const __m256i*>(xs[q]->q[k]));
                HEARTH_UNROLL
                for (int i = 0; i < R; ++i) {
                    const __m256i wq =
                        _mm256_set1_epi32(static_cast<int>(avx2::load_u32(rb.q[r0 + i] + 4 * k)));
                    const __m256i w_abs = kK<T>.sign ? _mm256_abs_epi8(wq) : wq;
                    HEARTH_UNROLL
                    for (int q = 0; q < G; ++q) {
                        const __m256i x = kK<T>.sign ? _mm256_sign_epi8(xq[q], wq) : xq[q];
                        const __m256i p = _mm256_maddubs_epi16(w_abs, x);
                        d16[i][q] = g == 0 ? p : _mm256_add_epi16(d16[i][q], p);
                        avx2::pin(d16[i][q]);  // the chain as written, not a tree (see pin)
                    }
                }
            }
            HEARTH_UNROLL
            for (int i = 0; i < R; ++i) {
                const __m256i sc = _mm256_set1_epi32(rb.scale[r0 + i][j]);
                HEARTH_UNROLL
                for (int q = 0; q < G; ++q) {
                    s1[i][q] = _mm256_add_epi32(s1[i][q], _mm256_madd_epi16(d16[i][q], sc));
                    avx2::pin(s1[i][q]);
                }
            }
        }
    }
    constexpr int kPairs = kSubs / 2;
    HEARTH_UNROLL
    for (int q = 0; q < G; ++q) {
        const __m256 da = _mm256_load_ps(xs[q]->da);
        HEARTH_UNROLL
        for (int i = 0; i < R; ++i) {
            // Q4_K/Q5_K/Q2_K: S2 = Σ_j m_j·Σa; Q6_K/Q3_K: Σ_j sc_j·Σa, 2^shift times which
            // comes off S1; IQ4_XS: none.
            __m256i s2 = _mm256_setzero_si256();
            if constexpr (kK<T>.mins || kK<T>.shift > 0) {
                HEARTH_UNROLL
                for (int p = 0; p < kPairs; ++p)
                    s2 = _mm256_add_epi32(
                        s2,
                        _mm256_madd_epi16(
                            _mm256_load_si256(reinterpret_cast<const __m256i*>(xs[q]->pairs[p])),
                            _mm256_set1_epi32(rb.pairs[r0 + i][p])));
            }
            __m256 f;
            if constexpr (!kK<T>.mins) {
                f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(
                                      s1[i][q], _mm256_slli_epi32(s2, kK<T>.shift))),
                                  _mm256_set1_ps(rb.d[r0 + i]));
            } else {
                f = _mm256_mul_ps(_mm256_cvtepi32_ps(s1[i][q]), _mm256_set1_ps(rb.d[r0 + i]));
                f = _mm256_fnmadd_ps(_mm256_set1_ps(rb.dmin[r0 + i]), _mm256_cvtepi32_ps(s2), f);
            }
            float* ac = accs[q][r0 + i];
            _mm256_store_ps(ac, _mm256_fmadd_ps(f, da, _mm256_load_ps(ac)));
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

// Rows [r0, r0 + nr) against whole groups of tokens [t0, t0 + nt), nr ≤ 64, nt ≤ 256.
template <TensorType T>
static void pass(const GemmArgs& a, Scratch& s, int r0, int nr, int t0, int nt) {
    const int groups = nt / kLanes;
    const int bands = (nr + kBand - 1) / kBand;
    for (int g = 0; g < groups; ++g)
        for (int i = 0; i < bands * kBand; ++i) _mm256_store_ps(s.acc[g][i], _mm256_setzero_ps());
    const uint8_t* w = a.w + static_cast<std::size_t>(r0) * a.w_stride;
    const auto* packed = reinterpret_cast<const TokensBlock*>(a.act_packed);
    for (int64_t b = 0; b < a.nb; ++b) {
        unpack_rows<T>(w, a.w_stride, nr, b, s.w);
        // kGroups token groups at a time (their activations stay in L1 while every band
        // of the pass runs against them), packed once for the product (t0: a multiple of
        // 8); a last odd group alone.
        for (int g0 = 0; g0 < groups; g0 += kGroups) {
            const TokensBlock* xs[kGroups];
            float(*accs[kGroups])[kLanes];
            const int ng = groups - g0 < kGroups ? groups - g0 : kGroups;
            for (int q = 0; q < ng; ++q) {
                xs[q] = packed +
                        static_cast<std::size_t>(t0 / kLanes + g0 + q) *
                            static_cast<std::size_t>(a.nb) +
                        static_cast<std::size_t>(b);
                accs[q] = s.acc[g0 + q];
            }
            for (int band = 0; band < bands; ++band) {
                if (g0 == 0 && b + 1 < a.nb)  // the next block, a band at a time
                    prefetch_block<T>(w, a.w_stride, band * kBand,
                                      nr - band * kBand < kBand ? nr - band * kBand : kBand, b + 1);
                if (ng == kGroups) {
                    micro<T, kBand, kGroups>(s.w, band * kBand, xs, accs);
                } else {
                    micro<T, kBand, 1>(s.w, band * kBand, xs, accs);
                }
            }
        }
    }
    // Out: 8 rows × 8 tokens at a time, transposed to the tokens' rows of out.
    for (int g = 0; g < groups; ++g) {
        float* o = a.out + static_cast<std::size_t>(t0 + g * kLanes) * a.out_stride + r0;
        for (int i0 = 0; i0 < nr; i0 += 8)
            avx2::store_rows_x8(s.acc[g] + i0, nr - i0 < 8 ? nr - i0 : 8, o + i0, a.out_stride);
    }
}

// Whole groups of 8 tokens with the activations packed by matmul (TypeKernels::pack_act);
// the rest (fewer than 8), or a caller that did not pack: the few-token kernel, same bits.
template <TensorType T>
static void gemm_k(const GemmArgs& a) {
    int done = 0;
    if (a.act_packed) {
        Scratch& s = avx2::thread_scratch<Scratch>();
        done = avx2::run_tile_passes(a.n_rows, a.n_tokens, [&](int r0, int nr, int t0, int nt) {
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

const ActPacker kAvx2PackQ4_K{packed_bytes, pack_group<TensorType::Q4_K>, kLanes};
const ActPacker kAvx2PackQ5_K{packed_bytes, pack_group<TensorType::Q5_K>, kLanes};
const ActPacker kAvx2PackQ6_K{packed_bytes, pack_group<TensorType::Q6_K>, kLanes};
const ActPacker kAvx2PackQ2_K{packed_bytes, pack_group<TensorType::Q2_K>, kLanes};
const ActPacker kAvx2PackQ3_K{packed_bytes, pack_group<TensorType::Q3_K>, kLanes};
const ActPacker kAvx2PackIQ4_XS{packed_bytes, pack_group<TensorType::IQ4_XS>, kLanes};

void gemm_avx2_q4_k(const GemmArgs& a) {
    gemm_k<TensorType::Q4_K>(a);
}
void gemm_avx2_q5_k(const GemmArgs& a) {
    gemm_k<TensorType::Q5_K>(a);
}
void gemm_avx2_q6_k(const GemmArgs& a) {
    gemm_k<TensorType::Q6_K>(a);
}

void gemm_avx2_q2_k(const GemmArgs& a) {
    gemm_k<TensorType::Q2_K>(a);
}
void gemm_avx2_q3_k(const GemmArgs& a) {
    gemm_k<TensorType::Q3_K>(a);
}
void gemm_avx2_iq4_xs(const GemmArgs& a) {
    gemm_k<TensorType::IQ4_XS>(a);
}

}  // namespace hearth::kernels::cpu
