#include "engine.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <variant>

#include "common/log.h"
#include "cpu/cpu_backend.h"
#include "cpu/thread_pool.h"
#include "gguf/gguf_file.h"
#include "kv/kv_storage.h"
#include "model/llama_model.h"
#include "tokenizer/tokenizer.h"

namespace hearth {

using sched::Event;
using sched::EventKind;
using sched::RequestId;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kAutoKvCapBytes = 1024 * kMiB;

bool is_last(const Event& e) {
    return e.kind == EventKind::Finished || e.kind == EventKind::Error;
}

Event error_event(RequestId id, kv::SeqId conversation, std::string message) {
    Event e;
    e.kind = EventKind::Error;
    e.request = id;
    e.conversation = conversation;
    e.error = std::move(message);
    return e;
}

}  // namespace

const char* pin_state_name(PinState s) {
    switch (s) {
        case PinState::Warming: return "warming";
        case PinState::Pinned: return "pinned";
        case PinState::Failed: return "failed";
    }
    return "unknown";
}

// --- RequestHandle ------------------------------------------------------------------

struct RequestHandle::State {
    mutable std::mutex mu;
    std::condition_variable cv;
    std::deque<Event> events;
    bool last_delivered = false;
    bool last_taken = false;
};

RequestHandle::RequestHandle(RequestId id) : id_(id), state_(std::make_shared<State>()) {}

void RequestHandle::deliver(Event e) {
    {
        std::lock_guard lk(state_->mu);
        if (is_last(e)) state_->last_delivered = true;
        state_->events.push_back(std::move(e));
    }
    state_->cv.notify_all();
}

std::optional<Event> RequestHandle::next(std::chrono::milliseconds timeout) {
    std::unique_lock lk(state_->mu);
    if (state_->last_taken) return std::nullopt;
    if (!state_->cv.wait_for(lk, timeout, [&] { return !state_->events.empty(); }))
        return std::nullopt;
    Event e = std::move(state_->events.front());
    state_->events.pop_front();
    if (is_last(e)) state_->last_taken = true;
    return e;
}

Event RequestHandle::wait(const std::function<void(const Event&)>& on_event) {
    for (;;) {
        auto e = next();
        if (!e) continue;
        if (is_last(*e)) return std::move(*e);
        if (on_event) on_event(*e);
    }
}

bool RequestHandle::done() const {
    std::lock_guard lk(state_->mu);
    return state_->last_delivered;
}

// --- Engine -------------------------------------------------------------------------

struct Engine::Impl {
    struct Submit {
        RequestId id;
        sched::Request request;
        std::shared_ptr<RequestHandle> handle;
        EventCallback callback;
    };
    struct Cancel {
        RequestId id;
    };
    struct CancelAll {};
    struct Pin {
        int64_t key;
        std::vector<int32_t> prefix;
    };
    struct Unpin {
        int64_t key;
    };
    struct SnapshotBlocks {};
    using Command = std::variant<Submit, Cancel, CancelAll, Pin, Unpin, SnapshotBlocks>;

    struct Listener {
        std::shared_ptr<RequestHandle> handle;
        EventCallback callback;
    };
    struct PinEntry {
        PinStatus status;
        std::vector<int32_t> prefix;
        std::optional<kv::PinId> pin;
        RequestId warmup = 0;  // the warm-up request while Warming
    };

    EngineConfig config;
    std::unique_ptr<gguf::GgufFile> file;
    std::unique_ptr<kernels::Backend> backend;
    std::unique_ptr<LlamaModel> model;
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<KvStorage> storage;
    std::unique_ptr<kv::KvCacheManager> cache;
    std::unique_ptr<sched::Scheduler> scheduler;

    std::atomic<RequestId> next_id{1};
    mutable std::mutex mu;  // inbox, stop, idle
    std::condition_variable work_cv;
    mutable std::condition_variable idle_cv;
    std::vector<Command> inbox;
    bool stop = false;
    bool idle = true;

    // Engine thread only.
    std::map<RequestId, Listener> listeners;
    std::map<RequestId, int64_t> warmups;  // warm-up request → pin key
    std::deque<std::pair<std::chrono::steady_clock::time_point, int64_t>> rate_window;

    mutable std::mutex snapshot_mu;  // stats and pins, read by any thread
    EngineStats stats;
    std::map<int64_t, PinEntry> pin_entries;
    int64_t requests_finished = 0;
    BlockMap block_map;
    bool block_map_requested = false;

