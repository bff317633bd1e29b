// The GGUF wire encoding: little-endian scalars, length-prefixed strings, typed arrays.
// Internal to engine/gguf.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include "gguf/gguf_file.h"

namespace hearth::gguf::wire {

static_assert(std::endian::native == std::endian::little,
              "GGUF is little-endian; a big-endian host needs byte swapping here");

template <typename T>
inline T load(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

// Encoded size of a scalar type, 0 for strings and arrays (variable) and unknown types.
inline uint64_t fixed_size(ValueType type) {
    switch (type) {
        case ValueType::U8:
        case ValueType::I8:
        case ValueType::Bool:
            return 1;
        case ValueType::U16:
        case ValueType::I16:
            return 2;
        case ValueType::U32:
        case ValueType::I32:
        case ValueType::F32:
            return 4;
        case ValueType::U64:
        case ValueType::I64:
        case ValueType::F64:
            return 8;
        case ValueType::String:
        case ValueType::Array:
            return 0;
    }
    return 0;
}

inline bool is_known(uint32_t type) {
    return type <= static_cast<uint32_t>(ValueType::F64);
}

// Size of an already validated value starting at p (after its type tag; for arrays p
// points at the element type).
inline uint64_t encoded_size_unchecked(ValueType type, const std::byte* p) {
    if (const uint64_t fixed = fixed_size(type)) return fixed;
    if (type == ValueType::String) return 8 + load<uint64_t>(p);
    const auto elem = static_cast<ValueType>(load<uint32_t>(p));
    const uint64_t count = load<uint64_t>(p + 4);
    uint64_t size = 12;
    if (const uint64_t fixed = fixed_size(elem)) return size + count * fixed;
    for (uint64_t i = 0; i < count; ++i) size += encoded_size_unchecked(elem, p + size);
    return size;
}

}  // namespace hearth::gguf::wire
