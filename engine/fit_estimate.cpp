#include "fit_estimate.h"

#include <algorithm>

#include "gguf/gguf_file.h"
#include "model/llama_model.h"
#include "model/model_config.h"

namespace hearth {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kAutoKvCapBytes = 1024 * kMiB;

}  // namespace

KvSizing kv_cache_sizing(const KvShape& shape, std::int64_t context_length, std::size_t kv_mb) {
    KvSizing s;
    s.per_block = KvStorage::bytes_per_block(shape);
    if (s.per_block == 0 || shape.block_size < 1) return s;
    std::size_t budget = kv_mb * kMiB;
    if (budget == 0) {
        const auto ctx_blocks = static_cast<std::size_t>(
            (std::max<std::int64_t>(context_length, 1) + shape.block_size - 1) / shape.block_size);
        budget = std::min(2 * ctx_blocks * s.per_block, kAutoKvCapBytes);
    }
    s.n_blocks = std::min<std::size_t>(budget / s.per_block, std::size_t{1} << 24);
    return s;
}

Result<ModelNeeds> model_needs(const gguf::GgufFile& file, std::int32_t max_step_tokens) {
    auto config = ModelConfig::from_gguf(file);
    if (!config) return make_error(config.message());
    ModelNeeds n;
    std::uint64_t embedding = 0;
    for (const auto& t : file.tensors()) {
        n.weight_bytes += static_cast<std::uint64_t>(t.nbytes);
        if (t.name == "token_embd.weight") embedding = static_cast<std::uint64_t>(t.nbytes);
    }
    // A token reads one row of the embedding table; a tied model reads all of it again as
    // its output layer.
    n.decode_bytes = config->tied_embeddings ? n.weight_bytes : n.weight_bytes - embedding;
    n.n_layer = static_cast<std::int32_t>(config->n_layer);
    n.n_head_kv = static_cast<std::int32_t>(config->n_head_kv);
    n.head_dim = static_cast<std::int32_t>(config->head_dim);
    n.context_length = config->context_length;
    n.activation_bytes = LlamaModel::scratch_bytes(*config, max_step_tokens, 1, 1, 0) +
                         static_cast<std::uint64_t>(config->n_vocab) * kTokenizerBytesPerToken;
    return n;
}

FitEstimate estimate_fit(const ModelNeeds& model, std::int64_t context, std::size_t kv_mb,
                         const MachineFacts& machine, std::int32_t block_size) {
    FitEstimate e;
    e.context = context > 0 ? context : model.context_length;
    const KvShape shape{model.n_layer, model.n_head_kv, model.head_dim, block_size};
    e.weight_bytes = model.weight_bytes;
    e.kv_bytes = kv_cache_sizing(shape, e.context, kv_mb).bytes();
    e.activation_bytes = model.activation_bytes;
    e.overhead_bytes = kAppOverheadBytes;
    e.total_bytes = e.weight_bytes + e.kv_bytes + e.activation_bytes + e.overhead_bytes;

    const double available = static_cast<double>(machine.ram_available);
    const double total = static_cast<double>(e.total_bytes);
    e.verdict = total <= kComfortableShare * available ? FitVerdict::Fits
                : total <= available                   ? FitVerdict::Tight
                                                       : FitVerdict::TooBig;
    if (machine.read_bytes_per_s > 0) {
        const std::uint64_t kv_per_token =
            KvStorage::bytes_per_block(shape) / static_cast<std::uint64_t>(std::max(block_size, 1));
        const double per_token = static_cast<double>(model.decode_bytes) +
                                 static_cast<double>(kv_per_token) *
                                     static_cast<double>(std::min(kTypicalChatTokens, e.context));
        if (per_token > 0) e.tokens_per_s = machine.read_bytes_per_s / per_token;
    }
    return e;
}

}  // namespace hearth
