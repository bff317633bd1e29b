// One block of the paged KV cache as the bookkeeping sees it: an id into KvStorage (ids
// never move), who holds it, and, once full and computed, the hash of its content.
#pragma once

#include <cstdint>
#include <optional>

#include "kv/block_hash.h"

namespace hearth::kv {

using BlockId = int32_t;
inline constexpr BlockId kNoBlock = -1;

struct KvBlock {
    BlockId id = kNoBlock;
    // Holders: sequences' block tables, pins and parked tails, one reference each.
    // NOTE: ref_count == 0 <=> the block is in the free queue (exactly once). A ref-0 block
    // may still carry a hash: it is "freed but cached" until allocate() reuses it.
    int32_t ref_count = 0;
    // Set only when the block is full and its KV computed; cleared on eviction.
    std::optional<BlockHash> hash;
    // How many pins hold this block (each pin also counts once in ref_count).
    int32_t pin_count = 0;

    // Intrusive free-list links (block ids), owned by FreeBlockQueue.
    BlockId prev_free = kNoBlock;
    BlockId next_free = kNoBlock;
    bool in_free_queue = false;
};

}  // namespace hearth::kv
