// Activations quantised to 8 bits for the integer dot products against quantised
// weights (as llama.cpp does): each activation row is quantised once per matmul, then
// every weight row is dotted with it in int8 × int4/5/6/8 arithmetic.
//
// Two formats, both symmetric (d = max|x| / 127, q = round-to-nearest-even(x · 127 /
// max|x|), so |q| ≤ 127 and never -128, which keeps the unsigned × signed byte products
// of the AVX2 kernels from saturating):
//
// Q8x32 — 32-element blocks, for Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 weights. Tokens are
// stored in groups of G (G = 1 for a single token, kGroup for several) so that a kernel
// can walk one weight block against G tokens with contiguous loads. One group of nb
// blocks, G tokens (tokens past the real count are zero):
//     int8_t qs[nb][G][32]     x[t][32·b + i] ≈ d[b][t] · qs[b][t][i]
//     float  ds[nb][2][G]      ds[b][0][t] = d, ds[b][1][t] = s ≈ d · Σ_i qs[b][t][i]
// s lets the kernels apply a weight block's offset (the m of Q4_1/Q5_1, the -8·d of
// Q4_0, the -16·d of Q5_0) as one multiply per block: Σ (dw·q + m) · da·qa = dw·da·Σ q·qa + m·s.
//
// d and s hold the values llama.cpp's block_q8_0 / block_q8_1 store, which keep them in
// fp16: d = fp16(amax / 127), and s (Q8Sums) = fp16(amax / 127 · Σq) for Q8_1, the
// partner of Q4_1/Q5_1, or d · Σq for Q8_0 (Q4_0, Q5_0, Q8_0), which has no s and sums
// the offset in integers (d · Σq is exact in float: 11 × 12 significant bits). Matching
// these roundings matters: they are the largest difference between two otherwise equal
// forward passes, and small models amplify them (tests/engine/model/tst_model_golden.cpp).
//
// Q8xK — 256-element super-blocks for the K-quants (Q4_K, Q5_K, Q6_K), one token:
//     int8_t  qs[nb][256]
//     int16_t bsums[nb][16]    bsums[b][j] = Σ_{i<16} qs[b][16·j + i]
//     float   d[nb]
//
// Every group / row is padded to a multiple of 64 bytes so consecutive groups stay
// cache-line aligned in the scratch buffer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hearth::kernels::cpu {

inline constexpr int kGroup = 4;  // tokens per Q8x32 group in multi-token products

inline constexpr std::size_t round_up64(std::size_t n) {
    return (n + 63) & ~std::size_t{63};
}

// Bytes of one Q8x32 group of G tokens with nb blocks each, and the offset of ds in it.
inline constexpr std::size_t q8x32_ds_offset(int64_t nb, int G) {
    return static_cast<std::size_t>(nb) * static_cast<std::size_t>(G) * 32u;
}
inline constexpr std::size_t q8x32_group_bytes(int64_t nb, int G) {
    return round_up64(q8x32_ds_offset(nb, G) +
                      static_cast<std::size_t>(nb) * 2u * static_cast<std::size_t>(G) * 4u);
}

// Token group g of a tile's Q8x32 activations (groups of G tokens, `stride` bytes apart,
// n_tokens in all): its quants [nb][G][32], its ds [nb][2][G], and how many of its G
// tokens are real. static: every kernel file gets its own copy, built for its own
// instruction set, which the linker can never merge with another's (see avx2_util.h).
struct Q8x32Group {
    const int8_t* qs;
    const float* ds;
    int n;
};
static inline Q8x32Group q8x32_group(const uint8_t* act, std::size_t stride, int64_t nb, int G,
                                     int g, int n_tokens) {
    const uint8_t* grp = act + static_cast<std::size_t>(g) * stride;
    const int left = n_tokens - g * G;
    return {reinterpret_cast<const int8_t*>(grp),
            reinterpret_cast<const float*>(grp + q8x32_ds_offset(nb, G)), left < G ? left : G};
}

// Token t of a tile's Q8x32 activations (as q8x32_group): its block b's quants at
// qs + b·G·32, its scale d at ds[b·2G].
struct Q8x32Token {
    const int8_t* qs;
    const float* ds;
    int G;
};
static inline Q8x32Token q8x32_token(const uint8_t* act, std::size_t stride, int64_t nb, int G,
                                     int t, int n_tokens) {
    const Q8x32Group g = q8x32_group(act, stride, nb, G, t / G, n_tokens);
    return {g.qs + 32 * (t % G), g.ds + t % G, G};
}

// Bytes of one Q8xK row with nb super-blocks, and the offsets of bsums and d in it.
inline constexpr std::size_t q8k_bsums_offset(int64_t nb) {
    return static_cast<std::size_t>(nb) * 256u;
}
inline constexpr std::size_t q8k_d_offset(int64_t nb) {
    return q8k_bsums_offset(nb) + static_cast<std::size_t>(nb) * 16u * 2u;
}
inline constexpr std::size_t q8k_row_bytes(int64_t nb) {
    return round_up64(q8k_d_offset(nb) + static_cast<std::size_t>(nb) * 4u);
}

// How s is rounded (see Q8x32 above).
enum class Q8Sums { Q8_0, Q8_1 };

// Quantises nt ≤ G token rows (x [nt, nb·32], rows x_stride floats apart) into one Q8x32
// group at out (q8x32_group_bytes(nb, G) bytes); tokens nt..G-1 are zero-filled.
using QuantizeQ8x32Fn = void (*)(const float* x, std::size_t x_stride, int nt, int G, int64_t nb,
                                 Q8Sums sums, uint8_t* out);
// Quantises one token row x [nb·256] into a Q8xK row at out (q8k_row_bytes(nb) bytes).
using QuantizeQ8KFn = void (*)(const float* x, int64_t nb, uint8_t* out);

void quantize_q8x32_scalar(const float* x, std::size_t x_stride, int nt, int G, int64_t nb,
                           Q8Sums sums, uint8_t* out);
void quantize_q8k_scalar(const float* x, int64_t nb, uint8_t* out);
// Same results bit for bit (same float operations, same rounding).
void quantize_q8x32_avx2(const float* x, std::size_t x_stride, int nt, int G, int64_t nb,
                         Q8Sums sums, uint8_t* out);
void quantize_q8k_avx2(const float* x, int64_t nb, uint8_t* out);

}  // namespace hearth::kernels::cpu
