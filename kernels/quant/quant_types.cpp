#include "quant/quant_types.h"

#include <iterator>

namespace hearth::quant {

std::optional<TypeTraits> traits(uint32_t type_id) {
    switch (static_cast<TensorType>(type_id)) {
        case TensorType::F32:
            return TypeTraits{"F32", 1, 4};
        case TensorType::F16:
            return TypeTraits{"F16", 1, 2};
        case TensorType::BF16:
            return TypeTraits{"BF16", 1, 2};
        case TensorType::Q4_0:
            return TypeTraits{"Q4_0", kQK, sizeof(BlockQ4_0)};
        case TensorType::Q4_1:
            return TypeTraits{"Q4_1", kQK, sizeof(BlockQ4_1)};
        case TensorType::Q5_0:
            return TypeTraits{"Q5_0", kQK, sizeof(BlockQ5_0)};
        case TensorType::Q5_1:
            return TypeTraits{"Q5_1", kQK, sizeof(BlockQ5_1)};
        case TensorType::Q8_0:
            return TypeTraits{"Q8_0", kQK, sizeof(BlockQ8_0)};
        case TensorType::Q2_K:
            return TypeTraits{"Q2_K", kQKK, sizeof(BlockQ2_K)};
        case TensorType::Q3_K:
            return TypeTraits{"Q3_K", kQKK, sizeof(BlockQ3_K)};
        case TensorType::IQ4_NL:
            return TypeTraits{"IQ4_NL", kQK, sizeof(BlockIQ4_NL)};
        case TensorType::IQ4_XS:
            return TypeTraits{"IQ4_XS", kQKK, sizeof(BlockIQ4_XS)};
        case TensorType::Q4_K:
            return TypeTraits{"Q4_K", kQKK, sizeof(BlockQ4_K)};
        case TensorType::Q5_K:
            return TypeTraits{"Q5_K", kQKK, sizeof(BlockQ5_K)};
        case TensorType::Q6_K:
            return TypeTraits{"Q6_K", kQKK, sizeof(BlockQ6_K)};
    }
    return std::nullopt;
}

std::optional<TensorType> type_from_name(std::string_view name) {
    for (uint32_t id = 0; id <= static_cast<uint32_t>(TensorType::BF16); ++id)
        if (auto t = traits(id); t && t->name == name) return static_cast<TensorType>(id);
    return std::nullopt;
}

std::string_view type_name(uint32_t type_id) {
    if (auto t = traits(type_id)) return t->name;
    // ggml ids Hearth does not read, named so errors can say what the file holds.
    static constexpr std::string_view kGgmlNames[] = {
        "F32",      "F16",      "Q4_0",    "Q4_1",  "Q4_2",   "Q4_3",  "Q5_0",  "Q5_1",
        "Q8_0",     "Q8_1",     "Q2_K",    "Q3_K",  "Q4_K",   "Q5_K",  "Q6_K",  "Q8_K",
        "IQ2_XXS",  "IQ2_XS",   "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS",
        "I8",       "I16",      "I32",     "I64",   "F64",    "IQ1_M", "BF16",  "Q4_0_4_4",
        "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",   "TQ2_0"};
    if (type_id < std::size(kGgmlNames)) return kGgmlNames[type_id];
    return "unknown type";
}

}  // namespace hearth::quant
