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
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kv/block_hash.h"

namespace hearth::kv {

inline constexpr uint32_t kBlockFileVersion = 1;
inline constexpr std::size_t kBlockFileHeaderBytes = 64;

using TierId = std::array<uint8_t, 16>;

// A fast non-cryptographic 64-bit checksum for detecting corruption, not tampering: the
// data's 8-byte little-endian words (the last one zero-padded) go round-robin into four
// multiply-rotate lanes, then a finaliser mixes the lanes and the length. Every step is a
// bijection of its lane's state, so a change in any one word always changes the result.
// Incremental: any split of the data into update() calls gives the same value.
class Checksum64 {
  public:
    Checksum64();
    void update(std::span<const std::byte> data);
    uint64_t finish() const;

  private:
    void word(uint64_t w);
    uint64_t lane_[4];
    uint64_t words_ = 0;
    uint64_t length_ = 0;
    std::byte carry_[8] = {};
    std::size_t carried_ = 0;
};
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

// Checks a header (the first kBlockFileHeaderBytes of a file) against what the reader
// expects; on Ok, *payload_checksum (if given) is the payload's recorded checksum.
BlockFileCheck check_block_header(std::span<const std::byte> header, const TierId& tier,
                                  const BlockHash& hash, std::size_t payload_bytes,
                                  uint64_t* payload_checksum);
// Checks a whole file (header and payload) against what the reader expects.
BlockFileCheck check_block_file(std::span<const std::byte> file, const TierId& tier,
                                const BlockHash& hash, std::size_t payload_bytes);

// --- files -------------------------------------------------------------------------

// Reads a whole small file (key.txt); nullopt when it cannot be opened or read.
std::optional<std::vector<std::byte>> read_file(const std::filesystem::path& path);

// Reads a block file's payload straight into `dest` (no buffer between the page cache and
// the KV memory) and checks it on the way. nullopt: the file cannot be opened or read.
std::optional<BlockFileCheck> read_into(const std::filesystem::path& path, const TierId& tier,
                                        const BlockHash& hash, std::size_t payload_bytes,
                                        std::span<const std::span<std::byte>> dest);

// Writes parts to path through a temporary file (path + ".tmp") and a rename, so that a
// crash leaves the old state or the whole file. Empty: done; else what failed.
std::string write_file(const std::filesystem::path& path,
                       std::initializer_list<std::span<const std::byte>> parts);

}  // namespace hearth::kv
