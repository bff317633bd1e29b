// Inner kernels of the CPU matmul: a tile of weight rows against a tile of tokens.
// matmul.cpp quantises the activations, splits the output into tiles and runs the tiles
// on the thread pool; a kernel only computes dot products.
//
// Weight memory: row r of the tile starts at w + r·w_stride bytes and holds nb blocks of
// the weight type (the GGUF layout, read in place from the mapped file); for a kernel
// that wants a packed layout (TypeKernels::packing, weight_pack.h), w points at the packed
// group of the tile's first row and w_stride is the bytes of one group.
// Activation memory depends on the type's ActFormat (see act_quant.h):
//   Float — token t's row of floats at act + t·act_stride bytes (F32, F16, BF16 weights).
//   Q8x32 — groups of `group` tokens, group g at act + g·act_stride bytes.
//   Q8xK  — one token per row (group = 1), row t at act + t·act_stride bytes.
// Output: out[t·out_stride + r] for r < n_rows, t < n_tokens (floats), overwritten.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cpu/cpu_features.h"
#include "quant/quant_types.h"

namespace hearth::kernels::cpu {

enum class ActFormat { Float, Q8x32, Q8xK };

// The weight layout a kernel reads: the file's, or a copy repacked at load.
enum class Packing { None, Q4_0x8 };

struct GemmArgs {
    const uint8_t* w = nullptr;  // [n_rows] rows of nb blocks, w_stride bytes apart
    std::size_t w_stride = 0;
    int64_t nb = 0;  // blocks per row (elements for F32/F16/BF16)
    int n_rows = 0;
    const uint8_t* act = nullptr;  // see above
    std::size_t act_stride = 0;
    int group = 1;  // tokens per activation group (Q8x32: 1 or kGroup; else 1)
    int n_tokens = 0;
    float* out = nullptr;  // [n_tokens][out_stride], columns [0, n_rows) written
    std::size_t out_stride = 0;
};

using GemmFn = void (*)(const GemmArgs&);

struct TypeKernels {
    ActFormat act = ActFormat::Float;
    GemmFn gemm = nullptr;
    Packing packing = Packing::None;
    // Tokens per prefill tile (a multiple of kGroup); 0: the matmul's default (64). A
    // kernel that unpacks its rows once per tile wants more.
    int tile_tokens = 0;
};

// The kernels for a weight type at a resolved SIMD level, or null for a type the matmul
// cannot use.
const TypeKernels* gemm_kernels(quant::TensorType type, SimdLevel level);

// The scalar table (gemm_scalar.cpp).
const TypeKernels* gemm_kernels_scalar(quant::TensorType type);

// The AVX2 kernels (gemm_avx2_*.cpp; call only when cpu_has_avx2()).
void gemm_avx2_f32(const GemmArgs& a);
void gemm_avx2_f16(const GemmArgs& a);
void gemm_avx2_bf16(const GemmArgs& a);
void gemm_avx2_q4_0x8(const GemmArgs& a);  // Packing::Q4_0x8
void gemm_avx2_q4_1(const GemmArgs& a);
void gemm_avx2_q5_0(const GemmArgs& a);
void gemm_avx2_q5_1(const GemmArgs& a);
void gemm_avx2_q8_0(const GemmArgs& a);
void gemm_avx2_q4_k(const GemmArgs& a);
void gemm_avx2_q5_k(const GemmArgs& a);
void gemm_avx2_q6_k(const GemmArgs& a);

// The AVX-512 kernels (gemm_avx512_*.cpp; call only when cpu_has_avx512()). Same layouts,
// activations and bits as the AVX2 ones.
void gemm_avx512_q4_0x8(const GemmArgs& a);  // Packing::Q4_0x8
void gemm_avx512_q4_1(const GemmArgs& a);
void gemm_avx512_q5_0(const GemmArgs& a);
void gemm_avx512_q5_1(const GemmArgs& a);
void gemm_avx512_q8_0(const GemmArgs& a);
void gemm_avx512_q4_k(const GemmArgs& a);
void gemm_avx512_q5_k(const GemmArgs& a);
void gemm_avx512_q6_k(const GemmArgs& a);

}  // namespace hearth::kernels::cpu
