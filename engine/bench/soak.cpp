#include "bench/soak.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>

#include "chat/prompt_builder.h"
#include "chat/turn_planner.h"
#include "engine.h"
#include "model/model_config.h"

namespace hearth {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxFailures = 8;
constexpr int kAuditEvery = 10;  // completions between audits within a phase

const char* const kWords[] = {
    "river",   "lantern", "orchard", "granite",    "harbour", "meadow", "copper",  "violin",
    "winter",  "compass", "thunder", "library",    "pepper",  "saddle", "glacier", "market",
    "feather", "canyon",  "tailor",  "kettle",     "beacon",  "marble", "garden",  "island",
    "engine",  "pillow",  "forest",  "sparrow",    "ladder",  "velvet", "candle",  "mirror",
    "walnut",  "ribbon",  "harvest", "lighthouse", "comet",   "quilt",  "bridge",  "anchor"};
const char* const kAsks[] = {"Tell me about", "Write two lines on",  "Why do people like",
                             "Compare",       "Give one fact about", "Describe"};

// The events of the requests in flight, delivered by the engine thread's callback.
class Inbox {
  public:
    void push(sched::Event e) {
        {
            std::lock_guard lk(mu_);
            events_.push_back(std::move(e));
        }
        cv_.notify_one();
    }
    sched::Event pop() {
        std::unique_lock lk(mu_);
        cv_.wait(lk, [&] { return !events_.empty(); });
        sched::Event e = std::move(events_.front());
        events_.pop_front();
        return e;
    }

  private:
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<sched::Event> events_;
};

struct Conversation {
    int64_t id = 0;
    int persona = 0;
    std::string system;  // the persona's text when the chat began
    std::vector<chat::Message> messages;
    bool busy = false;
    bool shifts = false;  // past max_prompt_tokens it shifts instead of starting over
};

struct Issued {
    std::size_t conversation = 0;  // index into the conversations
    sched::Request request;        // what was asked (the reference asks the same)
    int cancel_after = -1;         // tokens seen before cancelling; -1: never
    int tokens_seen = 0;
    bool cancel_sent = false;
    sched::Event last;  // Finished or Error
    bool exact = true;  // planned in the plain KV chain: the reference gives the same reply
};

class Soak {
  public:
    Soak(const SoakOptions& o, const chat::PromptBuilder& builder, int32_t context)
        : o_(o), builder_(builder), context_(context), rng_(o.seed) {}

    SoakReport& report() { return report_; }

    std::string words(int lo, int hi) {
        std::uniform_int_distribution<int> n(lo, hi);
        std::uniform_int_distribution<std::size_t> w(0, std::size(kWords) - 1);
        std::string out;
        for (int i = n(rng_); i > 0; --i) {
            if (!out.empty()) out += ' ';
            out += kWords[w(rng_)];
        }
        return out;
    }

    void make_personas() {
        for (int p = 0; p < o_.personas; ++p)
            personas_.push_back("You are persona " + std::to_string(p) +
                                ", a patient guide who answers briefly. You like " + words(8, 40) +
                                ".");
        for (int c = 0; c < o_.conversations; ++c)
            conversations_.push_back(new_chat(c % o_.personas));
    }

    Conversation new_chat(int persona) {
        Conversation c;
        c.id = next_conversation_++;
        c.persona = persona;
        c.system = personas_[static_cast<std::size_t>(persona)];
        c.shifts = std::bernoulli_distribution(o_.shift_rate)(rng_);
        return c;
    }

    // The persona's prefix as the app pins it: BOS and the system segment.
    std::vector<int32_t> persona_prefix(int persona) const {
        return builder_.persona_prefix(personas_[static_cast<std::size_t>(persona)]);
    }

    void pin_all(Engine& engine, SoakPhase& phase) {
        for (int p = 0; p < o_.personas; ++p) {
            engine.pin(p, persona_prefix(p));
            ++phase.pins;
        }
    }

