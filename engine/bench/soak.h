// The engine soak (issue 18): many conversations chatting at once with personas, on a KV
// cache at a tenth of their working set, so that blocks are evicted, parked tails
// reclaimed and running requests preempted all the time; with random cancellations,
// persona edits, pins and unpins, and a model reload after every phase. It checks what
// must survive all of that:
//  * every KV block is accounted for (Engine::audit) during each phase and after it;
//  * every reply equals what an engine without prefix caching (and with room to spare)
//    samples for the same prompt and sampling settings; a cancelled reply is a prefix
//    of it (except the replies of chats that shifted their context: see shift_rate);
//  * no request fails.
// Used by `hearth-cli bench soak` (the long run, docs/reliability.md) and tst_soak (a
// short run in CI).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "sched/scheduler.h"

namespace hearth {

struct SoakOptions {
    std::string model_path;
    std::string device = "cpu";  // EngineConfig::device, for both engines
    int n_threads = 0;
    int phases = 3;               // a model reload between phases
    int requests_per_phase = 40;  // turns, in all conversations together
    int conversations = 24;       // chats at once (a chat past max_prompt_tokens starts over)
    int personas = 4;             // system prompts the chats share, pinned when they fit
    int concurrency = 8;          // requests in flight at once
    double kv_share = 0.10;       // the KV cache as a share of the working set
    int max_prompt_tokens = 384;  // a conversation's history before it starts over
    int max_reply_tokens = 24;    // each reply asks for 4..this many tokens
    double cancel_rate = 0.10;    // requests cancelled, at a random token (or before one)
    // Chats that, past max_prompt_tokens, shift their context (chat/turn_planner.h's
    // Shift: the oldest turns leave in steps and the kept history's KV is moved) instead of
    // starting over. Moved KV is not what a fresh computation gives, so their replies
    // after a shift are not compared with the reference; the audits and "no request
    // fails" hold for them as for every other.
    double shift_rate = 0.0;
    // The soaked engine's steps (SchedulerConfig::overlap); the reference's are plain.
    sched::SchedulerConfig::Overlap overlap = sched::SchedulerConfig::Overlap::Auto;
    uint64_t seed = 1;
    std::function<void(const std::string&)> progress;  // a line per phase; may be empty
};

struct SoakPhase {
    int requests = 0;
    int cancelled = 0;
    int errors = 0;      // Error events (none expected)
    int mismatches = 0;  // replies unlike the reference
    int audits = 0;      // Engine::audit calls, all passed unless failures say otherwise
    int persona_edits = 0, pins = 0, unpins = 0, pins_failed = 0;
    int64_t prompt_tokens = 0, prompt_tokens_cached = 0, generated_tokens = 0;
    int64_t preemptions = 0, recomputed_tokens = 0, evictions = 0, parked_reclaims = 0;
    int shift_turns = 0;                // turns that moved a kept history (Shift)
    int64_t prompt_tokens_shifted = 0;  // tokens they moved instead of computing
    double seconds = 0, reference_seconds = 0;
};

struct SoakReport {
    int32_t kv_blocks = 0;           // of the soaked engine
    int32_t working_set_blocks = 0;  // every conversation at its longest, and the personas
    int32_t block_size = 0;
    std::vector<SoakPhase> phases;
    std::vector<std::string> failures;  // the first few, described
    bool ok() const { return failures.empty(); }
    std::string table() const;
};

// Errors: the model cannot be loaded. Failures of the soak itself are in the report.
Result<SoakReport> run_soak(const SoakOptions& options);

}  // namespace hearth
