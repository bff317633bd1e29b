// GGUF parsing. Layout (little-endian):
//   magic "GGUF" | u32 version | u64 n_tensors | u64 n_kv
//   n_kv × { string key | u32 type | value }
//   n_tensors × { string name | u32 n_dims | n_dims × u64 ne | u32 type | u64 offset }
//   padding to `general.alignment` (default 32) | tensor data (offsets relative to here)
// A string is u64 length + bytes; an array is u32 element type + u64 count + elements.
//
// Every length and count is checked against the bytes that remain before it is used, so
// allocations are bounded by the file size and a hostile count cannot make us loop or
// allocate more than the file could describe.
#include "gguf/gguf_file.h"

#include <algorithm>
#include <limits>
#include <unordered_set>

#include "common/log.h"
#include "common/sha256.h"
#include "gguf/file_mapping.h"
#include "gguf/gguf_wire.h"

namespace hearth::gguf {
namespace {

constexpr uint64_t kMaxKeyBytes = 65535;
constexpr uint64_t kMaxTensorNameBytes = 64;
constexpr int kMaxArrayDepth = 8;
constexpr uint64_t kMaxAlignment = 1u << 20;

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

// Checked arithmetic (portable: MSVC has no __builtin_*_overflow).
bool mul_overflows(uint64_t a, uint64_t b, uint64_t& out) {
    if (a != 0 && b > kU64Max / a) return true;
    out = a * b;
    return false;
}
bool add_overflows(uint64_t a, uint64_t b, uint64_t& out) {
    if (b > kU64Max - a) return true;
    out = a + b;
    return false;
}

}  // namespace

// Reads the wire format with bounds checks; the first failure is kept as the error.
class GgufParser {
  public:
    GgufParser(GgufFile& file, std::span<const std::byte> bytes) : file_(file), bytes_(bytes) {}

    Result<void> run();

  private:
    uint64_t remaining() const { return bytes_.size() - pos_; }
    const std::byte* here() const { return bytes_.data() + pos_; }

    bool fail(std::string message) {
        if (error_.empty()) error_ = std::move(message);
        return false;
    }
    bool need(uint64_t n, const char* what) {
        if (n <= remaining()) return true;
        return fail(std::string("file is truncated: ") + what + " at byte " + std::to_string(pos_) +
                    " needs " + std::to_string(n) + " bytes, " + std::to_string(remaining()) +
                    " remain");
    }
    template <typename T>
    bool read(T& out, const char* what) {
        if (!need(sizeof(T), what)) return false;
        out = wire::load<T>(here());
        pos_ += sizeof(T);
        return true;
    }
    bool read_string(std::string_view& out, uint64_t max_len, const char* what);
    bool skip_value(ValueType type, int depth);
    bool parse_metadata(uint64_t count);
    bool parse_tensor_infos(uint64_t count);
    bool place_tensors();

