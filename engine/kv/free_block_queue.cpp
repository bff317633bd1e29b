#include "kv/free_block_queue.h"

#include <cassert>

namespace hearth::kv {

FreeBlockQueue::FreeBlockQueue(std::span<KvBlock> blocks) : blocks_(blocks) {
    for (KvBlock& b : blocks_) {
        b.prev_free = b.next_free = kNoBlock;
        b.in_free_queue = false;
    }
    for (KvBlock& b : blocks_) push_back(b.id);
}

BlockId FreeBlockQueue::pop_front() {
    assert(head_ != kNoBlock);
    const BlockId id = head_;
    remove(id);
    return id;
}

void FreeBlockQueue::push_back(BlockId id) {
    KvBlock& b = at(id);
    assert(!b.in_free_queue);
    b.prev_free = tail_;
    b.next_free = kNoBlock;
    if (tail_ != kNoBlock)
        at(tail_).next_free = id;
    else
        head_ = id;
    tail_ = id;
    b.in_free_queue = true;
    ++size_;
}

void FreeBlockQueue::push_front(BlockId id) {
    KvBlock& b = at(id);
    assert(!b.in_free_queue);
    b.prev_free = kNoBlock;
    b.next_free = head_;
    if (head_ != kNoBlock)
        at(head_).prev_free = id;
    else
        tail_ = id;
    head_ = id;
    b.in_free_queue = true;
    ++size_;
}

void FreeBlockQueue::remove(BlockId id) {
    KvBlock& b = at(id);
    assert(b.in_free_queue);
    if (b.prev_free != kNoBlock)
        at(b.prev_free).next_free = b.next_free;
    else
        head_ = b.next_free;
    if (b.next_free != kNoBlock)
        at(b.next_free).prev_free = b.prev_free;
    else
        tail_ = b.prev_free;
    b.prev_free = b.next_free = kNoBlock;
    b.in_free_queue = false;
    --size_;
}

std::vector<BlockId> FreeBlockQueue::to_vector() const {
    std::vector<BlockId> out;
    out.reserve(static_cast<std::size_t>(size_));
    for (BlockId id = head_; id != kNoBlock; id = blocks_[index(id)].next_free) out.push_back(id);
    return out;
}

}  // namespace hearth::kv
