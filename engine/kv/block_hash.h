// Content hashes of full KV blocks, chained from the parent block's hash, so a hash names
// a whole prefix: equal hashes mean equal token ids in this block and every block before
// it, under the same extra keys (the model fingerprint: KV from another model, or another
// quantisation, must never be served).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::kv {

using TokenId = int32_t;

// NOTE: 128 bits of SHA-256. Prefix caching trusts a hash match blindly (a collision would
// silently serve another conversation's KV), so the hash must be cryptographically strong,
// not std::hash: at 2^-128 per pair collisions are not a practical concern.
struct BlockHash {
    std::array<uint8_t, 16> bytes{};

    friend bool operator==(const BlockHash&, const BlockHash&) = default;
    std::string hex() const;
};

// What goes into every block hash besides the tokens.
struct BlockHashKeys {
    std::string model_fingerprint;
};

// Hash of one full block: hash(parent, tokens, keys). parent is empty for the first block.
BlockHash hash_block(const std::optional<BlockHash>& parent, std::span<const TokenId> tokens,
                     const BlockHashKeys& keys);

// Chained hashes of the first n_blocks full blocks of tokens (n_blocks <= size / block_size),
// continuing from parent (the hash of the block before tokens[0], if any).
std::vector<BlockHash> hash_full_blocks(std::span<const TokenId> tokens, int32_t block_size,
                                        std::size_t n_blocks, const BlockHashKeys& keys,
                                        const std::optional<BlockHash>& parent = std::nullopt);

}  // namespace hearth::kv

template <>
struct std::hash<hearth::kv::BlockHash> {
    std::size_t operator()(const hearth::kv::BlockHash& h) const noexcept {
        // The bytes are already uniformly distributed: the first 8 are a fine bucket key.
        std::size_t v = 0;
        for (std::size_t i = 0; i < sizeof(std::size_t) && i < h.bytes.size(); ++i)
            v = (v << 8) | h.bytes[i];
        return v;
    }
};
