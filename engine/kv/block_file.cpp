#include "kv/block_file.h"

#include <cstring>

namespace hearth::kv {

namespace {

constexpr char kMagic[4] = {'H', 'K', 'V', 'B'};
constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;  // odd: multiplying is a bijection

uint64_t load_u64(const std::byte* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint64_t>(p[i]);
    return v;
}

void store_u64(std::byte* p, uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<std::byte>(v >> (8 * i));
}

uint32_t load_u32(const std::byte* p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint32_t>(p[i]);
    return v;
}

void store_u32(std::byte* p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<std::byte>(v >> (8 * i));
}

uint64_t rotl(uint64_t v, int r) {
    return (v << r) | (v >> (64 - r));
}

uint64_t mix(uint64_t z) {  // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace

uint64_t checksum64(std::span<const std::byte> data) {
    uint64_t lane[4] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull,
                        0x082EFA98EC4E6C89ull};
    const std::byte* p = data.data();
    const std::size_t n = data.size();
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int j = 0; j < 4; ++j) lane[j] = rotl((lane[j] ^ load_u64(p + i + 8 * j)) * kMul, 31);
    uint64_t tail = 0;
    for (std::size_t k = n; k > i; --k) tail = (tail << 8) | static_cast<uint64_t>(p[k - 1]);
    lane[0] = rotl((lane[0] ^ tail) * kMul, 31);
    uint64_t h = mix(n);
    for (int j = 0; j < 4; ++j) h = mix(h ^ lane[j]);
    return h;
}

void write_block_header(std::span<std::byte, kBlockFileHeaderBytes> out, const TierId& tier,
                        const BlockHash& hash, std::span<const std::byte> payload) {
    std::byte* p = out.data();
    std::memcpy(p, kMagic, 4);
    store_u32(p + 4, kBlockFileVersion);
    std::memcpy(p + 8, tier.data(), 16);
    std::memcpy(p + 24, hash.bytes.data(), 16);
    store_u64(p + 40, payload.size());
    store_u64(p + 48, checksum64(payload));
    store_u64(p + 56, checksum64(std::span<const std::byte>(p, 56)));
}

const char* describe(BlockFileCheck c) {
    switch (c) {
        case BlockFileCheck::Ok:
            return "ok";
        case BlockFileCheck::Truncated:
            return "truncated";
        case BlockFileCheck::NotABlockFile:
            return "not a KV block file";
        case BlockFileCheck::OtherVersion:
            return "another format version";
        case BlockFileCheck::OtherTier:
            return "written for another model, numerics or block size";
        case BlockFileCheck::OtherBlock:
            return "holds another block";
        case BlockFileCheck::Corrupt:
            return "checksum mismatch (corrupt)";
    }
    return "?";
}

BlockFileCheck check_block_file(std::span<const std::byte> file, const TierId& tier,
                                const BlockHash& hash, std::size_t payload_bytes) {
    if (file.size() < kBlockFileHeaderBytes) return BlockFileCheck::Truncated;
    const std::byte* p = file.data();
    if (std::memcmp(p, kMagic, 4) != 0) return BlockFileCheck::NotABlockFile;
    if (load_u64(p + 56) != checksum64(file.first(56))) return BlockFileCheck::Corrupt;
    if (load_u32(p + 4) != kBlockFileVersion) return BlockFileCheck::OtherVersion;
    if (std::memcmp(p + 8, tier.data(), 16) != 0) return BlockFileCheck::OtherTier;
    if (std::memcmp(p + 24, hash.bytes.data(), 16) != 0) return BlockFileCheck::OtherBlock;
    const uint64_t declared = load_u64(p + 40);
    if (declared != payload_bytes) return BlockFileCheck::OtherTier;
    if (file.size() < kBlockFileHeaderBytes + payload_bytes) return BlockFileCheck::Truncated;
    if (file.size() > kBlockFileHeaderBytes + payload_bytes) return BlockFileCheck::Corrupt;
    if (load_u64(p + 48) != checksum64(file.subspan(kBlockFileHeaderBytes)))
        return BlockFileCheck::Corrupt;
    return BlockFileCheck::Ok;
}

}  // namespace hearth::kv
