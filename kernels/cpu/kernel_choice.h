// Which matmul kernel runs for each weight type and shape class, chosen per machine.
//
// A weight type has several candidate kernels at a SIMD level (kernel_variants): at the
// AVX-512 level its AVX-512 kernel and its AVX2 one (a Zen 4 core runs 512-bit vectors
// on 256-bit units, where the narrower kernel can win), and for the K-quants' decode
// kernel several prefetch distances (how far ahead of the row being read the weights are
// asked for suits one memory system and not another). Every candidate of a type gives
// the same bits, whatever the batch: the K-quants, Q8_0 and IQ4_NL follow orders of their
// own at both levels (kquant_few.h, gemm_avx2_q8_0.cpp) and the others llama.cpp's; a
// prefetch moves no arithmetic. So a choice never changes a result, the prefix cache
// stays exact (cache on = off) and the KV disk tier's key (Backend::numerics) need not
// name it. tst_cpu_ops checks every candidate's bits.
//
// The plan (KernelPlan) starts from each type's first candidate (the level's default),
// takes what the machine's measurements chose (kernel_tuner.h), and then what the
// environment forces: HEARTH_CPU_KERNELS, a comma-separated list of
//   NAME                     every type and class that has a candidate of that name
//   TYPE=NAME                both classes of one type (TYPE as GGUF names it: Q4_K)
//   TYPE.CLASS=NAME, CLASS=NAME   one class (decode, prefill)
// e.g. HEARTH_CPU_KERNELS=avx2 or HEARTH_CPU_KERNELS=Q4_K.decode=avx2+pf3k (tests and
// benchmarks; a name no candidate has is reported, and nothing changes for it).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cpu/cpu_features.h"
#include "cpu/gemm_kernels.h"
#include "quant/quant_types.h"

namespace hearth::kernels::cpu {

// Products of up to kDecodeTokens tokens split rows only and run the types' few-token
// kernels (decode, a few sequences at once); longer ones run the tiles (prefill).
inline constexpr int kDecodeTokens = 4;

enum class ShapeClass : uint8_t { Decode = 0, Prefill = 1 };

inline ShapeClass shape_class(int32_t n_tokens) {
    return n_tokens <= kDecodeTokens ? ShapeClass::Decode : ShapeClass::Prefill;
}
std::string_view shape_class_name(ShapeClass c);  // "decode", "prefill"

struct KernelVariant {
    std::string name;  // "avx2", "avx512", "avx2+pf3k" (prefetch 3 KB ahead), "scalar"
    const TypeKernels* kernels = nullptr;
    int prefetch_bytes = 0;  // GemmArgs::prefetch_bytes
};

// The candidates for a type and class at a resolved level, the default first; empty for a
// type the matmul cannot use. Every candidate of a type reads the same weight layout
// (TypeKernels::packing).
std::vector<KernelVariant> kernel_variants(quant::TensorType type, ShapeClass cls, SimdLevel level);

class KernelPlan {
  public:
    explicit KernelPlan(SimdLevel level = SimdLevel::Scalar);

    SimdLevel level() const { return level_; }
    // The variant that runs (the default for a type the plan has not seen set).
    const KernelVariant& get(quant::TensorType type, ShapeClass cls) const;
    // Picks the candidate of that name; false (nothing changes) when there is none.
    bool set(quant::TensorType type, ShapeClass cls, std::string_view name);
    // Whether the environment forced this type and class (apply_forced); the tuner leaves
    // those alone.
    bool forced(quant::TensorType type, ShapeClass cls) const;

    // Applies a HEARTH_CPU_KERNELS-style list (see above); returns what could not be
    // applied, one line per item, empty when all was.
    std::vector<std::string> apply_forced(std::string_view spec);

  private:
    static constexpr std::size_t kTypeSlots = 32;  // TensorType ids are below this
    struct Slot {
        KernelVariant variant;
        bool forced = false;
    };
    Slot& slot(quant::TensorType type, ShapeClass cls);
    const Slot& slot(quant::TensorType type, ShapeClass cls) const;

    SimdLevel level_;
    std::array<std::array<Slot, 2>, kTypeSlots> slots_{};
};

}  // namespace hearth::kernels::cpu