    std::thread thread;

    void post(Command c) {
        {
            std::lock_guard lk(mu);
            inbox.push_back(std::move(c));
            idle = false;
        }
        work_cv.notify_one();
    }

    void run();
    void handle(Command& c, std::vector<Event>& events);
    void dispatch(std::vector<Event>& events);
    void on_warmup_done(int64_t key, const Event& e);
    void try_pin(PinEntry& p);
    void update_stats();
    void snapshot_blocks();
};

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
        for (kv::BlockId id : cache->block_table(seq))
            hold(id, warmup ? BlockCell::State::Pinned : BlockCell::State::Conversation,
                 warmup ? -1 - seq : seq);
    }
    for (const auto& [seq, tail] : cache->parked_tails()) hold(tail, BlockCell::State::Conversation, seq);
    std::lock_guard lk(snapshot_mu);
    for (const auto& [key, e] : pin_entries)
        if (e.pin)
            for (kv::BlockId id : cache->pinned_blocks(*e.pin)) hold(id, BlockCell::State::Pinned, key);
    for (std::size_t i = 0; i < m.blocks.size(); ++i) {
        BlockCell& c = m.blocks[i];
        if (c.holders == 0)
            c.state = pool.block(static_cast<kv::BlockId>(i)).hash ? BlockCell::State::Cached
                                                                  : BlockCell::State::Free;
    }
    block_map = std::move(m);
    block_map_requested = false;
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

