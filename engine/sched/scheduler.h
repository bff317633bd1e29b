// Continuous batching over the shared paged KV cache. Each step packs the decode tokens
// of the running sequences and chunks of their prompts' prefills under a token budget,
// runs one forward pass over all of them, and samples. Prompts are served from the
// prefix cache (KvCacheManager) and conversations park their tails between turns, so a
// resumed conversation computes only what is new.
//
// Policy, per step:
//   1. running sequences, oldest first: one token each when decoding, else the next
//      prefill chunk, while the budget lasts; a sequence that needs a block when none is
//      left preempts the newest running one (freed; recomputed later from the cache);
//   2. waiting requests are admitted while the budget, max_running and the blocks allow:
//      the one with the longest cached prefix first, unless the oldest has waited
//      starvation_steps steps, which then goes first.
//
// Single-threaded: the Engine drives it from its thread. Tests drive it directly.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "generation/generator.h"
#include "kv/kv_cache_manager.h"
#include "model/llama_model.h"
#include "sampling/sampler.h"
#include "spec/drafter.h"

namespace hearth {

class KvStorage;
class Tokenizer;

namespace kv {
class DiskTier;
class HostTier;
}  // namespace kv

namespace sched {

using RequestId = int64_t;

struct Request {
    kv::SeqId conversation = 0;  // one request at a time per conversation; parks under it
    std::vector<int32_t> prompt;
    SamplingParams sampling = SamplingParams::greedy();
    int32_t max_tokens = 256;  // 0: prefill only (warm-up of a prefix to pin)
    std::vector<std::string> stop_strings;
    bool stop_at_end_of_generation = true;
    bool background = false;     // admitted only when no foreground request waits
    bool park_at_end = true;     // keep the conversation's tail for its next turn
    bool record_logits = false;  // Token events carry the logits they were sampled from
    // Prefetch: read what the disk tier holds of the prompt's KV into memory, compute
    // nothing, and end (Finished, no tokens). The blocks stay cached for the real turn.
    bool load_only = false;
    // The chain the prompt's KV is keyed in (kv/lineage.h): a chat whose kept history was
    // moved by a context shift asks for its shift lineage. The plain chain serves it instead
    // when it holds more of the prompt (exact KV is valid in every lineage), and a sequence
    // computed from it stays in it.
    kv::Lineage lineage;
    // On the turn that drops the oldest turns under the shift policy: where the kept
    // history's KV may be, and where it goes in this prompt. Admission moves what the cache
    // holds of it (K rotated to its new positions) into the sequence's own new blocks,
    // under `lineage`, instead of computing it; what is not held is computed.
    std::optional<kv::KvShift> shift;
    // Speculative decoding for this request, where the scheduler has it on
    // (SchedulerConfig::speculation): the same tokens either way; off saves the drafts'
    // compute when the caller knows they will miss.
    bool speculate = true;
};

struct RequestStats {
    int32_t prompt_tokens = 0;
    int32_t prompt_tokens_cached = 0;    // served from the cache at first admission
    int32_t prompt_tokens_computed = 0;  // prompt_tokens - cached - shifted
    int32_t prompt_tokens_loaded = 0;    // of the cached ones, read back from the disk tier
    int32_t prompt_tokens_shifted = 0;   // moved by a context shift (not computed)
    int32_t generated_tokens = 0;
    int32_t preemptions = 0;
    int32_t recomputed_tokens = 0;  // computed again after preemptions
    int32_t draft_tokens = 0;       // speculative decoding: draft tokens verified
    int32_t draft_accepted = 0;     // of those, kept (each saved a step)
    double queue_ms = 0;            // submit to first admission
    double ttft_ms = 0;             // submit to first token
    double decode_ms = 0;           // first token to last
    double decode_tokens_per_s() const {
        return decode_ms > 0 && generated_tokens > 1 ? (generated_tokens - 1) * 1000.0 / decode_ms
                                                     : 0.0;
    }
};

enum class EventKind { PrefillProgress, Token, Finished, Error };

struct Event {
    EventKind kind = EventKind::Token;
    RequestId request = 0;
    kv::SeqId conversation = 0;
    int32_t token = -1;        // Token
    std::string text;          // Token: newly visible text (may be empty); Finished: all text
    int32_t prefill_done = 0;  // PrefillProgress: prompt tokens in the cache so far
    int32_t prefill_total = 0;
    StopReason stop = StopReason::MaxTokens;  // Finished
    RequestStats stats;                       // Finished and Error
    std::string error;                        // Error
    std::vector<int32_t> tokens;              // Finished: the generated ids
    std::vector<float> logits;                // Token, with record_logits
};

// Speculative decoding (spec/drafter.h). A decoding sequence's step computes, after the
// token just sampled, up to max_draft tokens a drafter expects next, with a logit row for
// each; the sequence keeps the drafts its own sampling reproduces, one by one, and the
// token sampled after the last of them. Each row samples what plain decoding would sample
// at that position (batch-invariant numerics, and the sampler's draws keyed by position),
// so the text is the same as without speculation, token for token; what changes is how
// many tokens a step gives.
//
// Exactness, and how it relates to speculative sampling: with a draft q that puts all its
// mass on token x, standard speculative sampling accepts x with probability p(x) and else
// draws from p with x removed, renormalised. Here x is accepted exactly when the draw from
// p at that position gives x, which happens with probability p(x); otherwise the drawn
// token is kept, which is p's draw given that it is not x: the same distribution. It is a
// coupling of that rule with plain decoding under the same seed, which is what makes the
// output identical rather than only equally distributed.
//
// Drafts never touch shared or stored KV: a draft token's KV goes to the sequence's own
// slots past its computed tokens (never hashed, never shared), and only accepted tokens are
// committed to the cache and marked computed. A rejected draft's rows are overwritten by
// the next step; rollback is nothing at all.
//
// Never slower by much: drafts are added after the step is planned, only while the step's
// tokens stay within max_step_tokens (past that a step is bound by compute, not by reading
// the weights, and extra tokens cost their full price), only in slots the table covers or
// the free queue gives (no parked tail reclaimed, no sequence preempted), and per sequence
// the draft length follows its acceptance (a run of misses pauses drafting for a growing
// number of steps). Sequences with penalties on take their rows whole (plan_logits).
struct SpeculationConfig {
    enum class Mode { Off, Ngram };
    Mode mode = Mode::Ngram;
    int32_t max_draft = 7;  // most draft tokens per sequence and step
    // Drafts only while the step has at most this many tokens. 0: by backend, 8 on the CPU
    // (the few-token kernels read the weights once for up to 8 tokens; measured in
    // docs/benchmarks.md) and 64 on a GPU (a decode step reads its weights once for many
    // more tokens; not yet measured on one).
    int32_t max_step_tokens = 0;
    // Tests: the drafter each sequence gets (null: the mode's).
    std::function<std::unique_ptr<spec::Drafter>()> make_drafter;
};

struct SchedulerConfig {
    int32_t max_batch_tokens = 256;  // tokens per forward step (decode + prefill chunks)
    int32_t max_running = 16;        // sequences in the running set
    int32_t starvation_steps = 32;   // a waiting request older than this goes first
    // Sample from the few best logits of each row (Backend::top_k, plus the raw logits of
    // the tokens the penalties change) instead of downloading whole rows: the same tokens
    // (Sampler::sample_top), and a device backend's logits stay on the device. A step
    // falls back to whole rows when a request records logits or its sampler needs more
    // than Backend::kMaxTopK candidates (top-k off or above 64).
    bool top_k_sampling = true;
    // Overlapped steps: step() launches the next step before it returns, so that the
    // device computes it while the caller delivers this step's events (and the host then
    // plans while the device runs); its results are collected by the next step(). Auto:
    // where the backend is asynchronous (Backend::asynchronous, a GPU). The same tokens
    // either way; a request submitted meanwhile is admitted one step later.
    enum class Overlap { Auto, On, Off };
    Overlap overlap = Overlap::Auto;
    SpeculationConfig speculation;
};

// How fast the requests that are producing tokens produce them, each by RequestStats'
// formula: (generated tokens - 1) / (now - first token).
struct DecodeRate {
    int32_t decoding = 0;     // requests with a first token that have not finished
    double tokens_per_s = 0;  // the sum of their speeds
};

struct SchedulerStats {
    int32_t running = 0;
    int32_t waiting = 0;
    int64_t steps = 0;
    int64_t preemptions = 0;
    int64_t tokens_computed = 0;  // every token of every forward pass
    int64_t tokens_generated = 0;
    int64_t top_k_steps = 0;      // steps whose logit rows came back as top-k candidates
    int64_t tokens_drafted = 0;   // speculative decoding: draft tokens verified
    int64_t tokens_accepted = 0;  // of those, kept
    int32_t loading = 0;          // running requests waiting for blocks from the disk tier
    // Time in step() outside the model's launch and collect: planning, sampling and
    // bookkeeping (staging a step's arrays is part of the launch). With overlapped steps
    // on a device, most of what the device waits for between steps.
    int64_t host_ns = 0;
    // Wall time in step(), and the CPU time the calling thread used in it: with a GPU
    // doing the work, how much of a core the engine thread takes while it waits (it should
    // sleep: under 10 % of the step's wall time).
    int64_t step_ns = 0;
    int64_t step_cpu_ns = 0;
    friend bool operator==(const SchedulerStats&, const SchedulerStats&) = default;
};

class Scheduler {
  public:
    Scheduler(LlamaModel& model, KvStorage& storage, kv::KvCacheManager& cache,
              const Tokenizer& tokenizer, SchedulerConfig config = {});
    ~Scheduler();

