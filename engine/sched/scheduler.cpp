#include "sched/scheduler.h"

#include <algorithm>
#include <cassert>

#include "common/failpoint.h"
#include "common/log.h"
#include "common/thread_time.h"
#include "generation/text_stream.h"
#include "kv/kv_storage.h"
#include "model/llama_model.h"
#include "sched/scheduler_seq.h"
#include "tokenizer/tokenizer.h"

namespace hearth::sched {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

int32_t to_i32(std::size_t n) {
    return static_cast<int32_t>(n);
}

int64_t ns_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

// Runs a call into the model, adding its time to `ns`.
template <typename F>
auto timed(int64_t& ns, F&& call) {
    const auto began = Clock::now();
    auto r = call();
    ns += ns_between(began, Clock::now());
    return r;
}

// Waiting requests looked at when choosing the longest cached prefix: bounds the hashing
// a step does when the queue is long.
constexpr std::size_t kAdmissionScan = 64;

}  // namespace

Scheduler::Scheduler(LlamaModel& model, KvStorage& storage, kv::KvCacheManager& cache,
                     const Tokenizer& tokenizer, SchedulerConfig config)
    : model_(model), storage_(storage), cache_(cache), tokenizer_(tokenizer), config_(config) {
    config_.max_batch_tokens = std::max(config_.max_batch_tokens, 1);
    config_.max_running = std::max(config_.max_running, 1);
    if (config_.speculation.max_step_tokens <= 0)
        config_.speculation.max_step_tokens = model_.backend().host_memory() ? 8 : 64;
    overlap_ =
        config_.overlap == SchedulerConfig::Overlap::On ||
        (config_.overlap == SchedulerConfig::Overlap::Auto && model_.backend().asynchronous());
}

Scheduler::~Scheduler() {
    if (model_.in_flight()) (void)model_.collect(logits_);  // nobody waits for its results
}

bool Scheduler::has_foreground_work() const {
    const auto fg = [](const auto& s) { return !s->req.background; };
    return std::any_of(running_.begin(), running_.end(), fg) ||
           std::any_of(waiting_.begin(), waiting_.end(), fg);
}

SchedulerStats Scheduler::stats() const {
    SchedulerStats st{to_i32(running_.size()), to_i32(waiting_.size()), steps_,      preemptions_,
                      tokens_computed_,        tokens_generated_,       top_k_steps_};
    for (const auto& s : running_)
        if (s->load_job != 0) ++st.loading;
    st.tokens_drafted = tokens_drafted_;
    st.tokens_accepted = tokens_accepted_;
    st.host_ns = host_ns_;
    st.step_ns = step_ns_;
    st.step_cpu_ns = step_cpu_ns_;
    return st;
}

bool Scheduler::waiting_for_loads() const {
    return idle_step_ && std::any_of(running_.begin(), running_.end(),
                                     [](const auto& s) { return s->load_job != 0; });
}

DecodeRate Scheduler::decode_rate(Clock::time_point now) const {
    DecodeRate r;
    const auto add = [&](const std::unique_ptr<Seq>& s) {
        if (s->done || s->generated.empty()) return;
        ++r.decoding;
        RequestStats so_far;
        so_far.generated_tokens = to_i32(s->generated.size());
        so_far.decode_ms = ms_between(s->first_token, now);
        r.tokens_per_s += so_far.decode_tokens_per_s();
    };
    std::for_each(running_.begin(), running_.end(), add);
    std::for_each(waiting_.begin(), waiting_.end(), add);
    return r;
}

