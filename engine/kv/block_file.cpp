#include "kv/block_file.h"

#include <array>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "common/failpoint.h"

namespace hearth::kv {

namespace {

// fopen with the path as the system spells it (wide on Windows: any user name works).
std::FILE* open_file(const std::filesystem::path& path, bool write) {
#ifdef _WIN32
    return _wfopen(path.c_str(), write ? L"wb" : L"rb");
#else
    return std::fopen(path.c_str(), write ? "wb" : "rb");
#endif
}

static_assert(std::endian::native == std::endian::little,
              "block files are little-endian; a big-endian host needs byte swaps here");

constexpr char kMagic[4] = {'H', 'K', 'V', 'B'};
constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;  // odd: multiplying is a bijection

uint64_t load_u64(const std::byte* p) {
    uint64_t v = 0;
    std::memcpy(&v, p, sizeof v);  // one load: the format and the host are little-endian
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

Checksum64::Checksum64()
    : lane_{0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull,
            0x082EFA98EC4E6C89ull} {}

void Checksum64::word(uint64_t w) {
    uint64_t& l = lane_[words_++ & 3];
    l = rotl((l ^ w) * kMul, 31);
}

void Checksum64::update(std::span<const std::byte> data) {
    const std::byte* p = data.data();
    std::size_t n = data.size();
    length_ += n;
    if (carried_ > 0) {  // complete the word the last piece began
        const std::size_t take = std::min(n, 8 - carried_);
        std::memcpy(carry_ + carried_, p, take);
        carried_ += take;
        p += take;
        n -= take;
        if (carried_ < 8) return;
        word(load_u64(carry_));
        carried_ = 0;
    }
    for (; (words_ & 3) != 0 && n >= 8; p += 8, n -= 8) word(load_u64(p));
    // Four independent multiply chains: the bulk runs at several bytes per cycle.
    for (; n >= 32; p += 32, n -= 32) {
        for (int j = 0; j < 4; ++j) lane_[j] = rotl((lane_[j] ^ load_u64(p + 8 * j)) * kMul, 31);
        words_ += 4;
    }
    for (; n >= 8; p += 8, n -= 8) word(load_u64(p));
    std::memcpy(carry_, p, n);
    carried_ = n;
}

uint64_t Checksum64::finish() const {
    Checksum64 c = *this;
    if (c.carried_ > 0) {  // the last partial word, zero-padded
        std::memset(c.carry_ + c.carried_, 0, 8 - c.carried_);
        c.word(load_u64(c.carry_));
    }
    uint64_t h = mix(c.length_);
    for (uint64_t l : c.lane_) h = mix(h ^ l);
    return h;
}

uint64_t checksum64(std::span<const std::byte> data) {
    Checksum64 c;
    c.update(data);
    return c.finish();
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

BlockFileCheck check_block_header(std::span<const std::byte> header, const TierId& tier,
                                  const BlockHash& hash, std::size_t payload_bytes,
                                  uint64_t* payload_checksum) {
    if (header.size() < kBlockFileHeaderBytes) return BlockFileCheck::Truncated;
    const std::byte* p = header.data();
    if (std::memcmp(p, kMagic, 4) != 0) return BlockFileCheck::NotABlockFile;
    if (load_u64(p + 56) != checksum64(header.first(56))) return BlockFileCheck::Corrupt;
    if (load_u32(p + 4) != kBlockFileVersion) return BlockFileCheck::OtherVersion;
    if (std::memcmp(p + 8, tier.data(), 16) != 0) return BlockFileCheck::OtherTier;
    if (std::memcmp(p + 24, hash.bytes.data(), 16) != 0) return BlockFileCheck::OtherBlock;
    if (load_u64(p + 40) != payload_bytes) return BlockFileCheck::OtherTier;
    if (payload_checksum) *payload_checksum = load_u64(p + 48);
    return BlockFileCheck::Ok;
}

BlockFileCheck check_block_file(std::span<const std::byte> file, const TierId& tier,
                                const BlockHash& hash, std::size_t payload_bytes) {
    uint64_t sum = 0;
    if (auto c = check_block_header(file, tier, hash, payload_bytes, &sum); c != BlockFileCheck::Ok)
        return c;
    if (file.size() < kBlockFileHeaderBytes + payload_bytes) return BlockFileCheck::Truncated;
    if (file.size() > kBlockFileHeaderBytes + payload_bytes) return BlockFileCheck::Corrupt;
    if (sum != checksum64(file.subspan(kBlockFileHeaderBytes))) return BlockFileCheck::Corrupt;
    return BlockFileCheck::Ok;
}

std::optional<std::vector<std::byte>> read_file(const std::filesystem::path& path) {
    std::FILE* f = open_file(path, false);
    if (!f) return std::nullopt;
    std::vector<std::byte> out;
    std::byte buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
        out.insert(out.end(), buf, buf + n);
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) return std::nullopt;
    return out;
}

std::optional<BlockFileCheck> read_into(const std::filesystem::path& path, const TierId& tier,
                                        const BlockHash& hash, std::size_t payload_bytes,
                                        std::span<const std::span<std::byte>> dest) {
    std::FILE* f = open_file(path, false);
    if (!f) return std::nullopt;
    std::setvbuf(f, nullptr, _IONBF, 0);  // each fread is one read into its destination
    const auto done = [&](std::optional<BlockFileCheck> c) {
        if (std::ferror(f)) c.reset();
        std::fclose(f);
        return c;
    };
    std::array<std::byte, kBlockFileHeaderBytes> header{};
    if (std::fread(header.data(), 1, header.size(), f) < header.size())
        return done(BlockFileCheck::Truncated);
    uint64_t want = 0;
    if (auto c = check_block_header(header, tier, hash, payload_bytes, &want);
        c != BlockFileCheck::Ok)
        return done(c);
    Checksum64 sum;
    for (std::span<std::byte> d : dest) {
        const std::size_t got = std::fread(d.data(), 1, d.size(), f);
        sum.update(d.first(got));
        if (got < d.size()) return done(BlockFileCheck::Truncated);
    }
    std::byte extra{};
    if (std::fread(&extra, 1, 1, f) == 1) return done(BlockFileCheck::Corrupt);  // too long
    return done(sum.finish() == want ? BlockFileCheck::Ok : BlockFileCheck::Corrupt);
}

std::string write_file(const std::filesystem::path& path,
                       std::initializer_list<std::span<const std::byte>> parts) {
    std::filesystem::path tmp = path;
    tmp += ".tmp";
    std::FILE* f = open_file(tmp, true);
    if (!f) return tmp.string() + ": " + std::strerror(errno);
    bool ok = true;
    for (auto part : parts)
        if (ok && std::fwrite(part.data(), 1, part.size(), f) != part.size()) ok = false;
    int err = ok ? 0 : errno;
    if (ok && failpoint("disk.write")) {  // fault injection: as a full disk would
        ok = false;
        err = ENOSPC;
    }
    if (std::fflush(f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (std::fclose(f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    std::error_code ec;
    if (!ok) {
        std::filesystem::remove(tmp, ec);
        return tmp.string() + ": " + std::strerror(err);
    }
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        return path.string() + ": " + ec.message();
    }
    return {};
}

}  // namespace hearth::kv