    // Queues a request. Errors (nothing queued): an empty prompt, a prompt that does not
    // fit the context, a conversation that already has a request, a reused id.
    Result<void> submit(RequestId id, Request request);
    // Stops a request now: frees (or parks) its blocks and emits Finished(Cancelled).
    // Unknown or finished ids: no-op.
    void cancel(RequestId id, std::vector<Event>& events);
    // Fails every queued and running request with `message` (an Error event each), their
    // blocks released, and drops the step in flight: the model can no longer be used (its
    // file changed on disk).
    void fail_all(const std::string& message, std::vector<Event>& events);

    // Blocks below the resident tier: at admission a request whose prompt continues on
    // disk past what memory holds waits for those blocks (a "loading" state; it holds its
    // blocks and counts against max_running, not against the token budget) while others
    // run; full blocks are written down when a turn ends or a request is preempted.
    // Null: no disk tier. The tier must outlive the scheduler.
    void set_disk_tier(kv::DiskTier* tier) { tier_ = tier; }
    // The host-RAM tier (a device backend's): blocks written down also go there, and
    // admission takes them from it first, uploaded at once (no loading state).
    void set_host_tier(kv::HostTier* tier) { host_ = tier; }
    // Asked after every forward pass: a non-empty answer (the weights' file changed under
    // the pass, which then read zeros past a truncated end) fails the step's requests as a
    // failed pass would, before anything of it is sampled or marked computed.
    void set_weights_check(std::function<std::string()> check) {
        weights_check_ = std::move(check);
    }

