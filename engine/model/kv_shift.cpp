// LlamaModel::shift_kv: the context shift's move of KV rows, layer by layer (llama_model.h).
#include <algorithm>

#include "kv/kv_storage.h"
#include "model/llama_model.h"

namespace hearth {

std::string LlamaModel::shift_refusal() const {
    const std::string& scaling = config_.rope_scaling_type;
    if (!scaling.empty() && scaling != "none" && scaling != "linear")
        return "RoPE scaling '" + scaling +
               "' is not a rotation by the position, so its KV cannot be moved";
    return {};
}

Result<void> LlamaModel::shift_kv(std::span<const int32_t> src_slots,
                                  std::span<const int32_t> dst_slots,
                                  std::span<const int32_t> deltas, KvStorage& kv) {
    if (pending_.active) return make_error("kv shift: a step is in flight");
    if (const std::string why = shift_refusal(); !why.empty())
        return make_error("kv shift: " + why);
    const std::size_t n = src_slots.size();
    if (dst_slots.size() != n || deltas.size() != n)
        return make_error("kv shift: the slot and delta lists differ in length");
    if (n == 0) return {};
    const auto limit = static_cast<int64_t>(kv.n_blocks()) * kv.block_size();
    for (std::size_t i = 0; i < n; ++i)
        if (src_slots[i] < 0 || src_slots[i] >= limit || dst_slots[i] < 0 ||
            dst_slots[i] >= limit || src_slots[i] == dst_slots[i])
            return make_error("kv shift: move " + std::to_string(i) + " has a bad slot");
    shift_staged_.clear();
    shift_staged_.insert(shift_staged_.end(), src_slots.begin(), src_slots.end());
    shift_staged_.insert(shift_staged_.end(), dst_slots.begin(), dst_slots.end());
    shift_staged_.insert(shift_staged_.end(), deltas.begin(), deltas.end());
    const std::size_t bytes = shift_staged_.size() * sizeof(int32_t);
    try {
        if (!shift_ints_ || shift_ints_->bytes() < bytes) {
            // An earlier shift's ops may still read the old buffer (a device's stream).
            backend_.synchronize();
            shift_ints_ = backend_.alloc(std::max<std::size_t>(bytes, 4096));
        }
        backend_.upload(*shift_ints_, 0, shift_staged_.data(), bytes);
        const int32_t* dev = shift_ints_->as<int32_t>();
        const auto m = static_cast<int32_t>(n);
        for (int32_t l = 0; l < static_cast<int32_t>(config_.n_layer); ++l)
            backend_.kv_shift(kv.layer(l), dev, dev + n, dev + 2 * n, m,
                              config_.is_swa(l) ? rope_swa_ : rope_);
    } catch (const kernels::BackendError& e) {
        return make_error(std::string("kv shift: ") + e.what());
    }
    return {};
}

}  // namespace hearth
