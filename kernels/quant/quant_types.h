// Tensor element types of GGUF/ggml and the byte layout of their quantised blocks.
// The numeric ids are the GGUF on-disk values. Layouts follow ggml-common.h; every
// block stores its scales as IEEE fp16 bit patterns (uint16_t here).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hearth::quant {

enum class TensorType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    BF16 = 30,
};

struct TypeTraits {
    std::string_view name;
    int64_t block_elems;  // elements per block (1 for plain float types)
    int64_t block_bytes;  // bytes per block
};

// Traits of a type Hearth supports, or nullopt for any other id (including valid ggml
// types we do not read, such as Q2_K or IQ4_NL).
std::optional<TypeTraits> traits(uint32_t type_id);
inline std::optional<TypeTraits> traits(TensorType type) {
    return traits(static_cast<uint32_t>(type));
}
// Name of any ggml type id, also the ones Hearth does not support ("Q2_K", "IQ4_NL"), or
// "type N" for an unknown id. For error messages.
std::string_view type_name(uint32_t type_id);
// The type Hearth supports with this name ("Q4_K"), or nullopt.
std::optional<TensorType> type_from_name(std::string_view name);

inline constexpr int64_t kQK = 32;    // elements per block of the 32-element formats
inline constexpr int64_t kQKK = 256;  // elements per super-block of the K-quants
inline constexpr int kKScaleBytes = 12;

struct BlockQ4_0 {
    uint16_t d;
    uint8_t qs[kQK / 2];
};
struct BlockQ4_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qs[kQK / 2];
};
struct BlockQ5_0 {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[kQK / 2];
};
struct BlockQ5_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qh[4];
    uint8_t qs[kQK / 2];
};
struct BlockQ8_0 {
    uint16_t d;
    int8_t qs[kQK];
};
struct BlockQ4_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[kKScaleBytes];
    uint8_t qs[kQKK / 2];
};
struct BlockQ5_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[kKScaleBytes];
    uint8_t qh[kQKK / 8];
    uint8_t qs[kQKK / 2];
};
struct BlockQ6_K {
    uint8_t ql[kQKK / 2];
    uint8_t qh[kQKK / 4];
    int8_t scales[kQKK / 16];
    uint16_t d;
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);

}  // namespace hearth::quant
