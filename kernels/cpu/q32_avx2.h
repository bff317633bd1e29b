// The 32-element weight formats Q4_1, Q5_0 and Q5_1 as the AVX2 (gemm_avx2_q32.cpp)
// and AVX-512 (gemm_avx512_q32.cpp) kernels read them: block sizes, the quants as bytes,
// the block's scale and offset.
//
// Include only from files compiled with AVX2 (or more) enabled. Everything here is in an
// unnamed namespace: each kernel file gets its own copy, compiled for its own instruction
// set, which the linker can never merge (see avx2_util.h).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "cpu/act_quant.h"
#include "cpu/avx2_util.h"
#include "cpu/gemm_kernels.h"
#include "quant/quant_types.h"

namespace hearth::kernels::cpu {

namespace {

using quant::TensorType;

template <TensorType T>
struct Fmt;
// kBytes: block size; kM: factor of the lane-1 offset sum at the end (0 = none).
template <>
struct Fmt<TensorType::Q4_1> {
    static constexpr int kBytes = 20, kQs = 4;
    static constexpr float kM = 1.0f;
};
template <>
struct Fmt<TensorType::Q5_0> {
    static constexpr int kBytes = 22, kQs = 6;
    static constexpr float kM = -16.0f;
};
template <>
struct Fmt<TensorType::Q5_1> {
    static constexpr int kBytes = 24, kQs = 8;
    static constexpr float kM = 1.0f;
};

// The block's 32 quants as bytes: 0..15 (Q4), 0..31 (Q5).
template <TensorType T>
static inline __m256i load_q(const uint8_t* p) {
    if constexpr (T == TensorType::Q4_1) {
        return avx2::nibbles32(p + Fmt<T>::kQs);
    } else {
        const uint32_t qh = avx2::load_u32(p + Fmt<T>::kQs - 4);
        return _mm256_or_si256(avx2::nibbles32(p + Fmt<T>::kQs), avx2::bits32_to_0x10(qh));
    }
}

// [d, m] of the block in lanes 0 and 1: m for Q4_1/Q5_1, d again for the others (their
// offset is kM · d).
template <TensorType T>
static inline __m128 load_dm(const uint8_t* p) {
    if constexpr (T == TensorType::Q4_1 || T == TensorType::Q5_1) {
        return avx2::fp16x2(p);
    } else {
        return _mm_cvtph_ps(_mm_set1_epi16(static_cast<short>(avx2::load_u16(p))));
    }
}

}  // namespace

}  // namespace hearth::kernels::cpu