    // The next turn of a conversation that is not busy; nullopt when the plan failed (a
    // failure is recorded).
    std::optional<Issued> next_turn(std::size_t ci) {
        Conversation& c = conversations_[ci];
        std::uniform_int_distribution<std::size_t> ask(0, std::size(kAsks) - 1);
        std::uniform_int_distribution<int> reply(4, std::max(4, o_.max_reply_tokens));
        const int32_t max_tokens = reply(rng_);
        for (int attempt = 0; attempt < 2; ++attempt) {
            std::vector<chat::Message> messages = c.messages;
            messages.push_back({chat::Role::User,
                                std::string(kAsks[ask(rng_)]) + " " + words(2, 14) + ".",
                                std::nullopt});
            chat::TurnInput t;
            t.system_prompt = c.system;
            t.messages = messages;
            t.max_tokens = max_tokens;
            t.policy = chat::ContextPolicy::Fail;
            int32_t context = context_;
            if (c.shifts) {  // a context of the working set's size, outgrown in steps
                t.policy = chat::ContextPolicy::Shift;
                context = std::min(context_, o_.max_prompt_tokens + max_tokens);
            }
            auto planned = chat::plan_turn(builder_, context, t);
            if (planned && static_cast<int>(planned->prompt.size()) <= o_.max_prompt_tokens) {
                c.messages = std::move(messages);
                Issued is;
                is.conversation = ci;
                is.request.conversation = c.id;
                is.request.prompt = std::move(planned->prompt);
                is.request.max_tokens = planned->max_tokens;
                is.request.lineage = planned->lineage;
                is.request.shift = std::move(planned->shift);
                is.exact = !planned->lineage.salted();
                if (std::bernoulli_distribution(0.5)(rng_)) {
                    is.request.sampling = SamplingParams::greedy();
                } else {
                    is.request.sampling = SamplingParams{};
                    is.request.sampling.temperature = 0.7f;
                    is.request.sampling.seed = rng_();
                }
                if (std::bernoulli_distribution(o_.cancel_rate)(rng_))
                    is.cancel_after = std::uniform_int_distribution<int>(0, max_tokens - 1)(rng_);
                return is;
            }
            if (!planned) {
                fail("planning a turn of conversation " + std::to_string(c.id) + ": " +
                     planned.message());
                return std::nullopt;
            }
            c = new_chat(c.persona);  // past the length the working set allows: a new chat
        }
        fail("a new chat's first turn does not fit max_prompt_tokens");
        return std::nullopt;
    }

    void finish_turn(Issued& is) {
        Conversation& c = conversations_[is.conversation];
        c.busy = false;
        if (is.last.kind != sched::EventKind::Finished) return;
        chat::Message reply{chat::Role::Assistant, is.last.text, is.last.tokens};
        c.messages.push_back(std::move(reply));
    }

    // Between turns: a persona edited (re-pinned), unpinned or pinned again.
    void perturb(Engine& engine, SoakPhase& phase) {
        std::uniform_real_distribution<double> u(0, 1);
        std::uniform_int_distribution<int> which(0, o_.personas - 1);
        const double r = u(rng_);
        const int p = which(rng_);
        if (r < 0.03) {
            personas_[static_cast<std::size_t>(p)] += " Also " + words(3, 10) + ".";
            engine.pin(p, persona_prefix(p));
            ++phase.persona_edits;
        } else if (r < 0.06) {
            engine.unpin(p);
            ++phase.unpins;
        } else if (r < 0.09) {
            engine.pin(p, persona_prefix(p));
            ++phase.pins;
        }
    }

    void audit(const Engine& engine, SoakPhase& phase, const char* when) {
        ++phase.audits;
        if (auto ok = engine.audit(); !ok) fail(std::string(when) + ": " + ok.message());
    }

    // One phase on `engine`: requests_per_phase turns, concurrency at a time.
    std::vector<Issued> run_phase(Engine& engine, SoakPhase& phase) {
        Inbox inbox;
        std::map<sched::RequestId, Issued> live;
        std::vector<Issued> done;
        int issued = 0;
        std::uniform_int_distribution<std::size_t> pick(0, conversations_.size() - 1);
        const auto start = Clock::now();
        while (static_cast<int>(done.size()) < o_.requests_per_phase && failures_ok()) {
            while (static_cast<int>(live.size()) < o_.concurrency &&
                   issued < o_.requests_per_phase) {
                std::size_t ci = pick(rng_);
                for (std::size_t k = 0; conversations_[ci].busy && k < conversations_.size(); ++k)
                    ci = (ci + 1) % conversations_.size();
                if (conversations_[ci].busy) break;
                auto is = next_turn(ci);
                if (!is) return done;
                conversations_[ci].busy = true;
                ++issued;
                auto handle =
                    engine.submit(is->request, [&inbox](const sched::Event& e) { inbox.push(e); });
                const sched::RequestId id = handle->id();
                if (is->cancel_after == 0) {
                    engine.cancel(id);
                    is->cancel_sent = true;
                }
                live.emplace(id, std::move(*is));
            }
            sched::Event e = inbox.pop();
            auto it = live.find(e.request);
            if (it == live.end()) continue;
            Issued& is = it->second;
            if (e.kind == sched::EventKind::Token) {
                ++is.tokens_seen;
                if (!is.cancel_sent && is.cancel_after > 0 && is.tokens_seen >= is.cancel_after) {
                    engine.cancel(e.request);
                    is.cancel_sent = true;
                }
                continue;
            }
            if (!is_last_event(e)) continue;
            is.last = std::move(e);
            if (is.last.kind == sched::EventKind::Error) {
                ++phase.errors;
                fail("request of conversation " + std::to_string(is.request.conversation) +
                     " failed: " + is.last.error);
            }
            finish_turn(is);
            done.push_back(std::move(is));
            live.erase(it);
            perturb(engine, phase);
            if (done.size() % kAuditEvery == 0) audit(engine, phase, "during the phase");
        }
        engine.wait_idle();
        phase.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        audit(engine, phase, "after the phase");
        for (const Issued& is : done) {
            ++phase.requests;
            const sched::RequestStats& s = is.last.stats;
            phase.cancelled += is.last.stop == StopReason::Cancelled ? 1 : 0;
            phase.prompt_tokens += s.prompt_tokens;
            phase.prompt_tokens_cached += s.prompt_tokens_cached;
            phase.generated_tokens += static_cast<int64_t>(is.last.tokens.size());
            phase.preemptions += s.preemptions;
            phase.recomputed_tokens += s.recomputed_tokens;
            phase.shift_turns += s.prompt_tokens_shifted > 0 ? 1 : 0;
            phase.prompt_tokens_shifted += s.prompt_tokens_shifted;
        }
        for (const PinStatus& p : engine.pins())
            phase.pins_failed += p.state == PinState::Failed ? 1 : 0;
        return done;
    }

