// Scheduler::Seq, private to engine/sched: one request's state in the scheduler, shared by
// scheduler.cpp (admission, steps, sampling) and scheduler_tiers.cpp (the KV tiers).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "generation/text_stream.h"
#include "sched/scheduler.h"

namespace hearth::sched {

struct Scheduler::Seq {
    RequestId id = 0;
    Request req;
    Sampler sampler;
    TextStream stream;
    std::vector<int32_t> tokens;               // prompt + generated: what (re-)admission allocates
    std::vector<kv::BlockHash> prefix_hashes;  // of tokens, for admission; empty: not yet
    kv::Lineage lineage;  // the chain its blocks are in (the request's, or the plain one)
    std::vector<int32_t> generated;
    RequestStats stats;
    std::chrono::steady_clock::time_point submitted;
    std::chrono::steady_clock::time_point first_token;
    int64_t submit_step = 0;
    uint64_t admit_order = 0;
    bool admitted_once = false;
    bool preempted = false;
    bool done = false;
    int32_t reserved = 0;         // token slots the cache holds for it
    int32_t computed_before = 0;  // computed tokens when last preempted
    int32_t take = 0;             // tokens in the current step
    std::vector<int32_t> pick;    // top-k step: the tokens whose raw logits sampling needs
    uint64_t load_job = 0;        // != 0: waiting for these blocks from the disk tier
    std::size_t load_first = 0;   // the first block (table index) the load fills
    std::size_t load_blocks = 0;  // whole blocks asked for
    int32_t load_tail = 0;        // then a tail of this many tokens (0: none)
    bool first_admission = false;
    // A shift's rows after its gap: in the cache, counted as computed once the gap is.
    int32_t island_begin = 0, island_end = 0;
    // Speculative decoding: the drafter (made at the first draft), this step's draft, the
    // step's tokens when it drafts (the next token, then the draft), the longest draft it
    // may have now, its run of fully missed drafts and the steps left without drafting.
    std::unique_ptr<spec::Drafter> drafter;
    std::vector<int32_t> draft;
    std::vector<int32_t> step_tokens;
    int32_t draft_len = 0;
    int32_t draft_misses = 0;
    int32_t draft_pause = 0;

    Seq(RequestId rid, Request r)
        : id(rid),
          req(std::move(r)),
          sampler(req.sampling),
          stream(req.stop_strings),
          lineage(req.lineage) {}
};

}  // namespace hearth::sched
