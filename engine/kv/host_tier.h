// The host-RAM tier of the KV cache, between device memory and the disk: copies of blocks
// that lived in VRAM, kept in RAM under a byte budget, least recently used first out. A
// block evicted from the device comes back with one upload instead of a disk read or a
// recompute. Only a device backend needs it (for the CPU backend the resident tier is RAM
// already). Keys as the disk tier's: chained block hashes and tail hashes, valid for one
// engine (one model, numerics and layout), so nothing more is needed. Engine thread only.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv/block_hash.h"

namespace hearth::kv {

struct HostTierStats {
    int64_t entries = 0;
    int64_t bytes = 0;
    int64_t budget_bytes = 0;
    int64_t hits = 0;       // blocks served (uploaded back)
    int64_t evictions = 0;  // dropped for the budget
    friend bool operator==(const HostTierStats&, const HostTierStats&) = default;
};

class HostTier {
  public:
    using Bytes = std::shared_ptr<const std::vector<std::byte>>;
    explicit HostTier(std::uint64_t budget_bytes) : budget_(budget_bytes) {}

    bool contains(const BlockHash& hash) const { return index_.contains(hash); }
    // Keeps the bytes (shared, not copied) as the most recently used; evicts the least
    // recently used over the budget. A block larger than the budget is not kept.
    void put(const BlockHash& hash, Bytes bytes);
    // The block's bytes, made the most recently used, or null; counts a hit.
    Bytes take(const BlockHash& hash);
    void erase(std::span<const BlockHash> hashes);
    void clear();
    HostTierStats stats() const;

  private:
    struct Entry {
        BlockHash hash;
        Bytes bytes;
    };
    std::uint64_t budget_;
    std::uint64_t bytes_ = 0;
    std::list<Entry> lru_;  // least recently used first
    std::unordered_map<BlockHash, std::list<Entry>::iterator> index_;
    int64_t hits_ = 0, evictions_ = 0;
};

}  // namespace hearth::kv
