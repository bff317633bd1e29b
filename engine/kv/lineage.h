// What a block's KV bytes are, beyond "these tokens computed from position 0", and how the
// KV of a conversation's kept history moves when its oldest turns leave the context.
//
// A block hash chains the block's tokens from position 0 (block_hash.h): equal hashes, equal
// tokens computed from scratch. A context shift breaks that: the history kept after the
// oldest turns dropped out is *moved* to new positions (its K rotated by the position
// delta, kv/kv_shift below), so its bytes are what the model computed over the longer
// history, not what a fresh computation of the shorter prompt gives. Such KV lives in a
// *lineage*: from the block holding token `begin` on, every block's hash chains from a
// salt that names the shift(s) that made it. A lookup under a lineage never finds a block
// of another one, and a lookup of plain tokens (no lineage) never finds a shifted block, in
// memory and on disk alike.
//
// A request under a lineage may still be served from the plain chain (exact bytes are valid
// in every lineage): the scheduler takes whichever chain holds more of the prompt, and a
// sequence computed from the plain chain stays in it (sched/scheduler.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kv/block_hash.h"

namespace hearth::kv {

struct Lineage {
    // < 0: the plain chain (every block hashed from position 0, no salt). ≥ 0: blocks from
    // the one holding token `begin` on chain from `salt` (a conversation's persona ends
    // there: the persona's own whole blocks stay shared with every conversation).
    int32_t begin = -1;
    BlockHash salt{};

    bool salted() const { return begin >= 0; }
    friend bool operator==(const Lineage&, const Lineage&) = default;
};

// The parent block i's hash chains from: `prev` (the hash of block i - 1), or, for the first
// block of a salted lineage, the salt folded into it.
std::optional<BlockHash> chain_parent(const Lineage& lineage, std::size_t block, int32_t block_size,
                                      const std::optional<BlockHash>& prev);

// The salt of the lineage a shift makes: the lineage the history came from, where the kept
// history now begins (`at`, the persona's end), and every token the shift dropped
// (source[0, keep_from): the persona and the turns that left), which the kept tokens' KV
// attended to.
BlockHash shift_salt(const Lineage& from, int32_t at, std::span<const TokenId> dropped);

// Block i's hash under a lineage: hash_block with chain_parent's parent.
BlockHash hash_block_in(const Lineage& lineage, std::size_t block, int32_t block_size,
                        const std::optional<BlockHash>& prev, std::span<const TokenId> tokens,
                        const BlockHashKeys& keys);
// hash_full_blocks (from block 0) under a lineage.
std::vector<BlockHash> hash_full_blocks_in(const Lineage& lineage, std::span<const TokenId> tokens,
                                           int32_t block_size, std::size_t n_blocks,
                                           const BlockHashKeys& keys);

// Dst positions [dst, dst + count) take the KV of source positions [src, src + count).
struct ShiftRange {
    int32_t src = 0;
    int32_t dst = 0;
    int32_t count = 0;
    friend bool operator==(const ShiftRange&, const ShiftRange&) = default;
};

// A context shift, as a request asks for it: where the KV of its kept history may be found
// (the conversation's tokens before the turn that dropped the oldest ones, in the lineage
// they were computed in) and where each run of it goes in the new prompt. Ranges are in
// ascending dst order, each starting where the last ended but for at most one gap (glue
// the new prompt has and the source does not); the first starts at 0 (the persona, which
// keeps its positions). The scheduler moves what the cache holds of them, from the first
// position the new prompt does not have cached, and stops at the first position that is
// not held or whose token differs, or at a second gap: the rest is computed. Positions
// after the gap count as computed once the gap is (sched/scheduler_shift.cpp).
struct KvShift {
    std::vector<TokenId> source;
    Lineage source_lineage;
    std::vector<ShiftRange> ranges;
};

}  // namespace hearth::kv