    bool has_work() const { return !running_.empty() || !waiting_.empty() || in_flight(); }
    // The last step ran nothing because its requests wait for loads: the caller may sleep
    // until a load ends (DiskTier::set_on_loaded) or something is submitted.
    bool waiting_for_loads() const;
    bool has_foreground_work() const;
    // One forward step: plans and launches it, then collects its results and samples.
    // Overlapped (SchedulerConfig::overlap), it collects the step in flight since the last
    // call and launches the next one before returning. A model error fails the requests
    // of the step (Error events) and is returned; the scheduler stays usable.
    Result<void> step(std::vector<Event>& events);
    bool overlapped() const { return overlap_; }
    // A step is in flight (overlapped steps only, between step() calls).
    bool in_flight() const { return model_.in_flight(); }

    SchedulerStats stats() const;
    // Over running and preempted requests that have produced their first token.
    DecodeRate decode_rate(std::chrono::steady_clock::time_point now) const;
    const kv::KvCacheManager& cache() const { return cache_; }
    const SchedulerConfig& config() const { return config_; }

  private:
    struct Seq;
    using Clock = std::chrono::steady_clock;

    // Plans a step (running sequences, then admissions) and launches it (nothing to run:
    // nothing in flight). finish_step collects it: bookkeeping and sampling.
    Result<void> start_step(std::vector<Event>& events);
    Result<void> finish_step(std::vector<Event>& events);
    void admit(int32_t& budget, std::vector<Seq*>& batch, std::vector<Event>& events);
    bool preempt_newest(const Seq* keep);
    void finish(Seq& s, StopReason stop, std::vector<Event>& events);
    void fail(Seq& s, const std::string& message, std::vector<Event>& events);
    void release(Seq& s, bool park);
    // Plans the step's logit rows (whole or top-k, and each row's picked tokens).
    void plan_logits(std::span<Seq* const> batch, std::vector<SequenceStep>& steps);
    // Samples s's next token from logit row `row` of the step (its picks start at `pick`)
    // and accepts it. draw() only samples (logits: the row, when whole); nullopt: s failed.
    void sample(Seq& s, std::size_t row, std::size_t pick, std::vector<Event>& events);
    std::optional<int32_t> draw(Seq& s, std::size_t row, std::size_t pick,
                                std::span<const float>& logits, std::vector<Event>& events);
    void accept(Seq& s, int32_t token, std::span<const float> logits, std::vector<Event>& events);
    // Speculative decoding (spec_step.cpp): drafts for the step's decoding sequences, within
    // what is left of the budget; then, after the step, each draft's rows sampled in order.
    void add_drafts(std::span<Seq* const> batch, int32_t budget);
    bool may_draft(const Seq& s) const;
    void verify(Seq& s, std::size_t row, std::size_t pick, std::vector<Event>& events);
    void remove_finished();
    // Disk tier: starts s's load after admission (false: nothing below memory), applies
    // finished loads, writes a sequence's full blocks down.
    bool start_load(Seq& s, int32_t n_computed);
    std::optional<std::pair<kv::BlockHash, int32_t>> find_tail(
        const Seq& s, std::size_t block,
        const std::function<bool(const kv::BlockHash&)>& held) const;
    void count_restored(Seq& s, int32_t n);
    // Lineages (scheduler_shift.cpp): which chain s is served from (s.lineage) and, when
    // its request shifts a kept history into a chain that holds no more than the plain one,
    // the source's blocks held for apply_shift; then the move itself, after allocation.
    int32_t chain_run(const Seq& s, const kv::Lineage& lineage) const;
    kv::HeldPrefix choose_lineage(Seq& s);
    Result<void> apply_shift(Seq& s, kv::HeldPrefix& held);
    // The tokens s may compute next: up to its prompt's end, or to a shift's gap's end
    // while rows after the gap wait (absorb_island counts them once the gap is computed).
    int32_t computable(const Seq& s) const;
    Result<void> absorb_island(Seq& s);
    void drop_load(Seq& s);
    void finish_loads(std::vector<Event>& events);
    void write_down(kv::SeqId conv);