Result<void> Scheduler::submit(RequestId id, Request request) {
    const int64_t ctx = model_.config().context_length;
    if (request.prompt.empty()) return make_error("the prompt is empty");
    if (static_cast<int64_t>(request.prompt.size()) + (request.max_tokens > 0 ? 1 : 0) > ctx)
        return make_error("the prompt has " + std::to_string(request.prompt.size()) +
                          " tokens but the model's context holds " + std::to_string(ctx) +
                          " (including room for the reply); shorten it");
    const int64_t vocab = model_.config().n_vocab;
    for (int32_t t : request.prompt)
        if (t < 0 || t >= vocab)
            return make_error("token id " + std::to_string(t) + " is outside the vocabulary (" +
                              std::to_string(vocab) + ")");
    const auto clash = [&](const std::unique_ptr<Seq>& s) {
        return s->id == id || s->req.conversation == request.conversation;
    };
    if (std::any_of(waiting_.begin(), waiting_.end(), clash) ||
        std::any_of(running_.begin(), running_.end(), clash))
        return make_error("conversation " + std::to_string(request.conversation) +
                          " already has a request in progress (or request id " +
                          std::to_string(id) + " is taken)");
    request.max_tokens = static_cast<int32_t>(std::clamp<int64_t>(
        request.max_tokens, 0, ctx - static_cast<int64_t>(request.prompt.size())));
    auto s = std::make_unique<Seq>(id, std::move(request));
    s->tokens = s->req.prompt;
    s->stats.prompt_tokens = to_i32(s->tokens.size());
    s->submitted = Clock::now();
    s->submit_step = steps_;
    waiting_.push_back(std::move(s));
    return {};
}

void Scheduler::cancel(RequestId id, std::vector<Event>& events) {
    for (auto& s : running_)
        if (s->id == id && !s->done) finish(*s, StopReason::Cancelled, events);
    for (auto& s : waiting_)
        if (s->id == id && !s->done) finish(*s, StopReason::Cancelled, events);
    remove_finished();
}

void Scheduler::release(Seq& s, bool park) {
    const kv::SeqId conv = s.req.conversation;
    if (!cache_.has_sequence(conv)) return;
    if (park && cache_.prefix_caching() && cache_.park(conv)) return;
    cache_.free(conv);
}

void Scheduler::finish(Seq& s, StopReason stop, std::vector<Event>& events) {
    const auto now = Clock::now();
    const std::string tail = s.stream.flush();
    if (!tail.empty()) {
        Event e;
        e.kind = EventKind::Token;
        e.request = s.id;
        e.conversation = s.req.conversation;
        e.text = tail;
        events.push_back(std::move(e));
    }
    if (!s.generated.empty()) s.stats.decode_ms = ms_between(s.first_token, now);
    drop_load(s);
    write_down(s.req.conversation);
    // A cancelled request frees everything; its full blocks stay cached all the same.
    release(s, s.req.park_at_end && stop != StopReason::Cancelled);
    Event e;
    e.kind = EventKind::Finished;
    e.request = s.id;
    e.conversation = s.req.conversation;
    e.stop = stop;
    e.text = s.stream.text();
    e.tokens = s.generated;
    e.stats = s.stats;
    events.push_back(std::move(e));
    s.done = true;
}

void Scheduler::fail(Seq& s, const std::string& message, std::vector<Event>& events) {
    log::get("sched")->warn("request {} (conversation {}) failed: {}", s.id, s.req.conversation,
                            message);
    drop_load(s);
    release(s, false);
    Event e;
    e.kind = EventKind::Error;
    e.request = s.id;
    e.conversation = s.req.conversation;
    e.error = message;
    e.stats = s.stats;
    events.push_back(std::move(e));
    s.done = true;
}

void Scheduler::fail_all(const std::string& message, std::vector<Event>& events) {
    // The step in flight: its requests are failed below, what it computed is not wanted.
    if (model_.in_flight()) (void)model_.collect(logits_);
    retired_.clear();
    for (auto& s : running_)
        if (!s->done) fail(*s, message, events);
    for (auto& s : waiting_)
        if (!s->done) fail(*s, message, events);
    remove_finished();
}

void Scheduler::remove_finished() {
    // While a step is in flight, its batch points at the sequences: those that end
    // meanwhile stay alive (retired_) until it is collected.
    const bool keep = model_.in_flight();
    const auto sweep = [this, keep](auto& seqs) {
        auto kept = seqs.begin();
        for (auto& s : seqs) {
            if (!s->done)
                *kept++ = std::move(s);
            else if (keep)
                retired_.push_back(std::move(s));
        }
        seqs.erase(kept, seqs.end());
    };
    sweep(running_);
    sweep(waiting_);
}

