// Decoding of metadata values that the parser has already validated: every read here
// stays inside the bounds the parser checked, so no function needs to fail on bounds.
#include <bit>
#include <cstring>
#include <string>

#include "gguf/gguf_file.h"
#include "gguf/gguf_wire.h"

namespace hearth::gguf {

std::string_view value_type_name(ValueType type) {
    switch (type) {
        case ValueType::U8:
            return "u8";
        case ValueType::I8:
            return "i8";
        case ValueType::U16:
            return "u16";
        case ValueType::I16:
            return "i16";
        case ValueType::U32:
            return "u32";
        case ValueType::I32:
            return "i32";
        case ValueType::F32:
            return "f32";
        case ValueType::Bool:
            return "bool";
        case ValueType::String:
            return "string";
        case ValueType::Array:
            return "array";
        case ValueType::U64:
            return "u64";
        case ValueType::I64:
            return "i64";
        case ValueType::F64:
            return "f64";
    }
    return "unknown";
}

bool Value::integer(Integer& out) const {
    switch (type_) {
        case ValueType::U8:
            out = {false, 0, wire::load<uint8_t>(data_)};
            return true;
        case ValueType::U16:
            out = {false, 0, wire::load<uint16_t>(data_)};
            return true;
        case ValueType::U32:
            out = {false, 0, wire::load<uint32_t>(data_)};
            return true;
        case ValueType::U64:
            out = {false, 0, wire::load<uint64_t>(data_)};
            return true;
        case ValueType::Bool:
            out = {false, 0, wire::load<uint8_t>(data_) != 0 ? 1u : 0u};
            return true;
        case ValueType::I8:
            out = {true, wire::load<int8_t>(data_), 0};
            return true;
        case ValueType::I16:
            out = {true, wire::load<int16_t>(data_), 0};
            return true;
        case ValueType::I32:
            out = {true, wire::load<int32_t>(data_), 0};
            return true;
        case ValueType::I64:
            out = {true, wire::load<int64_t>(data_), 0};
            return true;
        default:
            return false;
    }
}

std::optional<double> Value::as_float() const {
    if (type_ == ValueType::F32) return wire::load<float>(data_);
    if (type_ == ValueType::F64) return wire::load<double>(data_);
    Integer v;
    if (type_ == ValueType::Bool || !integer(v)) return std::nullopt;
    return v.is_signed ? static_cast<double>(v.s) : static_cast<double>(v.u);
}

std::optional<bool> Value::as_bool() const {
    if (type_ != ValueType::Bool) return std::nullopt;
    return wire::load<uint8_t>(data_) != 0;
}

std::optional<std::string_view> Value::as_string() const {
    if (type_ != ValueType::String) return std::nullopt;
    const uint64_t len = wire::load<uint64_t>(data_);
    return std::string_view(reinterpret_cast<const char*>(data_ + 8), static_cast<size_t>(len));
}

std::optional<ArrayView> Value::as_array() const {
    if (type_ != ValueType::Array) return std::nullopt;
    ArrayView a;
    a.element_type_ = static_cast<ValueType>(wire::load<uint32_t>(data_));
    a.count_ = wire::load<uint64_t>(data_ + 4);
    a.data_ = data_ + 12;
    a.bytes_ = bytes_ - 12;
    return a;
}

Value ArrayView::at(uint64_t i) const {
    Value v;
    v.type_ = element_type_;
    const uint64_t fixed = wire::fixed_size(element_type_);
    if (fixed != 0) {
        v.data_ = data_ + i * fixed;
        v.bytes_ = fixed;
        return v;
    }
    // Variable-size elements: walk from the start (validated by the parser).
    const std::byte* p = data_;
    for (uint64_t k = 0;; ++k) {
        const uint64_t size = wire::encoded_size_unchecked(element_type_, p);
        if (k == i) {
            v.data_ = p;
            v.bytes_ = size;
            return v;
        }
        p += size;
    }
}

std::optional<std::vector<std::string_view>> ArrayView::strings() const {
    if (element_type_ != ValueType::String) return std::nullopt;
    std::vector<std::string_view> out;
    out.reserve(static_cast<size_t>(count_));
    const std::byte* p = data_;
    for (uint64_t k = 0; k < count_; ++k) {
        const uint64_t len = wire::load<uint64_t>(p);
        out.emplace_back(reinterpret_cast<const char*>(p + 8), static_cast<size_t>(len));
        p += 8 + len;
    }
    return out;
}

std::optional<std::vector<int32_t>> ArrayView::i32s() const {
    std::vector<int32_t> out;
    out.reserve(static_cast<size_t>(count_));
    for (uint64_t k = 0; k < count_; ++k) {
        const auto v = at(k).as_int<int32_t>();
        if (!v) return std::nullopt;
        out.push_back(*v);
    }
    return out;
}

std::optional<std::vector<float>> ArrayView::f32s() const {
    std::vector<float> out;
    out.reserve(static_cast<size_t>(count_));
    for (uint64_t k = 0; k < count_; ++k) {
        const auto v = at(k).as_float();
        if (!v) return std::nullopt;
        out.push_back(static_cast<float>(*v));
    }
    return out;
}

std::string Value::to_string(std::size_t max_array_items) const {
    switch (type_) {
        case ValueType::String:
            return std::string(*as_string());
        case ValueType::Bool:
            return *as_bool() ? "true" : "false";
        case ValueType::F32:
        case ValueType::F64:
            return std::to_string(*as_float());
        case ValueType::Array: {
            const ArrayView a = *as_array();
            std::string s = "[";
            const uint64_t shown = std::min<uint64_t>(a.size(), max_array_items);
            for (uint64_t i = 0; i < shown; ++i) {
                if (i) s += ", ";
                s += a.at(i).to_string(max_array_items);
            }
            if (shown < a.size()) s += ", ... (" + std::to_string(a.size()) + " items)";
            return s + "]";
        }
        default: {
            Integer v;
            integer(v);
            return v.is_signed ? std::to_string(v.s) : std::to_string(v.u);
        }
    }
}

}  // namespace hearth::gguf
