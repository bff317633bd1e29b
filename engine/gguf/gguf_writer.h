// Builds GGUF v3 files in memory: the project's own writer, used for synthetic models
// (random weights for fast tests), synthetic vocabularies, and the malformed-file corpus.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "gguf/gguf_file.h"

namespace hearth::gguf {

class GgufWriter {
  public:
    explicit GgufWriter(uint32_t alignment = 32) : alignment_(alignment) {}

    void add_u8(std::string_view key, uint8_t v);
    void add_i8(std::string_view key, int8_t v);
    void add_u16(std::string_view key, uint16_t v);
    void add_i16(std::string_view key, int16_t v);
    void add_u32(std::string_view key, uint32_t v);
    void add_i32(std::string_view key, int32_t v);
    void add_u64(std::string_view key, uint64_t v);
    void add_i64(std::string_view key, int64_t v);
    void add_f32(std::string_view key, float v);
    void add_f64(std::string_view key, double v);
    void add_bool(std::string_view key, bool v);
    void add_string(std::string_view key, std::string_view v);
    void add_strings(std::string_view key, std::span<const std::string> v);
    void add_i32s(std::string_view key, std::span<const int32_t> v);
    void add_f32s(std::string_view key, std::span<const float> v);
    // An array of already-encoded elements of one type (for nested arrays in tests):
    // `elements` is the concatenated encoding of `count` values of `element_type`.
    void add_raw_array(std::string_view key, ValueType element_type, uint64_t count,
                       std::span<const std::byte> elements);

    // Adds a tensor; data must hold exactly the bytes its type and shape need.
    // ne[0] is the contiguous dimension (as in GGUF). Returns an error on a size mismatch.
    Result<void> add_tensor(std::string_view name, quant::TensorType type,
                            std::span<const int64_t> ne, std::span<const std::byte> data);

    // The complete file.
    std::vector<std::byte> bytes() const;
    // Writes the file (to path + ".tmp", then renames).
    Result<void> write(const std::string& path) const;

    // Encoding helpers, exposed for tests that hand-craft values.
    static void put_u32(std::vector<std::byte>& out, uint32_t v);
    static void put_u64(std::vector<std::byte>& out, uint64_t v);
    static void put_string(std::vector<std::byte>& out, std::string_view s);

  private:
    void begin_kv(std::string_view key, ValueType type);
    template <typename T>
    void put_scalar(std::string_view key, ValueType type, T v);

    struct PendingTensor {
        std::string name;
        quant::TensorType type;
        std::vector<int64_t> ne;
        std::vector<std::byte> data;
    };

    uint32_t alignment_;
    uint64_t kv_count_ = 0;
    std::vector<std::byte> kv_bytes_;
    std::vector<PendingTensor> tensors_;
};

}  // namespace hearth::gguf