    LlamaModel& model_;
    KvStorage& storage_;
    kv::KvCacheManager& cache_;
    const Tokenizer& tokenizer_;
    SchedulerConfig config_;
    std::deque<std::unique_ptr<Seq>> waiting_;   // submit order (preempted ones go first)
    std::vector<std::unique_ptr<Seq>> running_;  // admission order
    int64_t steps_ = 0;
    int64_t preemptions_ = 0;
    int64_t tokens_computed_ = 0;
    int64_t tokens_generated_ = 0;
    int64_t top_k_steps_ = 0;
    int64_t tokens_drafted_ = 0, tokens_accepted_ = 0;
    int64_t host_ns_ = 0;
    int64_t step_ns_ = 0, step_cpu_ns_ = 0;
    int64_t model_ns_ = 0;  // in the model's launch and collect, this step() call
    uint64_t admit_counter_ = 0;
    StepLogits logits_;
    kv::DiskTier* tier_ = nullptr;
    std::function<std::string()> weights_check_;
    kv::HostTier* host_ = nullptr;
    bool idle_step_ = false;
    bool overlap_ = false;

    // The last step launched (in flight while model_.in_flight()). Its sequences stay alive
    // until it is collected: one cancelled or failed meanwhile waits in retired_ (its
    // results are dropped).
    struct Flight {
        std::vector<Seq*> batch;
        std::vector<SequenceStep> steps;  // after the launch only want_logits, n_logits are read
    };
    Flight flight_;
    std::vector<std::unique_ptr<Seq>> retired_;
};

}  // namespace sched
}  // namespace hearth
