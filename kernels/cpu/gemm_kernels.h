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
    // For a kernel with an activation packer (TypeKernels::pack_act): the tile's tokens
    // in the packer's layout, its first token's group first; null when not packed.
    const uint8_t* act_packed = nullptr;
    float* out = nullptr;  // [n_tokens][out_stride], columns [0, n_rows) written
    std::size_t out_stride = 0;
    // How far ahead the few-token K-quant kernel (kquant_few.h) prefetches the weights, in
    // bytes; 0: its default. Set by the kernel choice (kernel_choice.h); no effect on bits.
    int prefetch_bytes = 0;
};

using GemmFn = void (*)(const GemmArgs&);

// Optional second activation layout, made once per product rather than in every tile
// (the AVX-512 K-quant tiles want their tokens transposed into register lanes):
// `bytes` of scratch for n_tokens tokens, and `pack` writes token group g (pack_tokens
// tokens; the last one padded) of a's activations to dst + g · bytes(nb, pack_tokens).
struct ActPacker {
    std::size_t (*bytes)(int64_t nb, int n_tokens) = nullptr;
    void (*pack)(const GemmArgs& a, int g, uint8_t* dst) = nullptr;
    int pack_tokens = 0;  // tokens per group; products with fewer tokens are not packed
};

// Tokens per prefill tile (TypeKernels::tile_tokens) of the kernels that keep tokens in
// register lanes and unpack a tile's rows once for all its tokens: the AVX2 K-quant and
// Q8_0 tiles (8 tokens per register) and the AVX-512 ones (16). Their pass buffers are
// sized from these.
inline constexpr int kAvx2TileTokens = 256;
inline constexpr int kAvx512TileTokens = 512;

struct TypeKernels {
    ActFormat act = ActFormat::Float;
    GemmFn gemm = nullptr;
    Packing packing = Packing::None;
    // Tokens per prefill tile (a multiple of kGroup); 0: the matmul's default (64). A
    // kernel that unpacks its rows once per tile wants more.
    int tile_tokens = 0;
    const ActPacker* pack_act = nullptr;
};

// The kernels for a weight type at a resolved SIMD level, or null for a type the matmul
// cannot use.
const TypeKernels* gemm_kernels(quant::TensorType type, SimdLevel level);

// The scalar table (gemm_scalar.cpp).
const TypeKernels* gemm_kernels_scalar(quant::TensorType type);

// The AVX2 kernels (gemm_avx2_*.cpp; call only when cpu_has_avx2()). The K-quants and
// Q8_0 follow their own float orders (kquant_few.h, gemm_avx2_q8_0.cpp), their tiles with
// activations packed by ActPacker.
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
void gemm_avx2_q2_k(const GemmArgs& a);
void gemm_avx2_q3_k(const GemmArgs& a);
void gemm_avx2_iq4_xs(const GemmArgs& a);
void gemm_avx2_iq4_nl(const GemmArgs& a);  // Packing::Q4_0x8; the Q8_0 kernels' order
extern const ActPacker kAvx2PackQ4_K, kAvx2PackQ5_K, kAvx2PackQ6_K, kAvx2PackQ8_0;
extern const ActPacker kAvx2PackQ2_K, kAvx2PackQ3_K, kAvx2PackIQ4_XS;

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
void gemm_avx512_q2_k(const GemmArgs& a);
void gemm_avx512_q3_k(const GemmArgs& a);
void gemm_avx512_iq4_xs(const GemmArgs& a);
void gemm_avx512_iq4_nl(const GemmArgs& a);  // Packing::Q4_0x8; the Q8_0 kernels' order
extern const ActPacker kAvx512PackQ4_K, kAvx512PackQ5_K, kAvx512PackQ6_K, kAvx512PackQ8_0;
extern const ActPacker kAvx512PackQ2_K, kAvx512PackQ3_K, kAvx512PackIQ4_XS;

}  // namespace hearth::kernels::cpu
