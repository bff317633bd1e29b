// Portable kernels for every weight type: the fallback on processors without AVX2 and
// the baseline the AVX2 kernels are tested against. Same arithmetic as the AVX2 kernels
// (exact integer block sums, float scaling); Q4_0, Q4_1, Q5_0 and Q5_1 also in the same
// order (llama.cpp's), bit for bit; the K-quants and Q8_0 in another order than the SIMD
// levels' own (kquant_few.h, gemm_avx2_q8_0.cpp).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "cpu/act_quant.h"
#include "cpu/gemm_kernels.h"
#include "cpu/scalar_math.h"
#include "quant/dequant_rows.h"
#include "quant/fp16.h"

namespace hearth::kernels::cpu {

namespace {

using quant::TensorType;

// One 32-element weight block as integers: value[i] = d · q[i] + m.
struct Block32 {
    int8_t q[32];
    float d;
    float m;
};

template <TensorType T>
void decode32(const uint8_t* p, Block32& o) {
    if constexpr (T == TensorType::Q8_0) {
        quant::BlockQ8_0 b;
        std::memcpy(&b, p, sizeof b);
        std::memcpy(o.q, b.qs, 32);
        o.d = quant::fp16_to_f32(b.d);
        o.m = 0.0f;
    } else if constexpr (T == TensorType::IQ4_NL) {
        const uint8_t* qs = p + 2;
        for (int j = 0; j < 16; ++j) {
            o.q[j] = quant::kIq4nlValues[qs[j] & 0x0f];
            o.q[j + 16] = quant::kIq4nlValues[qs[j] >> 4];
        }
        uint16_t d;
        std::memcpy(&d, p, 2);
        o.d = quant::fp16_to_f32(d);
        o.m = 0.0f;
    } else if constexpr (T == TensorType::Q4_0 || T == TensorType::Q4_1) {
        const uint8_t* qs = p + (T == TensorType::Q4_0 ? 2 : 4);
        for (int j = 0; j < 16; ++j) {
            o.q[j] = static_cast<int8_t>(qs[j] & 0x0f);
            o.q[j + 16] = static_cast<int8_t>(qs[j] >> 4);
        }
        uint16_t d, m;
        std::memcpy(&d, p, 2);
        std::memcpy(&m, p + 2, 2);
        o.d = quant::fp16_to_f32(d);
        o.m = T == TensorType::Q4_0 ? -8.0f * o.d : quant::fp16_to_f32(m);
    } else {
        static_assert(T == TensorType::Q5_0 || T == TensorType::Q5_1);
        const int off = T == TensorType::Q5_0 ? 2 : 4;  // qh follows d (and m)
        uint32_t qh;
        std::memcpy(&qh, p + off, 4);
        const uint8_t* qs = p + off + 4;
        for (int j = 0; j < 16; ++j) {
            o.q[j] = static_cast<int8_t>((qs[j] & 0x0f) | (((qh >> j) & 1u) << 4));
            o.q[j + 16] = static_cast<int8_t>((qs[j] >> 4) | (((qh >> (j + 16)) & 1u) << 4));
        }
        uint16_t d, m;
        std::memcpy(&d, p, 2);
        std::memcpy(&m, p + 2, 2);
        o.d = quant::fp16_to_f32(d);
        o.m = T == TensorType::Q5_0 ? -16.0f * o.d : quant::fp16_to_f32(m);
    }
}

template <TensorType T>
constexpr std::size_t block_bytes() {
    switch (T) {
        case TensorType::Q4_0:
            return sizeof(quant::BlockQ4_0);
        case TensorType::Q4_1:
            return sizeof(quant::BlockQ4_1);
        case TensorType::Q5_0:
            return sizeof(quant::BlockQ5_0);
        case TensorType::Q5_1:
            return sizeof(quant::BlockQ5_1);
        case TensorType::IQ4_NL:
            return sizeof(quant::BlockIQ4_NL);
        default:
            return sizeof(quant::BlockQ8_0);
    }
}

// acc[l] = fma(sc, isum[l], acc[l]) for the 8 lanes: fma_exact's test once for all of
// them, so that the common case is straight-line double arithmetic.
inline void fma8(float sc, const int32_t isum[8], float acc[8]) {
    double r[8];
    bool exact = true;
    for (int l = 0; l < 8; ++l) {
        r[l] = static_cast<double>(sc) * isum[l] + static_cast<double>(acc[l]);
        const uint64_t bits = std::bit_cast<uint64_t>(r[l]);
        exact = exact && (bits & 0x1fffffffu) != 0x10000000u &&
                !(r[l] != 0.0 && std::fabs(r[l]) < 0x1p-126);
    }
    if (exact) {
        for (int l = 0; l < 8; ++l) acc[l] = static_cast<float>(r[l]);
    } else {
        for (int l = 0; l < 8; ++l) acc[l] = fma_exact(sc, static_cast<float>(isum[l]), acc[l]);
    }
}

// Q8x32 activations (act_quant.h): out = Σ_b dw·da·Σ q·qa + m·s, in the AVX2 kernels'
// (and llama.cpp's ggml_vec_dot_*_q8_*) order and roundings, so the bits are theirs: the
// integer sums in 8 lanes of 4 elements each, acc[l] = fma(dw·da, Σ_l, acc[l]) block
// after block, the offsets as acc_m = fma(m, s, acc_m) (m = d for Q5_0, whose offset
// factor kM = -16 is applied at the end), then hsum8(acc) + kM · acc_m. (Q4_0: below.)
template <TensorType T>
void gemm_q32(const GemmArgs& a) {
    constexpr float kM = T == TensorType::Q5_0                              ? -16.0f
                         : T == TensorType::Q8_0 || T == TensorType::IQ4_NL ? 0.0f
                                                                            : 1.0f;
    const int G = a.group;
    const int n_groups = (a.n_tokens + G - 1) / G;
    Block32 blk;
    for (int r = 0; r < a.n_rows; ++r) {
        const uint8_t* wr = a.w + static_cast<std::size_t>(r) * a.w_stride;
        for (int g = 0; g < n_groups; ++g) {
            const auto [qs, ds, nt] = q8x32_group(a.act, a.act_stride, a.nb, G, g, a.n_tokens);
            float acc[kGroup][8] = {}, acc_m[kGroup] = {};
            for (int64_t b = 0; b < a.nb; ++b) {
                decode32<T>(wr + static_cast<std::size_t>(b) * block_bytes<T>(), blk);
                const float mw = kM == 1.0f ? blk.m : blk.d;
                for (int t = 0; t < nt; ++t) {
                    const int8_t* qa = qs + (b * G + t) * 32;
                    const float sc = blk.d * ds[b * 2 * G + t];
                    // Lane l: elements 4l..4l+3 (pairs first, as maddubs + madd).
                    int32_t pair[16], isum[8];
                    for (int i = 0; i < 16; ++i)
                        pair[i] = blk.q[2 * i] * qa[2 * i] + blk.q[2 * i + 1] * qa[2 * i + 1];
                    for (int l = 0; l < 8; ++l) isum[l] = pair[2 * l] + pair[2 * l + 1];
                    fma8(sc, isum, acc[t]);
                    if constexpr (kM != 0.0f)
                        acc_m[t] = fma_exact(mw, ds[b * 2 * G + G + t], acc_m[t]);
                }
            }
            for (int t = 0; t < nt; ++t) {
                const float* l = acc[t];
                const float h = ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
                float v = h;
                if constexpr (kM != 0.0f) v += kM * acc_m[t];
                a.out[static_cast<std::size_t>(g * G + t) * a.out_stride + r] = v;
            }
        }
    }
}

// Q4_0 against Q8x32 (Q8_0 sums) in the order of the AVX2 kernel on the repacked layout
// (gemm_avx2_q4_0x8.cpp), bit for bit: per block the exact integer Σ q·qa of the unsigned
// nibbles, acc = fma(dw·da, Σ, acc), acc_m = fma(dw, s, acc_m), then acc + (-8)·acc_m.
void gemm_q4_0(const GemmArgs& a) {
    const int G = a.group;
    const int n_groups = (a.n_tokens + G - 1) / G;
    Block32 blk;
    for (int r = 0; r < a.n_rows; ++r) {
        const uint8_t* wr = a.w + static_cast<std::size_t>(r) * a.w_stride;
        for (int g = 0; g < n_groups; ++g) {
            const auto [qs, ds, nt] = q8x32_group(a.act, a.act_stride, a.nb, G, g, a.n_tokens);
            float acc[kGroup] = {}, acc_m[kGroup] = {};
            for (int64_t b = 0; b < a.nb; ++b) {
                decode32<TensorType::Q4_0>(
                    wr + static_cast<std::size_t>(b) * block_bytes<TensorType::Q4_0>(), blk);
                for (int t = 0; t < nt; ++t) {
                    const int8_t* qa = qs + (b * G + t) * 32;
                    int32_t isum = 0;
                    for (int i = 0; i < 32; ++i) isum += blk.q[i] * qa[i];
                    const float sc = blk.d * ds[b * 2 * G + t];
                    acc[t] = fma_exact(sc, static_cast<float>(isum), acc[t]);
                    acc_m[t] = fma_exact(blk.d, ds[b * 2 * G + G + t], acc_m[t]);
                }
            }
            for (int t = 0; t < nt; ++t)
                a.out[static_cast<std::size_t>(g * G + t) * a.out_stride + r] =
                    acc[t] + -8.0f * acc_m[t];
        }
    }
}

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K super-block.
void scale_min_k4(int j, const uint8_t* s, int& sc, int& m) {
    if (j < 4) {
        sc = s[j] & 63;
        m = s[j + 4] & 63;
    } else {
        sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
        m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

// Token t's Q8xK activations (act_quant.h): quants, 16-element sums, scales.
struct Q8KToken {
    const int8_t* qa;
    const int16_t* bsums;
    const float* da;
};
Q8KToken q8k_token(const GemmArgs& a, int t) {
    const uint8_t* row = a.act + static_cast<std::size_t>(t) * a.act_stride;
    return {reinterpret_cast<const int8_t*>(row),
            reinterpret_cast<const int16_t*>(row + q8k_bsums_offset(a.nb)),
            reinterpret_cast<const float*>(row + q8k_d_offset(a.nb))};
}

// Q4_K / Q5_K against Q8xK: per super-block d·da·Σ_j sc_j·Σ q·qa − dmin·da·Σ_j m_j·Σ qa.
template <TensorType T>
void gemm_q45k(const GemmArgs& a) {
    constexpr bool five = T == TensorType::Q5_K;
    constexpr std::size_t bb = five ? sizeof(quant::BlockQ5_K) : sizeof(quant::BlockQ4_K);
    for (int t = 0; t < a.n_tokens; ++t) {
        const auto [qa_all, bsums, da] = q8k_token(a, t);
        for (int r = 0; r < a.n_rows; ++r) {
            const uint8_t* wr = a.w + static_cast<std::size_t>(r) * a.w_stride;
            float acc = 0.0f;
            for (int64_t b = 0; b < a.nb; ++b) {
                const uint8_t* p = wr + static_cast<std::size_t>(b) * bb;
                uint16_t d16, dmin16;
                std::memcpy(&d16, p, 2);
                std::memcpy(&dmin16, p + 2, 2);
                const uint8_t* scales = p + 4;
                const uint8_t* qh = p + 4 + quant::kKScaleBytes;  // Q5_K only
                const uint8_t* qs = five ? qh + 32 : p + 4 + quant::kKScaleBytes;
                const int8_t* qa = qa_all + b * 256;
                int32_t sumi = 0, summ = 0;
                for (int c = 0; c < 4; ++c) {
                    int sc_lo, m_lo, sc_hi, m_hi;
                    scale_min_k4(2 * c, scales, sc_lo, m_lo);
                    scale_min_k4(2 * c + 1, scales, sc_hi, m_hi);
                    int32_t lo = 0, hi = 0;
                    for (int l = 0; l < 32; ++l) {
                        int ql = qs[32 * c + l] & 0x0f, qhi = qs[32 * c + l] >> 4;
                        if constexpr (five) {
                            ql |= ((qh[l] >> (2 * c)) & 1) << 4;
                            qhi |= ((qh[l] >> (2 * c + 1)) & 1) << 4;
                        }
                        lo += ql * qa[64 * c + l];
                        hi += qhi * qa[64 * c + 32 + l];
                    }
                    sumi += sc_lo * lo + sc_hi * hi;
                    const int16_t* bs = bsums + b * 16 + 4 * c;
                    summ += m_lo * (bs[0] + bs[1]) + m_hi * (bs[2] + bs[3]);
                }
                acc += quant::fp16_to_f32(d16) * da[b] * static_cast<float>(sumi) -
                       quant::fp16_to_f32(dmin16) * da[b] * static_cast<float>(summ);
            }
            a.out[static_cast<std::size_t>(t) * a.out_stride + r] = acc;
        }
    }
}

// Q6_K against Q8xK: d·da·Σ_j sc_j·(Σ q·qa − 32·Σ qa) over the 16 sub-blocks of 16.
void gemm_q6k(const GemmArgs& a) {
    for (int t = 0; t < a.n_tokens; ++t) {
        const auto [qa_all, bsums, da] = q8k_token(a, t);
        for (int r = 0; r < a.n_rows; ++r) {
            const uint8_t* wr = a.w + static_cast<std::size_t>(r) * a.w_stride;
            float acc = 0.0f;
            for (int64_t b = 0; b < a.nb; ++b) {
                quant::BlockQ6_K blk;
                std::memcpy(&blk, wr + static_cast<std::size_t>(b) * sizeof blk, sizeof blk);
                const int8_t* qa = qa_all + b * 256;
                int32_t sub[16] = {};
                for (int n = 0; n < 2; ++n) {
                    const uint8_t* ql = blk.ql + 64 * n;
                    const uint8_t* qh = blk.qh + 32 * n;
                    for (int l = 0; l < 32; ++l) {
                        const int e = 128 * n + l;
                        const int q1 = (ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4);
                        const int q2 = (ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4);
                        const int q3 = (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4);
                        const int q4 = (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4);
                        sub[e / 16] += q1 * qa[e];
                        sub[(e + 32) / 16] += q2 * qa[e + 32];
                        sub[(e + 64) / 16] += q3 * qa[e + 64];
                        sub[(e + 96) / 16] += q4 * qa[e + 96];
                    }
                }
                int32_t sumi = 0;
                for (int j = 0; j < 16; ++j)
                    sumi += blk.scales[j] * (sub[j] - 32 * bsums[b * 16 + j]);
                acc += quant::fp16_to_f32(blk.d) * da[b] * static_cast<float>(sumi);
            }
            a.out[static_cast<std::size_t>(t) * a.out_stride + r] = acc;
        }
    }
}

// A Q2_K, Q3_K or IQ4_XS super-block as integers: value[i] = d·sc[i / 16]·q[i] −
// dmin·m[i / 16] (m and dmin: Q2_K only; IQ4_XS repeats each 32-element scale).
struct KBlock16 {
    int8_t q[256];
    int16_t sc[16];
    int16_t m[16];
    float d, dmin;
};

template <TensorType T>
void decode_k16(const uint8_t* p, KBlock16& o) {
    if constexpr (T == TensorType::IQ4_XS) {
        quant::BlockIQ4_XS b;
        std::memcpy(&b, p, sizeof b);
        for (int j = 0; j < 8; ++j) {
            o.sc[2 * j] = o.sc[2 * j + 1] = static_cast<int16_t>(quant::iq4_xs_scale(j, b) - 32);
            o.m[2 * j] = o.m[2 * j + 1] = 0;
            for (int l = 0; l < 16; ++l) {
                o.q[32 * j + l] = quant::kIq4nlValues[b.qs[16 * j + l] & 15];
                o.q[32 * j + 16 + l] = quant::kIq4nlValues[b.qs[16 * j + l] >> 4];
            }
        }
        o.d = quant::fp16_to_f32(b.d);
        o.dmin = 0.0f;
    } else {
        constexpr bool two = T == TensorType::Q2_K;
        static_assert(two || T == TensorType::Q3_K);
        const uint8_t* qs = two ? p + 16 : p + 32;
        for (int e = 0; e < 256; ++e) {
            const int half = e / 128, j = (e % 128) / 32;
            int q = (qs[32 * half + e % 32] >> (2 * j)) & 3;
            if constexpr (!two) q -= (p[e % 32] >> (4 * half + j)) & 1 ? 0 : 4;  // hmask
            o.q[e] = static_cast<int8_t>(q);
        }
        uint16_t d, dmin = 0;
        if constexpr (two) {
            for (int j = 0; j < 16; ++j) {
                o.sc[j] = static_cast<int16_t>(p[j] & 15);
                o.m[j] = static_cast<int16_t>(p[j] >> 4);
            }
            std::memcpy(&d, p + 80, 2);
            std::memcpy(&dmin, p + 82, 2);
        } else {
            for (int j = 0; j < 16; ++j) {
                o.sc[j] = static_cast<int16_t>(quant::q3_k_scale(j, p + 96) - 32);
                o.m[j] = 0;
            }
            std::memcpy(&d, p + 108, 2);
        }
        o.d = quant::fp16_to_f32(d);
        o.dmin = quant::fp16_to_f32(dmin);
    }
}

// Q2_K / Q3_K / IQ4_XS against Q8xK: per super-block d·da·Σ_j sc_j·Σ q·qa −
// dmin·da·Σ_j m_j·Σ qa over 16 sub-blocks of 16, as gemm_q45k.
template <TensorType T>
void gemm_k16(const GemmArgs& a) {
    const std::size_t bb = static_cast<std::size_t>(quant::traits(T)->block_bytes);
    KBlock16 blk;
    for (int t = 0; t < a.n_tokens; ++t) {
        const auto [qa_all, bsums, da] = q8k_token(a, t);
        for (int r = 0; r < a.n_rows; ++r) {
            const uint8_t* wr = a.w + static_cast<std::size_t>(r) * a.w_stride;
            float acc = 0.0f;
            for (int64_t b = 0; b < a.nb; ++b) {
                decode_k16<T>(wr + static_cast<std::size_t>(b) * bb, blk);
                const int8_t* qa = qa_all + b * 256;
                int32_t sumi = 0, summ = 0;
                for (int j = 0; j < 16; ++j) {
                    int32_t dot = 0;
                    for (int i = 16 * j; i < 16 * j + 16; ++i) dot += blk.q[i] * qa[i];
                    sumi += blk.sc[j] * dot;
                    summ += blk.m[j] * bsums[b * 16 + j];
                }
                acc += blk.d * da[b] * static_cast<float>(sumi) -
                       blk.dmin * da[b] * static_cast<float>(summ);
            }
            a.out[static_cast<std::size_t>(t) * a.out_stride + r] = acc;
        }
    }
}

// Float weights against float activations. Rows are converted to float in chunks once
// and reused for every token.
template <TensorType T>
void gemm_float(const GemmArgs& a) {
    constexpr int kChunk = 256;
    float wbuf[kChunk];
    for (int r = 0; r < a.n_rows; ++r) {
        const uint8_t* wr = a.w + static_cast<std::size_t>(r) * a.w_stride;
        for (int t = 0; t < a.n_tokens; ++t)
            a.out[static_cast<std::size_t>(t) * a.out_stride + r] = 0.0f;
        for (int64_t c0 = 0; c0 < a.nb; c0 += kChunk) {
            const int n = static_cast<int>(std::min<int64_t>(kChunk, a.nb - c0));
            for (int i = 0; i < n; ++i) {
                if constexpr (T == TensorType::F32) {
                    std::memcpy(&wbuf[i], wr + (c0 + i) * 4, 4);
                } else {
                    uint16_t h;
                    std::memcpy(&h, wr + (c0 + i) * 2, 2);
                    wbuf[i] = T == TensorType::F16 ? quant::fp16_to_f32(h) : quant::bf16_to_f32(h);
                }
            }
            for (int t = 0; t < a.n_tokens; ++t) {
                const auto* x = reinterpret_cast<const float*>(a.act + static_cast<std::size_t>(t) *
                                                                           a.act_stride) +
                                c0;
                float s[8] = {};
                int i = 0;
                for (; i + 8 <= n; i += 8)
                    for (int k = 0; k < 8; ++k) s[k] += wbuf[i + k] * x[i + k];
                for (; i < n; ++i) s[0] += wbuf[i] * x[i];
                a.out[static_cast<std::size_t>(t) * a.out_stride + r] +=
                    ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
            }
        }
    }
}

const TypeKernels kF32{ActFormat::Float, gemm_float<TensorType::F32>};
const TypeKernels kF16{ActFormat::Float, gemm_float<TensorType::F16>};
const TypeKernels kBF16{ActFormat::Float, gemm_float<TensorType::BF16>};
const TypeKernels kQ4_0{ActFormat::Q8x32, gemm_q4_0};
const TypeKernels kQ4_1{ActFormat::Q8x32, gemm_q32<TensorType::Q4_1>};
const TypeKernels kQ5_0{ActFormat::Q8x32, gemm_q32<TensorType::Q5_0>};
const TypeKernels kQ5_1{ActFormat::Q8x32, gemm_q32<TensorType::Q5_1>};
const TypeKernels kQ8_0{ActFormat::Q8x32, gemm_q32<TensorType::Q8_0>};
const TypeKernels kIQ4_NL{ActFormat::Q8x32, gemm_q32<TensorType::IQ4_NL>};
const TypeKernels kQ2_K{ActFormat::Q8xK, gemm_k16<TensorType::Q2_K>};
const TypeKernels kQ3_K{ActFormat::Q8xK, gemm_k16<TensorType::Q3_K>};
const TypeKernels kIQ4_XS{ActFormat::Q8xK, gemm_k16<TensorType::IQ4_XS>};
const TypeKernels kQ4_K{ActFormat::Q8xK, gemm_q45k<TensorType::Q4_K>};
const TypeKernels kQ5_K{ActFormat::Q8xK, gemm_q45k<TensorType::Q5_K>};
const TypeKernels kQ6_K{ActFormat::Q8xK, gemm_q6k};

}  // namespace

const TypeKernels* gemm_kernels_scalar(quant::TensorType type) {
    switch (type) {
        case TensorType::F32:
            return &kF32;
        case TensorType::F16:
            return &kF16;
        case TensorType::BF16:
            return &kBF16;
        case TensorType::Q4_0:
            return &kQ4_0;
        case TensorType::Q4_1:
            return &kQ4_1;
        case TensorType::Q5_0:
            return &kQ5_0;
        case TensorType::Q5_1:
            return &kQ5_1;
        case TensorType::Q8_0:
            return &kQ8_0;
        case TensorType::IQ4_NL:
            return &kIQ4_NL;
        case TensorType::Q2_K:
            return &kQ2_K;
        case TensorType::Q3_K:
            return &kQ3_K;
        case TensorType::IQ4_XS:
            return &kIQ4_XS;
        case TensorType::Q4_K:
            return &kQ4_K;
        case TensorType::Q5_K:
            return &kQ5_K;
        case TensorType::Q6_K:
            return &kQ6_K;
    }
    return nullptr;
}

}  // namespace hearth::kernels::cpu
