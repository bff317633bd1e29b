// libFuzzer target: the KV disk tier's block-file format. A file read back from disk is
// checked against the tier and block it should hold; whatever its bytes, the check answers
// without reading out of bounds, and only a file whose header and payload checksums agree
// is Ok. Also: the checksum is the same however the data is split into updates.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "kv/block_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace hearth::kv;
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
    TierId tier{};
    BlockHash hash{};
    // The seeds are written with this tier and hash (tests/fuzz/make-seeds).
    for (size_t i = 0; i < tier.size(); ++i) tier[i] = static_cast<uint8_t>(i + 1);
    for (size_t i = 0; i < hash.bytes.size(); ++i) hash.bytes[i] = static_cast<uint8_t>(0xA0 + i);
    const size_t payload = size > kBlockFileHeaderBytes ? size - kBlockFileHeaderBytes : 0;
    const BlockFileCheck c = check_block_file(bytes, tier, hash, payload);
    if (c == BlockFileCheck::Ok &&
        check_block_file(bytes, tier, hash, payload + 1) == BlockFileCheck::Ok)
        std::abort();  // one file cannot hold two payload sizes
    (void)check_block_header(bytes.first(std::min(size, kBlockFileHeaderBytes)), tier, hash,
                             payload, nullptr);

    const size_t cut = size ? data[0] % (size + 1) : 0;
    Checksum64 split;
    split.update(bytes.first(cut));
    split.update(bytes.subspan(cut));
    if (split.finish() != checksum64(bytes)) std::abort();
    return 0;
}
