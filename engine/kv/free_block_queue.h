// The free blocks in eviction order, as an intrusive doubly linked list threaded through
// KvBlock::prev_free / next_free: O(1) pop_front, push_back, push_front and removal from
// the middle (a cache hit on a freed block takes it back out), no allocation.
//
// NOTE: the head is evicted first. BlockPool keeps the order "least useful first":
// never-cached blocks at the head (reusing them loses nothing), then cached blocks from
// least to most recently freed, each freed sequence contributing its tail block first.
#pragma once

#include <span>
#include <vector>

#include "kv/block.h"

namespace hearth::kv {

class FreeBlockQueue {
  public:
    // Threads every block of `blocks` into the queue in id order. The span must outlive
    // the queue and never move (BlockPool owns both and is neither copyable nor movable).
    explicit FreeBlockQueue(std::span<KvBlock> blocks);

    int32_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    BlockId front() const { return head_; }  // kNoBlock when empty

    BlockId pop_front();          // the queue must not be empty
    void push_back(BlockId id);   // the block must not be in the queue
    void push_front(BlockId id);  // the block must not be in the queue
    void remove(BlockId id);      // the block must be in the queue
    bool contains(BlockId id) const { return blocks_[index(id)].in_free_queue; }

    // Head to tail; for tests and diagnostics (O(n)).
    std::vector<BlockId> to_vector() const;

  private:
    static std::size_t index(BlockId id) { return static_cast<std::size_t>(id); }
    KvBlock& at(BlockId id) { return blocks_[index(id)]; }

    std::span<KvBlock> blocks_;
    BlockId head_ = kNoBlock;
    BlockId tail_ = kNoBlock;
    int32_t size_ = 0;
};

}  // namespace hearth::kv
