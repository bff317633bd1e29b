// The engine facade: one model, its paged KV cache with automatic prefix sharing, and a
// background thread that runs the scheduler. Every public member is thread-safe and
// returns without waiting for inference; results arrive as events.
//
//   auto engine = Engine::create(config);            // loads the model, starts the thread
//   auto h = engine->submit(request);                // → RequestHandle
//   while (auto e = h->next()) ...                   // PrefillProgress, Token..., Finished
//   engine->pin(persona_id, persona_prefix_ids);     // warm up in the background, then pin
//
// Events of a request are delivered in order, either to the handle's queue (next()) or,
// when submit() gets a callback, to that callback on the engine thread (a UI posts them
// to its own thread from there; the callback must not call back into the engine
// synchronously except for the non-blocking members).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "device.h"
#include "kv/disk_tier.h"
#include "kv/host_tier.h"
#include "kv/kv_cache_manager.h"
#include "request_handle.h"
#include "sched/scheduler.h"
#include "vram_plan.h"

namespace hearth {

namespace gguf {
class GgufFile;
}
namespace kernels {
class Backend;
}
class Tokenizer;
struct ModelConfig;

struct EngineConfig {
    std::string model_path;
    // "auto", "cpu", "cuda" or "cuda:N" (engine/device.h). auto takes a CUDA device that
    // can hold the model and its KV cache and otherwise runs on the CPU, saying why
    // (Engine::device()). An explicit CUDA device that cannot be used is an error.
    std::string device = "auto";
    int n_threads = 0;        // CPU threads; 0: all cores
    std::size_t kv_mb = 0;    // KV cache budget; 0: two full contexts, at most 1 GiB
    int32_t block_size = 16;  // tokens per KV block
    // The context to serve, in tokens; 0: the model's own. Less saves KV memory (the cache's
    // default size is two contexts); more than the model was trained for is an error.
    int64_t context_length = 0;
    double max_pinned_share = 0.25;
    bool prefix_caching = true;
    // The KV cache's disk tier (kv/disk_tier.h): full blocks are written down there when
    // a turn ends, so that they outlive eviction and restarts, and prompts continue from
    // it. Empty: none (tests, benchmarks); the app and the CLI use
    // paths::cache_dir()/kv. Budget in MiB, all models together; 0: none.
    std::string kv_disk_dir;
    std::size_t kv_disk_mb = 2048;
    // Where the CPU backend keeps the matmul kernels it measured fastest on this machine
    // (kernels/cpu/kernel_tuner.h): read at load, or measured then (well under a second
    // per weight type, once per processor, build and thread count) and written. Empty:
    // each type's default kernel, nothing measured (tests); the app and the CLI use
    // paths::cache_dir()/kernel-choices.txt. Any choice gives the same results.
    std::string kernel_choice_file;
    // The host-RAM tier between device memory and the disk (kv/host_tier.h), in MiB: only
    // when the KV cache lives in device memory (CUDA); 0: none.
    std::size_t kv_host_mb = 2048;
    // Batch-invariant numerics (docs/architecture.md): a token's KV and logits do not
    // depend on its step's company or chunking, which makes cached KV equal to recomputed
    // KV. Off only to measure what invariance costs (benchmarks): the fastest kernels for
    // each step's size, and the prefix cache is then no longer exact.
    bool batch_invariant = true;
    // Decode steps as step graphs where the backend has them (CUDA graphs: each decode
    // shape captured once, then one launch a step; model/step_graph.h). The same results
    // either way; off to measure what they bring.
    bool step_graphs = true;
    // The engine thread and its compute workers are background threads
    // (kernels/cpu/thread_pool.h, mark_current_thread_background): their fair share of the
    // CPU, but an interactive program's UI thread gets a core at once when it wakes (the
    // desktop app). Off for the CLI and benchmarks.
    bool background_priority = false;
    sched::SchedulerConfig scheduler;
    // Tests only: wraps the backend the device choice made (a device that fails on cue, a
    // deferred stream). Empty: the backend as chosen.
    std::function<std::unique_ptr<kernels::Backend>(std::unique_ptr<kernels::Backend>)>
        wrap_backend;
};

struct EngineStats {
    kv::KvCacheStats kv;
    // The disk tier; disk_on false when there is none (disk.status says why when it could
    // not be opened).
    bool disk_on = false;
    kv::DiskTierStats disk;
    bool host_on = false;  // the host-RAM tier (device backends only)
    kv::HostTierStats host;
    sched::SchedulerStats scheduler;
    int32_t conversations_parked = 0;  // turns ended with their KV kept resident
    int64_t requests_finished = 0;
    // Decode speed in tokens per second, by RequestStats' formula ((generated tokens - 1)
    // / time since the first token), so that with one conversation it is the reply's own
    // number. While requests decode (decoding > 0): the sum of their speeds so far. When
    // none does (speed_is_last): the last finished request's
    // RequestStats::decode_tokens_per_s(), counting only requests that generated two or
    // more tokens (fewer have no speed); 0 until one has.
    double decode_tokens_per_s = 0;
    int32_t decoding = 0;       // requests that have their first token and are not finished
    bool speed_is_last = true;  // decode_tokens_per_s is the last finished request's
    double prefix_hit_rate() const {
        return kv.prompt_tokens_queried > 0 ? static_cast<double>(kv.prompt_tokens_cached) /
                                                  static_cast<double>(kv.prompt_tokens_queried)
                                            : 0.0;
    }
    friend bool operator==(const EngineStats&, const EngineStats&) = default;
};

enum class PinState { Warming, Pinned, Failed };

struct PinStatus {
    int64_t key = 0;
    PinState state = PinState::Warming;
    int32_t n_tokens = 0;       // of the prefix
    int32_t pinned_tokens = 0;  // whole blocks held (≤ n_tokens)
    std::string error;          // Failed
};

// Who holds each KV block, for a live picture of the cache (the app's Memory page).
struct BlockCell {
    enum class State : uint8_t {
        Free,          // in the free queue, holds nothing reusable
        Cached,        // in the free queue but still findable by hash (evictable)
        Pinned,        // held by a pinned prefix (a persona kept warm)
        Conversation,  // held by one conversation (running, or its parked tail)
        Shared,        // held by several conversations and/or pins at once
    };
    State state = State::Free;
    int64_t owner = -1;  // Conversation: its id; Pinned: the pin key; else -1
    // Sequences, parked tails and pins holding it, and parked conversations whose history
    // uses it while something else holds it (a kept-warm persona's blocks that three
    // chats start with are Shared by 4).
    int32_t holders = 0;
    int64_t pin = -1;  // the pin key holding it (Pinned or Shared), else -1
};

struct BlockMap {
    int32_t block_size = 0;
    std::vector<BlockCell> blocks;  // by block id
};

using EventCallback = std::function<void(const sched::Event&)>;

class Engine {
  public:
    // Loads the model (GGUF checks, weights, tokenizer), sizes the KV cache and starts the
    // engine thread. Errors name the file and what is wrong with it.
    static Result<std::unique_ptr<Engine>> create(const EngineConfig& config);
    ~Engine();  // cancels what is running and joins the thread

