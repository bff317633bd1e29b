// The memory of the paged KV cache: for every layer, K and V blocks in backend memory,
//   k, v: [n_blocks][block_size][n_kv_heads][head_dim] fp16
// Block ids index this storage and never move. Which block belongs to whom is decided
// elsewhere (the block pool); this class only owns the bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backend.h"
#include "common/result.h"

namespace hearth {

struct KvShape {
    int32_t n_layers = 0;
    int32_t n_kv_heads = 0;
    int32_t head_dim = 0;
    int32_t block_size = 16;
};

class KvStorage {
  public:
    // Bytes of one block across all layers (K and V).
    static std::size_t bytes_per_block(const KvShape& shape);
    // Allocates n_blocks blocks; fails with a message when the backend cannot.
    static Result<std::unique_ptr<KvStorage>> create(kernels::Backend& backend,
                                                     const KvShape& shape, int32_t n_blocks);

    const KvShape& shape() const { return shape_; }
    int32_t n_blocks() const { return n_blocks_; }
    int32_t block_size() const { return shape_.block_size; }
    std::size_t block_bytes() const { return bytes_per_block(shape_); }
    kernels::PagedKvLayer layer(int32_t l) const;
    std::size_t bytes() const {
        return bytes_per_block(shape_) * static_cast<std::size_t>(n_blocks_);
    }

    // One block's K and V of every layer, as the disk tier stores them: for each layer, its
    // K block then its V block (bytes_per_block bytes). Copies through the backend, so
    // device memory works too; the caller has synchronised nothing else.
    void read_block(int32_t block, std::span<std::byte> out) const;
    void write_block(int32_t block, std::span<const std::byte> in);
    // The host memory of one block, in read_block's order (2 · n_layers spans), for a
    // backend with host_memory(): what the disk tier reads into directly.
    bool host_visible() const { return backend_->host_memory(); }
    std::vector<std::span<std::byte>> block_spans(int32_t block) const;
    // Zeroes rows [rows, block_size) of every layer's K and V in a read_block copy.
    void clear_rows(std::span<std::byte> block, int32_t rows) const;

  private:
    KvStorage() = default;
    kernels::Backend* backend_ = nullptr;
    KvShape shape_;
    int32_t n_blocks_ = 0;
    std::vector<std::unique_ptr<kernels::Buffer>> k_, v_;  // one buffer per layer each
};

}  // namespace hearth
