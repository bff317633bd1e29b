// AVX-512 kernels for the K-quants (Q4_K, Q5_K, Q6_K) against Q8xK activations, for
// prefill tiles of more than 8 tokens; fewer tokens (decode, which streams the weights
// from memory and is bound by its bandwidth) run the AVX2 kernels.
//
// The tile's weight rows are unpacked to bytes once (the AVX2 kernel unpacks each
// super-block once per 8 tokens), and every token runs against them with 512-bit
// registers: two 32-element groups per register, maddubs into int16 pair sums and vpdpwssd
// weighting those with the sub-block scales and adding them to the int32 sums in one
// instruction. Lane j of the two halves then adds into lane j of the AVX2 kernel's sums:
// the same integers, and the block epilogue is dot_q45k's / dot_q6k's, block by block in
// the same order, so the results are the AVX2 kernels' bits.
//
// Built with AVX-512 F/BW/VL/VNNI enabled; called only when cpu_has_avx512(). Everything
// here has internal linkage and no std:: templates are instantiated (see avx2_util.h).
#include <new>
#include <type_traits>

#include "cpu/avx512_util.h"
#include "cpu/kquant_avx2.h"

namespace hearth::kernels::cpu {

namespace {

using quant::TensorType;

// A super-block unpacked once for every token of a tile: its quants as bytes in element
// order (Q4_K 0..15, Q5_K 0..31, Q6_K 0..63; the AVX2 kernel's unpacking), per 32-element
// group the int16 scale lanes that weight the pair sums, and what the block's epilogue
// needs. 64-byte aligned: two groups' quants or scales are one 512-bit load.
struct alignas(64) Unpacked {
    uint8_t q[256];
    int16_t scale[8][16];  // group g: Q4_K/Q5_K sc_g in every lane; Q6_K sc_2g ×8, sc_2g+1 ×8
    int16_t extra[16];     // Q4_K/Q5_K: [m0, m0, .., m7, m7]; Q6_K: sc_0..sc_15
    float d, dmin;
};

template <quant::TensorType T>
static inline void unpack_block(const uint8_t* p, Unpacked& u) {
    const auto store = [](void* dst, __m256i v) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(dst), v);
    };
    if constexpr (T == quant::TensorType::Q6_K) {
        const uint8_t* ql = p;
        const uint8_t* qh = p + 128;
        const auto* scales = reinterpret_cast<const int8_t*>(p + 192);
        const __m256i sc16 =
            _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales)));
        store(u.extra, sc16);
        const __m256i pick = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3,
                                              2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
        HEARTH_UNROLL
        for (int n = 0; n < 2; ++n) {
            const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 64 * n));
            const __m256i l1 =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 64 * n + 32));
            const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh + 32 * n));
            HEARTH_UNROLL
            for (int i = 0; i < 4; ++i) store(u.q + 128 * n + 32 * i, q6k_quants(l0, l1, h, i));
        }
        HEARTH_UNROLL
        for (int k = 0; k < 8; ++k)
            store(u.scale[k], _mm256_shuffle_epi8(
                                  _mm256_permutevar8x32_epi32(sc16, _mm256_set1_epi32(k)), pick));
        u.d = avx2::fp16(avx2::load_u16(p + 208));
        u.dmin = 0.0f;
    } else {
        constexpr bool kFive = T == quant::TensorType::Q5_K;
        const uint8_t* qh = p + 4 + quant::kKScaleBytes;
        const uint8_t* qs = kFive ? qh + 32 : qh;
        const __m128i sm = k4_scales_mins(p + 4);
        const __m256i sc16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi64(sm, sm));
        store(u.extra, _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(sm, sm)));
        const __m256i hbits = kFive ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh))
                                    : _mm256_setzero_si256();
        const auto group = [&](auto c_const) {
            constexpr int c = decltype(c_const)::value;
            __m256i lo, hi;
            q45k_quants<kFive, c>(qs, hbits, lo, hi);
            store(u.q + 64 * c, lo);
            store(u.q + 64 * c + 32, hi);
            store(u.scale[2 * c],
                  _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(0x0100 + 0x0202 * 2 * c)));
            store(u.scale[2 * c + 1],
                  _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(0x0100 + 0x0202 * (2 * c + 1))));
        };
        group(std::integral_constant<int, 0>{});
        group(std::integral_constant<int, 1>{});
        group(std::integral_constant<int, 2>{});
        group(std::integral_constant<int, 3>{});
        u.d = avx2::fp16(avx2::load_u16(p));
        u.dmin = avx2::fp16(avx2::load_u16(p + 2));
    }
}

// This thread's unpacked rows, grown on demand (a pool thread runs one tile at a time).
// Not an AlignedBuffer: its inline members would be compiled here with AVX-512 enabled
// and could be the copy the linker keeps for the portable files (see avx2_util.h).
class UnpackScratch {
  public:
    ~UnpackScratch() { ::operator delete (data_, std::align_val_t{alignof(Unpacked)}); }
    Unpacked* get(int64_t nb) {
        const auto n = static_cast<std::size_t>(nb);
        if (n > capacity_) {
            ::operator delete (data_, std::align_val_t{alignof(Unpacked)});
            data_ = static_cast<Unpacked*>(
                ::operator new (n * sizeof(Unpacked), std::align_val_t{alignof(Unpacked)}));
            capacity_ = n;
        }
        return data_;
    }

