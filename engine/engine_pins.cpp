// Pinned prefixes (personas kept warm): a pin is taken at once when its prefix is
// resident, else after a background warm-up request has prefilled it.
#include "common/log.h"
#include "engine_impl.h"

namespace hearth {

using sched::Event;
using sched::EventKind;
using sched::RequestId;

const char* pin_state_name(PinState s) {
    switch (s) {
        case PinState::Warming:
            return "warming";
        case PinState::Pinned:
            return "pinned";
        case PinState::Failed:
            return "failed";
    }
    return "unknown";
}

void Engine::Impl::try_pin(PinEntry& p) {
    auto info = cache->pin(p.prefix);
    if (!info) {
        p.status.state = PinState::Failed;
        p.status.error = info.message();
        log::get("engine")->warn("pin {}: {}", p.status.key, info.message());
        return;
    }
    p.pin = info->id;
    p.status.state = PinState::Pinned;
    p.status.pinned_tokens = info->n_tokens;
    p.status.error.clear();
    log::get("engine")->info("pinned prefix {} ({} tokens in {} blocks)", p.status.key,
                             info->n_tokens, info->n_blocks);
}

void Engine::Impl::pin_prefix(Pin& p, std::vector<Event>& events) {
    std::lock_guard lk(snapshot_mu);
    auto old = pin_entries.find(p.key);
    if (old != pin_entries.end()) {
        if (old->second.pin) (void)cache->unpin(*old->second.pin);
        if (old->second.warmup) scheduler->cancel(old->second.warmup, events);
        pin_entries.erase(old);
    }
    PinEntry& e = pin_entries[p.key];
    e.status.key = p.key;
    e.status.n_tokens = static_cast<int32_t>(p.prefix.size());
    e.prefix = std::move(p.prefix);
    if (p.key < 0) {
        e.status.state = PinState::Failed;
        e.status.error = "pin keys must not be negative";
        return;
    }
    const int32_t bs = cache->block_size();
    const int32_t whole = e.status.n_tokens / bs * bs;
    if (whole == 0) {
        e.status.state = PinState::Failed;
        e.status.error = "the prefix is shorter than one KV block (" + std::to_string(bs) +
                         " tokens): nothing to pin";
        return;
    }
    // Already resident (e.g. a chat with this persona ran): pin now, no prefill.
    std::vector<int32_t> probe(e.prefix.begin(), e.prefix.begin() + whole);
    probe.push_back(0);  // longest_cached_prefix never counts the last token
    if (cache->longest_cached_prefix(probe).n_tokens == whole) {
        try_pin(e);
        return;
    }
    sched::Request warm;
    warm.conversation = -1 - p.key;  // negative: never a user conversation
    warm.prompt.assign(e.prefix.begin(), e.prefix.begin() + whole);
    warm.max_tokens = 0;
    warm.background = true;
    warm.park_at_end = false;
    const RequestId id = next_id++;
    if (auto r = scheduler->submit(id, std::move(warm)); !r) {
        e.status.state = PinState::Failed;
        e.status.error = r.message();
        return;
    }
    e.warmup = id;
    warmups[id] = p.key;
}

void Engine::Impl::unpin_prefix(int64_t key, std::vector<Event>& events) {
    std::lock_guard lk(snapshot_mu);
    auto it = pin_entries.find(key);
    if (it == pin_entries.end()) return;
    if (it->second.pin) (void)cache->unpin(*it->second.pin);
    if (it->second.warmup) scheduler->cancel(it->second.warmup, events);
    pin_entries.erase(it);
}

void Engine::Impl::on_warmup_done(int64_t key, const Event& e) {
    std::lock_guard lk(snapshot_mu);
    auto it = pin_entries.find(key);
    if (it == pin_entries.end() || it->second.warmup != e.request) return;  // replaced
    PinEntry& p = it->second;
    p.warmup = 0;
    if (e.kind == EventKind::Error) {
        p.status.state = PinState::Failed;
        p.status.error = e.error;
    } else if (e.stop == StopReason::Cancelled) {
        p.status.state = PinState::Failed;
        p.status.error = "the warm-up was cancelled";
    } else {
        try_pin(p);
    }
}

}  // namespace hearth
