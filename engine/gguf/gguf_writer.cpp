#include "gguf/gguf_writer.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace hearth::gguf {

void GgufWriter::put_u32(std::vector<std::byte>& out, uint32_t v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out.insert(out.end(), p, p + 4);
}
void GgufWriter::put_u64(std::vector<std::byte>& out, uint64_t v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out.insert(out.end(), p, p + 8);
}
void GgufWriter::put_string(std::vector<std::byte>& out, std::string_view s) {
    put_u64(out, s.size());
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    out.insert(out.end(), p, p + s.size());
}

void GgufWriter::begin_kv(std::string_view key, ValueType type) {
    ++kv_count_;
    put_string(kv_bytes_, key);
    put_u32(kv_bytes_, static_cast<uint32_t>(type));
}

template <typename T>
void GgufWriter::put_scalar(std::string_view key, ValueType type, T v) {
    begin_kv(key, type);
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    kv_bytes_.insert(kv_bytes_.end(), p, p + sizeof(T));
}

void GgufWriter::add_u8(std::string_view k, uint8_t v) {
    put_scalar(k, ValueType::U8, v);
}
void GgufWriter::add_i8(std::string_view k, int8_t v) {
    put_scalar(k, ValueType::I8, v);
}
void GgufWriter::add_u16(std::string_view k, uint16_t v) {
    put_scalar(k, ValueType::U16, v);
}
void GgufWriter::add_i16(std::string_view k, int16_t v) {
    put_scalar(k, ValueType::I16, v);
}
void GgufWriter::add_u32(std::string_view k, uint32_t v) {
    put_scalar(k, ValueType::U32, v);
}
void GgufWriter::add_i32(std::string_view k, int32_t v) {
    put_scalar(k, ValueType::I32, v);
}
void GgufWriter::add_u64(std::string_view k, uint64_t v) {
    put_scalar(k, ValueType::U64, v);
}
void GgufWriter::add_i64(std::string_view k, int64_t v) {
    put_scalar(k, ValueType::I64, v);
}
void GgufWriter::add_f32(std::string_view k, float v) {
    put_scalar(k, ValueType::F32, v);
}
void GgufWriter::add_f64(std::string_view k, double v) {
    put_scalar(k, ValueType::F64, v);
}
void GgufWriter::add_bool(std::string_view k, bool v) {
    put_scalar(k, ValueType::Bool, static_cast<uint8_t>(v ? 1 : 0));
}

void GgufWriter::add_string(std::string_view key, std::string_view v) {
    begin_kv(key, ValueType::String);
    put_string(kv_bytes_, v);
}

void GgufWriter::add_strings(std::string_view key, std::span<const std::string> v) {
    begin_kv(key, ValueType::Array);
    put_u32(kv_bytes_, static_cast<uint32_t>(ValueType::String));
    put_u64(kv_bytes_, v.size());
    for (const std::string& s : v) put_string(kv_bytes_, s);
}

void GgufWriter::add_i32s(std::string_view key, std::span<const int32_t> v) {
    add_raw_array(key, ValueType::I32, v.size(), std::as_bytes(v));
}

void GgufWriter::add_f32s(std::string_view key, std::span<const float> v) {
    add_raw_array(key, ValueType::F32, v.size(), std::as_bytes(v));
}

void GgufWriter::add_raw_array(std::string_view key, ValueType element_type, uint64_t count,
                               std::span<const std::byte> elements) {
    begin_kv(key, ValueType::Array);
    put_u32(kv_bytes_, static_cast<uint32_t>(element_type));
    put_u64(kv_bytes_, count);
    kv_bytes_.insert(kv_bytes_.end(), elements.begin(), elements.end());
}

Result<void> GgufWriter::add_tensor(std::string_view name, quant::TensorType type,
                                    std::span<const int64_t> ne, std::span<const std::byte> data) {
    const auto traits = quant::traits(type);
    if (!traits) return make_error("unsupported tensor type");
    if (ne.empty() || ne.size() > 4) return make_error("tensor needs 1 to 4 dimensions");
    if (ne[0] % traits->block_elems != 0)
        return make_error("row length is not a multiple of the block size");
    int64_t rows = 1;
    for (size_t d = 1; d < ne.size(); ++d) rows *= ne[d];
    const int64_t bytes = ne[0] / traits->block_elems * traits->block_bytes * rows;
    if (bytes != static_cast<int64_t>(data.size()))
        return make_error("tensor " + std::string(name) + " needs " + std::to_string(bytes) +
                          " bytes, got " + std::to_string(data.size()));
    tensors_.push_back({std::string(name), type, std::vector<int64_t>(ne.begin(), ne.end()),
                        std::vector<std::byte>(data.begin(), data.end())});
    return {};
}

std::vector<std::byte> GgufWriter::bytes() const {
    const auto align_up = [this](uint64_t v) {
        return (v + alignment_ - 1) / alignment_ * alignment_;
    };
    std::vector<std::byte> out;
    const char magic[4] = {'G', 'G', 'U', 'F'};
    out.insert(out.end(), reinterpret_cast<const std::byte*>(magic),
               reinterpret_cast<const std::byte*>(magic) + 4);
    put_u32(out, 3);
    put_u64(out, tensors_.size());
    const bool write_alignment = alignment_ != 32;
    put_u64(out, kv_count_ + (write_alignment ? 1 : 0));
    out.insert(out.end(), kv_bytes_.begin(), kv_bytes_.end());
    if (write_alignment) {
        put_string(out, "general.alignment");
        put_u32(out, static_cast<uint32_t>(ValueType::U32));
        put_u32(out, alignment_);
    }
    uint64_t offset = 0;
    for (const PendingTensor& t : tensors_) {
        put_string(out, t.name);
        put_u32(out, static_cast<uint32_t>(t.ne.size()));
        for (int64_t d : t.ne) put_u64(out, static_cast<uint64_t>(d));
        put_u32(out, static_cast<uint32_t>(t.type));
        put_u64(out, offset);
        offset = align_up(offset + t.data.size());
    }
    out.resize(align_up(out.size()));
    const size_t data_start = out.size();
    offset = 0;
    for (const PendingTensor& t : tensors_) {
        out.resize(data_start + offset);
        out.insert(out.end(), t.data.begin(), t.data.end());
        offset = align_up(offset + t.data.size());
    }
    return out;
}

Result<void> GgufWriter::write(const std::string& path) const {
    const std::vector<std::byte> data = bytes();
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) return make_error("cannot create " + tmp);
        f.write(reinterpret_cast<const char*>(data.data()),
                static_cast<std::streamsize>(data.size()));
        if (!f.flush()) return make_error("cannot write " + tmp + " (disk full?)");
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) return make_error("cannot rename " + tmp + " to " + path + ": " + ec.message());
    return {};
}

}  // namespace hearth::gguf