    // The same requests on the reference engine (no prefix caching): each reply must be
    // the same, and a cancelled one a prefix of it.
    void compare(Engine& reference, const std::vector<Issued>& done, SoakPhase& phase) {
        const auto start = Clock::now();
        // (Replies from moved KV are not what the reference computes: not asked. Those
        // requests are the only ones with a lineage or a shift.)
        std::vector<std::shared_ptr<RequestHandle>> handles;
        for (const Issued& is : done) {
            if (!is.exact) {
                handles.emplace_back();
                continue;
            }
            sched::Request r = is.request;
            r.conversation = next_reference_++;
            r.park_at_end = false;
            handles.push_back(reference.submit(std::move(r)));
        }
        for (std::size_t i = 0; i < done.size(); ++i) {
            if (!handles[i]) continue;
            sched::Event last;
            for (;;) {
                auto e = handles[i]->next(std::chrono::milliseconds(1000));
                if (e && is_last_event(*e)) {
                    last = std::move(*e);
                    break;
                }
            }
            const Issued& is = done[i];
            if (is.last.kind != sched::EventKind::Finished || !is.exact) continue;
            const std::vector<int32_t>& got = is.last.tokens;
            const std::vector<int32_t>& want = last.tokens;
            const bool cancelled = is.last.stop == StopReason::Cancelled;
            const bool same = cancelled ? got.size() <= want.size() &&
                                              std::equal(got.begin(), got.end(), want.begin())
                                        : got == want;
            if (!same) {
                ++phase.mismatches;
                fail("conversation " + std::to_string(is.request.conversation) + ": " +
                     std::to_string(got.size()) + " tokens" + (cancelled ? " (cancelled)" : "") +
                     " differ from the reference's " + std::to_string(want.size()) + " (prompt " +
                     std::to_string(is.request.prompt.size()) + " tokens)");
            }
        }
        phase.reference_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    }

    void fail(std::string what) {
        if (report_.failures.size() < kMaxFailures) report_.failures.push_back(std::move(what));
        ++failures_;
    }
    bool failures_ok() const { return failures_ < 64; }

  private:
    const SoakOptions& o_;
    const chat::PromptBuilder& builder_;
    int32_t context_;
    std::mt19937_64 rng_;
    std::vector<std::string> personas_;
    std::vector<Conversation> conversations_;
    int64_t next_conversation_ = 0;
    int64_t next_reference_ = 0;
    int failures_ = 0;
    SoakReport report_;
};

int32_t blocks_for(int64_t tokens, int32_t block_size) {
    return static_cast<int32_t>((tokens + block_size - 1) / block_size);
}

}  // namespace

