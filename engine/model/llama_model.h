// The llama-family forward pass (llama: SmolLM2, Llama 3.x, Mistral, TinyLlama; qwen2),
// written once against the kernels::Backend op set, over a paged KV cache.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backend.h"
#include "common/result.h"
#include "model/model_config.h"

namespace hearth::gguf {
class GgufFile;
}

namespace hearth {

class KvStorage;

// One sequence's share of a forward step: `tokens` are appended at positions
// [start_pos, start_pos + tokens.size()); the first start_pos tokens are already in the
// cache. block_table covers all start_pos + tokens.size() positions.
struct SequenceStep {
    std::span<const int32_t> tokens;
    int32_t start_pos = 0;
    std::span<const int32_t> block_table;
    bool want_logits = true;  // logits of the last token of this step
};

class LlamaModel {
  public:
    // Validates every tensor's presence, type and shape (errors name the tensor) and
    // prepares the weights on the backend. The file must outlive the model.
    static Result<std::unique_ptr<LlamaModel>> load(const gguf::GgufFile& file,
                                                    kernels::Backend& backend);
    ~LlamaModel();

    const ModelConfig& config() const { return config_; }

    // Batch-invariant numerics (kernels::AttentionBatch::batch_invariant): every token's
    // results independent of the step that computed it, as the shared prefix cache needs.
    // Off (the default): llama.cpp's orders of summation, bit for bit on the CPU backend.
    void set_batch_invariant(bool on) { batch_invariant_ = on; }
    bool batch_invariant() const { return batch_invariant_; }
    kernels::Backend& backend() { return backend_; }

    // Runs one step over several sequences. `logits` receives n_vocab floats for each
    // sequence with want_logits, in order. Errors: a step that does not fit the cache or
    // the context (never partially applied to the cache metadata; the caller decides).
    Result<void> forward(std::span<const SequenceStep> seqs, KvStorage& kv,
                         std::vector<float>& logits);

    // Device bytes of the scratch a step of n_tokens tokens and n_logits logit rows needs
    // (activations, logits, index arrays): what ensure_scratch allocates for it.
    static std::uint64_t scratch_bytes(const ModelConfig& config, int32_t n_tokens,
                                       int32_t n_logits, int32_t n_seqs, int32_t table_ints);

  private:
    struct Layer;
    LlamaModel(const ModelConfig& config, kernels::Backend& backend);
    void ensure_scratch(int32_t n_tokens, int32_t n_logits, std::size_t n_index_ints);
    static Result<std::unique_ptr<LlamaModel>> load_weights(const gguf::GgufFile& file,
                                                            kernels::Backend& backend);
    Result<void> run_forward(std::span<const SequenceStep> seqs, KvStorage& kv,
                             std::vector<float>& logits);

    ModelConfig config_;
    kernels::Backend& backend_;
    std::unique_ptr<kernels::Weight> token_embd_;
    std::unique_ptr<kernels::Weight> output_;  // null when tied to token_embd
    std::unique_ptr<kernels::Buffer> output_norm_;
    std::unique_ptr<kernels::Buffer> rope_freqs_;  // null unless the file has rope_freqs
    std::vector<Layer> layers_;
    kernels::RopeParams rope_;
    bool batch_invariant_ = false;

    // Scratch activations, grown on demand.
    int32_t scratch_tokens_ = 0;
    int32_t scratch_logits_ = 0;
    std::size_t scratch_ints_ = 0;
    std::unique_ptr<kernels::Buffer> x_, h_, q_, k_, v_, attn_, gate_, up_, sel_, logits_, ints_;

    // A step's index arrays on the host, kept between steps so that a step allocates
    // nothing once the shapes have been seen: ids | positions | slots | q_start | q_len |
    // kv_len | bt_start | logit_rows | tables, staged into one array and uploaded in one
    // copy. The staged array also gives the attention planner its host view.
    struct StepIndex {
        std::vector<int32_t> ids, pos, kv_slots, q_start, q_len, kv_len, bt_start, logit_rows,
            tables, staged;
    };
    StepIndex step_;
};

}  // namespace hearth
