#include "kv/kv_cache_manager.h"

#include <algorithm>
#include <cassert>
#include <string>
#include <utility>

#include "common/log.h"

namespace hearth::kv {

namespace {

std::vector<BlockId> reversed(std::span<const BlockId> ids) {
    return std::vector<BlockId>(ids.rbegin(), ids.rend());
}

int32_t to_i32(std::size_t n) {
    return static_cast<int32_t>(n);
}

Error out_of_blocks(int32_t need, const BlockPool& pool) {
    return make_error("out of KV cache blocks: need " + std::to_string(need) + ", " +
                      std::to_string(pool.n_free()) + " free of " +
                      std::to_string(pool.n_blocks()));
}

}  // namespace

KvCacheManager::KvCacheManager(KvCacheConfig config)
    : config_(std::move(config)), pool_(config_.n_blocks) {
    assert(config_.block_size > 0);
    max_pinned_ = static_cast<int32_t>(config_.max_pinned_share * config_.n_blocks);
}

int32_t KvCacheManager::blocks_for(int64_t n_tokens) const {
    return static_cast<int32_t>((n_tokens + config_.block_size - 1) / config_.block_size);
}

Result<void> KvCacheManager::audit() const {
    if (auto ok = pool_.check_consistency(); !ok) return ok;
    std::vector<int32_t> refs(static_cast<std::size_t>(pool_.n_blocks()), 0);
    std::vector<int32_t> pins(refs.size(), 0);
    auto hold = [&](BlockId id, const char* by) -> Result<void> {
        if (id < 0 || id >= pool_.n_blocks())
            return make_error(std::string("bad block id ") + std::to_string(id) + " held by " + by);
        ++refs[static_cast<std::size_t>(id)];
        return {};
    };
    for (const auto& [seq, s] : seqs_)
        for (BlockId id : s.table)
            if (auto ok = hold(id, "a sequence"); !ok) return ok;
    for (const auto& [seq, p] : parked_)
        if (p.tail != kNoBlock)
            if (auto ok = hold(p.tail, "a parked tail"); !ok) return ok;
    for (const auto& [pin, ids] : pins_) {
        for (BlockId id : ids) {
            if (auto ok = hold(id, "a pin"); !ok) return ok;
            ++pins[static_cast<std::size_t>(id)];
        }
    }
    for (BlockId id = 0; id < pool_.n_blocks(); ++id) {
        const KvBlock& b = pool_.block(id);
        const auto i = static_cast<std::size_t>(id);
        if (b.ref_count != refs[i] || b.pin_count != pins[i])
            return make_error("block " + std::to_string(id) + ": ref_count " +
                              std::to_string(b.ref_count) + " and pin_count " +
                              std::to_string(b.pin_count) + ", but " + std::to_string(refs[i]) +
                              " holders and " + std::to_string(pins[i]) + " pins");
    }
    return {};
}

KvCacheStats KvCacheManager::stats() const {
    KvCacheStats s;
    s.blocks_total = pool_.n_blocks();
    s.blocks_used = pool_.n_used();
    s.blocks_cached = pool_.n_cached();
    s.blocks_pinned = pool_.n_pinned();
    s.blocks_free = pool_.n_free();
    s.prompt_tokens_queried = prompt_tokens_queried_;
    s.prompt_tokens_cached = prompt_tokens_cached_;
    s.prompt_tokens_loaded = prompt_tokens_loaded_;
    s.prompt_tokens_shifted = prompt_tokens_shifted_;
    s.evictions = pool_.stats().evictions;
    s.parked_reclaims = parked_reclaims_;
    return s;
}

BlockHash KvCacheManager::block_hash(const Lineage& lineage, std::size_t block,
                                     const std::optional<BlockHash>& prev,
                                     std::span<const TokenId> tokens) const {
    return hash_block_in(lineage, block, config_.block_size, prev, tokens, config_.hash_keys);
}

CachedPrefix KvCacheManager::longest_cached_prefix(std::span<const TokenId> tokens,
                                                   const Lineage& lineage) const {
    // NOTE: capped at len - 1: the last prompt token is always recomputed, because its
    // forward pass produces the logits for the next token. A cache hit stores KV, not
    // logits. Rounded down to full blocks: only full blocks are ever hashed.
    CachedPrefix out;
    if (tokens.empty() || !config_.prefix_caching) return out;
    const auto bs = static_cast<std::size_t>(config_.block_size);
    const std::size_t max_blocks = (tokens.size() - 1) / bs;
    std::optional<BlockHash> prev;
    for (std::size_t i = 0; i < max_blocks; ++i) {
        const BlockHash h = block_hash(lineage, i, prev, tokens.subspan(i * bs, bs));
        const BlockId id = pool_.get_cached(h);
        if (id == kNoBlock) break;  // a chained hash: no later block can match either
        out.blocks.push_back(id);
        out.hashes.push_back(h);
        prev = h;
    }
    out.n_tokens = to_i32(out.blocks.size() * bs);
    return out;
}

std::vector<BlockHash> KvCacheManager::prefix_hashes(std::span<const TokenId> tokens,
                                                     const Lineage& lineage) const {
    if (tokens.empty()) return {};
    const auto bs = static_cast<std::size_t>(config_.block_size);
    return hash_full_blocks_in(lineage, tokens, config_.block_size, (tokens.size() - 1) / bs,
                               config_.hash_keys);
}

int32_t KvCacheManager::cached_tokens(std::span<const BlockHash> prefix_hashes) const {
    if (!config_.prefix_caching) return 0;
    std::size_t n = 0;
    while (n < prefix_hashes.size() && pool_.get_cached(prefix_hashes[n]) != kNoBlock) ++n;
    return to_i32(n) * config_.block_size;
}

bool KvCacheManager::can_allocate(int32_t n, std::span<const BlockId> hits,
                                  std::optional<SeqId> keep) const {
    // Hits sitting in the free queue leave it when touched, so they do not count as free.
    int64_t available = pool_.n_free();
    for (BlockId id : hits)
        if (pool_.block(id).ref_count == 0) --available;
    // A parked tail someone else holds too (HeldPrefix) frees nothing when reclaimed.
    for (const auto& [stamp, seq] : parked_order_) {
        if (available >= n) break;
        if (seq != keep && pool_.block(parked_.at(seq).tail).ref_count == 1) ++available;
    }
    return available >= n;
}

void KvCacheManager::release_parked_tail(Parked& p) {
    if (p.tail == kNoBlock) return;
    const BlockId tail = p.tail;
    pool_.free(std::span(&tail, 1));
    parked_order_.erase(p.stamp);
    p.tail = kNoBlock;
}

void KvCacheManager::reclaim_parked(int32_t n) {
    // NOTE: parked tails are a convenience, never needed for correctness: a reclaimed tail
    // is simply recomputed on resume. Oldest first, as the least likely to come back.
    while (pool_.n_free() < n && !parked_order_.empty()) {
        const SeqId seq = parked_order_.begin()->second;
        release_parked_tail(parked_.at(seq));
        ++parked_reclaims_;
        log::get("kv")->debug("reclaimed the parked tail of sequence {}", seq);
    }
}

Result<Allocation> KvCacheManager::allocate(SeqId seq, std::span<const TokenId> prompt,
                                            const Lineage& lineage) {
    if (parked_.count(seq))
        return make_error("sequence " + std::to_string(seq) + " is parked: resume it");
    return allocate_fresh(seq, prompt, lineage, std::nullopt);
}

Result<Allocation> KvCacheManager::allocate_fresh(SeqId seq, std::span<const TokenId> prompt,
                                                  const Lineage& lineage,
                                                  std::optional<SeqId> keep) {
    if (prompt.empty()) return make_error("cannot allocate an empty prompt");
    if (seqs_.count(seq)) return make_error("sequence " + std::to_string(seq) + " exists");
    CachedPrefix hit = longest_cached_prefix(prompt, lineage);
    const int32_t need = blocks_for(to_i32(prompt.size())) - to_i32(hit.blocks.size());
    if (!can_allocate(need, hit.blocks, keep)) {
        log::get("kv")->debug("allocate({}, {} tokens): out of blocks", seq, prompt.size());
        return out_of_blocks(need, pool_);
    }
    // NOTE: touch the hits before popping new blocks, or the pops could evict them.
    pool_.touch(hit.blocks);
    reclaim_parked(need);
    auto fresh = pool_.allocate(need);
    assert(fresh.ok());

    Sequence s;
    s.table = std::move(hit.blocks);
    s.table.insert(s.table.end(), fresh->begin(), fresh->end());
    s.tokens.assign(prompt.begin(), prompt.end());
    s.hashes = std::move(hit.hashes);
    s.n_computed = hit.n_tokens;
    s.n_reserved = to_i32(prompt.size());
    s.lineage = lineage;

    Allocation a{s.table, to_i32(prompt.size()), s.n_computed};
    prompt_tokens_queried_ += a.n_prompt_tokens;
    prompt_tokens_cached_ += a.n_computed_tokens;
    seqs_.emplace(seq, std::move(s));
    return a;
}

Result<std::vector<BlockId>> KvCacheManager::append_slots(SeqId seq, int32_t n) {
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return make_error("no sequence " + std::to_string(seq));
    if (n < 0) return make_error("append_slots: negative count");
    Sequence& s = it->second;
    const int32_t need = blocks_for(int64_t{s.n_reserved} + n) - to_i32(s.table.size());
    std::vector<BlockId> added;
    if (need > 0) {
        if (!can_allocate(need, {}, std::nullopt)) return out_of_blocks(need, pool_);
        reclaim_parked(need);
        auto fresh = pool_.allocate(need);
        assert(fresh.ok());
        added = std::move(fresh.value());
        s.table.insert(s.table.end(), added.begin(), added.end());
    }
    s.n_reserved += n;
    return added;
}

Result<void> KvCacheManager::commit(SeqId seq, std::span<const TokenId> tokens) {
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return make_error("no sequence " + std::to_string(seq));
    it->second.tokens.insert(it->second.tokens.end(), tokens.begin(), tokens.end());
    return {};
}

Result<void> KvCacheManager::mark_computed(SeqId seq, int32_t n) {
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return make_error("no sequence " + std::to_string(seq));
    Sequence& s = it->second;
    const int64_t limit = std::min<int64_t>(to_i32(s.tokens.size()), s.n_reserved);
    if (n < 0 || s.n_computed + int64_t{n} > limit)
        return make_error("mark_computed: " + std::to_string(n) + " tokens past " +
                          std::to_string(s.n_computed) + " exceed the known tokens or slots");
    s.n_computed += n;
    hash_new_full_blocks(s);
    return {};
}

void KvCacheManager::hash_new_full_blocks(Sequence& s) {
    const auto bs = static_cast<std::size_t>(config_.block_size);
    const std::size_t full = static_cast<std::size_t>(s.n_computed) / bs;
    const std::span<const TokenId> tokens(s.tokens);
    while (s.hashes.size() < full) {
        const std::size_t i = s.hashes.size();
        std::optional<BlockHash> parent;
        if (i > 0) parent = s.hashes.back();
        s.hashes.push_back(block_hash(s.lineage, i, parent, tokens.subspan(i * bs, bs)));
        if (config_.prefix_caching) pool_.cache_full_block(s.table[i], s.hashes.back());
    }
}

void KvCacheManager::free(SeqId seq) {
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return;
    // NOTE: tail first. The pool appends freed blocks in this order, so a sequence's last
    // blocks are evicted before its first ones: the first blocks (system prompt, persona)
    // are shared by the most future prompts, and a chained hash makes a later block
    // useless once an earlier one is gone.
    pool_.free(reversed(it->second.table));
    seqs_.erase(it);
}

Result<void> KvCacheManager::park(SeqId seq) {
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return make_error("no sequence " + std::to_string(seq));
    Sequence& s = it->second;
    const auto bs = static_cast<std::size_t>(config_.block_size);
    const std::size_t full = static_cast<std::size_t>(s.n_computed) / bs;
    assert(s.hashes.size() == full);
    Parked p;
    p.tokens.assign(s.tokens.begin(), s.tokens.begin() + s.n_computed);
    p.hashes = std::move(s.hashes);
    p.lineage = s.lineage;
    if (config_.prefix_caching && static_cast<std::size_t>(s.n_computed) % bs != 0)
        p.tail = s.table[full];
    std::vector<BlockId> to_free;
    for (auto b = s.table.rbegin(); b != s.table.rend(); ++b)
        if (*b != p.tail) to_free.push_back(*b);
    pool_.free(to_free);
    if (p.tail != kNoBlock) {
        p.stamp = next_stamp_++;
        parked_order_.emplace(p.stamp, seq);
    }
    seqs_.erase(it);
    parked_.emplace(seq, std::move(p));
    return {};
}

Result<Allocation> KvCacheManager::resume(SeqId seq, std::span<const TokenId> tokens,
                                          const Lineage& lineage) {
    if (seqs_.count(seq)) return make_error("sequence " + std::to_string(seq) + " is active");
    if (tokens.empty()) return make_error("cannot resume with no tokens");
    const auto it = parked_.find(seq);
    if (it == parked_.end()) return allocate_fresh(seq, tokens, lineage, std::nullopt);
    Parked& p = it->second;
    const bool extends = p.tail != kNoBlock && p.lineage == lineage &&
                         tokens.size() >= p.tokens.size() &&
                         std::equal(p.tokens.begin(), p.tokens.end(), tokens.begin());
    if (extends) {
        if (auto r = resume_with_tail(seq, p, tokens)) {
            if (r->ok()) parked_.erase(it);
            return std::move(*r);
        }
    }
    // Our own tail counts as reclaimable here: on success it is released anyway.
    auto r = allocate_fresh(seq, tokens, lineage, std::nullopt);
    if (r.ok()) {
        release_parked_tail(p);
        parked_.erase(it);
    }
    return r;
}

std::optional<Result<Allocation>> KvCacheManager::resume_with_tail(
    SeqId seq, Parked& p, std::span<const TokenId> tokens) {
    std::vector<BlockId> hits;
    for (const BlockHash& h : p.hashes) {
        const BlockId id = pool_.get_cached(h);
        if (id == kNoBlock) return std::nullopt;  // the tail's prefix must be recomputed
        hits.push_back(id);
    }
    const int32_t len = to_i32(tokens.size());
    const int32_t need = blocks_for(len) - to_i32(hits.size()) - 1;
    if (!can_allocate(need, hits, seq)) return Result<Allocation>(out_of_blocks(need, pool_));
    pool_.touch(hits);
    const BlockId tail = p.tail;  // the tail's reference moves from the parked entry to us
    parked_order_.erase(p.stamp);
    p.tail = kNoBlock;
    reclaim_parked(need);
    auto fresh = pool_.allocate(need);
    assert(fresh.ok());

    Sequence s;
    s.table = std::move(hits);
    s.table.push_back(tail);
    s.table.insert(s.table.end(), fresh->begin(), fresh->end());
    s.tokens.assign(tokens.begin(), tokens.end());
    s.hashes = std::move(p.hashes);
    // The parked tokens are all computed; the last prompt token is recomputed for logits.
    s.n_computed = std::min(to_i32(p.tokens.size()), len - 1);
    s.n_reserved = len;
    s.lineage = p.lineage;

    Allocation a{s.table, len, s.n_computed};
    prompt_tokens_queried_ += a.n_prompt_tokens;
    prompt_tokens_cached_ += a.n_computed_tokens;
    seqs_.emplace(seq, std::move(s));
    return Result<Allocation>(std::move(a));
}

void KvCacheManager::drop_parked(SeqId seq) {
    const auto it = parked_.find(seq);
    if (it == parked_.end()) return;
    release_parked_tail(it->second);
    parked_.erase(it);
}

HeldPrefix KvCacheManager::hold(std::span<const TokenId> tokens, const Lineage& lineage,
                                std::optional<SeqId> parked) {
    HeldPrefix out;
    if (!config_.prefix_caching) return out;
    const auto bs = static_cast<std::size_t>(config_.block_size);
    std::optional<BlockHash> prev;
    for (std::size_t i = 0; i < tokens.size() / bs; ++i) {
        prev = block_hash(lineage, i, prev, tokens.subspan(i * bs, bs));
        const BlockId id = pool_.get_cached(*prev);
        if (id == kNoBlock) break;
        out.blocks.push_back(id);
    }
    // The parked tail holds the rows after its own full blocks: usable when those are the
    // blocks just found (the same tokens in the same lineage chain to the same hashes).
    if (parked) {
        const auto it = parked_.find(*parked);
        if (it != parked_.end()) {
            const Parked& p = it->second;
            const bool continues = p.tail != kNoBlock && p.lineage == lineage &&
                                   p.hashes.size() == out.blocks.size() &&
                                   p.tokens.size() <= tokens.size() &&
                                   std::equal(p.tokens.begin(), p.tokens.end(), tokens.begin());
            if (continues) {
                out.blocks.push_back(p.tail);
                out.n_tokens = to_i32(p.tokens.size());
            }
        }
    }
    if (out.n_tokens == 0) out.n_tokens = to_i32(out.blocks.size() * bs);
    pool_.touch(out.blocks);
    return out;
}

void KvCacheManager::release(HeldPrefix& held) {
    pool_.free(reversed(held.blocks));
    held = {};
}

Result<PinInfo> KvCacheManager::pin(std::span<const TokenId> prefix) {
    // NOTE: a pin holds blocks already cached (pin after the persona's first prefill): it
    // keeps KV warm, it does not compute any. No len - 1 cap here: the pinned prefix is
    // meant to prefix longer prompts, whose own lookups apply the cap.
    if (!config_.prefix_caching) return make_error("pin: prefix caching is off");
    const auto bs = static_cast<std::size_t>(config_.block_size);
    std::vector<BlockId> blocks;
    std::optional<BlockHash> prev;
    for (std::size_t i = 0; i < prefix.size() / bs; ++i) {
        prev = hash_block(prev, prefix.subspan(i * bs, bs), config_.hash_keys);
        const BlockId id = pool_.get_cached(*prev);
        if (id == kNoBlock) break;
        blocks.push_back(id);
    }
    if (blocks.empty()) return make_error("pin: no full block of the prefix is in the cache");
    int32_t added = 0;
    for (BlockId id : blocks)
        if (pool_.block(id).pin_count == 0) ++added;
    if (pool_.n_pinned() + added > max_pinned_)
        return make_error("pin: " + std::to_string(pool_.n_pinned() + added) +
                          " pinned blocks would exceed the cap of " + std::to_string(max_pinned_) +
                          " (" + std::to_string(static_cast<int>(config_.max_pinned_share * 100)) +
                          "% of " + std::to_string(pool_.n_blocks()) + ")");
    pool_.pin(blocks);
    const PinId id = next_pin_++;
    PinInfo info{id, to_i32(blocks.size()), to_i32(blocks.size() * bs)};
    pins_.emplace(id, std::move(blocks));
    return info;
}

Result<void> KvCacheManager::unpin(PinId pin) {
    const auto it = pins_.find(pin);
    if (it == pins_.end()) return make_error("unpin: no pin " + std::to_string(pin));
    pool_.unpin(reversed(it->second));
    pins_.erase(it);
    return {};
}

std::span<const BlockId> KvCacheManager::block_table(SeqId seq) const {
    const auto it = seqs_.find(seq);
    return it == seqs_.end() ? std::span<const BlockId>() : std::span(it->second.table);
}

std::span<const TokenId> KvCacheManager::tokens(SeqId seq) const {
    const auto it = seqs_.find(seq);
    return it == seqs_.end() ? std::span<const TokenId>() : std::span(it->second.tokens);
}

int32_t KvCacheManager::n_computed(SeqId seq) const {
    const auto it = seqs_.find(seq);
    return it == seqs_.end() ? 0 : it->second.n_computed;
}

Lineage KvCacheManager::lineage(SeqId seq) const {
    const auto it = seqs_.find(seq);
    return it == seqs_.end() ? Lineage{} : it->second.lineage;
}

std::span<const BlockHash> KvCacheManager::block_hashes(SeqId seq) const {
    const auto it = seqs_.find(seq);
    return it == seqs_.end() ? std::span<const BlockHash>() : std::span(it->second.hashes);
}

void KvCacheManager::count_loaded_tokens(int32_t n) {
    prompt_tokens_cached_ += n;
    prompt_tokens_loaded_ += n;
}

BlockId KvCacheManager::parked_tail(SeqId seq) const {
    const auto it = parked_.find(seq);
    return it == parked_.end() ? kNoBlock : it->second.tail;
}

std::span<const BlockId> KvCacheManager::pinned_blocks(PinId pin) const {
    const auto it = pins_.find(pin);
    return it == pins_.end() ? std::span<const BlockId>() : std::span(it->second);
}

std::vector<SeqId> KvCacheManager::sequences() const {
    std::vector<SeqId> out;
    for (const auto& [id, s] : seqs_) out.push_back(id);
    return out;
}

std::vector<std::pair<SeqId, BlockId>> KvCacheManager::parked_tails() const {
    std::vector<std::pair<SeqId, BlockId>> out;
    for (const auto& [stamp, seq] : parked_order_) out.emplace_back(seq, parked_.at(seq).tail);
    return out;
}

std::vector<std::pair<SeqId, std::vector<BlockId>>> KvCacheManager::parked_prefixes() const {
    std::vector<std::pair<SeqId, std::vector<BlockId>>> out;
    for (const auto& [seq, p] : parked_) {
        std::vector<BlockId> ids;
        for (const BlockHash& h : p.hashes) {
            const BlockId id = pool_.get_cached(h);
            if (id == kNoBlock) break;
            ids.push_back(id);
        }
        if (!ids.empty()) out.emplace_back(seq, std::move(ids));
    }
    return out;
}

std::vector<PinId> KvCacheManager::pin_ids() const {
    std::vector<PinId> out;
    for (const auto& [id, blocks] : pins_) out.push_back(id);
    return out;
}

}  // namespace hearth::kv
