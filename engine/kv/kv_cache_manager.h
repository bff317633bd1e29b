// KvCacheManager: the facade the scheduler calls. Per sequence it keeps an append-only
// block table, the token ids it holds and the hashes of its full blocks, and it serves
// prompt prefixes from the block pool's cache (automatic prefix caching).
//
// Life of a sequence:
//   allocate(seq, prompt)      table covering the prompt; n_computed tokens came from cache
//   mark_computed(seq, n)      the next n known tokens have their KV written
//   commit(seq, tokens)        tokens appended to the sequence (e.g. the sampled token)
//   append_slots(seq, n)       room for n more tokens (fails cleanly: then preempt)
//   free(seq) | park(seq)      end of the turn; resume(seq, tokens) continues a parked one
// A sequence lives in one lineage (kv/lineage.h): the plain chain, or the salted chain of a
// context shift; its blocks are found, hashed and parked in it.
// Failures are values and change nothing; the manager never throws.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "kv/block_hash.h"
#include "kv/block_pool.h"
#include "kv/lineage.h"

namespace hearth::kv {

using SeqId = int64_t;
using PinId = int64_t;

struct KvCacheConfig {
    int32_t n_blocks = 0;            // sized by the caller from a memory budget (KvStorage)
    int32_t block_size = 16;         // tokens per block
    double max_pinned_share = 0.25;  // of n_blocks, for pin()
    BlockHashKeys hash_keys;         // at least the model fingerprint
    // Off: no block is ever found in (or added to) the cache, so every prompt is computed
    // in full; park() keeps no tail. For benchmarks and equivalence tests.
    bool prefix_caching = true;
};

struct CachedPrefix {
    std::vector<BlockId> blocks;
    std::vector<BlockHash> hashes;  // of those blocks
    int32_t n_tokens = 0;           // blocks.size() * block_size
};

struct Allocation {
    std::vector<BlockId> block_table;  // covers every prompt token
    int32_t n_prompt_tokens = 0;
    int32_t n_computed_tokens = 0;  // already in the KV cache (cache hit or parked tail)
};

// A prefix's blocks, held for a moment by someone who is not a sequence: a context shift
// reads them while the new prompt's blocks are allocated (which could otherwise evict
// them). Rows [0, n_tokens) of the prefix are in `blocks` (block i holds rows
// [i · block_size, (i + 1) · block_size)).
struct HeldPrefix {
    std::vector<BlockId> blocks;
    int32_t n_tokens = 0;
};

struct PinInfo {
    PinId id = 0;
    int32_t n_blocks = 0;
    int32_t n_tokens = 0;
};

struct KvCacheStats {
    int32_t blocks_total = 0;
    int32_t blocks_used = 0;    // held by a sequence, a pin or a parked tail
    int32_t blocks_cached = 0;  // carry a hash (held or freed-but-cached)
    int32_t blocks_pinned = 0;
    int32_t blocks_free = 0;  // in the free queue, cached or not
    int64_t prompt_tokens_queried = 0;
    int64_t prompt_tokens_cached = 0;   // served without recompute (any tier)
    int64_t prompt_tokens_loaded = 0;   // of those, read back from a lower tier (disk)
    int64_t prompt_tokens_shifted = 0;  // moved by context shifts (kv/lineage.h), not computed
    int64_t evictions = 0;
    int64_t parked_reclaims = 0;
    friend bool operator==(const KvCacheStats&, const KvCacheStats&) = default;
};

class KvCacheManager {
  public:
    explicit KvCacheManager(KvCacheConfig config);

    int32_t block_size() const { return config_.block_size; }
    const BlockHashKeys& hash_keys() const { return config_.hash_keys; }
    bool prefix_caching() const { return config_.prefix_caching; }
    int32_t n_parked() const { return static_cast<int32_t>(parked_.size()); }
    const BlockPool& pool() const { return pool_; }
    KvCacheStats stats() const;
    // Every block accounted for (soaks, tests): the pool's own invariants, and each block's
    // ref_count and pin_count equal to the holders this manager knows (active sequences'
    // tables, parked tails, pins). O(blocks + table entries). The error names the block.
    Result<void> audit() const;

    // The longest run of cached full blocks that prefixes tokens, capped at
    // tokens.size() - 1 and rounded down to whole blocks. Changes nothing.
    CachedPrefix longest_cached_prefix(std::span<const TokenId> tokens,
                                       const Lineage& lineage = {}) const;
    // The same question split in two, for a caller that asks it again and again about
    // tokens that do not change (the scheduler's waiting queue, every step): the hashes
    // of the blocks longest_cached_prefix would look up, computed once, and how many
    // tokens of them are cached now.
    std::vector<BlockHash> prefix_hashes(std::span<const TokenId> tokens,
                                         const Lineage& lineage = {}) const;
    int32_t cached_tokens(std::span<const BlockHash> prefix_hashes) const;

    // Block `block`'s hash (tokens: its rows, whole or a tail's) under a lineage, chained
    // from prev (the hash of block - 1; none for block 0).
    BlockHash block_hash(const Lineage& lineage, std::size_t block,
                         const std::optional<BlockHash>& prev,
                         std::span<const TokenId> tokens) const;

    // Starts a sequence with this prompt (not an active or parked id; not empty), in this
    // lineage.
    Result<Allocation> allocate(SeqId seq, std::span<const TokenId> prompt,
                                const Lineage& lineage = {});
    // Grows the table by room for n more tokens; returns the blocks added (maybe none).
    Result<std::vector<BlockId>> append_slots(SeqId seq, int32_t n);
    // Appends tokens to the sequence's token ids; their KV is not computed yet.
    Result<void> commit(SeqId seq, std::span<const TokenId> tokens);
    // The next n tokens (already known: prompt or committed, with slots) now have their KV
    // written. Blocks that became full are hashed and cached.
    Result<void> mark_computed(SeqId seq, int32_t n);
    // Ends the sequence; its blocks go back to the pool tail first. Unknown ids: no-op.
    void free(SeqId seq);

