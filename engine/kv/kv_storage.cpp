#include "kv/kv_storage.h"

#include <cstring>
#include <new>

namespace hearth {

std::size_t KvStorage::bytes_per_block(const KvShape& s) {
    return 2u * sizeof(uint16_t) * static_cast<std::size_t>(s.n_layers) *
           static_cast<std::size_t>(s.block_size) * static_cast<std::size_t>(s.n_kv_heads) *
           static_cast<std::size_t>(s.head_dim);
}

Result<std::unique_ptr<KvStorage>> KvStorage::create(kernels::Backend& backend,
                                                     const KvShape& shape, int32_t n_blocks) {
    if (shape.block_size < 1 || n_blocks < 1 || shape.n_layers < 1)
        return make_error("KV cache needs at least one block of at least one token");
    std::unique_ptr<KvStorage> kv(new KvStorage);
    kv->backend_ = &backend;
    kv->shape_ = shape;
    kv->n_blocks_ = n_blocks;
    const std::size_t layer_bytes =
        bytes_per_block(shape) / static_cast<std::size_t>(shape.n_layers) / 2;
    try {
        for (int32_t l = 0; l < shape.n_layers; ++l) {
            kv->k_.push_back(backend.alloc(layer_bytes * static_cast<std::size_t>(n_blocks)));
            kv->v_.push_back(backend.alloc(layer_bytes * static_cast<std::size_t>(n_blocks)));
        }
        for (std::size_t l = 0; l < kv->k_.size(); ++l) {
            backend.populate(*kv->k_[l]);
            backend.populate(*kv->v_[l]);
        }
    } catch (const std::bad_alloc&) {
        return make_error("not enough memory for a KV cache of " + std::to_string(n_blocks) +
                          " blocks (" + std::to_string(kv->bytes() >> 20) + " MiB)");
    } catch (const kernels::BackendError& e) {  // device memory
        return make_error("no room for a KV cache of " + std::to_string(n_blocks) + " blocks (" +
                          std::to_string(kv->bytes() >> 20) + " MiB): " + e.what());
    }
    return kv;
}

void KvStorage::read_block(int32_t block, std::span<std::byte> out) const {
    const std::size_t half =
        bytes_per_block(shape_) / static_cast<std::size_t>(shape_.n_layers) / 2;
    const std::size_t at = half * static_cast<std::size_t>(block);
    std::byte* p = out.data();
    for (std::size_t l = 0; l < k_.size(); ++l, p += 2 * half) {
        backend_->download(p, *k_[l], at, half);
        backend_->download(p + half, *v_[l], at, half);
    }
}

void KvStorage::write_block(int32_t block, std::span<const std::byte> in) {
    const std::size_t half =
        bytes_per_block(shape_) / static_cast<std::size_t>(shape_.n_layers) / 2;
    const std::size_t at = half * static_cast<std::size_t>(block);
    const std::byte* p = in.data();
    for (std::size_t l = 0; l < k_.size(); ++l, p += 2 * half) {
        backend_->upload(*k_[l], at, p, half);
        backend_->upload(*v_[l], at, p + half, half);
    }
}

std::vector<std::span<std::byte>> KvStorage::block_spans(int32_t block) const {
    const std::size_t half =
        bytes_per_block(shape_) / static_cast<std::size_t>(shape_.n_layers) / 2;
    const std::size_t at = half * static_cast<std::size_t>(block);
    std::vector<std::span<std::byte>> out;
    out.reserve(2 * k_.size());
    for (std::size_t l = 0; l < k_.size(); ++l) {
        out.emplace_back(static_cast<std::byte*>(k_[l]->data()) + at, half);
        out.emplace_back(static_cast<std::byte*>(v_[l]->data()) + at, half);
    }
    return out;
}

void KvStorage::clear_rows(std::span<std::byte> block, int32_t rows) const {
    const std::size_t half =
        bytes_per_block(shape_) / static_cast<std::size_t>(shape_.n_layers) / 2;
    const std::size_t row = half / static_cast<std::size_t>(shape_.block_size);
    const std::size_t keep = row * static_cast<std::size_t>(rows);
    for (std::size_t at = 0; at + half <= block.size(); at += half)
        std::memset(block.data() + at + keep, 0, half - keep);
}

kernels::PagedKvLayer KvStorage::layer(int32_t l) const {
    kernels::PagedKvLayer p;
    p.k = k_[static_cast<size_t>(l)]->as<uint16_t>();
    p.v = v_[static_cast<size_t>(l)]->as<uint16_t>();
    p.n_blocks = n_blocks_;
    p.block_size = shape_.block_size;
    p.n_kv_heads = shape_.n_kv_heads;
    p.head_dim = shape_.head_dim;
    return p;
}

}  // namespace hearth
