#include "cpu/kernel_choice.h"

#include <optional>

namespace hearth::kernels::cpu {

namespace {

using quant::TensorType;

bool is_k_quant(TensorType t) {
    switch (t) {
        case TensorType::Q2_K:
        case TensorType::Q3_K:
        case TensorType::Q4_K:
        case TensorType::Q5_K:
        case TensorType::Q6_K:
        case TensorType::IQ4_XS:
            return true;
        default:
            return false;
    }
}

// The few-token K-quant kernel's prefetch distances on offer besides its default (6 KB,
// kquant_few.h): 3 KB was the default before it, 12 KB suits a memory system with more
// latency to cover.
constexpr int kPrefetchChoices[] = {3072, 12288};

std::optional<ShapeClass> class_from_name(std::string_view s) {
    if (s == "decode") return ShapeClass::Decode;
    if (s == "prefill") return ShapeClass::Prefill;
    return std::nullopt;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

constexpr TensorType kAllTypes[] = {
    TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q4_0,   TensorType::Q4_1,
    TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K,   TensorType::Q3_K,
    TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K, TensorType::IQ4_NL, TensorType::IQ4_XS};

}  // namespace

std::string_view shape_class_name(ShapeClass c) {
    return c == ShapeClass::Decode ? "decode" : "prefill";
}

std::vector<KernelVariant> kernel_variants(TensorType type, ShapeClass cls, SimdLevel level) {
    std::vector<KernelVariant> bases;
    if (level == SimdLevel::Scalar || level == SimdLevel::Auto) {
        if (const TypeKernels* k = gemm_kernels_scalar(type)) bases.push_back({"scalar", k, 0});
        return bases;
    }
    const TypeKernels* avx2 = gemm_kernels(type, SimdLevel::Avx2);
    if (!avx2) return bases;
    if (level == SimdLevel::Avx512) {
        const TypeKernels* avx512 = gemm_kernels(type, SimdLevel::Avx512);
        if (avx512 != avx2) {
            bases.push_back({"avx512", avx512, 0});
            // The same weight layout, so that the copy made at load serves both.
            if (avx2->packing == avx512->packing) bases.push_back({"avx2", avx2, 0});
        } else {
            bases.push_back({"avx2", avx2, 0});
        }
    } else {
        bases.push_back({"avx2", avx2, 0});
    }
    if (cls != ShapeClass::Decode || !is_k_quant(type)) return bases;
    std::vector<KernelVariant> out;
    for (const KernelVariant& b : bases) {
        out.push_back(b);
        for (int pf : kPrefetchChoices)
            out.push_back({b.name + "+pf" + std::to_string(pf / 1024) + "k", b.kernels, pf});
    }
    return out;
}

KernelPlan::KernelPlan(SimdLevel level) : level_(level) {
    for (TensorType t : kAllTypes)
        for (ShapeClass c : {ShapeClass::Decode, ShapeClass::Prefill}) {
            auto v = kernel_variants(t, c, level);
            if (!v.empty()) slot(t, c).variant = std::move(v.front());
        }
}

KernelPlan::Slot& KernelPlan::slot(TensorType type, ShapeClass cls) {
    return slots_[static_cast<std::size_t>(type) % kTypeSlots][static_cast<std::size_t>(cls)];
}

const KernelPlan::Slot& KernelPlan::slot(TensorType type, ShapeClass cls) const {
    return slots_[static_cast<std::size_t>(type) % kTypeSlots][static_cast<std::size_t>(cls)];
}

const KernelVariant& KernelPlan::get(TensorType type, ShapeClass cls) const {
    return slot(type, cls).variant;
}

bool KernelPlan::forced(TensorType type, ShapeClass cls) const {
    return slot(type, cls).forced;
}

bool KernelPlan::set(TensorType type, ShapeClass cls, std::string_view name) {
    for (KernelVariant& v : kernel_variants(type, cls, level_))
        if (v.name == name) {
            slot(type, cls).variant = std::move(v);
            return true;
        }
    return false;
}

std::vector<std::string> KernelPlan::apply_forced(std::string_view spec) {
    std::vector<std::string> problems;
    while (!spec.empty()) {
        const std::size_t comma = spec.find(',');
        const std::string_view item = trim(spec.substr(0, comma));
        spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
        if (item.empty()) continue;
        // [TYPE][.CLASS]=NAME, or NAME alone.
        std::string_view target, name = item;
        if (const std::size_t eq = item.find('='); eq != std::string_view::npos) {
            target = trim(item.substr(0, eq));
            name = trim(item.substr(eq + 1));
        }
        std::optional<TensorType> only_type;
        std::optional<ShapeClass> only_class;
        if (!target.empty()) {
            const std::size_t dot = target.find('.');
            const std::string_view type_part = target.substr(0, dot);
            const std::string_view class_part =
                dot == std::string_view::npos ? std::string_view{} : target.substr(dot + 1);
            if (auto c = class_from_name(type_part); c && dot == std::string_view::npos) {
                only_class = c;  // CLASS=NAME
            } else {
                only_type = quant::type_from_name(type_part);
                if (!only_type) {
                    problems.push_back(std::string(item) + ": no weight type " +
                                       std::string(type_part));
                    continue;
                }
                if (!class_part.empty()) {
                    only_class = class_from_name(class_part);
                    if (!only_class) {
                        problems.push_back(std::string(item) + ": no shape class " +
                                           std::string(class_part) + " (decode, prefill)");
                        continue;
                    }
                }
            }
        }
        bool any = false;
        for (TensorType t : kAllTypes) {
            if (only_type && t != *only_type) continue;
            for (ShapeClass c : {ShapeClass::Decode, ShapeClass::Prefill}) {
                if (only_class && c != *only_class) continue;
                if (set(t, c, name)) {
                    slot(t, c).forced = true;
                    any = true;
                }
            }
        }
        if (!any)
            problems.push_back(std::string(item) + ": no kernel of that name at the " +
                               std::string(simd_level_name(level_)) + " level");
    }
    return problems;
}

}  // namespace hearth::kernels::cpu
