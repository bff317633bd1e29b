// A read-only, memory-mapped GGUF v2/v3 file, or a model split into several
// (llama.cpp's gguf-split: "<prefix>-00001-of-00003.gguf" and its siblings).
//
// The file is untrusted. parse() validates every count, length, offset and shape
// against the bytes actually present (with overflow checks) before anything is
// allocated or dereferenced, so a truncated or hostile file yields an Error naming the
// problem, never a crash, a hang or an unbounded allocation. After a successful parse
// every accessor is safe: metadata values and tensor data are views into the mapping
// and stay valid as long as the GgufFile lives.
//
// A split model is opened through any of its parts: the first part's metadata is the
// model's, and the tensors of every part are listed together (each part's "split.no",
// "split.count" and the first's "split.tensors.count" are checked; a missing or foreign
// part is an Error naming it).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "quant/quant_types.h"

namespace hearth::gguf {

enum class ValueType : uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
};
std::string_view value_type_name(ValueType type);

class Value;

// A view of a (possibly nested) metadata array. Elements are decoded on access; the
// array was fully validated by the parser.
class ArrayView {
  public:
    ValueType element_type() const { return element_type_; }
    uint64_t size() const { return count_; }

    // Element i (i < size()). O(1) for fixed-size element types, O(i) for strings
    // and nested arrays; use the bulk accessors below to read whole arrays.
    Value at(uint64_t i) const;

    // Whole-array conversions. Empty optional when the element type does not convert
    // (integers convert to a wider or equal type when every value fits).
    std::optional<std::vector<std::string_view>> strings() const;
    std::optional<std::vector<int32_t>> i32s() const;
    std::optional<std::vector<float>> f32s() const;

  private:
    friend class Value;
    friend class GgufParser;
    ValueType element_type_ = ValueType::U8;
    uint64_t count_ = 0;
    const std::byte* data_ = nullptr;  // first element
    uint64_t bytes_ = 0;               // total bytes of the elements
};

// One metadata value: a scalar, a string or an array.
class Value {
  public:
    ValueType type() const { return type_; }

    // Integer value when this is an integer or bool type and fits in T.
    template <typename T>
    std::optional<T> as_int() const {
        Integer v;
        if (!integer(v)) return std::nullopt;
        if (v.is_signed) {
            if (!std::in_range<T>(v.s)) return std::nullopt;
            return static_cast<T>(v.s);
        }
        if (!std::in_range<T>(v.u)) return std::nullopt;
        return static_cast<T>(v.u);
    }
    std::optional<double> as_float() const;  // F32/F64 (and integers, converted)
    std::optional<bool> as_bool() const;
    std::optional<std::string_view> as_string() const;
    std::optional<ArrayView> as_array() const;

    // Human-readable rendering (arrays abbreviated), for `hearth-cli info`.
    std::string to_string(std::size_t max_array_items = 8) const;

  private:
    friend class ArrayView;
    friend class GgufParser;
    struct Integer {
        bool is_signed = false;
        int64_t s = 0;
        uint64_t u = 0;
    };
    bool integer(Integer& out) const;

    ValueType type_ = ValueType::U8;
    const std::byte* data_ = nullptr;  // the encoded value (after the type tag)
    uint64_t bytes_ = 0;               // its encoded size
};

struct MetadataEntry {
    std::string_view key;
    Value value;
};

struct TensorInfo {
    std::string name;
    quant::TensorType type = quant::TensorType::F32;
    int n_dims = 0;
    std::array<int64_t, 4> ne{1, 1, 1, 1};  // ne[0] is the contiguous dimension
    uint64_t offset = 0;                    // relative to the data section
    uint64_t nbytes = 0;
    const std::byte* data = nullptr;  // into the mapping

    int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
    int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
    std::span<const std::byte> bytes() const { return {data, static_cast<std::size_t>(nbytes)}; }
    std::string shape_string() const;  // "[576, 49152]"
};

class FileMapping;

class GgufFile {
  public:
    // Maps and parses the file at path, and the other parts of a split model.
    static Result<std::unique_ptr<GgufFile>> open(const std::string& path);
    // This file alone, even when it is one part of a split model (checking a download).
    static Result<std::unique_ptr<GgufFile>> open_part(const std::string& path);
    // The most parts a split model may have here.
    static constexpr uint32_t kMaxSplitParts = 1024;
    // Parses an in-memory file, which the result owns (tests, fuzzing, generated models).
    static Result<std::unique_ptr<GgufFile>> parse(std::vector<std::byte> bytes);

    ~GgufFile();
    GgufFile(const GgufFile&) = delete;
    GgufFile& operator=(const GgufFile&) = delete;

    uint32_t version() const { return version_; }
    uint64_t alignment() const { return alignment_; }
    uint64_t file_size() const { return total_size_; }  // every part's, for a split model
    std::size_t part_count() const { return parts_.size() + 1; }
    uint64_t data_offset() const { return data_offset_; }
    const std::string& path() const { return path_; }  // the first part's, when split

    const std::vector<MetadataEntry>& metadata() const { return metadata_; }
    const Value* find(std::string_view key) const;

    // Typed accessors: nullopt when the key is absent or has another type.
    std::optional<std::string_view> get_string(std::string_view key) const;
    std::optional<uint32_t> get_u32(std::string_view key) const;
    std::optional<uint64_t> get_u64(std::string_view key) const;
    std::optional<int32_t> get_i32(std::string_view key) const;
    std::optional<float> get_f32(std::string_view key) const;
    std::optional<bool> get_bool(std::string_view key) const;
    std::optional<ArrayView> get_array(std::string_view key) const;

    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    // Reads the mapped file in now (FileMapping::prefetch), before its weights are used.
    // Opening a file does not: listing models reads only their headers.
    void prefetch() const;
    // What happened to the file on disk since it was opened (FileMapping::changed), or
    // empty: the engine stops using weights that another program truncated or rewrote.
    std::string changed_on_disk() const;
    const TensorInfo* find_tensor(std::string_view name) const;

    // A stable fingerprint of the model: SHA-256 over the header, metadata and tensor
    // infos plus the file size (not the weights, so it is fast), hex encoded.
    const std::string& fingerprint() const { return fingerprint_; }
    // The fingerprint together with 64 samples of 4 KiB spread evenly over the tensor
    // data: two fine-tunes with identical headers and sizes still differ. What keys KV
    // kept across restarts (the disk tier); reads 256 KiB of the file.
    std::string content_fingerprint() const;

  private:
    friend class GgufParser;
    GgufFile() = default;

    static Result<std::unique_ptr<GgufFile>> parse_view(std::span<const std::byte> bytes);
    // The other parts of a split model whose first part this is (gguf_split.cpp).
    Result<void> open_other_parts(uint32_t count);

    std::unique_ptr<FileMapping> mapping_;  // owns bytes_ for open()
    std::vector<std::byte> owned_;          // owns bytes_ for parse()
    std::span<const std::byte> bytes_;
    std::string path_;
    uint64_t total_size_ = 0;
    std::vector<std::unique_ptr<GgufFile>> parts_;  // parts 2..n of a split model
    uint32_t version_ = 0;
    uint64_t alignment_ = 32;
    uint64_t data_offset_ = 0;
    std::vector<MetadataEntry> metadata_;
    std::vector<TensorInfo> tensors_;
    std::string fingerprint_;
};

}  // namespace hearth::gguf
