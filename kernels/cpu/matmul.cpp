#include "cpu/matmul.h"

#include <algorithm>

#include "cpu/act_quant.h"
#include "cpu/gemm_kernels.h"
#include "cpu/weight_pack.h"

namespace hearth::kernels::cpu {

namespace {

using quant::TensorType;

#ifdef HEARTH_HAVE_AVX2_KERNELS
const TypeKernels kAvx2F32{ActFormat::Float, gemm_avx2_f32};
const TypeKernels kAvx2F16{ActFormat::Float, gemm_avx2_f16};
const TypeKernels kAvx2BF16{ActFormat::Float, gemm_avx2_bf16};
const TypeKernels kAvx2Q4_0{ActFormat::Q8x32, gemm_avx2_q4_0x8, Packing::Q4_0x8};
const TypeKernels kAvx2Q4_1{ActFormat::Q8x32, gemm_avx2_q4_1};
const TypeKernels kAvx2Q5_0{ActFormat::Q8x32, gemm_avx2_q5_0};
const TypeKernels kAvx2Q5_1{ActFormat::Q8x32, gemm_avx2_q5_1};
const TypeKernels kAvx2Q8_0{ActFormat::Q8x32, gemm_avx2_q8_0, Packing::None, kAvx2TileTokens,
                            &kAvx2PackQ8_0};
// The K-quant tiles unpack a pass's rows once for all its tokens (see kAvx512Q4_K).
const TypeKernels kAvx2Q4_K{ActFormat::Q8xK, gemm_avx2_q4_k, Packing::None, kAvx2TileTokens,
                            &kAvx2PackQ4_K};
const TypeKernels kAvx2Q5_K{ActFormat::Q8xK, gemm_avx2_q5_k, Packing::None, kAvx2TileTokens,
                            &kAvx2PackQ5_K};
const TypeKernels kAvx2Q6_K{ActFormat::Q8xK, gemm_avx2_q6_k, Packing::None, kAvx2TileTokens,
                            &kAvx2PackQ6_K};
const TypeKernels kAvx2Q2_K{ActFormat::Q8xK, gemm_avx2_q2_k, Packing::None, kAvx2TileTokens,
                            &kAvx2PackQ2_K};
const TypeKernels kAvx2Q3_K{ActFormat::Q8xK, gemm_avx2_q3_k, Packing::None, kAvx2TileTokens,
                            &kAvx2PackQ3_K};
const TypeKernels kAvx2IQ4_XS{ActFormat::Q8xK, gemm_avx2_iq4_xs, Packing::None, kAvx2TileTokens,
                              &kAvx2PackIQ4_XS};
const TypeKernels kAvx2IQ4_NL{ActFormat::Q8x32, gemm_avx2_iq4_nl, Packing::Q4_0x8, kAvx2TileTokens,
                              &kAvx2PackQ8_0};

const TypeKernels* gemm_kernels_avx2(TensorType type) {
    switch (type) {
        case TensorType::F32:
            return &kAvx2F32;
        case TensorType::F16:
            return &kAvx2F16;
        case TensorType::BF16:
            return &kAvx2BF16;
        case TensorType::Q4_0:
            return &kAvx2Q4_0;
        case TensorType::Q4_1:
            return &kAvx2Q4_1;
        case TensorType::Q5_0:
            return &kAvx2Q5_0;
        case TensorType::Q5_1:
            return &kAvx2Q5_1;
        case TensorType::Q8_0:
            return &kAvx2Q8_0;
        case TensorType::Q4_K:
            return &kAvx2Q4_K;
        case TensorType::Q5_K:
            return &kAvx2Q5_K;
        case TensorType::Q6_K:
            return &kAvx2Q6_K;
        case TensorType::Q2_K:
            return &kAvx2Q2_K;
        case TensorType::Q3_K:
            return &kAvx2Q3_K;
        case TensorType::IQ4_NL:
            return &kAvx2IQ4_NL;
        case TensorType::IQ4_XS:
            return &kAvx2IQ4_XS;
    }
    return nullptr;
}
#else
const TypeKernels* gemm_kernels_avx2(TensorType type) {
    return gemm_kernels_scalar(type);
}
#endif

#ifdef HEARTH_HAVE_AVX512_KERNELS
// AVX-512 has its own kernels for the quantised types; the float ones run AVX2's.
const TypeKernels kAvx512Q4_0{ActFormat::Q8x32, gemm_avx512_q4_0x8, Packing::Q4_0x8};
const TypeKernels kAvx512Q4_1{ActFormat::Q8x32, gemm_avx512_q4_1};
const TypeKernels kAvx512Q5_0{ActFormat::Q8x32, gemm_avx512_q5_0};
const TypeKernels kAvx512Q5_1{ActFormat::Q8x32, gemm_avx512_q5_1};
const TypeKernels kAvx512Q8_0{ActFormat::Q8x32, gemm_avx512_q8_0, Packing::None, kAvx512TileTokens,
                              &kAvx512PackQ8_0};
// The K-quant kernels unpack a tile's rows once for all its tokens: with 64-token tiles a
// 1B-shaped Q6_K prefill spent 16 % of its time unpacking (perf); 256-token tiles
// prefilled 512 tokens 1-15 % faster (1B-shaped Q6_K and Q4_K_M, alternating runs), and
// 512-token tiles ran the 1B-shaped 512-token products 2-4 % (Q4_K, Q6_K) and 7 % (Q5_K,
// whose unpacking costs most) faster again (hearth-kernel-bench, alternating builds).
const TypeKernels kAvx512Q4_K{ActFormat::Q8xK, gemm_avx512_q4_k, Packing::None, kAvx512TileTokens,
                              &kAvx512PackQ4_K};
const TypeKernels kAvx512Q5_K{ActFormat::Q8xK, gemm_avx512_q5_k, Packing::None, kAvx512TileTokens,
                              &kAvx512PackQ5_K};
const TypeKernels kAvx512Q6_K{ActFormat::Q8xK, gemm_avx512_q6_k, Packing::None, kAvx512TileTokens,
                              &kAvx512PackQ6_K};
const TypeKernels kAvx512Q2_K{ActFormat::Q8xK, gemm_avx512_q2_k, Packing::None, kAvx512TileTokens,
                              &kAvx512PackQ2_K};
const TypeKernels kAvx512Q3_K{ActFormat::Q8xK, gemm_avx512_q3_k, Packing::None, kAvx512TileTokens,
                              &kAvx512PackQ3_K};
const TypeKernels kAvx512IQ4_NL{ActFormat::Q8x32, gemm_avx512_iq4_nl, Packing::Q4_0x8,
                                kAvx512TileTokens, &kAvx512PackQ8_0};
const TypeKernels kAvx512IQ4_XS{ActFormat::Q8xK, gemm_avx512_iq4_xs, Packing::None,
                                kAvx512TileTokens, &kAvx512PackIQ4_XS};

const TypeKernels* gemm_kernels_avx512(TensorType type) {
    switch (type) {
        case TensorType::Q4_0:
            return &kAvx512Q4_0;
        case TensorType::Q4_1:
            return &kAvx512Q4_1;
        case TensorType::Q5_0:
            return &kAvx512Q5_0;
        case TensorType::Q5_1:
            return &kAvx512Q5_1;
        case TensorType::Q8_0:
            return &kAvx512Q8_0;
        case TensorType::Q4_K:
            return &kAvx512Q4_K;
        case TensorType::Q5_K:
            return &kAvx512Q5_K;
        case TensorType::Q6_K:
            return &kAvx512Q6_K;
        case TensorType::Q2_K:
            return &kAvx512Q2_K;
        case TensorType::Q3_K:
            return &kAvx512Q3_K;
        case TensorType::IQ4_XS:
            return &kAvx512IQ4_XS;
        case TensorType::IQ4_NL:
            return &kAvx512IQ4_NL;
        default:
            return gemm_kernels_avx2(type);
    }
}
#else
const TypeKernels* gemm_kernels_avx512(TensorType type) {
    return gemm_kernels_avx2(type);
}
#endif

int64_t block_elems(TensorType type) {
    return quant::traits(type)->block_elems;
}

// Tile sizes. Decode (a few tokens): rows only, about 8 chunks per thread so a thread
// that was preempted or runs on a slower core does not hold the op up. Prefill: up to 64
// rows × 64 tokens per tile — the tile's weight rows and quantised activations (~40 KB
// for 576 columns) stay in L2 while the kernel reuses them across each other.
constexpr int kRowAlign = 16;
static_assert(kRowAlign % kQ4_0x8Rows == 0);
constexpr int kGemmRows = 64;
constexpr int kGemmTokens = 64;            // a multiple of kGroup
constexpr int kFewTokens = kDecodeTokens;  // up to this many tokens: split rows only

}  // namespace

const TypeKernels* gemm_kernels(TensorType type, SimdLevel level) {
    switch (level) {
        case SimdLevel::Avx512:
            return gemm_kernels_avx512(type);
        case SimdLevel::Avx2:
            return gemm_kernels_avx2(type);
        default:
            return gemm_kernels_scalar(type);
    }
}

std::size_t matmul_packed_bytes(SimdLevel level, const WeightView& w) {
    const TypeKernels* k = gemm_kernels(w.type, level);
    if (!k || k->packing == Packing::None) return 0;
    return q4_0x8_bytes(w.rows, w.cols / block_elems(w.type));
}

void matmul_pack(SimdLevel level, WeightView& w, uint8_t* dst) {
    const TypeKernels* k = gemm_kernels(w.type, level);
    if (!k || k->packing == Packing::None) return;
    const int64_t nb = w.cols / block_elems(w.type);
    pack_q4_0x8(w.data, w.row_bytes, w.rows, nb, dst);
    w.packed = dst;
    w.packed_group_bytes = q4_0x8_group_bytes(nb);
}

bool matmul_supports(TensorType type, int64_t cols) {
    return gemm_kernels_scalar(type) != nullptr && cols > 0 && cols % block_elems(type) == 0;
}

void matmul(ThreadPool& pool, const KernelPlan& plan, AlignedBuffer& scratch, const WeightView& w,
            const float* x, int32_t n_tokens, float* out, const float* bias) {
    if (n_tokens <= 0 || w.rows <= 0) return;
    const SimdLevel level = plan.level();
    const KernelVariant& choice = plan.get(w.type, shape_class(n_tokens));
    const TypeKernels* k = choice.kernels ? choice.kernels : gemm_kernels(w.type, level);
    // A kernel that reads a packed copy, without the copy: the portable kernel (Q4_0's
    // bits; IQ4_NL's portable kernel keeps llama.cpp's order, so CpuWeight always packs).
    if (k->packing != Packing::None && !w.packed) k = gemm_kernels_scalar(w.type);
    const bool packed = k->packing != Packing::None;
#ifdef HEARTH_HAVE_AVX2_KERNELS
    const bool avx2 = uses_avx2(level);
#else
    const bool avx2 = false;
#endif
    const int64_t nb = w.cols / block_elems(w.type);
    const auto cols = static_cast<std::size_t>(w.cols);

    // (1) Activations.
    GemmArgs base;
    base.w_stride = packed ? w.packed_group_bytes : w.row_bytes;
    base.nb = nb;
    base.out_stride = static_cast<std::size_t>(w.rows);
    base.prefetch_bytes = choice.prefetch_bytes;
    int tokens_per_act = 1;  // tokens per act_stride step
    // A second layout of the activations, made once here for kernels that want one.
    const ActPacker* pk = k->pack_act;
    const bool pack = pk && n_tokens >= pk->pack_tokens;
    const std::size_t pack_bytes = pack ? pk->bytes(nb, n_tokens) : 0;
    uint8_t* act_buf = nullptr;  // the quantised activations, act_bytes, then the packed ones
    std::size_t act_bytes = 0;
    std::size_t packed_group_bytes = 0;
    int packed_group_tokens = 1;
    switch (k->act) {
        case ActFormat::Float:
            base.act = reinterpret_cast<const uint8_t*>(x);
            base.act_stride = cols * sizeof(float);
            break;
        case ActFormat::Q8x32: {
            const int G = n_tokens == 1 ? 1 : kGroup;
            const int n_groups = (n_tokens + G - 1) / G;
            const std::size_t gb = q8x32_group_bytes(nb, G);
            act_bytes = gb * static_cast<std::size_t>(n_groups);
            auto* buf = static_cast<uint8_t*>(scratch.get(act_bytes + pack_bytes));
            act_buf = buf;
            const QuantizeQ8x32Fn q = avx2 ? quantize_q8x32_avx2 : quantize_q8x32_scalar;
            // Q4_1/Q5_1 pair with llama.cpp's Q8_1 activations, the others with Q8_0.
            const Q8Sums sums = w.type == TensorType::Q4_1 || w.type == TensorType::Q5_1
                                    ? Q8Sums::Q8_1
                                    : Q8Sums::Q8_0;
            const auto quantize_group = [&](int64_t g, int) {
                const int t0 = static_cast<int>(g) * G;
                q(x + static_cast<std::size_t>(t0) * cols, cols, std::min(G, n_tokens - t0), G, nb,
                  sums, buf + static_cast<std::size_t>(g) * gb);
            };
            if (n_groups >= 16) {
                pool.run(n_groups, quantize_group);
            } else {
                for (int g = 0; g < n_groups; ++g) quantize_group(g, 0);
            }
            base.act = buf;
            base.act_stride = gb;
            base.group = G;
            tokens_per_act = G;
            break;
        }
        case ActFormat::Q8xK: {
            const std::size_t rb = q8k_row_bytes(nb);
            act_bytes = rb * static_cast<std::size_t>(n_tokens);
            auto* buf = static_cast<uint8_t*>(scratch.get(act_bytes + pack_bytes));
            act_buf = buf;
            const QuantizeQ8KFn q = avx2 ? quantize_q8k_avx2 : quantize_q8k_scalar;
            const auto quantize_row = [&](int64_t t, int) {
                q(x + static_cast<std::size_t>(t) * cols, nb,
                  buf + static_cast<std::size_t>(t) * rb);
            };
            if (n_tokens >= 64) {
                pool.run(n_tokens, quantize_row);
            } else {
                for (int t = 0; t < n_tokens; ++t) quantize_row(t, 0);
            }
            base.act = buf;
            base.act_stride = rb;
            break;
        }
    }

    if (pack && act_buf) {
        uint8_t* packed_act = act_buf + act_bytes;
        packed_group_bytes = pk->bytes(nb, pk->pack_tokens);
        packed_group_tokens = pk->pack_tokens;
        const int groups = (n_tokens + pk->pack_tokens - 1) / pk->pack_tokens;
        GemmArgs all = base;
        all.n_tokens = n_tokens;
        pool.run(groups, [&](int64_t g, int) {
            pk->pack(all, static_cast<int>(g),
                     packed_act + static_cast<std::size_t>(g) * packed_group_bytes);
        });
        base.act_packed = packed_act;
    }

    // (2) Tiles.
    const auto rows = static_cast<int>(w.rows);
    int row_chunk, token_chunk;
    if (n_tokens <= kFewTokens) {
        token_chunk = n_tokens;
        const int target = pool.size() * 8;
        row_chunk = (rows + target - 1) / target;
        row_chunk = std::max(kRowAlign, (row_chunk + kRowAlign - 1) / kRowAlign * kRowAlign);
    } else {
        // Smaller row chunks when a short batch would leave fewer than ~4 tiles per thread.
        token_chunk = k->tile_tokens > 0 ? k->tile_tokens : kGemmTokens;
        const int token_chunks = (n_tokens + token_chunk - 1) / token_chunk;
        const int want_row_chunks = (pool.size() * 4 + token_chunks - 1) / token_chunks;
        row_chunk = (rows + want_row_chunks - 1) / want_row_chunks;
        row_chunk =
            std::clamp((row_chunk + kRowAlign - 1) / kRowAlign * kRowAlign, kRowAlign, kGemmRows);
    }
    const int n_row_chunks = (rows + row_chunk - 1) / row_chunk;
    const int n_token_chunks = (n_tokens + token_chunk - 1) / token_chunk;

    pool.run(int64_t{n_row_chunks} * n_token_chunks, [&](int64_t task, int) {
        const int rc = static_cast<int>(task % n_row_chunks);
        const int tc = static_cast<int>(task / n_row_chunks);
        const int r0 = rc * row_chunk;
        const int t0 = tc * token_chunk;
        GemmArgs a = base;
        // Row chunks start at multiples of kRowAlign, so a packed chunk starts a group.
        a.w = packed ? w.packed + static_cast<std::size_t>(r0 / kQ4_0x8Rows) * w.packed_group_bytes
                     : w.data + static_cast<std::size_t>(r0) * w.row_bytes;
        a.n_rows = std::min(row_chunk, rows - r0);
        a.act = base.act + static_cast<std::size_t>(t0 / tokens_per_act) * base.act_stride;
        // Token chunks start at multiples of the packer's group (tile_tokens is one).
        if (a.act_packed)
            a.act_packed += static_cast<std::size_t>(t0 / packed_group_tokens) * packed_group_bytes;
        a.n_tokens = std::min(token_chunk, n_tokens - t0);
        a.out = out + static_cast<std::size_t>(t0) * base.out_stride + r0;
        k->gemm(a);
        if (bias) {
            for (int t = 0; t < a.n_tokens; ++t) {
                float* o = a.out + static_cast<std::size_t>(t) * a.out_stride;
                for (int r = 0; r < a.n_rows; ++r) o[r] += bias[r0 + r];
            }
        }
    });
}

}  // namespace hearth::kernels::cpu
