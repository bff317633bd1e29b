#include "spec/ngram_drafter.h"

#include <algorithm>

namespace hearth::spec {

NgramDrafter::NgramDrafter(NgramOptions options) : options_(options) {
    options_.n_min = std::max(options_.n_min, 1);
    options_.n_max = std::max(options_.n_max, options_.n_min);
    latest_.resize(static_cast<std::size_t>(options_.n_max - options_.n_min + 1));
}

uint64_t NgramDrafter::hash(std::span<const int32_t> gram) {
    uint64_t h = 0xcbf29ce484222325ull ^ gram.size();
    for (int32_t t : gram) {
        h ^= static_cast<uint32_t>(t);
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h;
}

void NgramDrafter::index(std::span<const int32_t> tokens) {
    // Not an extension of what was indexed (a new turn that changed earlier text): start
    // again. Extensions are the rule: a step adds the tokens it accepted.
    const bool extends =
        seen_.size() <= tokens.size() && std::equal(seen_.begin(), seen_.end(), tokens.begin());
    if (!extends) {
        seen_.clear();
        for (auto& m : latest_) m.clear();
    }
    // n-grams ending at e (exclusive), for every e up to tokens.size() - 1: the current
    // suffix (ending at tokens.size()) is what proposals look up, not an earlier occurrence.
    const auto end = static_cast<int32_t>(tokens.size()) - 1;
    for (auto e = static_cast<int32_t>(seen_.size()); e <= end; ++e) {
        if (e == 0) continue;
        for (int32_t n = options_.n_min; n <= options_.n_max && n <= e; ++n)
            latest_[static_cast<std::size_t>(n - options_.n_min)][hash(
                tokens.subspan(static_cast<std::size_t>(e - n), static_cast<std::size_t>(n)))] = e;
    }
    if (end > static_cast<int32_t>(seen_.size()))
        seen_.assign(tokens.begin(), tokens.begin() + end);
}

void NgramDrafter::propose(std::span<const int32_t> tokens, int32_t max_tokens,
                           std::vector<int32_t>& out) {
    out.clear();
    last_match_ = 0;
    index(tokens);
    const auto size = static_cast<int32_t>(tokens.size());
    if (max_tokens <= 0) return;
    for (int32_t n = std::min(options_.n_max, size - 1); n >= options_.n_min; --n) {
        const auto suffix =
            tokens.subspan(static_cast<std::size_t>(size - n), static_cast<std::size_t>(n));
        const auto& map = latest_[static_cast<std::size_t>(n - options_.n_min)];
        const auto it = map.find(hash(suffix));
        if (it == map.end()) continue;
        const int32_t e = it->second;  // the earlier occurrence is tokens[e - n, e)
        const auto earlier =
            tokens.subspan(static_cast<std::size_t>(e - n), static_cast<std::size_t>(n));
        if (!std::equal(earlier.begin(), earlier.end(), suffix.begin())) continue;  // collision
        const int32_t take = std::min(max_tokens, size - e);
        out.assign(tokens.begin() + e, tokens.begin() + e + take);
        last_match_ = n;
        return;
    }
}

}  // namespace hearth::spec