bool Scheduler::preempt_newest(const Seq* keep) {
    // NOTE: preemption by recompute. The victim's full blocks stay cached after free(),
    // so when it is readmitted most of it usually comes back from the cache.
    for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
        Seq& v = **it;
        if (&v == keep || v.done) continue;
        const kv::SeqId conv = v.req.conversation;
        v.computed_before = cache_.n_computed(conv);
        const auto known = cache_.tokens(conv);
        v.tokens.assign(known.begin(), known.end());
        v.prefix_hashes.clear();
        drop_load(v);
        write_down(conv);
        cache_.free(conv);
        v.reserved = 0;
        v.island_begin = v.island_end = 0;  // its rows went with its blocks
        v.preempted = true;
        ++v.stats.preemptions;
        ++preemptions_;
        log::get("sched")->debug("preempted request {} ({} tokens computed)", v.id,
                                 v.computed_before);
        std::unique_ptr<Seq> moved = std::move(*it);
        running_.erase(std::next(it).base());
        // Preempted requests go back in front, oldest admission first.
        auto pos = waiting_.begin();
        while (pos != waiting_.end() && (*pos)->preempted &&
               (*pos)->admit_order < moved->admit_order)
            ++pos;
        waiting_.insert(pos, std::move(moved));
        return true;
    }
    return false;
}

void Scheduler::admit(int32_t& budget, std::vector<Seq*>& batch, std::vector<Event>& events) {
    while (budget > 0 && to_i32(running_.size()) < config_.max_running && !waiting_.empty()) {
        const bool foreground_waiting = std::any_of(
            waiting_.begin(), waiting_.end(), [](const auto& s) { return !s->req.background; });
        // Candidates: foreground requests first; background ones only when none waits.
        std::size_t pick = waiting_.size();
        int32_t best = -1;
        for (std::size_t i = 0; i < waiting_.size() && i < kAdmissionScan; ++i) {
            Seq& s = *waiting_[i];
            if (s.done || (foreground_waiting && s.req.background)) continue;
            if (pick == waiting_.size() &&
                (s.preempted || steps_ - s.submit_step >= config_.starvation_steps)) {
                pick = i;  // the oldest eligible one has waited long enough: it goes first
                break;
            }
            // Hashed once per waiting spell, looked up every step.
            if (s.prefix_hashes.empty())
                s.prefix_hashes = cache_.prefix_hashes(s.tokens, s.lineage);
            int32_t cached = cache_.cached_tokens(s.prefix_hashes);
            if (cache_.is_parked(s.req.conversation)) cached += cache_.block_size();
            if (cached > best) {
                best = cached;
                pick = i;
            }
        }
        if (pick == waiting_.size()) return;
        Seq& s = *waiting_[pick];
        const kv::SeqId conv = s.req.conversation;
        kv::HeldPrefix held = choose_lineage(s);  // a shift's source, held through allocation
        const auto allocate = [&] {
            return cache_.is_parked(conv) ? cache_.resume(conv, s.tokens, s.lineage)
                                          : cache_.allocate(conv, s.tokens, s.lineage);
        };
        auto alloc = allocate();
        if (!alloc && !held.blocks.empty()) {
            // The source's blocks take the room: without the shift, the history is computed
            // (in the plain chain, where computed KV belongs).
            cache_.release(held);
            s.lineage = {};
            s.prefix_hashes.clear();
            alloc = allocate();
        }
        if (!alloc) {
            if (!running_.empty()) return;  // blocks come back as running requests end
            const kv::KvCacheStats st = cache_.stats();
            fail(s,
                 "the KV cache is too small for this prompt (" + std::to_string(s.tokens.size()) +
                     " tokens; " + std::to_string(st.blocks_total) + " blocks of " +
                     std::to_string(cache_.block_size()) + " tokens, " +
                     std::to_string(st.blocks_pinned) + " pinned): " + alloc.message(),
                 events);
            waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(pick));
            continue;
        }
        const auto now = Clock::now();
        s.first_admission = !s.admitted_once;
        if (!s.admitted_once) {
            s.admitted_once = true;
            s.stats.prompt_tokens_cached = alloc->n_computed_tokens;
            s.stats.prompt_tokens_computed = s.stats.prompt_tokens - alloc->n_computed_tokens;
            s.stats.queue_ms = ms_between(s.submitted, now);
        } else {
            s.stats.recomputed_tokens += std::max(0, s.computed_before - alloc->n_computed_tokens);
        }
        if (!held.blocks.empty()) {
            if (auto moved = apply_shift(s, held); !moved) {
                fail(s, "the context shift failed: " + moved.message(), events);
                waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(pick));
                continue;
            }
        }
        s.preempted = false;
        s.admit_order = ++admit_counter_;
        s.reserved = to_i32(s.tokens.size());
        // A shift's gap waits for no load: the moved rows after it cover the rest.
        const bool loading = s.island_end == 0 && start_load(s, cache_.n_computed(conv));
        s.take = std::min(computable(s), budget);
        if (loading || s.req.load_only) s.take = 0;  // computes nothing until its blocks are in
        budget -= s.take;
        if (s.req.load_only && s.load_job == 0) finish(s, StopReason::MaxTokens, events);
        std::unique_ptr<Seq> moved = std::move(waiting_[pick]);
        waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(pick));
        running_.push_back(std::move(moved));
        batch.push_back(running_.back().get());
    }
}

