#include "kv/lineage.h"

#include "common/sha256.h"

namespace hearth::kv {

namespace {

void put_u32(Sha256& sha, uint32_t v) {
    const uint8_t le[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                           static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
    sha.update(le, sizeof le);
}

BlockHash first_16(const std::array<uint8_t, 32>& digest) {
    BlockHash h;
    for (std::size_t i = 0; i < h.bytes.size(); ++i) h.bytes[i] = digest[i];
    return h;
}

}  // namespace

std::optional<BlockHash> chain_parent(const Lineage& lineage, std::size_t block, int32_t block_size,
                                      const std::optional<BlockHash>& prev) {
    if (!lineage.salted() || block != static_cast<std::size_t>(lineage.begin / block_size))
        return prev;
    // NOTE: a tag of its own, so that no block hash (hash_block's tag) can equal a folded
    // parent, and the plain chain's blocks never match a salted one.
    Sha256 sha;
    static constexpr char kTag[] = "hearth-kv-lineage-v1";
    sha.update(kTag, sizeof kTag - 1);
    const uint8_t has_prev = prev ? 1 : 0;
    sha.update(&has_prev, 1);
    if (prev) sha.update(prev->bytes.data(), prev->bytes.size());
    sha.update(lineage.salt.bytes.data(), lineage.salt.bytes.size());
    return first_16(sha.finish());
}

BlockHash shift_salt(const Lineage& from, int32_t at, std::span<const TokenId> dropped) {
    Sha256 sha;
    static constexpr char kTag[] = "hearth-kv-shift-v1";
    sha.update(kTag, sizeof kTag - 1);
    const uint8_t salted = from.salted() ? 1 : 0;
    sha.update(&salted, 1);
    if (from.salted()) {
        put_u32(sha, static_cast<uint32_t>(from.begin));
        sha.update(from.salt.bytes.data(), from.salt.bytes.size());
    }
    put_u32(sha, static_cast<uint32_t>(at));
    put_u32(sha, static_cast<uint32_t>(dropped.size()));
    for (TokenId t : dropped) put_u32(sha, static_cast<uint32_t>(t));
    return first_16(sha.finish());
}

BlockHash hash_block_in(const Lineage& lineage, std::size_t block, int32_t block_size,
                        const std::optional<BlockHash>& prev, std::span<const TokenId> tokens,
                        const BlockHashKeys& keys) {
    return hash_block(chain_parent(lineage, block, block_size, prev), tokens, keys);
}

std::vector<BlockHash> hash_full_blocks_in(const Lineage& lineage, std::span<const TokenId> tokens,
                                           int32_t block_size, std::size_t n_blocks,
                                           const BlockHashKeys& keys) {
    const auto bs = static_cast<std::size_t>(block_size);
    std::vector<BlockHash> out;
    out.reserve(n_blocks);
    std::optional<BlockHash> prev;
    for (std::size_t i = 0; i < n_blocks; ++i) {
        prev = hash_block_in(lineage, i, block_size, prev, tokens.subspan(i * bs, bs), keys);
        out.push_back(*prev);
    }
    return out;
}

}  // namespace hearth::kv
