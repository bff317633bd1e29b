#include "kv/block_hash.h"

#include <cassert>

#include "common/sha256.h"

namespace hearth::kv {

namespace {

void put_u64(Sha256& sha, uint64_t v) {
    uint8_t le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<uint8_t>(v >> (8 * i));
    sha.update(le, sizeof le);
}

}  // namespace

std::string BlockHash::hex() const {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (uint8_t b : bytes) {
        out.push_back(kDigits[b >> 4]);
        out.push_back(kDigits[b & 0xf]);
    }
    return out;
}

BlockHash hash_block(const std::optional<BlockHash>& parent, std::span<const TokenId> tokens,
                     const BlockHashKeys& keys) {
    // NOTE: every field is length-prefixed (or fixed-size) so that no two different inputs
    // serialise to the same bytes; the version tag lets the layout change safely.
    Sha256 sha;
    static constexpr char kTag[] = "hearth-kv-block-v1";
    sha.update(kTag, sizeof kTag - 1);
    const uint8_t has_parent = parent ? 1 : 0;
    sha.update(&has_parent, 1);
    if (parent) sha.update(parent->bytes.data(), parent->bytes.size());
    put_u64(sha, keys.model_fingerprint.size());
    sha.update(keys.model_fingerprint.data(), keys.model_fingerprint.size());
    put_u64(sha, tokens.size());
    for (TokenId t : tokens) {
        const auto u = static_cast<uint32_t>(t);
        const uint8_t le[4] = {static_cast<uint8_t>(u), static_cast<uint8_t>(u >> 8),
                               static_cast<uint8_t>(u >> 16), static_cast<uint8_t>(u >> 24)};
        sha.update(le, sizeof le);
    }
    const std::array<uint8_t, 32> digest = sha.finish();
    BlockHash h;
    for (std::size_t i = 0; i < h.bytes.size(); ++i) h.bytes[i] = digest[i];
    return h;
}

std::vector<BlockHash> hash_full_blocks(std::span<const TokenId> tokens, int32_t block_size,
                                        std::size_t n_blocks, const BlockHashKeys& keys,
                                        const std::optional<BlockHash>& parent) {
    assert(block_size > 0);
    const auto bs = static_cast<std::size_t>(block_size);
    assert(n_blocks <= tokens.size() / bs);
    std::vector<BlockHash> out;
    out.reserve(n_blocks);
    std::optional<BlockHash> prev = parent;
    for (std::size_t i = 0; i < n_blocks; ++i) {
        prev = hash_block(prev, tokens.subspan(i * bs, bs), keys);
        out.push_back(*prev);
    }
    return out;
}

}  // namespace hearth::kv