Result<SoakReport> run_soak(const SoakOptions& o) {
    if (o.phases < 1 || o.requests_per_phase < 1 || o.conversations < 1 || o.personas < 1 ||
        o.concurrency < 1 || o.concurrency > o.conversations || !(o.kv_share > 0) ||
        o.max_reply_tokens < 4 || o.max_prompt_tokens < 128)
        return make_error("soak: bad options");
    // The reference: no prefix caching, the default (roomy) cache.
    EngineConfig rc;
    rc.model_path = o.model_path;
    rc.device = o.device;
    rc.n_threads = o.n_threads;
    rc.prefix_caching = false;
    rc.scheduler.overlap = sched::SchedulerConfig::Overlap::Off;
    rc.kv_disk_dir.clear();
    auto reference = Engine::create(rc);
    if (!reference) return reference.error();
    Engine& ref = **reference;
    chat::PromptBuilder builder(ref.tokenizer(), chat::ChatTemplate::from_gguf(ref.file()));
    const auto context =
        static_cast<int32_t>(std::min<int64_t>(ref.model_config().context_length, 4096));

    Soak soak(o, builder, context);
    SoakReport& report = soak.report();
    soak.make_personas();
    const int32_t bs = ref.config().block_size;
    report.block_size = bs;
    int32_t personas_blocks = 0;
    for (int p = 0; p < o.personas; ++p)
        personas_blocks += blocks_for(static_cast<int64_t>(soak.persona_prefix(p).size()), bs);
    report.working_set_blocks =
        o.conversations * blocks_for(o.max_prompt_tokens, bs) + personas_blocks;
    // A tenth of that, but never less than one request at its longest needs.
    const int32_t want_blocks =
        std::max(static_cast<int32_t>(o.kv_share * report.working_set_blocks + 0.5),
                 blocks_for(o.max_prompt_tokens + o.max_reply_tokens, bs) + 2);
    const double block_bytes =
        static_cast<double>(ref.kv_bytes()) / static_cast<double>(std::max(1, ref.kv_blocks()));
    EngineConfig sc = rc;
    sc.prefix_caching = true;
    sc.scheduler.overlap = o.overlap;
    sc.kv_mb = static_cast<std::size_t>(std::max(1.0, want_blocks * block_bytes / (1 << 20) + 0.5));

    for (int phase_no = 0; phase_no < o.phases; ++phase_no) {
        SoakPhase phase;
        auto engine = Engine::create(sc);  // a reload per phase
        if (!engine) return engine.error();
        report.kv_blocks = (*engine)->kv_blocks();
        soak.pin_all(**engine, phase);
        const std::vector<Issued> done = soak.run_phase(**engine, phase);
        const kv::KvCacheStats kv = (*engine)->stats().kv;
        phase.evictions = kv.evictions;
        phase.parked_reclaims = kv.parked_reclaims;
        soak.compare(ref, done, phase);
        report.phases.push_back(phase);
        if (o.progress) {
            char line[256];
            std::snprintf(line, sizeof line,
                          "phase %d: %d requests (%d cancelled) in %.1f s, %lld preemptions, "
                          "%lld evictions, %d mismatches, %d audits",
                          phase_no + 1, phase.requests, phase.cancelled, phase.seconds,
                          static_cast<long long>(phase.preemptions),
                          static_cast<long long>(phase.evictions), phase.mismatches, phase.audits);
            o.progress(line);
        }
        if (!report.failures.empty()) break;
    }
    return report;
}

std::string SoakReport::table() const {
    std::string out;
    char line[320];
    std::snprintf(line, sizeof line,
                  "KV cache %d blocks of %d tokens = %.0f %% of the working set (%d blocks)\n",
                  kv_blocks, block_size,
                  working_set_blocks > 0 ? 100.0 * kv_blocks / working_set_blocks : 0.0,
                  working_set_blocks);
    out += line;
    out +=
        "phase  requests  cancelled  errors  mismatches  audits  prompt tok  cached  "
        "generated  preempt  recomputed  evictions  reclaims  edits  pins/unpins/failed  "
        "shifts (tokens)  s (ref s)\n";
    for (std::size_t i = 0; i < phases.size(); ++i) {
        const SoakPhase& p = phases[i];
        std::snprintf(
            line, sizeof line,
            "%5zu  %8d  %9d  %6d  %10d  %6d  %10lld  %5.0f%%  %9lld  %7lld  %10lld  "
            "%9lld  %8lld  %5d  %d/%d/%d  %d (%lld)  %.1f (%.1f)\n",
            i + 1, p.requests, p.cancelled, p.errors, p.mismatches, p.audits,
            static_cast<long long>(p.prompt_tokens),
            p.prompt_tokens > 0 ? 100.0 * static_cast<double>(p.prompt_tokens_cached) /
                                      static_cast<double>(p.prompt_tokens)
                                : 0.0,
            static_cast<long long>(p.generated_tokens), static_cast<long long>(p.preemptions),
            static_cast<long long>(p.recomputed_tokens), static_cast<long long>(p.evictions),
            static_cast<long long>(p.parked_reclaims), p.persona_edits, p.pins, p.unpins,
            p.pins_failed, p.shift_turns, static_cast<long long>(p.prompt_tokens_shifted),
            p.seconds, p.reference_seconds);
        out += line;
    }
    out += ok() ? "soak: passed\n" : "soak: FAILED\n";
    for (const std::string& f : failures) out += "  " + f + "\n";
    return out;
}

}  // namespace hearth
