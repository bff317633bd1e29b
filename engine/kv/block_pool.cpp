#include "kv/block_pool.h"

#include <cassert>
#include <string>

namespace hearth::kv {

namespace {

std::vector<KvBlock> make_blocks(int32_t n) {
    assert(n > 0);
    std::vector<KvBlock> blocks(static_cast<std::size_t>(n));
    for (int32_t i = 0; i < n; ++i) blocks[static_cast<std::size_t>(i)].id = i;
    return blocks;
}

}  // namespace

BlockPool::BlockPool(int32_t n_blocks) : blocks_(make_blocks(n_blocks)), queue_(blocks_) {}

BlockId BlockPool::get_cached(const BlockHash& hash) const {
    const auto it = cached_.find(hash);
    return it == cached_.end() ? kNoBlock : it->second;
}

void BlockPool::touch(std::span<const BlockId> ids) {
    for (BlockId id : ids) {
        KvBlock& b = at(id);
        if (b.ref_count == 0) queue_.remove(id);
        ++b.ref_count;
        ++stats_.cache_hits;
    }
}

void BlockPool::evict(KvBlock& b) {
    if (!b.hash) return;
    const auto it = cached_.find(*b.hash);
    if (it != cached_.end() && it->second == b.id) cached_.erase(it);
    b.hash.reset();
    ++stats_.evictions;
}

Result<std::vector<BlockId>> BlockPool::allocate(int32_t n) {
    assert(n >= 0);
    if (n > queue_.size())
        return make_error("out of KV cache blocks: need " + std::to_string(n) + ", " +
                          std::to_string(queue_.size()) + " free of " + std::to_string(n_blocks()));
    std::vector<BlockId> out;
    out.reserve(static_cast<std::size_t>(n));
    for (int32_t i = 0; i < n; ++i) {
        KvBlock& b = at(queue_.pop_front());
        assert(b.ref_count == 0 && b.pin_count == 0);
        evict(b);
        b.ref_count = 1;
        out.push_back(b.id);
    }
    stats_.allocated += n;
    return out;
}

void BlockPool::free(std::span<const BlockId> ids) {
    // NOTE: never-cached blocks go to the head: they can serve no future hit, so reusing
    // them first keeps cached prefixes alive longer (vLLM appends every freed block to
    // the tail; a doubly linked list makes the head just as cheap). To keep their given
    // order at the head they are collected and pushed front last to first.
    std::vector<BlockId> uncached;
    for (BlockId id : ids) {
        KvBlock& b = at(id);
        assert(b.ref_count > 0);
        if (--b.ref_count > 0) continue;
        assert(b.pin_count == 0);
        if (b.hash)
            queue_.push_back(id);
        else
            uncached.push_back(id);
    }
    for (auto it = uncached.rbegin(); it != uncached.rend(); ++it) queue_.push_front(*it);
}

bool BlockPool::cache_full_block(BlockId id, const BlockHash& hash) {
    KvBlock& b = at(id);
    assert(b.ref_count > 0);
    if (b.hash) {
        assert(*b.hash == hash);
        return *b.hash == hash;
    }
    const auto [it, inserted] = cached_.try_emplace(hash, id);
    if (!inserted) return it->second == id;
    b.hash = hash;
    return true;
}

void BlockPool::pin(std::span<const BlockId> ids) {
    touch(ids);
    for (BlockId id : ids)
        if (at(id).pin_count++ == 0) ++n_pinned_;
}

void BlockPool::unpin(std::span<const BlockId> ids) {
    for (BlockId id : ids) {
        KvBlock& b = at(id);
        assert(b.pin_count > 0);
        if (--b.pin_count == 0) --n_pinned_;
    }
    free(ids);
}

Result<void> BlockPool::check_consistency() const {
    auto fail = [](BlockId id, const std::string& what) {
        return make_error("block " + std::to_string(id) + ": " + what);
    };
    std::vector<int> seen(blocks_.size(), 0);
    for (BlockId id : queue_.to_vector()) {
        if (id < 0 || id >= n_blocks()) return fail(id, "bad id in the free queue");
        if (++seen[index(id)] > 1) return fail(id, "twice in the free queue");
    }
    int32_t pinned = 0;
    for (const KvBlock& b : blocks_) {
        const bool queued = seen[index(b.id)] == 1;
        if (queued != b.in_free_queue) return fail(b.id, "in_free_queue flag is wrong");
        if (b.ref_count < 0) return fail(b.id, "negative ref_count");
        if (queued == (b.ref_count > 0))
            return fail(b.id, queued ? "held and free at once" : "leaked: ref 0, not free");
        if (b.pin_count < 0 || b.pin_count > b.ref_count) return fail(b.id, "bad pin_count");
        if (b.pin_count > 0) ++pinned;
        if (b.hash && get_cached(*b.hash) != b.id) return fail(b.id, "hash not in the map");
    }
    if (pinned != n_pinned_) return make_error("pinned block count is wrong");
    for (const auto& [hash, id] : cached_) {
        if (id < 0 || id >= n_blocks()) return make_error("cached hash maps to a bad id");
        if (!block(id).hash || !(*block(id).hash == hash))
            return fail(id, "cached under a hash it does not carry");
    }
    return {};
}

}  // namespace hearth::kv