    const ModelConfig& model_config() const;
    const Tokenizer& tokenizer() const;
    const gguf::GgufFile& file() const;
    std::string backend_name() const;
    // The device it runs on, and when auto chose the CPU, why (for the UI and logs).
    const DeviceChoice& device() const;
    // On a GPU: device bytes of the weights and of the KV cache, all Hearth holds there,
    // and the device's free memory now (the driver is asked). All zero on the CPU.
    struct DeviceMemory {
        std::uint64_t weight_bytes = 0, kv_bytes = 0, held_bytes = 0, free_bytes = 0;
    };
    DeviceMemory device_memory() const;
    const EngineConfig& config() const;
    int32_t kv_blocks() const;
    std::size_t kv_bytes() const;

    // Queues a request. Conversation ids are ≥ 0; a request for a conversation that is
    // still generating fails (an Error event), as does a prompt that does not fit.
    std::shared_ptr<RequestHandle> submit(sched::Request request, EventCallback on_event = {});
    void cancel(sched::RequestId id);
    void cancel_all();

    // Keeps a prefix (a persona's system prompt) resident: the engine prefills it in the
    // background when it is not cached, then pins its whole blocks. A key pins one prefix;
    // pinning a key again replaces it. unpin() releases it (its blocks stay cached until
    // reused). Over the pinned cap: the status is Failed with the reason.
    void pin(int64_t key, std::vector<int32_t> prefix);
    // Reads what the disk tier holds of this prompt's KV into memory, in the background,
    // computing nothing: a conversation the user is about to continue (selected in the
    // sidebar) then starts from memory. No-op without a disk tier. `lineage`: the chain the
    // conversation's KV is keyed in (kv/lineage.h), as its next request will ask for it.
    void prefetch(std::vector<int32_t> prompt, kv::Lineage lineage = {});
    // Deletes what the disk tier holds of this prompt (a deleted conversation's history):
    // its full blocks and the tails kept along it, except blocks pinned now (personas kept
    // warm). Blocks it shares with other conversations go too; they are computed again.
    // With a salted lineage, its chain's blocks go as well as the plain chain's.
    void forget(std::vector<int32_t> prompt, kv::Lineage lineage = {});
    // Deletes every block the disk tier holds, of every model.
    void clear_disk_cache();
    // Deletes another model's KV blocks on disk (its content fingerprint), as its file is
    // deleted; the open model's are kept. Runs on the engine thread, in order.
    void erase_disk_cache_of(std::string model_fingerprint);
    void unpin(int64_t key);
    std::vector<PinStatus> pins() const;

    EngineStats stats() const;
    // The latest picture of the cache; asking also schedules a fresh one (taken between
    // steps, so at most one step old when it is read next). Empty before the first.
    BlockMap block_map() const;
    // Blocks until nothing is queued or running (tests, benchmarks, shutdown).
    void wait_idle() const;
    // Checks, between two steps, that every KV block is accounted for: each block's holders
    // (running sequences, parked tails, pins) equal its reference count, the free queue
    // holds exactly the unheld blocks, the cache's pins are the engine's pinned prefixes,
    // and an idle engine holds no sequence. Waits for the engine thread; the error says
    // what is wrong. For soaks and tests (O(blocks)).
    Result<void> audit() const;

  private:
    struct Impl;
    explicit Engine(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

const char* pin_state_name(PinState s);

// What the engine may do with CUDA in this build (engine/device.h), for choose_device():
// the engine's own choice and `hearth-cli info --devices`.
CudaSupport engine_cuda_support();

// What the engine would place on a GPU for `config` and a model (engine/vram_plan.h): the
// weights as stored, the activations of its largest step, the KV block size and context.
VramNeeds vram_needs(const EngineConfig& config, const ModelConfig& model,
                     std::uint64_t weight_bytes);

}  // namespace hearth