  private:
    Unpacked* data_ = nullptr;
    std::size_t capacity_ = 0;
};

using avx512::join;
using avx512::upper;

// One block's epilogue for one token (8 lanes) or two (16 lanes: the first token below):
// the AVX2 kernel's operations lane for lane. s: the integer sums, bs: the tokens' bsums,
// da: their activation scales broadcast to their lanes, extra: the block's mins / scales
// in every 8-lane half.
template <TensorType T, typename VF, typename VI>
static inline VF block_epilogue(const Unpacked& ub, VI s, VI bs, VF da, VI extra, VF acc) {
    if constexpr (sizeof(VF) == 64) {
        if constexpr (T == TensorType::Q6_K) {
            const __m512i offset = _mm512_slli_epi32(_mm512_madd_epi16(extra, bs), 5);
            return _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(ub.d), da),
                                   _mm512_cvtepi32_ps(_mm512_sub_epi32(s, offset)), acc);
        } else {
            const __m512 mins = _mm512_cvtepi32_ps(_mm512_madd_epi16(extra, bs));
            acc = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(ub.d), da), _mm512_cvtepi32_ps(s),
                                  acc);
            return _mm512_fnmadd_ps(_mm512_mul_ps(_mm512_set1_ps(ub.dmin), da), mins, acc);
        }
    } else {
        if constexpr (T == TensorType::Q6_K) {
            const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(extra, bs), 5);
            return _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(ub.d), da),
                                   _mm256_cvtepi32_ps(_mm256_sub_epi32(s, offset)), acc);
        } else {
            const __m256 mins = _mm256_cvtepi32_ps(_mm256_madd_epi16(extra, bs));
            acc = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(ub.d), da), _mm256_cvtepi32_ps(s),
                                  acc);
            return _mm256_fnmadd_ps(_mm256_mul_ps(_mm256_set1_ps(ub.dmin), da), mins, acc);
        }
    }
}

// Blocks [b0, b1) of one unpacked row against N ≤ 8 tokens, continuing each token's float
// accumulator acc_io[t] (8 lanes, summed at the end as the AVX2 kernel sums its own). The
// block epilogues run two tokens per register (Q6_K's d·da, a scalar product there, is the
// same single rounding per lane here).
template <TensorType T, int N>
static inline void dot_unpacked(const Unpacked* u, const TokenAct* t_act, int64_t b0, int64_t b1,
                                __m256* acc_io) {
    constexpr int P = N / 2;  // token pairs; an odd last token runs alone
    __m512 acc2[P > 0 ? P : 1];
    __m256 acc1 = _mm256_setzero_ps();
    HEARTH_UNROLL
    for (int k = 0; k < P; ++k) acc2[k] = join(acc_io[2 * k], acc_io[2 * k + 1]);
    if constexpr (N % 2 == 1) acc1 = acc_io[N - 1];
    for (int64_t b = b0; b < b1; ++b) {
        const Unpacked& ub = u[b];
        __m512i sumi[N];
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) sumi[t] = _mm512_setzero_si512();
        HEARTH_UNROLL
        for (int g = 0; g < 8; g += 2) {
            const __m512i q = _mm512_load_si512(ub.q + 32 * g);
            const __m512i sc = _mm512_load_si512(ub.scale[g]);
            HEARTH_UNROLL
            for (int t = 0; t < N; ++t) {
                const __m512i a = _mm512_loadu_si512(t_act[t].qa + 256 * b + 32 * g);
                sumi[t] = _mm512_dpwssd_epi32(sumi[t], _mm512_maddubs_epi16(q, a), sc);
            }
        }
        const __m256i extra = _mm256_load_si256(reinterpret_cast<const __m256i*>(ub.extra));
        const auto bsums = [&](int t) {
            return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t_act[t].bsums + 16 * b));
        };
        HEARTH_UNROLL
        for (int k = 0; k < P; ++k) {
            const __m512i x = sumi[2 * k], y = sumi[2 * k + 1];
            // Lanes 0-7: token 2k's low + high halves, lanes 8-15: token 2k+1's.
            const __m512i s = _mm512_add_epi32(_mm512_shuffle_i64x2(x, y, _MM_SHUFFLE(1, 0, 1, 0)),
                                               _mm512_shuffle_i64x2(x, y, _MM_SHUFFLE(3, 2, 3, 2)));
            const __m512 da = join(_mm256_broadcast_ss(t_act[2 * k].da + b),
                                   _mm256_broadcast_ss(t_act[2 * k + 1].da + b));
            acc2[k] = block_epilogue<T>(ub, s, join(bsums(2 * k), bsums(2 * k + 1)), da,
                                        join(extra, extra), acc2[k]);
        }
        if constexpr (N % 2 == 1) {
            const __m512i x = sumi[N - 1];
            const __m256i s =
                _mm256_add_epi32(_mm512_castsi512_si256(x), _mm512_extracti64x4_epi64(x, 1));
            acc1 = block_epilogue<T>(ub, s, bsums(N - 1), _mm256_broadcast_ss(t_act[N - 1].da + b),
                                     extra, acc1);
        }
    }
    HEARTH_UNROLL
    for (int k = 0; k < P; ++k) {
        acc_io[2 * k] = _mm512_castps512_ps256(acc2[k]);
        acc_io[2 * k + 1] = upper(acc2[k]);
    }
    if constexpr (N % 2 == 1) acc_io[N - 1] = acc1;
}

