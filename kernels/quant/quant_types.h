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
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    IQ4_NL = 20,
    IQ4_XS = 23,
    BF16 = 30,
};

struct TypeTraits {
    std::string_view name;
    int64_t block_elems;  // elements per block (1 for plain float types)
    int64_t block_bytes;  // bytes per block
};

// Traits of a type Hearth supports, or nullopt for any other id (including valid ggml
// types we do not read, such as IQ2_XS or TQ1_0).
std::optional<TypeTraits> traits(uint32_t type_id);
inline std::optional<TypeTraits> traits(TensorType type) {
    return traits(static_cast<uint32_t>(type));
}
// Name of any ggml type id, also the ones Hearth does not support ("IQ2_XS", "TQ1_0"), or
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
// Q2_K: 16 sub-blocks of 16; scales[j] holds sub-block j's 4-bit scale (low nibble) and
// 4-bit min (high nibble); qs: 2-bit quants, element 128n + 32j + 16h + l in bits 2j..2j+1
// of qs[32n + 16h + l]; y = d·sc·q − dmin·m.
struct BlockQ2_K {
    uint8_t scales[kQKK / 16];
    uint8_t qs[kQKK / 4];
    uint16_t d;
    uint16_t dmin;
};
// Q3_K: 16 sub-blocks of 16; qs as Q2_K for the low 2 bits, hmask[l] bit 4n + j the third
// bit of element 128n + 32j + 16h + l (l < 16 with h: hmask[16h + l]); 16 6-bit scales
// packed in 12 bytes (q3_k_scale); y = d·(sc − 32)·(q − 4 when the third bit is clear).
struct BlockQ3_K {
    uint8_t hmask[kQKK / 8];
    uint8_t qs[kQKK / 4];
    uint8_t scales[kKScaleBytes];
    uint16_t d;
};
// IQ4_NL: 32 elements, 4-bit indices into kIq4nlValues (element j < 16: low nibble of
// qs[j], j + 16: its high nibble); y = d · kIq4nlValues[index].
struct BlockIQ4_NL {
    uint16_t d;
    uint8_t qs[kQK / 2];
};
// IQ4_XS: 8 sub-blocks of 32 laid out as IQ4_NL blocks, each with a 6-bit scale (low 4
// bits in scales_l, nibble j % 2 of byte j / 2; high 2 bits in bits 2j..2j+1 of scales_h);
// y = d·(ls − 32)·kIq4nlValues[index].
struct BlockIQ4_XS {
    uint16_t d;
    uint16_t scales_h;
    uint8_t scales_l[kQKK / 64];
    uint8_t qs[kQKK / 2];
};
// The 16 values of the IQ4 formats' non-linear 4-bit grid (ggml's kvalues_iq4nl).
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

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
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockIQ4_NL) == 18);
static_assert(sizeof(BlockIQ4_XS) == 136);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);

}  // namespace hearth::quant
