// A scheduler over a synthetic random-weight model, and a multi-turn chat workload for
// it: conversations that share personas, run turn by turn with all conversations of a
// turn submitted at once.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cpu/cpu_backend.h"
#include "gguf/gguf_file.h"
#include "kv/disk_tier.h"
#include "kv/host_tier.h"
#include "kv/kv_storage.h"
#include "model/llama_model.h"
#include "model/synthetic_model.h"
#include "sched/scheduler.h"
#include "tokenizer/tokenizer.h"

namespace hearth::test {

struct RigOptions {
    quant::TensorType weight_type = quant::TensorType::F32;
    std::string architecture = "llama";  // SyntheticModelSpec's
    int32_t sliding_window = 0;          // gemma3: the local layers' window (every 2nd layer)
    // Widths other than SyntheticModelSpec's (0: its own): the K-quants need multiples of 256.
    int32_t n_embd = 0, n_ff = 0;
    int32_t block_size = 16;
    int32_t n_blocks = 512;
    bool prefix_caching = true;
    sched::SchedulerConfig scheduler;
    std::string disk_dir;  // non-empty: a disk tier there (kv/disk_tier.h)
    // The backend; null: the CPU backend with 2 threads.
    std::function<std::unique_ptr<kernels::Backend>()> backend;
    std::uint64_t disk_budget_bytes = 1ull << 30;
    std::uint64_t host_budget_bytes = 0;  // > 0: a host-RAM tier of this size
};

struct Rig {
    std::unique_ptr<gguf::GgufFile> file;
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<kernels::Backend> backend;
    std::unique_ptr<LlamaModel> model;
    std::unique_ptr<KvStorage> storage;
    std::unique_ptr<kv::KvCacheManager> cache;
    std::unique_ptr<kv::DiskTier> disk;  // outlives the scheduler (declared before it)
    std::unique_ptr<kv::HostTier> host;
    std::unique_ptr<sched::Scheduler> scheduler;

    // Aborts the test binary on failure: a rig that cannot be built is a broken test.
    static std::unique_ptr<Rig> make(const RigOptions& o);

    // Steps until no work is left (waiting for disk loads when nothing else runs); returns
    // every event. Fails the step loop on error, or when after_step (if set) says no.
    bool drain(std::vector<sched::Event>& events, int max_steps = 100000);
    std::function<bool()> after_step;
};

struct Turn {
    std::vector<int32_t> prompt;  // persona + history + this user message
    std::vector<int32_t> reply;
    std::vector<std::vector<float>> logits;  // one per reply token
    sched::RequestStats stats;
};

struct Workload {
    std::vector<std::vector<int32_t>> personas;
    std::vector<int> persona_of;                          // per conversation
    std::vector<std::vector<std::vector<int32_t>>> user;  // [conversation][turn]
    int32_t reply_tokens = 6;
    SamplingParams sampling = SamplingParams::greedy();  // every request's

    static Workload random(uint32_t seed, int n_conversations, int n_turns, int n_personas,
                           int32_t vocab);
    int n_conversations() const { return static_cast<int>(persona_of.size()); }
    int n_turns() const { return static_cast<int>(user.front().size()); }
};

// Runs every turn of the workload: turn t of all conversations is submitted at once
// (so up to max_running sequences run together), then stepped to completion.
// results[c][t]. Returns false (with a message) on any error event.
bool run_workload(Rig& rig, const Workload& w, std::vector<std::vector<Turn>>& results,
                  std::string& error);

// Empty when a and b hold the same floats bit for bit (what batch invariance promises for
// prefix caching on against off); else the sizes, or the first differing index with both
// values and their bits.
std::string first_difference(const std::vector<float>& a, const std::vector<float>& b);

// Empty when two runs of a workload (results[c][t], as run_workload gives them) have the
// same replies and the same logits bit for bit; else where they first differ, `what`
// naming the comparison ("caching on vs off").
std::string first_turn_difference(const std::vector<std::vector<Turn>>& got,
                                  const std::vector<std::vector<Turn>>& want,
                                  const std::string& what);

// A greedy request with a fixed reply length (no stop at end-of-generation tokens).
inline sched::Request greedy(kv::SeqId conversation, std::vector<int32_t> prompt,
                             int32_t max_tokens) {
    sched::Request r;
    r.conversation = conversation;
    r.prompt = std::move(prompt);
    r.max_tokens = max_tokens;
    r.stop_at_end_of_generation = false;
    return r;
}

}  // namespace hearth::test
