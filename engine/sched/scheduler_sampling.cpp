// Sampling a step's logit rows (Scheduler, sched/scheduler.h): which rows come back whole
// or as their best few, drawing each sequence's token from its row, and accepting it into
// the sequence (events, stop conditions, the cache's token list).
#include <algorithm>

#include "sched/scheduler.h"
#include "sched/scheduler_seq.h"
#include "tokenizer/tokenizer.h"

namespace hearth::sched {

namespace {

double ms_between(std::chrono::steady_clock::time_point a,
                  std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

int32_t to_i32(std::size_t n) {
    return static_cast<int32_t>(n);
}

}  // namespace

void Scheduler::plan_logits(std::span<Seq* const> batch, std::vector<SequenceStep>& steps) {
    // Top-k when every row can be sampled from a few values; k covers the neediest row.
    int32_t k = 0;
    bool whole = !config_.top_k_sampling;
    for (std::size_t i = 0; i < batch.size() && !whole; ++i) {
        if (!steps[i].want_logits) continue;
        const Seq& s = *batch[i];
        const auto history = cache_.tokens(s.req.conversation);
        const int32_t needed = s.req.record_logits ? 0 : s.sampler.top_needed(history);
        // A draft's rows follow histories that grow through the draft: the penalised
        // tokens differ row by row, which one pick list cannot give.
        whole = needed <= 0 || (!s.draft.empty() && !s.sampler.penalised_tokens(history).empty());
        k = std::max(k, needed);
    }
    logits_.top_k = whole ? 0 : std::min(k, static_cast<int32_t>(model_.config().n_vocab));
    if (logits_.top_k > 0) ++top_k_steps_;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        Seq& s = *batch[i];
        s.pick.clear();
        if (logits_.top_k > 0 && steps[i].want_logits)
            s.pick = s.sampler.penalised_tokens(cache_.tokens(s.req.conversation));
        steps[i].pick = s.pick;
    }
}

void Scheduler::sample(Seq& s, std::size_t row, std::size_t pick, std::vector<Event>& events) {
    std::span<const float> logits;
    if (const auto token = draw(s, row, pick, logits, events)) accept(s, *token, logits, events);
}

std::optional<int32_t> Scheduler::draw(Seq& s, std::size_t row, std::size_t pick,
                                       std::span<const float>& logits, std::vector<Event>& events) {
    const auto history = cache_.tokens(s.req.conversation);
    const StepLogits& out = logits_;
    if (out.top_k == 0) {
        const auto n_vocab = static_cast<std::size_t>(model_.config().n_vocab);
        logits = std::span(out.rows).subspan(row * n_vocab, n_vocab);
        auto next = s.sampler.sample(logits, history);
        if (!next) {
            fail(s, next.message(), events);
            return std::nullopt;
        }
        return *next;
    }
    logits = {};
    if (const int32_t bad = out.invalid[row]; bad >= 0) {
        fail(s,
             "the model produced an invalid logit (NaN or +Inf) for token " + std::to_string(bad) +
                 "; the model file may be broken",
             events);
        return std::nullopt;
    }
    const auto k = static_cast<std::size_t>(out.top_k);
    auto next = s.sampler.sample_top(std::span(out.top_ids).subspan(row * k, k),
                                     std::span(out.top_values).subspan(row * k, k),
                                     std::span(out.picked).subspan(pick, s.pick.size()), history);
    if (!next) {
        fail(s, next.message(), events);
        return std::nullopt;
    }
    return *next;
}

void Scheduler::accept(Seq& s, int32_t token, std::span<const float> logits,
                       std::vector<Event>& events) {
    const kv::SeqId conv = s.req.conversation;
    const auto now = Clock::now();
    if (s.generated.empty()) {
        s.first_token = now;
        s.stats.ttft_ms = ms_between(s.submitted, now);
    }
    s.generated.push_back(token);
    ++s.stats.generated_tokens;
    ++tokens_generated_;

    Event e;
    e.kind = EventKind::Token;
    e.request = s.id;
    e.conversation = conv;
    e.token = token;
    if (s.req.record_logits) e.logits.assign(logits.begin(), logits.end());
    const bool eog = s.req.stop_at_end_of_generation && tokenizer_.is_end_of_generation(token);
    if (!eog) e.text = s.stream.push(tokenizer_.token_to_piece(token, false));
    events.push_back(std::move(e));

    if (eog) return finish(s, StopReason::EndOfGeneration, events);
    if (s.stream.stopped()) return finish(s, StopReason::StopString, events);
    if (to_i32(s.generated.size()) >= s.req.max_tokens)
        return finish(s, StopReason::MaxTokens, events);
    // The token's KV is computed by the next step, which first reserves its slot.
    if (auto r = cache_.commit(conv, std::span(&token, 1)); !r) fail(s, r.message(), events);
}

}  // namespace hearth::sched
