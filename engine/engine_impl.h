// Engine::Impl, private to engine/: the engine's state and the members its source files
// share. engine.cpp creates it and holds the public facade; engine_loop.cpp runs the
// engine thread (commands, steps, event delivery, stats); engine_pins.cpp keeps pinned
// prefixes and their warm-ups; engine_block_map.cpp takes the picture of the cache and
// audits it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>
#include <vector>

#include "backend.h"
#include "engine.h"
#include "gguf/gguf_file.h"
#include "kv/kv_storage.h"
#include "model/llama_model.h"
#include "tokenizer/tokenizer.h"

namespace hearth {

struct Engine::Impl {
    DeviceChoice device;
    // What callers ask of the engine thread, taken from the inbox between steps.
    struct Submit {
        sched::RequestId id;
        sched::Request request;
        std::shared_ptr<RequestHandle> handle;
        EventCallback callback;
    };
    struct Cancel {
        sched::RequestId id;
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
    struct Audit {
        std::shared_ptr<std::promise<std::string>> result;  // empty: every block accounted for
    };
    struct Prefetch {
        std::vector<int32_t> prompt;
        kv::Lineage lineage;
    };
    struct ClearDisk {};
    struct EraseDiskModel {
        std::string fingerprint;
    };
    struct Forget {
        std::vector<int32_t> prompt;
        kv::Lineage lineage;
    };
    using Command = std::variant<Submit, Cancel, CancelAll, Pin, Unpin, SnapshotBlocks, Audit,
                                 Prefetch, ClearDisk, EraseDiskModel, Forget>;

    struct Listener {
        std::shared_ptr<RequestHandle> handle;
        EventCallback callback;
    };
    struct PinEntry {
        PinStatus status;
        std::vector<int32_t> prefix;
        std::optional<kv::PinId> pin;
        sched::RequestId warmup = 0;  // the warm-up request while Warming
    };

    EngineConfig config;
    std::unique_ptr<gguf::GgufFile> file;
    std::unique_ptr<kernels::Backend> backend;
    std::unique_ptr<LlamaModel> model;
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<KvStorage> storage;
    std::unique_ptr<kv::KvCacheManager> cache;
    std::unique_ptr<kv::HostTier> host;  // outlives the scheduler, which points at it
    std::unique_ptr<sched::Scheduler> scheduler;

    std::atomic<sched::RequestId> next_id{1};
    mutable std::mutex mu;  // inbox, stop, idle
    std::condition_variable work_cv;
    mutable std::condition_variable idle_cv;
    std::vector<Command> inbox;
    bool stop = false;
    bool idle = true;
    bool loads_done = false;  // the disk tier finished a load since the thread last looked

    // Engine thread only.
    std::map<sched::RequestId, Listener> listeners;
    std::map<sched::RequestId, int64_t> warmups;  // warm-up request → pin key
    int64_t requests_finished = 0;
    // Why the model cannot be used any more (its file changed on disk), or empty.
    std::string model_unusable;
    double last_decode_tokens_per_s = 0;  // of the last finished request with a speed

    mutable std::mutex snapshot_mu;  // stats and pins, read by any thread
    EngineStats stats;
    std::map<int64_t, PinEntry> pin_entries;
    BlockMap block_map;
    bool block_map_requested = false;

    // Destroyed before the members above (the worker's callback takes mu); the engine
    // thread is joined first (~Engine).
    // Set on the engine thread (late, when the lock was held), under snapshot_mu: stats()
    // reads them from any thread.
    std::unique_ptr<kv::DiskTier> disk;
    std::string disk_error;  // why there is no disk tier, when one was asked for
    // The tier's lock was held (by the engine this one replaces, still closing, or another
    // Hearth): tried again, at most once a second, as the engine thread wakes.
    bool disk_lock_held = false;
    std::chrono::steady_clock::time_point disk_retry_at;
    KvShape disk_shape{};
    // Prefetches run as internal requests of their own sequence ids, clear of callers'.
    static constexpr kv::SeqId kPrefetchBase = kv::SeqId{1} << 62;
    kv::SeqId next_prefetch = kPrefetchBase;

    std::thread thread;

    void post(Command c) {
        {
            std::lock_guard lk(mu);
            inbox.push_back(std::move(c));
            idle = false;
        }
        work_cv.notify_one();
    }

    // engine.cpp
    void open_disk_tier(const KvShape& shape);
    void retry_disk_tier();

    void forget_on_disk(const std::vector<int32_t>& prompt, const kv::Lineage& lineage);

    // engine_loop.cpp
    void run();
    void handle(Command& c, std::vector<sched::Event>& events);
    void dispatch(std::vector<sched::Event>& events);
    // A command or a step threw (the device failed, say): every request ends with the
    // error, and later ones get it at once (model_unusable).
    void fail_engine(const char* what, std::vector<sched::Event>& events);
    void update_stats();
    // Sets model_unusable when the model file changed on disk; returns it.
    const std::string& check_model_file();

    // engine_pins.cpp
    void pin_prefix(Pin& p, std::vector<sched::Event>& events);
    void unpin_prefix(int64_t key, std::vector<sched::Event>& events);
    void on_warmup_done(int64_t key, const sched::Event& e);
    void try_pin(PinEntry& p);

    // engine_block_map.cpp
    void snapshot_blocks();
    std::string audit_blocks() const;
};

}  // namespace hearth