    // Ends the turn but keeps the last partly filled block (with the computed tokens)
    // held for this id; full blocks are freed-but-cached as by free().
    Result<void> park(SeqId seq);
    // Continues a parked sequence with its whole new token list. Reuses the parked tail
    // when tokens extend the parked tokens and its full blocks are still cached; else it
    // falls back to allocate(). The tail is reused only in the lineage it was parked in. On
    // failure the parked state is kept.
    Result<Allocation> resume(SeqId seq, std::span<const TokenId> tokens,
                              const Lineage& lineage = {});
    // Forgets a parked sequence (releases its tail). Unknown ids: no-op.
    void drop_parked(SeqId seq);

    // Counts n prompt tokens of an allocation that a lower tier served (their KV was
    // loaded into the sequence's blocks, then mark_computed): the hit-rate figures.
    void count_loaded_tokens(int32_t n);
    // Counts n prompt tokens whose KV a context shift moved into the sequence's blocks.
    void count_shifted_tokens(int32_t n) { prompt_tokens_shifted_ += n; }

    // Holds what the cache has of tokens under a lineage: its cached whole blocks (no cap:
    // every row is wanted), then `parked`'s tail when that parked sequence holds the rows
    // right after them in the same lineage. release() gives them back; nothing else may
    // happen to the manager's sequences in between except allocate() and resume().
    HeldPrefix hold(std::span<const TokenId> tokens, const Lineage& lineage,
                    std::optional<SeqId> parked);
    void release(HeldPrefix& held);

    // Holds the cached full blocks that prefix tokens so they are never evicted.
    Result<PinInfo> pin(std::span<const TokenId> prefix);
    Result<void> unpin(PinId pin);

    // Introspection, for the scheduler and tests.
    bool has_sequence(SeqId seq) const { return seqs_.count(seq) != 0; }
    bool is_parked(SeqId seq) const { return parked_.count(seq) != 0; }
    std::span<const BlockId> block_table(SeqId seq) const;        // empty if unknown
    std::span<const TokenId> tokens(SeqId seq) const;             // empty if unknown
    int32_t n_computed(SeqId seq) const;                          // 0 if unknown
    std::span<const BlockHash> block_hashes(SeqId seq) const;     // of its full computed blocks
    Lineage lineage(SeqId seq) const;                             // plain if unknown
    BlockId parked_tail(SeqId seq) const;                         // kNoBlock if none (or reclaimed)
    std::span<const BlockId> pinned_blocks(PinId pin) const;      // empty if unknown
    std::vector<SeqId> sequences() const;                         // active ones, unordered
    std::vector<std::pair<SeqId, BlockId>> parked_tails() const;  // parked with a tail
    // Each parked sequence's full blocks still in the cache, from its start to the first
    // evicted one (found by hash; not held by it): what its next turn would reuse.
    std::vector<std::pair<SeqId, std::vector<BlockId>>> parked_prefixes() const;
    std::vector<PinId> pin_ids() const;
    int32_t max_pinned_blocks() const { return max_pinned_; }

  private:
    struct Sequence {
        std::vector<BlockId> table;
        std::vector<TokenId> tokens;
        std::vector<BlockHash> hashes;  // of the first hashes.size() full computed blocks
        int32_t n_computed = 0;
        int32_t n_reserved = 0;  // token slots the table must cover
        Lineage lineage;
    };
    struct Parked {
        std::vector<TokenId> tokens;    // the computed tokens at park time
        std::vector<BlockHash> hashes;  // of its full blocks
        BlockId tail = kNoBlock;        // holds tokens past the last full block
        uint64_t stamp = 0;             // park order, for oldest-first reclaim
        Lineage lineage;
    };

    int32_t blocks_for(int64_t n_tokens) const;
    // Can n blocks be had after taking `hits` (some may sit in the free queue), counting
    // parked tails other than `keep`'s as reclaimable?
    bool can_allocate(int32_t n, std::span<const BlockId> hits, std::optional<SeqId> keep) const;
    // Reclaims parked tails, oldest first, until n blocks are free (or none are left).
    void reclaim_parked(int32_t n);
    void release_parked_tail(Parked& p);
    void hash_new_full_blocks(Sequence& s);
    Result<Allocation> allocate_fresh(SeqId seq, std::span<const TokenId> prompt,
                                      const Lineage& lineage, std::optional<SeqId> keep);
    // nullopt when the tail cannot be used (a full block was evicted): fall back.
    std::optional<Result<Allocation>> resume_with_tail(SeqId seq, Parked& p,
                                                       std::span<const TokenId> tokens);

    KvCacheConfig config_;
    BlockPool pool_;
    int32_t max_pinned_ = 0;
    std::unordered_map<SeqId, Sequence> seqs_;
    std::unordered_map<SeqId, Parked> parked_;
    std::map<uint64_t, SeqId> parked_order_;  // stamp -> seq, for parked with a tail
    uint64_t next_stamp_ = 1;
    std::unordered_map<PinId, std::vector<BlockId>> pins_;
    PinId next_pin_ = 1;
    int64_t prompt_tokens_queried_ = 0;
    int64_t prompt_tokens_cached_ = 0;
    int64_t prompt_tokens_loaded_ = 0;
    int64_t prompt_tokens_shifted_ = 0;
    int64_t parked_reclaims_ = 0;
};

}  // namespace hearth::kv
