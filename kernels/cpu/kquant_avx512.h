// The AVX-512 level's K-quant products (Q4_K, Q5_K, Q6_K against Q8xK activations): one
// float order for every token count, shared by two kernels.
//
// The order. For weight row r and token t, super-block by super-block (b = 0, 1, ..):
//   Q4_K / Q5_K:  S1 = Σ_j sc_j · Σ_{i∈j} q_i·a_i     S2 = Σ_j m_j · Σ_{i∈j} a_i   (int32, exact)
//                 f  = fl(S1) · d_b;   f = f − dmin_b · fl(S2)   (one rounding: fnmadd)
//   Q6_K:         S1 = Σ_j sc_j · (Σ_{i∈j} q_i·a_i − 32 · Σ_{i∈j} a_i)              (int32, exact)
//                 f  = fl(S1) · d_b
//   then          acc = fma(f, da_b, acc)    (acc starts at 0; the result is acc)
// with j the sub-blocks (32 elements for Q4_K/Q5_K, 16 for Q6_K), q the unsigned quants,
// a the token's int8 activations and da_b their scale. Every step is a single IEEE
// operation on values that do not depend on the token's company, so a row's result is
// the same bits whichever kernel computes it and whatever the batch: the kernels below
// differ only in how they lay the work out.
//
// This is not the AVX2 kernels' order (they keep 8 float partial sums per token and add
// them at the end), so the AVX-512 level gives other bits than the AVX2 level for the
// K-quants; tst_cpu_ops checks both AVX-512 kernels against a scalar model of this order,
// bit for bit.
//
//   - few tokens (gemm_avx512_kquant_few.cpp): decode and short tiles; each row's integer
//     sums as the AVX2 kernel makes them, then 8 rows side by side for the float steps.
//   - tiles (gemm_avx512_kquant.cpp): 16 tokens side by side in the lanes of a register,
//     vpdpbusd on unpacked weight bytes, 4 rows × 3 groups of 16 tokens at a time.
//
// Declared for the *_avx512.cpp files only (call only when cpu_has_avx512()).
#pragma once

#include "cpu/gemm_kernels.h"

namespace hearth::kernels::cpu {

// Any number of tokens (meant for fewer than 16), type Q4_K, Q5_K or Q6_K.
void kquant_few_avx512(quant::TensorType type, const GemmArgs& a);

}  // namespace hearth::kernels::cpu