void Engine::Impl::handle(Command& c, std::vector<Event>& events) {
    if (auto* s = std::get_if<Submit>(&c)) {
        if (s->request.conversation < 0) {
            events.push_back(error_event(s->id, s->request.conversation,
                                         "conversation ids must not be negative"));
            listeners[s->id] = {s->handle, s->callback};
            return;
        }
        const kv::SeqId conv = s->request.conversation;
        listeners[s->id] = {s->handle, s->callback};
        if (auto r = scheduler->submit(s->id, std::move(s->request)); !r)
            events.push_back(error_event(s->id, conv, r.message()));
    } else if (auto* x = std::get_if<Cancel>(&c)) {
        scheduler->cancel(x->id, events);
    } else if (std::holds_alternative<CancelAll>(c)) {
        std::vector<RequestId> ids;
        for (const auto& [id, l] : listeners) ids.push_back(id);
        for (RequestId id : ids) scheduler->cancel(id, events);
    } else if (auto* p = std::get_if<Pin>(&c)) {
        std::lock_guard lk(snapshot_mu);
        auto old = pin_entries.find(p->key);
        if (old != pin_entries.end()) {
            if (old->second.pin) (void)cache->unpin(*old->second.pin);
            if (old->second.warmup) scheduler->cancel(old->second.warmup, events);
            pin_entries.erase(old);
        }
        PinEntry& e = pin_entries[p->key];
        e.status.key = p->key;
        e.status.n_tokens = static_cast<int32_t>(p->prefix.size());
        e.prefix = std::move(p->prefix);
        if (p->key < 0) {
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
        warm.conversation = -1 - p->key;  // negative: never a user conversation
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
        warmups[id] = p->key;
    } else if (std::holds_alternative<SnapshotBlocks>(c)) {
        snapshot_blocks();
    } else if (auto* u = std::get_if<Unpin>(&c)) {
        std::lock_guard lk(snapshot_mu);
        auto it = pin_entries.find(u->key);
        if (it == pin_entries.end()) return;
        if (it->second.pin) (void)cache->unpin(*it->second.pin);
        if (it->second.warmup) scheduler->cancel(it->second.warmup, events);
        pin_entries.erase(it);
    }
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

void Engine::Impl::dispatch(std::vector<Event>& events) {
    for (Event& e : events) {
        if (auto w = warmups.find(e.request); w != warmups.end()) {
            if (is_last(e)) {
                const int64_t key = w->second;
                warmups.erase(w);
                on_warmup_done(key, e);
            }
            continue;
        }
        auto it = listeners.find(e.request);
        if (it == listeners.end()) continue;
        const bool last = is_last(e);
        if (last) {
            std::lock_guard lk(snapshot_mu);
            ++requests_finished;
        }
        if (it->second.callback) {
            it->second.callback(e);
            if (last) listeners.erase(it);  // the callback has seen the last event
            continue;
        }
        std::shared_ptr<RequestHandle> h = it->second.handle;
        if (last) listeners.erase(it);
        h->deliver(std::move(e));
    }
    events.clear();
}

void Engine::Impl::update_stats() {
    const auto now = std::chrono::steady_clock::now();
    const sched::SchedulerStats ss = scheduler->stats();
    rate_window.emplace_back(now, ss.tokens_generated);
    while (rate_window.size() > 2 && now - rate_window[1].first > std::chrono::seconds(1))
        rate_window.pop_front();
    double rate = 0;
    const double dt =
        std::chrono::duration<double>(rate_window.back().first - rate_window.front().first).count();
    if (dt > 0) rate = static_cast<double>(rate_window.back().second - rate_window.front().second) / dt;
    std::lock_guard lk(snapshot_mu);
    stats.kv = cache->stats();
    stats.scheduler = ss;
    stats.conversations_parked = cache->n_parked();
    stats.requests_finished = requests_finished;
    stats.decode_tokens_per_s = rate;
}

void Engine::Impl::run() {
    std::vector<Event> events;
    std::vector<Command> commands;
    for (;;) {
        {
            std::unique_lock lk(mu);
            work_cv.wait(lk, [&] { return stop || !inbox.empty() || scheduler->has_work(); });
            if (stop) break;
            commands.swap(inbox);
        }
        for (Command& c : commands) handle(c, events);
        commands.clear();
        dispatch(events);
        if (scheduler->has_work()) {
            if (auto r = scheduler->step(events); !r)
                log::get("engine")->error("step failed: {}", r.message());
            dispatch(events);
        } else {
            rate_window.clear();
        }
        update_stats();
        {
            std::lock_guard lk(mu);
            if (inbox.empty() && !scheduler->has_work()) {
                idle = true;
                idle_cv.notify_all();
            }
        }
    }
    // Shutdown: whoever waits on a request hears that it ended.
    {
        std::lock_guard lk(mu);
        for (Command& c : inbox)
            if (auto* s = std::get_if<Submit>(&c)) {
                listeners[s->id] = {s->handle, s->callback};
                events.push_back(error_event(s->id, s->request.conversation, "the engine stopped"));
            }
        inbox.clear();
    }
    std::vector<RequestId> ids;
    for (const auto& [id, l] : listeners) ids.push_back(id);
    for (RequestId id : ids) scheduler->cancel(id, events);
    dispatch(events);
    std::lock_guard lk(mu);
    idle = true;
    idle_cv.notify_all();
}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Engine::~Engine() {
    {
        std::lock_guard lk(impl_->mu);
        impl_->stop = true;
    }
    impl_->work_cv.notify_one();
    if (impl_->thread.joinable()) impl_->thread.join();
}

Result<std::unique_ptr<Engine>> Engine::create(const EngineConfig& config) {
    auto impl = std::make_unique<Impl>();
    impl->config = config;
    auto file = gguf::GgufFile::open(config.model_path);
    if (!file) return file.error();
    impl->file = std::move(file).value();
    impl->backend = std::make_unique<kernels::CpuBackend>(
        config.n_threads, kernels::cpu::SimdLevel::Auto, config.background_priority);
    auto model = LlamaModel::load(*impl->file, *impl->backend);
    if (!model) return make_error(config.model_path + ": " + model.message());
    impl->model = std::move(model).value();
    // The shared cache serves KV computed in other steps (decode or prefill chunks): it
    // must equal what recomputing it would give (docs/architecture.md, batch invariance).
    impl->model->set_batch_invariant(true);
    auto tokenizer = Tokenizer::from_gguf(*impl->file);
    if (!tokenizer) return make_error(config.model_path + ": " + tokenizer.message());
    impl->tokenizer = std::move(tokenizer).value();

    const ModelConfig& mc = impl->model->config();
    if (config.block_size < 1 || config.block_size > 1024)
        return make_error("the KV block size must be between 1 and 1024 tokens");
    const KvShape shape{static_cast<int32_t>(mc.n_layer), static_cast<int32_t>(mc.n_head_kv),
                        static_cast<int32_t>(mc.head_dim), config.block_size};
    const std::size_t per_block = KvStorage::bytes_per_block(shape);
    std::size_t budget = config.kv_mb * kMiB;
    if (budget == 0) {
        const auto ctx_blocks = static_cast<std::size_t>(
            (mc.context_length + config.block_size - 1) / config.block_size);
        budget = std::min(2 * ctx_blocks * per_block, kAutoKvCapBytes);
    }
    const std::size_t n_blocks = std::min<std::size_t>(budget / per_block, 1u << 24);
    if (n_blocks < 2)
        return make_error("a KV cache of " + std::to_string(config.kv_mb) +
                          " MB holds fewer than 2 blocks of " + std::to_string(config.block_size) +
                          " tokens for this model (" + std::to_string(per_block) +
                          " bytes each); give it more memory");
    auto storage = KvStorage::create(*impl->backend, shape, static_cast<int32_t>(n_blocks));
    if (!storage) return storage.error();
    impl->storage = std::move(storage).value();

    kv::KvCacheConfig kc;
    kc.n_blocks = static_cast<int32_t>(n_blocks);
    kc.block_size = config.block_size;
    kc.max_pinned_share = config.max_pinned_share;
    kc.prefix_caching = config.prefix_caching;
    kc.hash_keys.model_fingerprint = impl->file->fingerprint();
    impl->cache = std::make_unique<kv::KvCacheManager>(kc);
    impl->scheduler = std::make_unique<sched::Scheduler>(*impl->model, *impl->storage, *impl->cache,
                                                         *impl->tokenizer, config.scheduler);
    log::get("engine")->info("engine ready: {} on {}, KV cache {} blocks of {} tokens ({} MiB), "
                             "prefix caching {}",
                             mc.name.empty() ? config.model_path : mc.name, impl->backend->name(),
                             n_blocks, config.block_size, n_blocks * per_block / kMiB,
                             config.prefix_caching ? "on" : "off");
    impl->update_stats();
    Impl* raw = impl.get();
    const bool background = config.background_priority;
    impl->thread = std::thread([raw, background] {
        if (background && !kernels::cpu::lower_current_thread_priority())
            log::get("engine")->warn("could not lower the engine thread's priority");
        raw->run();
    });
    return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

const ModelConfig& Engine::model_config() const { return impl_->model->config(); }
const Tokenizer& Engine::tokenizer() const { return *impl_->tokenizer; }
const gguf::GgufFile& Engine::file() const { return *impl_->file; }
std::string Engine::backend_name() const { return impl_->backend->name(); }
const EngineConfig& Engine::config() const { return impl_->config; }
int32_t Engine::kv_blocks() const { return impl_->storage->n_blocks(); }
std::size_t Engine::kv_bytes() const { return impl_->storage->bytes(); }

std::shared_ptr<RequestHandle> Engine::submit(sched::Request request, EventCallback on_event) {
    const RequestId id = impl_->next_id++;
    std::shared_ptr<RequestHandle> handle(new RequestHandle(id));
    impl_->post(Impl::Submit{id, std::move(request), handle, std::move(on_event)});
    return handle;
}

void Engine::cancel(RequestId id) { impl_->post(Impl::Cancel{id}); }
void Engine::cancel_all() { impl_->post(Impl::CancelAll{}); }

void Engine::pin(int64_t key, std::vector<int32_t> prefix) {
    {
        std::lock_guard lk(impl_->snapshot_mu);
        // Visible as Warming at once, before the engine thread takes the command.
        Impl::PinEntry& e = impl_->pin_entries[key];
        e.status = {key, PinState::Warming, static_cast<int32_t>(prefix.size()), 0, {}};
    }
    impl_->post(Impl::Pin{key, std::move(prefix)});
}

void Engine::unpin(int64_t key) { impl_->post(Impl::Unpin{key}); }

std::vector<PinStatus> Engine::pins() const {
    std::lock_guard lk(impl_->snapshot_mu);
    std::vector<PinStatus> out;
    for (const auto& [key, e] : impl_->pin_entries) out.push_back(e.status);
    return out;
}

EngineStats Engine::stats() const {
    std::lock_guard lk(impl_->snapshot_mu);
    return impl_->stats;
}

BlockMap Engine::block_map() const {
    bool post = false;
    BlockMap out;
    {
        std::lock_guard lk(impl_->snapshot_mu);
        out = impl_->block_map;
        if (!impl_->block_map_requested) post = impl_->block_map_requested = true;
    }
    if (post) impl_->post(Impl::SnapshotBlocks{});
    return out;
}

void Engine::wait_idle() const {
    std::unique_lock lk(impl_->mu);
    impl_->idle_cv.wait(lk, [&] { return impl_->idle; });
}

}  // namespace hearth
