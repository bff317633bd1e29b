// A small but complete GGUF file used by the reader tests: every metadata value type,
// nested arrays, and one tensor of every supported type, with deterministic contents.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"
#include "quant/quant_types.h"

namespace hearth::test {

struct SampleTensor {
    std::string name;
    quant::TensorType type;
    std::vector<int64_t> ne;
    std::vector<std::byte> data;
};

inline std::vector<SampleTensor> sample_tensors(uint32_t seed) {
    using quant::TensorType;
    std::mt19937 rng(seed);
    const std::vector<std::pair<TensorType, std::vector<int64_t>>> specs = {
        {TensorType::F32, {7, 3}},         {TensorType::F16, {5}},
        {TensorType::BF16, {3, 2, 2}},     {TensorType::Q4_0, {64, 2}},
        {TensorType::Q4_1, {32, 3}},       {TensorType::Q5_0, {96}},
        {TensorType::Q5_1, {32, 1, 2}},    {TensorType::Q8_0, {32, 2}},
        {TensorType::Q4_K, {256, 2}},      {TensorType::Q5_K, {512}},
        {TensorType::Q6_K, {256, 1, 1, 2}}};
    std::vector<SampleTensor> out;
    int i = 0;
    for (const auto& [type, ne] : specs) {
        const auto traits = *quant::traits(type);
        int64_t rows = 1;
        for (size_t d = 1; d < ne.size(); ++d) rows *= ne[d];
        const auto bytes =
            static_cast<size_t>(ne[0] / traits.block_elems * traits.block_bytes * rows);
        SampleTensor t{"blk." + std::to_string(i++) + "." + std::string(traits.name) + ".weight",
                       type, ne, std::vector<std::byte>(bytes)};
        for (auto& b : t.data) b = static_cast<std::byte>(rng() & 0xff);
        out.push_back(std::move(t));
    }
    return out;
}

// Fills a writer with the sample metadata and tensors.
inline void write_sample(gguf::GgufWriter& w, uint32_t seed = 1) {
    w.add_string("general.architecture", "llama");
    w.add_string("general.name", "sample \xe2\x9c\x93 model");
    w.add_u8("test.u8", 200);
    w.add_i8("test.i8", -100);
    w.add_u16("test.u16", 60000);
    w.add_i16("test.i16", -30000);
    w.add_u32("test.u32", 4000000000u);
    w.add_i32("test.i32", -2000000000);
    w.add_u64("test.u64", 18000000000000000000ull);
    w.add_i64("test.i64", -9000000000000000000ll);
    w.add_f32("test.f32", 0.25f);
    w.add_f64("test.f64", -1.5);
    w.add_bool("test.bool", true);
    const std::vector<std::string> strs = {"a", "", "\xe4\xbd\xa0\xe5\xa5\xbd", "<|im_start|>"};
    w.add_strings("test.strings", strs);
    const std::vector<int32_t> ints = {1, -2, 3, 2147483647};
    w.add_i32s("test.ints", ints);
    const std::vector<float> floats = {0.5f, -0.125f};
    w.add_f32s("test.floats", floats);
    // A nested array: two arrays of u8, {1, 2} and {3}.
    std::vector<std::byte> nested;
    gguf::GgufWriter::put_u32(nested, static_cast<uint32_t>(gguf::ValueType::U8));
    gguf::GgufWriter::put_u64(nested, 2);
    nested.push_back(std::byte{1});
    nested.push_back(std::byte{2});
    gguf::GgufWriter::put_u32(nested, static_cast<uint32_t>(gguf::ValueType::U8));
    gguf::GgufWriter::put_u64(nested, 1);
    nested.push_back(std::byte{3});
    w.add_raw_array("test.nested", gguf::ValueType::Array, 2, nested);
    for (const SampleTensor& t : sample_tensors(seed)) {
        if (auto r = w.add_tensor(t.name, t.type, t.ne, t.data); !r)
            throw std::logic_error(r.message());
    }
}

inline std::vector<std::byte> sample_bytes(uint32_t alignment = 32) {
    gguf::GgufWriter w(alignment);
    write_sample(w);
    return w.bytes();
}

}  // namespace hearth::test
