// The picture of the KV cache for the app's Memory page (who holds each block), and the
// audit that every block is accounted for (soaks and tests).
#include <set>

#include "engine_impl.h"

namespace hearth {

void Engine::Impl::snapshot_blocks() {
    const kv::BlockPool& pool = cache->pool();
    BlockMap m;
    m.block_size = cache->block_size();
    m.blocks.resize(static_cast<std::size_t>(pool.n_blocks()));
    const auto hold = [&](kv::BlockId id, BlockCell::State as, int64_t who) {
        BlockCell& c = m.blocks[static_cast<std::size_t>(id)];
        if (++c.holders == 1) {
            c.state = as;
            c.owner = who;
        } else if (c.state != as || c.owner != who) {
            c.state = BlockCell::State::Shared;
            c.owner = -1;
        }
    };
    for (kv::SeqId seq : cache->sequences()) {
        // Warm-up requests (negative ids) prefill a pin's prefix: show them as that pin.
        const bool warmup = seq < 0;
        for (kv::BlockId id : cache->block_table(seq)) {
            hold(id, warmup ? BlockCell::State::Pinned : BlockCell::State::Conversation,
                 warmup ? -1 - seq : seq);
            if (warmup) m.blocks[static_cast<std::size_t>(id)].pin = -1 - seq;
        }
    }
    for (const auto& [seq, tail] : cache->parked_tails())
        hold(tail, BlockCell::State::Conversation, seq);
    {
        std::lock_guard lk(snapshot_mu);
        for (const auto& [key, e] : pin_entries)
            if (e.pin)
                for (kv::BlockId id : cache->pinned_blocks(*e.pin)) {
                    hold(id, BlockCell::State::Pinned, key);
                    m.blocks[static_cast<std::size_t>(id)].pin = key;
                }
    }
    // A parked conversation holds only its tail; the blocks its history starts with are
    // shared with whatever holds them now (a kept-warm persona, a running chat). Blocks
    // nothing holds stay Cached: they are evictable.
    for (const auto& [seq, ids] : cache->parked_prefixes())
        for (kv::BlockId id : ids)
            if (m.blocks[static_cast<std::size_t>(id)].holders > 0)
                hold(id, BlockCell::State::Conversation, seq);
    for (std::size_t i = 0; i < m.blocks.size(); ++i) {
        BlockCell& c = m.blocks[i];
        if (c.holders == 0)
            c.state = pool.block(static_cast<kv::BlockId>(i)).hash ? BlockCell::State::Cached
                                                                   : BlockCell::State::Free;
    }
    block_map = std::move(m);
    block_map_requested = false;
}

std::string Engine::Impl::audit_blocks() const {
    if (auto ok = cache->audit(); !ok) return ok.message();
    // Every pin the cache holds is one of the engine's pinned prefixes, and the other way.
    std::set<kv::PinId> held;
    for (kv::PinId p : cache->pin_ids()) held.insert(p);
    std::set<kv::PinId> known;
    {
        std::lock_guard lk(snapshot_mu);
        for (const auto& [key, e] : pin_entries)
            if (e.pin) known.insert(*e.pin);
    }
    if (held != known)
        return std::to_string(held.size()) + " pins in the cache, " + std::to_string(known.size()) +
               " pinned prefixes in the engine";
    // With nothing queued or running, no sequence may still hold blocks.
    if (!scheduler->has_work() && !cache->sequences().empty())
        return std::to_string(cache->sequences().size()) +
               " sequences hold blocks while the engine has no work";
    return {};
}

}  // namespace hearth
