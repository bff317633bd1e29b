// The disk tier of the KV cache: full blocks written down to the user's cache directory,
// so that a conversation's KV outlives eviction from memory and restarts of the app.
//
// Layout: <dir>/lock (held while an engine uses the directory), and one folder per tier
// key, <dir>/<tier id>/, holding key.txt (what the id stands for) and one file per block,
// <block hash>.kvb (kv/block_file.h). Files are written to a temporary name and renamed,
// so a crash leaves either the old state or a whole file; a file that fails its checks
// when read is a miss and is deleted. The budget covers every model's entries together,
// least recently used first out (file times carry the order across restarts).
//
// Threads: the engine thread calls every member; one worker thread does the file work.
// Reads go before writes. Writes are queued with their bytes (the caller copied them out
// of the KV storage, whose blocks may be reused at once); when the queue holds more than
// max_pending_bytes, or writing failed (full disk, read-only folder), blocks are not
// written down: inference goes on, only the tier misses more.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "kv/block_file.h"
#include "kv/block_hash.h"

namespace hearth::kv {

// Everything that makes a block's KV bytes valid besides its tokens (which its chained
// hash covers): a block written under another key is never read.
struct TierKey {
    std::string text;  // canonical "name=value" lines
    TierId id{};       // the first 16 bytes of SHA-256(text)

    struct Parts {
        std::string model;     // the model's fingerprint (header and a sample of weights)
        std::string numerics;  // backend and its orders of summation ("cpu avx2 invariant")
        int32_t n_layers = 0, n_kv_heads = 0, head_dim = 0, block_size = 0;
        std::string dtype = "f16";
    };
    static TierKey make(const Parts& parts);
    std::string hex() const;
};

struct DiskTierConfig {
    std::string dir;                                 // e.g. ~/.cache/Hearth/kv
    std::uint64_t budget_bytes = 2ull << 30;         // all models' entries together
    std::uint64_t max_pending_bytes = 256ull << 20;  // queued writes held in memory
};

struct DiskTierStats {
    std::string dir;
    std::string status;   // empty when healthy; else why blocks are not written down
    int64_t entries = 0;  // files on disk, every model
    int64_t bytes = 0;    // their size
    int64_t budget_bytes = 0;
    int64_t model_entries = 0;   // readable by the model loaded now
    int64_t pending_writes = 0;  // queued, not yet on disk
    int64_t written_blocks = 0;  // this run
    int64_t written_bytes = 0;
    int64_t dropped_writes = 0;  // not written down (queue full, writing stopped)
    int64_t write_errors = 0;
    int64_t loaded_blocks = 0;  // read back into memory
    int64_t loaded_bytes = 0;
    int64_t bad_files = 0;       // failed their checks when read (deleted)
    int64_t evicted_blocks = 0;  // deleted for the budget
    friend bool operator==(const DiskTierStats&, const DiskTierStats&) = default;
};

// Where a load puts block i's payload: spans of host memory that together hold
// block_bytes() bytes, in payload order (the KV storage's K and V rows of each layer, for
// a backend whose memory the host can write). Called on the worker thread; the memory must
// stay valid, and untouched by others, until the load has ended or cancel_load returned.
using LoadSink = std::function<std::vector<std::span<std::byte>>(std::size_t i)>;

// A load's result: the blocks in the order asked, up to the first one that could not be
// read (a missing or bad file): `loaded` may be fewer than asked, or none. A block that
// failed its checks may have left bytes in its sink's memory; they are not KV.
struct LoadedBlocks {
    uint64_t job = 0;
    std::size_t loaded = 0;
    std::vector<std::vector<std::byte>> blocks;  // the payloads, when the load had no sink
};

class DiskTier {
  public:
    // Opens (creating) the directory, takes its lock, deletes leftover temporary files and
    // indexes the entries. Fails with a message a person can act on: another running
    // Hearth holds the lock, the folder cannot be created or written.
    static Result<std::unique_ptr<DiskTier>> open(const DiskTierConfig& config, const TierKey& key,
                                                  std::size_t block_bytes);
    // Finishes queued writes (at most a few seconds' worth), then stops the worker.
    ~DiskTier();
    DiskTier(const DiskTier&) = delete;
    DiskTier& operator=(const DiskTier&) = delete;

    const TierKey& key() const;
    std::size_t block_bytes() const;

    // The block is on disk or queued for writing.
    bool contains(const BlockHash& hash) const;
    // Queues a block (block_bytes() bytes) for writing down. False: not queued (already
    // there, the queue is full, or writing has stopped; see stats().status).
    bool store(const BlockHash& hash, std::vector<std::byte> bytes);
    // Queues a read of these blocks, into `sink` (or buffers of the result when it has
    // none); returns the job id that take_loaded() reports.
    uint64_t load(std::vector<BlockHash> hashes, LoadSink sink = {});
    // Forgets a load: dropped if it has not started, else waited for; either way, when
    // this returns the worker no longer writes into the load's sink and take_loaded()
    // will not report it.
    void cancel_load(uint64_t job);
    // Finished loads, oldest first.
    std::vector<LoadedBlocks> take_loaded();
    // Called on the worker thread after each finished load (the engine wakes its thread).
    void set_on_loaded(std::function<void()> callback);
    // Waits until every queued write and read is done (tests, benchmarks, shutdown).
    void flush();
    // Deletes these blocks' entries (queued writes of them are dropped); returns how many.
    int64_t erase(std::span<const BlockHash> hashes);
    // Deletes every entry of every model (queued writes are dropped).
    void clear();
    // Deletes the entries of another model, given its content fingerprint (the "model=" of
    // its tier keys, GgufFile::content_fingerprint), when its file is deleted; returns how
    // many. The open model's own entries are not touched.
    int64_t erase_model(const std::string& model_fingerprint);
    DiskTierStats stats() const;

  private:
    struct Impl;
    explicit DiskTier(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// What a cache directory holds, without opening it for an engine (`hearth-cli cache`):
// per tier key, its description (key.txt), entries and bytes.
struct TierFolder {
    std::string id;
    std::string description;
    int64_t entries = 0;
    int64_t bytes = 0;
};
Result<std::vector<TierFolder>> inspect_disk_tier(const std::string& dir);
// Deletes every entry under dir; fails when a running Hearth holds the lock.
Result<int64_t> clear_disk_tier(const std::string& dir);
// Deletes one model's entries under dir (DiskTier::erase_model without an engine); fails
// when a running Hearth holds the lock.
Result<int64_t> erase_model_from_disk_tier(const std::string& dir,
                                           const std::string& model_fingerprint);

}  // namespace hearth::kv