    GgufFile& file_;
    std::span<const std::byte> bytes_;
    uint64_t pos_ = 0;
    std::string error_;
};

bool GgufParser::read_string(std::string_view& out, uint64_t max_len, const char* what) {
    uint64_t len = 0;
    if (!read(len, what)) return false;
    if (len > max_len)
        return fail(std::string(what) + " at byte " + std::to_string(pos_ - 8) + " is " +
                    std::to_string(len) + " bytes long (limit " + std::to_string(max_len) + ")");
    if (!need(len, what)) return false;
    out = std::string_view(reinterpret_cast<const char*>(here()), static_cast<size_t>(len));
    pos_ += len;
    return true;
}

// Validates one value of `type` at pos_ and advances past it.
bool GgufParser::skip_value(ValueType type, int depth) {
    if (const uint64_t fixed = wire::fixed_size(type)) {
        if (!need(fixed, "metadata value")) return false;
        if (type == ValueType::Bool && wire::load<uint8_t>(here()) > 1)
            return fail("bool value " + std::to_string(wire::load<uint8_t>(here())) +
                        " is not 0 or 1");
        pos_ += fixed;
        return true;
    }
    if (type == ValueType::String) {
        std::string_view s;
        return read_string(s, kU64Max, "metadata string");
    }
    // Array.
    if (depth >= kMaxArrayDepth)
        return fail("arrays nested deeper than " + std::to_string(kMaxArrayDepth) + " levels");
    uint32_t elem_raw = 0;
    uint64_t count = 0;
    if (!read(elem_raw, "array element type") || !read(count, "array length")) return false;
    if (!wire::is_known(elem_raw))
        return fail("array element type " + std::to_string(elem_raw) + " is not a GGUF value type");
    const auto elem = static_cast<ValueType>(elem_raw);
    if (const uint64_t fixed = wire::fixed_size(elem); fixed != 0 && elem != ValueType::Bool) {
        uint64_t total = 0;
        if (mul_overflows(count, fixed, total) || total > remaining())
            return fail("array of " + std::to_string(count) + " " +
                        std::string(value_type_name(elem)) + " values extends past end of file");
        pos_ += total;
        return true;
    }
    // Variable-size (or bool) elements: each takes at least one byte, so a count larger
    // than the remaining bytes is impossible and rejected before looping.
    const uint64_t min_size = elem == ValueType::Bool ? 1 : (elem == ValueType::String ? 8 : 12);
    if (count > remaining() / min_size)
        return fail("array of " + std::to_string(count) + " " + std::string(value_type_name(elem)) +
                    " values extends past end of file");
    for (uint64_t i = 0; i < count; ++i)
        if (!skip_value(elem, depth + 1)) return false;
    return true;
}

bool GgufParser::parse_metadata(uint64_t count) {
    // Each entry needs at least 8 (key length) + 4 (type) + 1 bytes.
    if (count > remaining() / 13)
        return fail("header claims " + std::to_string(count) +
                    " metadata entries, more than the file can hold");
    file_.metadata_.reserve(static_cast<size_t>(count));
    std::unordered_set<std::string_view> seen;
    for (uint64_t i = 0; i < count; ++i) {
        std::string_view key;
        if (!read_string(key, kMaxKeyBytes, "metadata key")) return false;
        if (key.empty()) return fail("metadata entry " + std::to_string(i) + " has an empty key");
        if (!seen.insert(key).second)
            return fail("metadata key " + std::string(key) + " appears twice");
        uint32_t type_raw = 0;
        if (!read(type_raw, "metadata value type")) return false;
        if (!wire::is_known(type_raw))
            return fail("metadata " + std::string(key) + ": value type " +
                        std::to_string(type_raw) + " is not a GGUF value type");
        Value v;
        v.type_ = static_cast<ValueType>(type_raw);
        v.data_ = here();
        const uint64_t start = pos_;
        if (!skip_value(v.type_, 0)) {
            error_ = "metadata " + std::string(key) + ": " + error_;
            return false;
        }
        v.bytes_ = pos_ - start;
        file_.metadata_.push_back({key, v});
    }
    return true;
}

bool GgufParser::parse_tensor_infos(uint64_t count) {
    // Each info needs at least 8 (name length) + 4 + 8 + 4 + 8 bytes.
    if (count > remaining() / 32)
        return fail("header claims " + std::to_string(count) +
                    " tensors, more than the file can hold");
    file_.tensors_.reserve(static_cast<size_t>(count));
    std::unordered_set<std::string_view> seen;
    for (uint64_t i = 0; i < count; ++i) {
        std::string_view name;
        if (!read_string(name, kMaxTensorNameBytes, "tensor name")) return false;
        if (!seen.insert(name).second)
            return fail("tensor " + std::string(name) + " appears twice");
        TensorInfo t;
        t.name = std::string(name);
        uint32_t n_dims = 0;
        if (!read(n_dims, "tensor dimension count")) return false;
        if (n_dims < 1 || n_dims > 4)
            return fail("tensor " + t.name + " has " + std::to_string(n_dims) +
                        " dimensions (1 to 4 supported)");
        t.n_dims = static_cast<int>(n_dims);
        uint64_t elements = 1;
        for (uint32_t d = 0; d < n_dims; ++d) {
            uint64_t ne = 0;
            if (!read(ne, "tensor dimension")) return false;
            if (ne == 0 || ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
                mul_overflows(elements, ne, elements) ||
                elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
                return fail("tensor " + t.name + " has an invalid shape (dimension " +
                            std::to_string(d) + " is " + std::to_string(ne) + ")");
            t.ne[d] = static_cast<int64_t>(ne);
        }
        uint32_t type_raw = 0;
        if (!read(type_raw, "tensor type")) return false;
        const auto traits = quant::traits(type_raw);
        if (!traits)
            return fail("tensor " + t.name + " has type " +
                        std::string(quant::type_name(type_raw)) + " (id " +
                        std::to_string(type_raw) + "), which Hearth does not support");
        t.type = static_cast<quant::TensorType>(type_raw);
        if (t.ne[0] % traits->block_elems != 0)
            return fail("tensor " + t.name + ": row length " + std::to_string(t.ne[0]) +
                        " is not a multiple of the " + std::string(traits->name) + " block size " +
                        std::to_string(traits->block_elems));
        const uint64_t row_bytes = static_cast<uint64_t>(t.ne[0] / traits->block_elems) *
                                   static_cast<uint64_t>(traits->block_bytes);
        if (mul_overflows(row_bytes, elements / static_cast<uint64_t>(t.ne[0]), t.nbytes))
            return fail("tensor " + t.name + " is too large");
        if (!read(t.offset, "tensor offset")) return false;
        file_.tensors_.push_back(std::move(t));
    }
    return true;
}

bool GgufParser::place_tensors() {
    const uint64_t align = file_.alignment_;
    uint64_t data_offset = 0;
    if (add_overflows(pos_, align - 1, data_offset)) return fail("file is too large");
    data_offset -= data_offset % align;
    file_.data_offset_ = data_offset;
    const uint64_t size = bytes_.size();
    if (!file_.tensors_.empty() && data_offset > size)
        return fail("tensor data section starts past end of file (at byte " +
                    std::to_string(data_offset) + ", file has " + std::to_string(size) + ")");
    for (TensorInfo& t : file_.tensors_) {
        if (t.offset % align != 0)
            return fail("tensor " + t.name + ": data offset " + std::to_string(t.offset) +
                        " is not a multiple of the alignment " + std::to_string(align));
        uint64_t begin = 0, end = 0;
        if (add_overflows(data_offset, t.offset, begin) || add_overflows(begin, t.nbytes, end) ||
            end > size)
            return fail("tensor " + t.name + " extends past end of file (needs bytes up to " +
                        std::to_string(end) + ", file has " + std::to_string(size) + ")");
        t.data = bytes_.data() + begin;
    }
    return true;
}

Result<void> GgufParser::run() {
    char magic[4];
    if (bytes_.size() < 4)
        return make_error("not a GGUF file: only " + std::to_string(bytes_.size()) + " bytes");
    std::memcpy(magic, bytes_.data(), 4);
    if (std::memcmp(magic, "GGUF", 4) != 0) return make_error("not a GGUF file (bad magic)");
    pos_ = 4;
    uint32_t version = 0;
    uint64_t n_tensors = 0, n_kv = 0;
    if (!read(version, "version")) return make_error(error_);
    if (version == 1) return make_error("GGUF version 1 is obsolete; convert the model again");
    if (version >= (1u << 16))
        return make_error("GGUF version " + std::to_string(version) +
                          " looks byte-swapped: big-endian GGUF files are not supported");
    if (version != 2 && version != 3)
        return make_error("unsupported GGUF version " + std::to_string(version) +
                          " (Hearth reads versions 2 and 3)");
    file_.version_ = version;
    if (!read(n_tensors, "tensor count") || !read(n_kv, "metadata count"))
        return make_error(error_);
    if (!parse_metadata(n_kv)) return make_error(error_);

    if (const Value* a = file_.find("general.alignment")) {
        const auto v = a->type() == ValueType::U32 ? a->as_int<uint64_t>() : std::nullopt;
        if (!v) return make_error("general.alignment must be a u32");
        if (*v == 0 || !std::has_single_bit(*v) || *v > kMaxAlignment)
            return make_error("general.alignment " + std::to_string(*v) +
                              " is not a power of two up to " + std::to_string(kMaxAlignment));
        file_.alignment_ = *v;
    }
    if (!parse_tensor_infos(n_tensors) || !place_tensors()) return make_error(error_);

    // Fingerprint: everything before the tensor data (header, metadata, tensor infos)
    // plus the file size. Fast even for large models, and changes with any re-conversion.
    Sha256 sha;
    sha.update(bytes_.first(static_cast<size_t>(pos_)));
    const uint64_t size = bytes_.size();
    sha.update(&size, sizeof size);
    file_.fingerprint_ = sha.finish_hex();
    return {};
}

GgufFile::~GgufFile() = default;

std::string GgufFile::content_fingerprint() const {
    constexpr std::size_t kSamples = 64, kSampleBytes = 4096;
    Sha256 sha;
    sha.update(fingerprint_.data(), fingerprint_.size());
    const std::size_t begin = std::min<std::size_t>(data_offset_, bytes_.size());
    const std::size_t span = bytes_.size() - begin;
    for (std::size_t i = 0; i < kSamples && span > 0; ++i) {
        const std::size_t at = begin + span / kSamples * i;
        sha.update(bytes_.subspan(at, std::min(kSampleBytes, bytes_.size() - at)));
    }
    for (const auto& part : parts_) {
        const std::string p = part->content_fingerprint();
        sha.update(p.data(), p.size());
    }
    return sha.finish_hex();
}

std::string GgufFile::changed_on_disk() const {
    std::string changed = mapping_ ? mapping_->changed() : std::string();
    for (const auto& part : parts_)
        if (changed.empty()) changed = part->changed_on_disk();
    return changed;
}

void GgufFile::prefetch() const {
    if (mapping_) mapping_->prefetch();
    for (const auto& part : parts_) part->prefetch();
}

Result<std::unique_ptr<GgufFile>> GgufFile::parse_view(std::span<const std::byte> bytes) {
    std::unique_ptr<GgufFile> file(new GgufFile);
    file->bytes_ = bytes;
    file->total_size_ = bytes.size();
    GgufParser parser(*file, bytes);
    if (auto r = parser.run(); !r) return r.error();
    return file;
}

Result<std::unique_ptr<GgufFile>> GgufFile::parse(std::vector<std::byte> bytes) {
    // The vector's buffer does not move when the vector itself is moved into the file.
    const std::span<const std::byte> view(bytes.data(), bytes.size());
    auto file = parse_view(view);
    if (file) (*file)->owned_ = std::move(bytes);
    return file;
}

Result<std::unique_ptr<GgufFile>> GgufFile::open_part(const std::string& path) {
    auto mapping = FileMapping::open(path);
    if (!mapping) return mapping.error();
    auto parsed = parse_view((*mapping)->bytes());
    if (!parsed) return make_error(path + ": " + parsed.message());
    std::unique_ptr<GgufFile> file = std::move(parsed).value();
    file->mapping_ = std::move(mapping).value();
    file->path_ = path;
    file->total_size_ = file->bytes_.size();
    log::get("gguf")->debug("opened {}: GGUF v{}, {} metadata entries, {} tensors", path,
                            file->version_, file->metadata_.size(), file->tensors_.size());
    return file;
}

const Value* GgufFile::find(std::string_view key) const {
    for (const MetadataEntry& e : metadata_)
        if (e.key == key) return &e.value;
    return nullptr;
}

std::optional<std::string_view> GgufFile::get_string(std::string_view key) const {
    const Value* v = find(key);
    return v ? v->as_string() : std::nullopt;
}
std::optional<uint32_t> GgufFile::get_u32(std::string_view key) const {
    const Value* v = find(key);
    return v && v->type() != ValueType::Bool ? v->as_int<uint32_t>() : std::nullopt;
}
std::optional<uint64_t> GgufFile::get_u64(std::string_view key) const {
    const Value* v = find(key);
    return v && v->type() != ValueType::Bool ? v->as_int<uint64_t>() : std::nullopt;
}
std::optional<int32_t> GgufFile::get_i32(std::string_view key) const {
    const Value* v = find(key);
    return v && v->type() != ValueType::Bool ? v->as_int<int32_t>() : std::nullopt;
}
std::optional<float> GgufFile::get_f32(std::string_view key) const {
    const Value* v = find(key);
    if (!v || v->type() == ValueType::Bool) return std::nullopt;
    const auto f = v->as_float();
    return f ? std::optional<float>(static_cast<float>(*f)) : std::nullopt;
}
std::optional<bool> GgufFile::get_bool(std::string_view key) const {
    const Value* v = find(key);
    return v ? v->as_bool() : std::nullopt;
}
std::optional<ArrayView> GgufFile::get_array(std::string_view key) const {
    const Value* v = find(key);
    return v ? v->as_array() : std::nullopt;
}

const TensorInfo* GgufFile::find_tensor(std::string_view name) const {
    for (const TensorInfo& t : tensors_)
        if (t.name == name) return &t;
    return nullptr;
}

std::string TensorInfo::shape_string() const {
    std::string s = "[";
    for (int d = 0; d < n_dims; ++d) {
        if (d) s += ", ";
        s += std::to_string(ne[static_cast<size_t>(d)]);
    }
    return s + "]";
}

}  // namespace hearth::gguf