Result<void> Scheduler::step(std::vector<Event>& events) {
    if (!has_work()) return {};
    const auto began = Clock::now();
    const int64_t cpu_began = thread_cpu_ns();
    model_ns_ = 0;
    auto r = [&]() -> Result<void> {
        if (!model_.in_flight()) {
            if (auto started = start_step(events); !started) return started;
            if (!model_.in_flight()) return {};  // nothing to run (requests wait for loads)
        }
        auto finished = finish_step(events);
        // Overlapped: the next step runs on the device while the caller delivers these
        // events.
        if (overlap_ && finished && (!running_.empty() || !waiting_.empty()))
            if (auto next = start_step(events); !next) return next;
        return finished;
    }();
    const int64_t wall = ns_between(began, Clock::now());
    host_ns_ += wall - model_ns_;
    step_ns_ += wall;
    if (const int64_t cpu = thread_cpu_ns(); cpu >= 0 && cpu_began >= 0)
        step_cpu_ns_ += cpu - cpu_began;
    return r;
}

Result<void> Scheduler::start_step(std::vector<Event>& events) {
    idle_step_ = false;
    if (tier_) finish_loads(events);
    ++steps_;
    int32_t budget = config_.max_batch_tokens;
    std::vector<Seq*>& batch = flight_.batch;
    batch.clear();

    // 1. Running sequences, oldest first.
    for (std::size_t i = 0; i < running_.size() && budget > 0; ++i) {
        Seq& s = *running_[i];
        if (s.load_job != 0 || s.req.load_only) continue;  // waits for the disk tier
        const kv::SeqId conv = s.req.conversation;
        const int32_t known = to_i32(cache_.tokens(conv).size());
        bool self_preempted = false;
        while (s.reserved < known) {
            if (cache_.append_slots(conv, known - s.reserved)) {
                s.reserved = known;
                break;
            }
            if (running_.size() == 1) {
                fail(s,
                     "the KV cache is full: this conversation needs more than the " +
                         std::to_string(cache_.stats().blocks_total) +
                         " blocks there are (make the KV cache larger)",
                     events);
                break;
            }
            if (running_.back().get() == &s) {
                self_preempted = preempt_newest(nullptr);
                break;
            }
            preempt_newest(&s);
        }
        if (s.done) continue;
        if (self_preempted) break;  // s was the newest: nothing after it is left
        s.take = std::min(computable(s), budget);
        budget -= s.take;
        batch.push_back(&s);
    }
    // 2. Admissions.
    admit(budget, batch, events);
    remove_finished();
    std::erase_if(batch, [](const Seq* s) { return s->done || s->take <= 0; });
    if (batch.empty()) {
        idle_step_ = true;
        return {};
    }
    // 3. Drafts, in what the step leaves.
    add_drafts(batch, budget);

    // 4. One forward pass over the batch, launched.
    std::vector<SequenceStep>& steps = flight_.steps;
    steps.clear();
    for (Seq* s : batch) {
        const kv::SeqId conv = s->req.conversation;
        const auto known = cache_.tokens(conv);
        const int32_t computed = cache_.n_computed(conv);
        SequenceStep st;
        st.start_pos = computed;
        st.block_table = cache_.block_table(conv);
        if (s->draft.empty()) {
            st.tokens = known.subspan(static_cast<std::size_t>(computed),
                                      static_cast<std::size_t>(s->take));
            st.want_logits = computed + s->take == to_i32(known.size()) && s->req.max_tokens > 0;
        } else {  // the next token, then the draft: a row for each
            s->step_tokens.assign(1, known[static_cast<std::size_t>(computed)]);
            s->step_tokens.insert(s->step_tokens.end(), s->draft.begin(), s->draft.end());
            st.tokens = s->step_tokens;
            st.want_logits = true;
            st.n_logits = to_i32(s->step_tokens.size());
        }
        steps.push_back(st);
        tokens_computed_ += s->take;
    }
    plan_logits(batch, steps);
    auto launched =
        failpoint("forward")
            ? Result<void>(make_error("an injected fault (failpoint forward)"))
            : timed(model_ns_, [&] { return model_.launch(steps, storage_, logits_.top_k); });
    if (!launched) {
        const std::string why = "the forward pass failed: " + launched.message();
        for (Seq* s : batch) fail(*s, why, events);
        remove_finished();
        return make_error(why);
    }
    return {};
}

