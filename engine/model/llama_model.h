// The llama-family forward pass (llama: SmolLM2, Llama 3.x, Mistral, TinyLlama; qwen2),
// written once against the kernels::Backend op set, over a paged KV cache.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend.h"
#include "common/result.h"
#include "model/model_config.h"
#include "model/step_graph.h"

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
    // With a top-k step (StepLogits::top_k > 0): tokens whose raw logits the step also
    // returns for each of its logit rows (the ones a sampler's penalties change), each in
    // [0, n_vocab).
    std::span<const int32_t> pick;
    // With want_logits: logit rows for the last n_logits tokens of this step, in order (1:
    // the last token only; more: a speculative step's draft tokens, each row verifying the
    // next), 1 ≤ n_logits ≤ tokens.size().
    int32_t n_logits = 1;
};

// What a step returns for its logit rows (the sequences with want_logits, in order, each
// with its n_logits rows).
// Whole rows (top_k == 0): n_vocab floats per row, downloaded in full. Top-k: the k best
// logits of each row as Backend::top_k gives them, each row's first invalid index, and
// the raw logits of the rows' `pick` tokens: a few values per row instead of the
// vocabulary, so that a device backend's logits stay on the device (one small download).
struct StepLogits {
    int32_t top_k = 0;              // set by the caller: 0 or 1..Backend::kMaxTopK
    std::vector<float> rows;        // top_k == 0: [L, n_vocab]
    std::vector<int32_t> top_ids;   // top_k > 0: [L, top_k]
    std::vector<float> top_values;  // [L, top_k]
    std::vector<int32_t> invalid;   // [L]: first NaN/+Inf of the row, -1 when none
    std::vector<float> picked;      // the rows' pick values, concatenated in order
};

class LlamaModel {
  public:
    // Validates every tensor's presence, type and shape (errors name the tensor) and
    // prepares the weights on the backend. The file must outlive the model.
    static Result<std::unique_ptr<LlamaModel>> load(const gguf::GgufFile& file,
                                                    kernels::Backend& backend);
    ~LlamaModel();

    const ModelConfig& config() const { return config_; }
    // Serves a context of n tokens (2 ≤ n ≤ the trained context): less KV memory, and
    // prompts and replies are held to it. The weights and RoPE are as trained (Phi-3
    // LongRoPE keeps the factors the trained context chose, so that KV kept on disk stays
    // valid whatever context is served).
    Result<void> set_context_length(int64_t n);

    // Batch-invariant numerics (kernels::AttentionBatch::batch_invariant): every token's
    // results independent of the step that computed it, as the shared prefix cache needs.
    // Off (the default): llama.cpp's orders of summation, bit for bit on the CPU backend.
    void set_batch_invariant(bool on);
    bool batch_invariant() const { return batch_invariant_; }
    kernels::Backend& backend() { return backend_; }
    // The matrices a step multiplies by, in the order a step reads them (the layers', then
    // the output's): what Backend::choose_kernels times.
    std::vector<const kernels::Weight*> matmul_weights() const;
    // Step graphs (model/step_graph.h), where the backend supports them: each decode shape
    // is captured once and replayed, one launch per step instead of one per op. On by
    // default; the same results either way. If a capture fails, they turn off (logged).
    void set_step_graphs(bool on);
    bool step_graphs() const { return graphs_on_ && backend_.supports_graphs(); }
    int64_t graph_replays() const { return graph_replays_; }

    // Runs one step over several sequences. `logits` receives n_vocab floats for each
    // sequence with want_logits, in order. Errors: a step that does not fit the cache or
    // the context (never partially applied to the cache metadata; the caller decides).
    Result<void> forward(std::span<const SequenceStep> seqs, KvStorage& kv,
                         std::vector<float>& logits);
    // The same step returning `out` (its top_k chooses whole rows or the best few).
    // Reuses out's vectors, so that a step allocates nothing once shapes have been seen.
    // launch() then collect().
    Result<void> forward(std::span<const SequenceStep> seqs, KvStorage& kv, StepLogits& out);

    // A step in two halves. launch() stages and issues it, its results already on their
    // way back (Backend::read_back), and returns without waiting: on an asynchronous
    // backend the device runs the step while the host does other work (the scheduler
    // plans its next step and the engine delivers the last step's tokens). collect() waits
    // for the results and fills `out` (whole rows when top_k was 0, else the best top_k of
    // each row and the picks). One step at a time: launch() with a step in flight is an
    // error. The sequences' spans are read during launch() only. An error from launch()
    // issued nothing that needs collecting; one from collect() ends the step.
    Result<void> launch(std::span<const SequenceStep> seqs, KvStorage& kv, int32_t top_k);
    Result<void> collect(StepLogits& out);
    bool in_flight() const { return pending_.active; }

