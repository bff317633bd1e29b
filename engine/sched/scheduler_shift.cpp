// The scheduler's side of lineages and context shifts (kv/lineage.h): which chain a request
// is served from, and the move of a kept history's KV at admission.
#include <algorithm>
#include <vector>

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

// Where the shift can put rows, from `from` (up to `limit`): each position takes a source
// row below `held` whose token is the prompt's. A contiguous run from `from`, then at most
// one gap (glue the source lacks, computed first) and a second run after it; a position
// no range covers, a source row not held or a token that differs ends it.
struct Moves {
    std::vector<int32_t> positions;            // ascending
    int32_t run_end = 0;                       // [from, run_end) contiguous
    int32_t island_begin = 0, island_end = 0;  // the run after the gap (empty: none)
};

Moves plan_moves(const kv::KvShift& shift, std::span<const int32_t> tokens, int32_t held,
                 int32_t from, int32_t limit) {
    Moves m;
    int32_t p = from;
    bool gap = false;
    const auto movable = [&](const kv::ShiftRange& r, int32_t q) {
        const int32_t src = r.src + (q - r.dst);
        return src < held && src < to_i32(shift.source.size()) &&
               shift.source[static_cast<std::size_t>(src)] == tokens[static_cast<std::size_t>(q)];
    };
    for (const kv::ShiftRange& r : shift.ranges) {
        if (r.count <= 0 || r.src < 0 || p >= limit) break;
        if (p >= r.dst + r.count) continue;  // a range before `from`
        if (p < r.dst) {                     // a gap: the first only, and then a run
            if (gap || r.dst >= limit || !movable(r, r.dst)) break;
            gap = true;
            m.run_end = p;
            m.island_begin = p = r.dst;
        }
        bool stopped = false;
        for (; p < r.dst + r.count && p < limit; ++p) {
            if (!movable(r, p)) {
                stopped = true;
                break;
            }
            m.positions.push_back(p);
        }
        if (stopped) break;
    }
    if (gap)
        m.island_end = p;
    else
        m.run_end = p;
    return m;
}

}  // namespace

int32_t Scheduler::chain_run(const Seq& s, const kv::Lineage& lineage) const {
    // Whole blocks of the prompt held in memory or a lower tier, in a row.
    if (!cache_.prefix_caching()) return 0;
    const auto hashes = cache_.prefix_hashes(s.tokens, lineage);
    std::size_t n = 0;
    while (n < hashes.size() &&
           (cache_.pool().get_cached(hashes[n]) != kv::kNoBlock ||
            (host_ && host_->contains(hashes[n])) || (tier_ && tier_->contains(hashes[n]))))
        ++n;
    return to_i32(n) * cache_.block_size();
}

kv::HeldPrefix Scheduler::choose_lineage(Seq& s) {
    const auto choose = [&s](const kv::Lineage& lineage) {
        if (s.lineage == lineage) return;
        s.lineage = lineage;
        s.prefix_hashes.clear();  // hashed in the other chain
    };
    kv::HeldPrefix held;
    if (!s.req.lineage.salted() || !cache_.prefix_caching()) {
        choose({});
        return held;
    }
    // NOTE: the plain chain wins ties: its KV is exact, and a sequence computed there stays
    // there, so that a lineage is only ever extended from a shift or from itself.
    const int32_t plain = chain_run(s, {});
    if (chain_run(s, s.req.lineage) > plain) {
        choose(s.req.lineage);
        return held;
    }
    if (s.req.shift && model_.shift_refusal().empty()) {  // else: computed, in the plain chain
        const kv::KvShift& shift = *s.req.shift;
        const kv::SeqId conv = s.req.conversation;
        // The source in the lineage it was asked in, or in the plain chain when that holds
        // more of it (a history computed before the conversation's first shift, or after
        // one that could not move anything).
        held = cache_.hold(shift.source, shift.source_lineage, conv);
        if (shift.source_lineage.salted()) {
            kv::HeldPrefix other = cache_.hold(shift.source, {}, conv);
            if (other.n_tokens > held.n_tokens) std::swap(held, other);
            cache_.release(other);
        }
        const int32_t limit = to_i32(s.tokens.size()) - 1;  // the last token gives the logits
        if (!plan_moves(shift, s.tokens, held.n_tokens, plain, limit).positions.empty()) {
            choose(s.req.lineage);
            return held;
        }
        cache_.release(held);
    }
    choose({});
    return held;
}

Result<void> Scheduler::apply_shift(Seq& s, kv::HeldPrefix& held) {
    const kv::SeqId conv = s.req.conversation;
    const int32_t from = cache_.n_computed(conv);
    const Moves m =
        plan_moves(*s.req.shift, s.tokens, held.n_tokens, from, to_i32(s.tokens.size()) - 1);
    if (m.positions.empty()) {
        cache_.release(held);
        return {};
    }
    const int32_t bs = cache_.block_size();
    const auto table = cache_.block_table(conv);
    const std::size_t n = m.positions.size();
    std::vector<int32_t> src(n), dst(n), delta(n);
    std::size_t r = 0;
    const auto& ranges = s.req.shift->ranges;
    for (std::size_t i = 0; i < n; ++i) {
        const int32_t p = m.positions[i];
        while (p >= ranges[r].dst + ranges[r].count) ++r;
        const int32_t q = ranges[r].src + (p - ranges[r].dst);
        src[i] = held.blocks[static_cast<std::size_t>(q / bs)] * bs + q % bs;
        dst[i] = table[static_cast<std::size_t>(p / bs)] * bs + p % bs;
        delta[i] = p - q;
    }
    auto moved = model_.shift_kv(src, dst, delta, storage_);
    // The source's blocks may go now: on a device, anything that reuses them is issued
    // after the move on the same stream.
    cache_.release(held);
    if (!moved) return moved;
    if (auto r2 = cache_.mark_computed(conv, m.run_end - from); !r2) return r2;
    // The rows after the gap count once the gap is computed (absorb_island).
    s.island_begin = m.island_begin;
    s.island_end = m.island_end;
    const auto count = to_i32(n);
    cache_.count_shifted_tokens(count);
    s.stats.prompt_tokens_shifted += count;
    if (s.first_admission)
        s.stats.prompt_tokens_computed -= count;
    else
        s.stats.recomputed_tokens = std::max(0, s.stats.recomputed_tokens - count);
    log::get("sched")->debug("request {}: moved the KV of {} kept tokens ({} to {}{}) by {}", s.id,
                             count, from, m.positions.back() + 1,
                             m.island_end > m.island_begin ? ", after a gap" : "", delta.back());
    return {};
}

int32_t Scheduler::computable(const Seq& s) const {
    const kv::SeqId conv = s.req.conversation;
    const int32_t until =
        s.island_end > s.island_begin ? s.island_begin : to_i32(cache_.tokens(conv).size());
    return until - cache_.n_computed(conv);
}

Result<void> Scheduler::absorb_island(Seq& s) {
    if (s.island_end <= s.island_begin) return {};
    const kv::SeqId conv = s.req.conversation;
    const int32_t computed = cache_.n_computed(conv);
    if (computed < s.island_begin) return {};
    const int32_t begin = s.island_begin, end = s.island_end;
    s.island_begin = s.island_end = 0;
    if (computed > begin) return {};  // (cannot happen: steps stop at the gap's end)
    return cache_.mark_computed(conv, end - begin);
}

}  // namespace hearth::sched
