#include "kv/host_tier.h"

namespace hearth::kv {

void HostTier::put(const BlockHash& hash, Bytes bytes) {
    if (!bytes || bytes->size() > budget_) return;
    if (auto it = index_.find(hash); it != index_.end()) {  // the same content: refresh
        lru_.splice(lru_.end(), lru_, it->second);
        return;
    }
    bytes_ += bytes->size();
    lru_.push_back({hash, std::move(bytes)});
    index_.emplace(hash, std::prev(lru_.end()));
    while (bytes_ > budget_ && !lru_.empty()) {
        bytes_ -= lru_.front().bytes->size();
        index_.erase(lru_.front().hash);
        lru_.pop_front();
        ++evictions_;
    }
}

HostTier::Bytes HostTier::take(const BlockHash& hash) {
    const auto it = index_.find(hash);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.end(), lru_, it->second);
    ++hits_;
    return it->second->bytes;
}

void HostTier::erase(std::span<const BlockHash> hashes) {
    for (const BlockHash& h : hashes) {
        const auto it = index_.find(h);
        if (it == index_.end()) continue;
        bytes_ -= it->second->bytes->size();
        lru_.erase(it->second);
        index_.erase(it);
    }
}

void HostTier::clear() {
    lru_.clear();
    index_.clear();
    bytes_ = 0;
}

HostTierStats HostTier::stats() const {
    return {static_cast<int64_t>(index_.size()), static_cast<int64_t>(bytes_),
            static_cast<int64_t>(budget_), hits_, evictions_};
}

}  // namespace hearth::kv
