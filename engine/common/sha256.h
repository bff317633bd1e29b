// SHA-256 (FIPS 180-4), for model fingerprints and file verification.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace hearth {

class Sha256 {
  public:
    Sha256();
    void update(std::span<const std::byte> data);
    void update(const void* data, std::size_t size) {
        update(std::span(static_cast<const std::byte*>(data), size));
    }
    std::array<uint8_t, 32> finish();  // the object must not be updated afterwards
    std::string finish_hex();

  private:
    void compress(const uint8_t* block);
    std::array<uint32_t, 8> h_;
    std::array<uint8_t, 64> buffer_{};
    std::size_t buffered_ = 0;
    uint64_t total_bytes_ = 0;
};

}  // namespace hearth