// Rows unpacked per pass: at most kPassRows, and about kPassBytes of them (in L2 beside
// the tile's activations).
constexpr int kPassRows = 64;
constexpr std::size_t kPassBytes = 160 * 1024;
// Blocks per step along the row: 8 tokens' activations for 8 blocks (~18 KB) stay in L1
// while every row of the pass runs against them.
constexpr int64_t kStepBlocks = 8;

// One group of N ≤ 8 tokens against rows [r0, r1) of the pass (unpacked in u).
template <TensorType T, int N>
static inline void pass_x_tokens(const GemmArgs& a, const Unpacked* u, int r0, int r1, int t0) {
    TokenAct acts[N];
    HEARTH_UNROLL
    for (int i = 0; i < N; ++i) acts[i] = token_act(a, t0 + i);
    __m256 acc[kPassRows][N];
    for (int r = r0; r < r1; ++r)
        for (int i = 0; i < N; ++i) acc[r - r0][i] = _mm256_setzero_ps();
    for (int64_t b0 = 0; b0 < a.nb; b0 += kStepBlocks) {
        const int64_t b1 = b0 + kStepBlocks < a.nb ? b0 + kStepBlocks : a.nb;
        for (int r = r0; r < r1; ++r)
            dot_unpacked<T, N>(u + static_cast<std::size_t>(r - r0) * a.nb, acts, b0, b1,
                               acc[r - r0]);
    }
    for (int r = r0; r < r1; ++r)
        for (int i = 0; i < N; ++i)
            a.out[static_cast<std::size_t>(t0 + i) * a.out_stride + r] = avx2::hsum(acc[r - r0][i]);
}

template <TensorType T>
static inline void gemm_k512(const GemmArgs& a) {
    static thread_local UnpackScratch scratch;
    const std::size_t row_bytes = static_cast<std::size_t>(a.nb) * sizeof(Unpacked);
    int pass_rows = static_cast<int>(kPassBytes / row_bytes);
    if (pass_rows < 1) pass_rows = 1;
    if (pass_rows > kPassRows) pass_rows = kPassRows;
    if (pass_rows > a.n_rows) pass_rows = a.n_rows;
    Unpacked* u = scratch.get(a.nb * pass_rows);
    for (int r0 = 0; r0 < a.n_rows; r0 += pass_rows) {
        const int r1 = r0 + pass_rows < a.n_rows ? r0 + pass_rows : a.n_rows;
        for (int r = r0; r < r1; ++r) {
            const uint8_t* w = a.w + static_cast<std::size_t>(r) * a.w_stride;
            Unpacked* ur = u + static_cast<std::size_t>(r - r0) * a.nb;
            for (int64_t b = 0; b < a.nb; ++b)
                unpack_block<T>(w + static_cast<std::size_t>(b) * kKBlockBytes<T>, ur[b]);
        }
        int t0 = 0;
        for (; t0 + 8 <= a.n_tokens; t0 += 8) pass_x_tokens<T, 8>(a, u, r0, r1, t0);
        switch (a.n_tokens - t0) {
            case 7:
                pass_x_tokens<T, 7>(a, u, r0, r1, t0);
                break;
            case 6:
                pass_x_tokens<T, 6>(a, u, r0, r1, t0);
                break;
            case 5:
                pass_x_tokens<T, 5>(a, u, r0, r1, t0);
                break;
            case 4:
                pass_x_tokens<T, 4>(a, u, r0, r1, t0);
                break;
            case 3:
                pass_x_tokens<T, 3>(a, u, r0, r1, t0);
                break;
            case 2:
                pass_x_tokens<T, 2>(a, u, r0, r1, t0);
                break;
            case 1:
                pass_x_tokens<T, 1>(a, u, r0, r1, t0);
                break;
            default:
                break;
        }
    }
}

constexpr int kMaxAvx2Tokens = 8;

}  // namespace

void gemm_avx512_q4_k(const GemmArgs& a) {
    if (a.n_tokens <= kMaxAvx2Tokens) return gemm_avx2_q4_k(a);
    gemm_k512<TensorType::Q4_K>(a);
}
void gemm_avx512_q5_k(const GemmArgs& a) {
    if (a.n_tokens <= kMaxAvx2Tokens) return gemm_avx2_q5_k(a);
    gemm_k512<TensorType::Q5_K>(a);
}
void gemm_avx512_q6_k(const GemmArgs& a) {
    if (a.n_tokens <= kMaxAvx2Tokens) return gemm_avx2_q6_k(a);
    gemm_k512<TensorType::Q6_K>(a);
}

}  // namespace hearth::kernels::cpu
