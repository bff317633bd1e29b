// The disk tier's file format: one file per full KV block, named by its chained hash.
//
//   offset  size  field (little-endian)
//        0     4  magic "HKVB"
//        4     4  format version (kBlockFileVersion)
//        8    16  tier id: what makes the bytes valid (TierKey::id)
//       24    16  the block's chained hash
//       40     8  payload bytes
//       48     8  checksum64 of the payload
//       56     8  checksum64 of bytes 0..55
//       64     …  payload: for each layer, its K block then its V block (KvStorage order)
//
// A file that fails any check is a miss, never KV: a torn write, a flipped bit, a file of
// another model, numerics, block size or format version.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "kv/block_hash.h"

namespace hearth::kv {

inline constexpr uint32_t kBlockFileVersion = 1;
inline constexpr std::size_t kBlockFileHeaderBytes = 64;

using TierId = std::array<uint8_t, 16>;

// A fast non-cryptographic 64-bit checksum (four multiply-rotate lanes, then a
// finaliser) for detecting corruption, not tampering: every step is a bijection of its
// lane's state, so a change in any one 8-byte word always changes the result.
uint64_t checksum64(std::span<const std::byte> data);

// Writes the header for this payload into out[0..kBlockFileHeaderBytes).
void write_block_header(std::span<std::byte, kBlockFileHeaderBytes> out, const TierId& tier,
                        const BlockHash& hash, std::span<const std::byte> payload);

enum class BlockFileCheck {
    Ok,
    Truncated,
    NotABlockFile,
    OtherVersion,
    OtherTier,
    OtherBlock,
    Corrupt
};
const char* describe(BlockFileCheck c);

// Checks a whole file (header and payload) against what the reader expects.
BlockFileCheck check_block_file(std::span<const std::byte> file, const TierId& tier,
                                const BlockHash& hash, std::size_t payload_bytes);

}  // namespace hearth::kv
