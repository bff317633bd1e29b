// BlockPool: the sole owner of the KV blocks' bookkeeping: the blocks, the free queue and
// the hash -> block map of cached (full, computed) blocks. It hands out block ids; the
// bytes live in KvStorage under the same ids.
//
// NOTE (lazy eviction): free() does not forget a block's hash. A freed cached block stays
// findable by get_cached() until allocate() pops it for reuse; only then is its hash
// removed from the map. Freeing is therefore cheap, and an idle conversation's prefix is
// served from cache for as long as the memory is not needed by anyone else.
#pragma once

#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "kv/block.h"
#include "kv/free_block_queue.h"

namespace hearth::kv {

struct BlockPoolStats {
    int64_t allocated = 0;   // blocks handed out by allocate()
    int64_t evictions = 0;   // cached blocks whose hash was dropped for reuse
    int64_t cache_hits = 0;  // blocks taken by touch() (a hit, or a pin)
};

class BlockPool {
  public:
    explicit BlockPool(int32_t n_blocks);
    BlockPool(const BlockPool&) = delete;  // the free queue points into blocks_
    BlockPool& operator=(const BlockPool&) = delete;

    int32_t n_blocks() const { return static_cast<int32_t>(blocks_.size()); }
    // Blocks in the free queue (cached or not): what allocate() can hand out.
    int32_t n_free() const { return queue_.size(); }
    int32_t n_used() const { return n_blocks() - n_free(); }  // ref_count > 0
    int32_t n_cached() const { return static_cast<int32_t>(cached_.size()); }
    int32_t n_pinned() const { return n_pinned_; }  // blocks with pin_count > 0

    const KvBlock& block(BlockId id) const { return blocks_[index(id)]; }
    const FreeBlockQueue& free_queue() const { return queue_; }
    const BlockPoolStats& stats() const { return stats_; }
    const std::unordered_map<BlockHash, BlockId>& cached_blocks() const { return cached_; }

    // The cached block with this hash, held or freed-but-cached; kNoBlock if none.
    BlockId get_cached(const BlockHash& hash) const;

    // A new holder for each block: ref++, and a ref-0 block (a hit on a freed block) is
    // taken out of the free queue so it cannot be reused under its holder.
    void touch(std::span<const BlockId> ids);

    // n blocks from the head of the free queue, each with ref_count 1 and no hash (a
    // popped cached block is evicted). Fails, changing nothing, if fewer are free.
    Result<std::vector<BlockId>> allocate(int32_t n);

    // One holder less for each block. Blocks reaching ref 0 go back to the free queue in
    // the given order (pass a sequence's blocks tail first): cached ones at the tail (most
    // recently used), never-cached ones at the head, in the given order too.
    void free(std::span<const BlockId> ids);

    // Records that a held, full, computed block has this content hash. Returns false, and
    // leaves the block uncached, when another block is already cached under the hash
    // (two sequences computed the same block); the block stays valid for its holders.
    bool cache_full_block(BlockId id, const BlockHash& hash);

    // Pins are holders too (touch / free), counted in pin_count so that the pinned share
    // of the pool can be capped and checked.
    void pin(std::span<const BlockId> ids);
    void unpin(std::span<const BlockId> ids);

    // Every structural invariant, checked in O(n): for tests and debug builds.
    Result<void> check_consistency() const;

  private:
    static std::size_t index(BlockId id) { return static_cast<std::size_t>(id); }
    KvBlock& at(BlockId id) { return blocks_[index(id)]; }
    void evict(KvBlock& b);

    std::vector<KvBlock> blocks_;  // never resized: the queue holds a span of it
    FreeBlockQueue queue_;
    std::unordered_map<BlockHash, BlockId> cached_;
    int32_t n_pinned_ = 0;
    BlockPoolStats stats_;
};

}  // namespace hearth::kv
