// The scheduler's side of the KV tiers below the resident one (sched/scheduler.h): loads
// started at admission and applied between steps, and blocks written down when requests
// end or are preempted.
#include <algorithm>
#include <functional>
#include <optional>

#include "common/log.h"
#include "kv/disk_tier.h"
#include "kv/host_tier.h"
#include "kv/kv_storage.h"
#include "sched/scheduler.h"
#include "sched/scheduler_seq.h"

namespace hearth::sched {

namespace {

int32_t to_i32(std::size_t n) {
    return static_cast<int32_t>(n);
}

}  // namespace

void Scheduler::drop_load(Seq& s) {
    // NOTE: before the blocks are freed: the worker may be reading into them.
    if (s.load_job != 0 && tier_) tier_->cancel_load(s.load_job);
    s.load_job = 0;
}

std::optional<std::pair<kv::BlockHash, int32_t>> Scheduler::find_tail(
    const Seq& s, std::size_t block, const std::function<bool(const kv::BlockHash&)>& held) const {
    // The longest tail (a partly filled block kept by content) that continues the prompt's
    // first `block` whole blocks; the last prompt token is always computed.
    const int32_t bs = cache_.block_size();
    const std::size_t at = block * static_cast<std::size_t>(bs);
    if (s.tokens.size() < at + 2) return std::nullopt;
    const auto room = static_cast<int32_t>(
        std::min<std::size_t>(static_cast<std::size_t>(bs) - 1, s.tokens.size() - 1 - at));
    std::optional<kv::BlockHash> parent;
    if (block > 0) parent = s.prefix_hashes[block - 1];
    for (int32_t len = room; len > 0; --len) {
        const kv::BlockHash h =
            cache_.block_hash(s.lineage, block, parent,
                              std::span(s.tokens).subspan(at, static_cast<std::size_t>(len)));
        if (held(h)) return std::pair{h, len};
    }
    return std::nullopt;
}

void Scheduler::count_restored(Seq& s, int32_t n) {
    cache_.count_loaded_tokens(n);
    s.stats.prompt_tokens_loaded += n;
    if (s.first_admission) {
        s.stats.prompt_tokens_cached += n;
        s.stats.prompt_tokens_computed -= n;
    } else {
        s.stats.recomputed_tokens = std::max(0, s.stats.recomputed_tokens - n);
    }
}

bool Scheduler::start_load(Seq& s, int32_t n_computed) {
    if ((!tier_ && !host_) || !cache_.prefix_caching()) return false;
    const int32_t bs = cache_.block_size();
    if (n_computed % bs != 0) return false;  // a parked tail: memory holds the rest
    const kv::SeqId conv = s.req.conversation;
    auto first = static_cast<std::size_t>(n_computed / bs);
    const std::size_t limit = (s.tokens.size() - 1) / static_cast<std::size_t>(bs);
    if (s.prefix_hashes.size() != limit)
        s.prefix_hashes = cache_.prefix_hashes(s.tokens, s.lineage);
    const auto table = cache_.block_table(conv);

    // 1. Host RAM (a device backend's evicted blocks): uploaded now, nothing to wait for.
    if (host_) {
        std::size_t n = 0;
        for (; first + n < limit; ++n) {
            const auto bytes = host_->take(s.prefix_hashes[first + n]);
            if (!bytes) break;
            storage_.write_block(table[first + n], *bytes);
        }
        int32_t tokens = to_i32(n) * bs;
        const bool disk_next =
            tier_ && first + n < limit && tier_->contains(s.prefix_hashes[first + n]);
        if (!disk_next) {
            const auto tail =
                find_tail(s, first + n, [&](const kv::BlockHash& h) { return host_->contains(h); });
            if (tail) {
                storage_.write_block(table[first + n], *host_->take(tail->first));
                tokens += tail->second;
            }
        }
        if (tokens > 0) {
            if (auto r = cache_.mark_computed(conv, tokens); !r) return false;
            count_restored(s, tokens);
            if (tokens % bs != 0 || !tier_) return false;  // whole, or ends in a tail
        }
        first += n;
    }
    if (!tier_) return false;

    // 2. The disk: whole blocks, then a tail, read asynchronously.
    std::size_t n = 0;
    while (first + n < limit && tier_->contains(s.prefix_hashes[first + n])) ++n;
    const auto from = s.prefix_hashes.begin() + static_cast<std::ptrdiff_t>(first);
    std::vector<kv::BlockHash> load(from, from + static_cast<std::ptrdiff_t>(n));
    s.load_tail = 0;
    if (const auto tail =
            find_tail(s, first + n, [&](const kv::BlockHash& h) { return tier_->contains(h); })) {
        load.push_back(tail->first);
        s.load_tail = tail->second;
    }
    if (load.empty()) return false;
    s.load_blocks = n;
    s.load_first = first;
    kv::LoadSink sink;
    if (storage_.host_visible()) {  // straight into the blocks, which s holds until it ends
        std::vector<kv::BlockId> into(table.begin() + static_cast<std::ptrdiff_t>(first),
                                      table.begin() + static_cast<std::ptrdiff_t>(first) +
                                          static_cast<std::ptrdiff_t>(load.size()));
        sink = [&storage = storage_, into = std::move(into)](std::size_t i) {
            return storage.block_spans(into[i]);
        };
    }
    s.load_job = tier_->load(std::move(load), std::move(sink));
    log::get("sched")->debug("request {}: loading {} blocks and a tail of {} tokens from disk",
                             s.id, n, s.load_tail);
    return true;
}

void Scheduler::finish_loads(std::vector<Event>& events) {
    for (kv::LoadedBlocks& done : tier_->take_loaded()) {
        const auto it = std::find_if(running_.begin(), running_.end(), [&](const auto& s) {
            return s->load_job == done.job && !s->done;
        });
        if (it == running_.end()) continue;  // cancelled or preempted meanwhile
        Seq& s = **it;
        s.load_job = 0;
        const kv::SeqId conv = s.req.conversation;
        const auto table = cache_.block_table(conv);
        for (std::size_t i = 0; i < done.blocks.size(); ++i)  // loads without a sink
            storage_.write_block(table[s.load_first + i], done.blocks[i]);
        // Whole blocks, then the tail if it came too (a load stops at its first miss).
        int32_t n = to_i32(std::min(done.loaded, s.load_blocks)) * cache_.block_size();
        if (done.loaded > s.load_blocks) n += s.load_tail;
        if (n > 0) {
            if (auto r = cache_.mark_computed(conv, n); !r) {
                fail(s, r.message(), events);
                continue;
            }
            count_restored(s, n);
        }
        if (s.req.load_only) finish(s, StopReason::MaxTokens, events);
    }
    remove_finished();
}

void Scheduler::write_down(kv::SeqId conv) {
    if (!tier_ && !host_) return;
    const auto hashes = cache_.block_hashes(conv);
    const auto table = cache_.block_table(conv);
    bool disk_ok = tier_ != nullptr;  // false once the disk queue refuses
    // NOTE: copied now: once freed, the block may be reused by the next step.
    const auto keep = [&](const kv::BlockHash& h, kv::BlockId block, int32_t rows) {
        const bool to_disk = disk_ok && !tier_->contains(h);
        const bool to_host = host_ && !host_->contains(h);
        if (!to_disk && !to_host) return;
        auto bytes = std::make_shared<std::vector<std::byte>>(storage_.block_bytes());
        storage_.read_block(block, *bytes);
        if (rows < storage_.block_size()) storage_.clear_rows(*bytes, rows);  // not ours
        if (to_disk && !tier_->store(h, to_host ? *bytes : std::move(*bytes)))
            disk_ok = false;  // the queue is full, or writing stopped
        if (to_host) host_->put(h, std::move(bytes));
    };
    for (std::size_t i = 0; i < hashes.size(); ++i) keep(hashes[i], table[i], cache_.block_size());
    // The partly filled last block, kept by content (its tokens chained from the last
    // full block), so that the conversation's whole computed history outlives a restart.
    const int32_t bs = cache_.block_size();
    const int32_t tail = cache_.n_computed(conv) % bs;
    if (tail == 0 || hashes.size() >= table.size()) return;
    const auto tokens = cache_.tokens(conv).subspan(hashes.size() * static_cast<std::size_t>(bs),
                                                    static_cast<std::size_t>(tail));
    std::optional<kv::BlockHash> parent;
    if (!hashes.empty()) parent = hashes.back();
    keep(cache_.block_hash(cache_.lineage(conv), hashes.size(), parent, tokens),
         table[hashes.size()], tail);
}

}  // namespace hearth::sched
