// The engine thread: it takes callers' commands from the inbox between scheduler steps,
// runs the steps, delivers each request's events to its handle or callback, and
// publishes the stats snapshot.
#include <algorithm>

#include "common/log.h"
#include "engine_impl.h"

namespace hearth {

using sched::Event;
using sched::EventKind;
using sched::RequestId;

namespace {

Event error_event(RequestId id, kv::SeqId conversation, std::string message) {
    Event e;
    e.kind = EventKind::Error;
    e.request = id;
    e.conversation = conversation;
    e.error = std::move(message);
    return e;
}

}  // namespace

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
        if (!model_unusable.empty()) {
            events.push_back(error_event(s->id, conv, model_unusable));
            return;
        }
        if (auto r = scheduler->submit(s->id, std::move(s->request)); !r)
            events.push_back(error_event(s->id, conv, r.message()));
    } else if (auto* x = std::get_if<Cancel>(&c)) {
        scheduler->cancel(x->id, events);
    } else if (std::holds_alternative<CancelAll>(c)) {
        std::vector<RequestId> ids;
        for (const auto& [id, l] : listeners) ids.push_back(id);
        for (RequestId id : ids) scheduler->cancel(id, events);
    } else if (auto* p = std::get_if<Pin>(&c)) {
        pin_prefix(*p, events);
    } else if (auto* u = std::get_if<Unpin>(&c)) {
        unpin_prefix(u->key, events);
    } else if (std::holds_alternative<SnapshotBlocks>(c)) {
        snapshot_blocks();
    } else if (auto* a = std::get_if<Audit>(&c)) {
        a->result->set_value(audit_blocks());
    } else if (auto* f = std::get_if<Prefetch>(&c)) {
        if (!disk) return;  // nothing to read back from
        sched::Request r;
        r.conversation = next_prefetch++;
        r.prompt = std::move(f->prompt);
        r.lineage = f->lineage;
        r.max_tokens = 0;
        r.load_only = true;
        r.background = true;
        r.park_at_end = false;
        log::get("engine")->debug("prefetch of a {}-token prompt from the disk tier",
                                  r.prompt.size());
        const sched::RequestId id = next_id++;
        if (auto ok = scheduler->submit(id, std::move(r)); !ok)
            log::get("engine")->debug("prefetch not queued: {}", ok.message());
    } else if (std::holds_alternative<ClearDisk>(c)) {
        if (disk) disk->clear();
    } else if (auto* e = std::get_if<EraseDiskModel>(&c)) {
        if (disk) disk->erase_model(e->fingerprint);
    } else if (auto* g = std::get_if<Forget>(&c)) {
        forget_on_disk(g->prompt, {});
        if (g->lineage.salted()) forget_on_disk(g->prompt, g->lineage);
    }
}

void Engine::Impl::dispatch(std::vector<Event>& events) {
    // The stats first: whoever hears that a request ended then reads stats that count
    // it (and show its speed once nothing else decodes).
    bool ended = false;
    for (const Event& e : events) {
        if (!is_last_event(e) || !listeners.contains(e.request)) continue;
        ended = true;
        ++requests_finished;
        if (e.kind == EventKind::Finished && e.stats.generated_tokens > 1)
            last_decode_tokens_per_s = e.stats.decode_tokens_per_s();
    }
    if (ended) update_stats();
    for (Event& e : events) {
        if (auto w = warmups.find(e.request); w != warmups.end()) {
            if (is_last_event(e)) {
                const int64_t key = w->second;
                warmups.erase(w);
                on_warmup_done(key, e);
            }
            continue;
        }
        auto it = listeners.find(e.request);
        if (it == listeners.end()) continue;
        const bool last = is_last_event(e);
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

const std::string& Engine::Impl::check_model_file() {
    if (model_unusable.empty()) {
        if (const std::string why = file->changed_on_disk(); !why.empty()) {
            model_unusable = "the model file " + config.model_path + " " + why +
                             " while in use; load the model again";
            log::get("engine")->error("{}", model_unusable);
        }
    }
    return model_unusable;
}

void Engine::Impl::update_stats() {
    const sched::SchedulerStats ss = scheduler->stats();
    const sched::DecodeRate live = scheduler->decode_rate(std::chrono::steady_clock::now());
    std::lock_guard lk(snapshot_mu);
    stats.kv = cache->stats();
    stats.host_on = host != nullptr;
    if (host) stats.host = host->stats();
    stats.scheduler = ss;
    stats.conversations_parked = cache->n_parked();
    stats.requests_finished = requests_finished;
    stats.decoding = live.decoding;
    stats.speed_is_last = live.decoding == 0;
    stats.decode_tokens_per_s = live.decoding > 0 ? live.tokens_per_s : last_decode_tokens_per_s;
}

void Engine::Impl::fail_engine(const char* what, std::vector<Event>& events) {
    if (model_unusable.empty()) {
        model_unusable =
            "the engine failed on " + backend->name() + ": " + what + "; load the model again";
        log::get("engine")->error("{}", model_unusable);
    }
    try {
        scheduler->fail_all(model_unusable, events);  // touches no device memory
    } catch (const std::exception& e) {
        log::get("engine")->error("failing the requests: {}", e.what());
    }
    // Whoever still listens without an end coming (a command cut short) hears it too.
    for (const auto& [id, l] : listeners) {
        const bool ends = std::any_of(events.begin(), events.end(), [id = id](const Event& e) {
            return e.request == id && is_last_event(e);
        });
        if (!ends) events.push_back(error_event(id, -1, model_unusable));
    }
    dispatch(events);
}

void Engine::Impl::run() {
    std::vector<Event> events;
    std::vector<Command> commands;
    // A device failure throws out of the scheduler where no Result carries it (a KV block
    // copied to the host tier as a request ends, say): it ends the requests, not the
    // process.
    const auto guarded = [&](auto&& body) {
        try {
            body();
        } catch (const std::exception& e) {
            fail_engine(e.what(), events);
        }
    };
    for (;;) {
        {
            std::unique_lock lk(mu);
            // Requests that wait only for disk loads do not spin the loop: it sleeps until a
            // load ends or a command comes.
            work_cv.wait(lk, [&] {
                return stop || !inbox.empty() || loads_done ||
                       (scheduler->has_work() && !scheduler->waiting_for_loads());
            });
            if (stop) break;
            loads_done = false;
            commands.swap(inbox);
        }
        retry_disk_tier();  // before the commands: a request submitted now may use it
        for (Command& c : commands) guarded([&] { handle(c, events); });
        commands.clear();
        dispatch(events);
        // The weights are read from the mapped file: one truncated or rewritten by another
        // program must not be read again (past a truncated end: SIGBUS).
        if (scheduler->has_work()) check_model_file();
        if (scheduler->has_work() && !model_unusable.empty()) {
            guarded([&] { scheduler->fail_all(model_unusable, events); });
            dispatch(events);
        } else if (scheduler->has_work()) {
            guarded([&] {
                // (A changed model file was logged when it was found.)
                if (auto r = scheduler->step(events); !r && model_unusable.empty())
                    log::get("engine")->error("step failed: {}", r.message());
            });
            dispatch(events);
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
    if (model_unusable.empty()) {
        std::vector<RequestId> ids;
        for (const auto& [id, l] : listeners) ids.push_back(id);
        guarded([&] {
            for (RequestId id : ids) scheduler->cancel(id, events);
        });
    } else {
        guarded([&] { scheduler->fail_all(model_unusable, events); });
    }
    dispatch(events);
    std::lock_guard lk(mu);
    idle = true;
    idle_cv.notify_all();
}

}  // namespace hearth