Result<void> Scheduler::finish_step(std::vector<Event>& events) {
    const std::vector<Seq*>& batch = flight_.batch;
    const std::vector<SequenceStep>& steps = flight_.steps;
    auto collected = timed(model_ns_, [&] { return model_.collect(logits_); });
    // The weights' file changed under the pass: its reason alone says what to do.
    std::string why_weights;
    if (collected && weights_check_) why_weights = weights_check_();
    if (!collected || !why_weights.empty()) {
        const std::string why =
            collected ? why_weights : "the forward pass failed: " + collected.message();
        for (Seq* s : batch)
            if (!s->done) fail(*s, why, events);
        retired_.clear();
        remove_finished();
        return make_error(why);
    }

    // 4. Bookkeeping and sampling. (A sequence cancelled or failed while the step was in
    // flight is done: its results are dropped.)
    std::size_t logit_row = 0, pick = 0;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        Seq& s = *batch[i];
        const kv::SeqId conv = s.req.conversation;
        const std::size_t row = logit_row, picks_at = pick;
        if (steps[i].want_logits) {
            const auto rows = static_cast<std::size_t>(steps[i].n_logits);
            logit_row += rows;
            pick += s.pick.size() * rows;
        }
        if (s.done) continue;
        // A draft's tokens are not the sequence's yet: verify() marks those it keeps.
        if (auto r = cache_.mark_computed(conv, s.draft.empty() ? s.take : 1); !r) {
            fail(s, r.message(), events);
            continue;
        }
        if (auto r = absorb_island(s); !r) {
            fail(s, r.message(), events);
            continue;
        }
        if (steps[i].want_logits) {
            if (s.draft.empty())
                sample(s, row, picks_at, events);
            else
                verify(s, row, picks_at, events);
            continue;
        }
        const int32_t computed = cache_.n_computed(conv);
        if (s.generated.empty()) {
            Event e;
            e.kind = EventKind::PrefillProgress;
            e.request = s.id;
            e.conversation = conv;
            e.prefill_done = computed;
            e.prefill_total = s.stats.prompt_tokens;
            events.push_back(std::move(e));
        }
        if (s.req.max_tokens == 0 && computed == to_i32(cache_.tokens(conv).size()))
            finish(s, StopReason::MaxTokens, events);
    }
    retired_.clear();
    remove_finished();
    return {};
}

}  // namespace hearth::sched