    // A context shift (kv/lineage.h) in every layer: for each i, the KV row in slot
    // dst_slots[i] becomes the one in src_slots[i], its K rotated by deltas[i] positions with
    // the layer's own RoPE (a sliding-window layer's base) — Backend::kv_shift. Issued on the
    // backend's stream like a step's ops; not while a step is in flight. Errors: a device
    // failure, or a step in flight.
    Result<void> shift_kv(std::span<const int32_t> src_slots, std::span<const int32_t> dst_slots,
                          std::span<const int32_t> deltas, KvStorage& kv);
    // Why moving K by a position delta would not give K at the new position for this model
    // (RoPE whose angle is not linear in the position, such as YaRN's ramps); empty when it
    // does: every model Hearth loads today (plain, linear, Llama 3's factors, Phi-3's
    // LongRoPE factors fixed at load, Gemma's local bases per layer).
    std::string shift_refusal() const;

    // Allocates the activations of a step of up to n_tokens tokens now (the engine's
    // largest step, at model load), so that the first prompt does not allocate them or
    // take their first-touch page faults. Steps still grow them when they need more.
    void reserve_activations(int32_t n_tokens) { ensure_scratch(n_tokens, 1, 0); }

    // Device bytes of the scratch a step of n_tokens tokens and n_logits logit rows needs
    // (activations, logits, index arrays, top-k results with kMaxTopK candidates and as
    // many picks per row): what ensure_scratch allocates for it.
    static std::uint64_t scratch_bytes(const ModelConfig& config, int32_t n_tokens,
                                       int32_t n_logits, int32_t n_seqs, int32_t table_ints);

  private:
    struct Layer;
    LlamaModel(const ModelConfig& config, kernels::Backend& backend);
    void ensure_scratch(int32_t n_tokens, int32_t n_logits, std::size_t n_index_ints);
    static Result<std::unique_ptr<LlamaModel>> load_weights(const gguf::GgufFile& file,
                                                            kernels::Backend& backend);
    Result<void> run_launch(std::span<const SequenceStep> seqs, KvStorage& kv, int32_t top_k);
    // The ops of a step after the index upload: the layers, then the logit rows reduced to
    // what `out` asks for (whole rows, or top-k and picks into top_). Recorded as they are
    // into a step graph.
    void issue_step(const kernels::AttentionBatch& batch, KvStorage& kv, int32_t n_tokens,
                    const std::array<size_t, 10>& at, int32_t n_logits, int32_t n_picks,
                    int32_t top_k);
    // Starts reading the step's results back (one copy): n_picks were computed, the first
    // n_real_picks asked for (the rest pad a graph's shape). collect() unpacks them.
    void read_back(int32_t n_logits, int32_t n_picks, int32_t n_real_picks, int32_t top_k);
    // Forgets every captured graph (their buffers are about to change).
    void drop_graphs();

    ModelConfig config_;
    kernels::Backend& backend_;
    std::unique_ptr<kernels::Weight> token_embd_;
    std::unique_ptr<kernels::Weight> output_;  // null when tied to token_embd
    std::unique_ptr<kernels::Buffer> output_norm_;
    std::unique_ptr<kernels::Buffer> rope_freqs_;  // null unless the file has rope_freqs
    std::vector<Layer> layers_;
    kernels::RopeParams rope_;
    kernels::RopeParams rope_swa_;  // sliding-window layers' (Gemma 3)
    bool batch_invariant_ = false;

    // Scratch activations, grown on demand.
    int32_t scratch_tokens_ = 0;
    int32_t scratch_logits_ = 0;
    std::size_t scratch_ints_ = 0;
    std::unique_ptr<kernels::Buffer> x_, h_, q_, k_, v_, attn_, gate_, up_, sel_, logits_, ints_;
    // Top-k results, one buffer so that they come back in one copy:
    //   ids[L·k] | invalid[L] | values[L·k] | picked[P]   (32-bit words)
    std::unique_ptr<kernels::Buffer> top_;
    std::size_t top_words_ = 0;
    std::unique_ptr<kernels::Buffer> shift_ints_;  // shift_kv's src | dst | deltas
    std::vector<int32_t> shift_staged_;

    // The step launched and not yet collected: its shape, and where its results arrive.
    struct Pending {
        bool active = false;
        int32_t n_logits = 0, n_picks = 0, n_real_picks = 0, top_k = 0;
        const void* results = nullptr;  // null when the step has no logit rows
    };
    Pending pending_;

    // A step's index arrays on the host, kept between steps so that a step allocates
    // nothing once the shapes have been seen: ids | positions | slots | q_start | q_len |
    // kv_len | bt_start | logit_rows | picks | tables, staged into one array and uploaded in one
    // copy. The staged array also gives the attention planner its host view.
    struct StepIndex {
        std::vector<int32_t> ids, pos, kv_slots, q_start, q_len, kv_len, bt_start, logit_rows,
            picks, tables, staged;
    };
    StepIndex step_;

    // Step graphs by key, and what they were captured against.
    bool graphs_on_ = true;
    std::map<StepGraphKey, int32_t> graphs_;
    std::uint64_t graph_kv_ = 0;  // a hash of the KV layers' addresses they were captured on
    int64_t graph_replays_ = 0;
};

}  // namespace hearth
