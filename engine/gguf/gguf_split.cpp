// Split models (llama.cpp's gguf-split): "<prefix>-00001-of-00003.gguf" holds the model's
// metadata and some tensors, each later part "split.no"/"split.count" and more tensors.
// The part names follow llama_split_path/llama_split_prefix ("%s-%05d-of-%05d.gguf", the
// number counted from 1); the keys are LLM_KV_SPLIT_NO, LLM_KV_SPLIT_COUNT and
// LLM_KV_SPLIT_TENSORS_COUNT of llama-arch.cpp; like llama_model_loader, a tensor named in
// two parts and a tensor count other than the first part's "split.tensors.count" are
// errors.
#include <cstdio>
#include <unordered_set>

#include "common/sha256.h"
#include "gguf/gguf_file.h"

namespace hearth::gguf {
namespace {

std::string part_name(const std::string& prefix, uint32_t index, uint32_t count) {
    char tail[40];
    std::snprintf(tail, sizeof tail, "-%05u-of-%05u.gguf", index + 1, count);
    return prefix + tail;
}

// The prefix when path is part index (from 0) of count, by its name.
std::optional<std::string> prefix_of(const std::string& path, uint32_t index, uint32_t count) {
    char tail[40];
    std::snprintf(tail, sizeof tail, "-%05u-of-%05u.gguf", index + 1, count);
    const std::string_view t(tail);
    if (path.size() <= t.size() || path.compare(path.size() - t.size(), t.size(), t) != 0)
        return std::nullopt;
    return path.substr(0, path.size() - t.size());
}

}  // namespace

Result<std::unique_ptr<GgufFile>> GgufFile::open(const std::string& path) {
    auto first = open_part(path);
    if (!first) return first;
    GgufFile& f = **first;
    const auto count = f.get_u32("split.count");
    if (!count || *count <= 1) return first;
    if (*count > kMaxSplitParts)
        return make_error(path + ": split.count " + std::to_string(*count) + " is more than " +
                          std::to_string(kMaxSplitParts) + " parts");
    const uint32_t index = f.get_u32("split.no").value_or(0);
    if (index >= *count)
        return make_error(path + ": split.no " + std::to_string(index) +
                          " is not below split.count " + std::to_string(*count));
    if (index != 0) {
        // A later part: the model opens from its first.
        const auto prefix = prefix_of(path, index, *count);
        if (!prefix)
            return make_error(path + " is part " + std::to_string(index + 1) + " of " +
                              std::to_string(*count) +
                              " of a split model, but its name does not end in " +
                              part_name("", index, *count) + ", so the first part cannot be found");
        auto from_first = open_part(part_name(*prefix, 0, *count));
        if (!from_first)
            return make_error(path + " is part " + std::to_string(index + 1) + " of " +
                              std::to_string(*count) +
                              "; its first part cannot be opened: " + from_first.message());
        if ((*from_first)->get_u32("split.no").value_or(0) != 0 ||
            (*from_first)->get_u32("split.count") != count)
            return make_error((*from_first)->path() + " is not the first part of " + path +
                              "'s model (its split.no or split.count differ)");
        if (auto r = (*from_first)->open_other_parts(*count); !r) return r.error();
        return from_first;
    }
    if (auto r = f.open_other_parts(*count); !r) return r.error();
    return first;
}

Result<void> GgufFile::open_other_parts(uint32_t count) {
    const auto prefix = prefix_of(path_, 0, count);
    if (!prefix)
        return make_error(path_ + " is the first of " + std::to_string(count) +
                          " parts of a split model, but its name does not end in " +
                          part_name("", 0, count) + ", so the other parts cannot be found");
    std::unordered_set<std::string> names;  // (views would dangle as tensors_ grows)
    for (const TensorInfo& t : tensors_) names.insert(t.name);
    Sha256 sha;
    sha.update(fingerprint_.data(), fingerprint_.size());
    for (uint32_t i = 1; i < count; ++i) {
        const std::string name = part_name(*prefix, i, count);
        auto part = open_part(name);
        if (!part)
            return make_error("part " + std::to_string(i + 1) + " of " + std::to_string(count) +
                              " of " + path_ + " cannot be opened: " + part.message());
        GgufFile& p = **part;
        if (p.get_u32("split.no") != i || p.get_u32("split.count") != count)
            return make_error(name + " is not part " + std::to_string(i + 1) + " of " +
                              std::to_string(count) + " of " + path_ +
                              " (its split.no or split.count differ)");
        for (const TensorInfo& t : p.tensors_) {
            if (!names.insert(t.name).second)
                return make_error(name + ": tensor " + t.name + " is also in an earlier part");
        }
        // The tensors' data stay in p's mapping, which parts_ keeps.
        tensors_.insert(tensors_.end(), p.tensors_.begin(), p.tensors_.end());
        total_size_ += p.total_size_;
        sha.update(p.fingerprint_.data(), p.fingerprint_.size());
        parts_.push_back(std::move(part).value());
    }
    if (const auto expected = get_u32("split.tensors.count");
        expected && *expected != tensors_.size())
        return make_error(path_ + ": split.tensors.count says " + std::to_string(*expected) +
                          " tensors, the parts hold " + std::to_string(tensors_.size()));
    fingerprint_ = sha.finish_hex();
    return {};
}

}  // namespace hearth::gguf
