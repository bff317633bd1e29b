// Random-weight GGUF models for fast tests without the real model: llama, qwen2 or
// qwen3 architecture, any supported weight type, a byte-level BPE vocabulary with ChatML
// control tokens and a few merges, and a ChatML template. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "quant/quant_types.h"

namespace hearth {

struct SyntheticModelSpec {
    std::string architecture = "llama";  // "qwen2" (q/k/v biases, neox RoPE), "qwen3"
                                         // (per-head q/k norms, neox RoPE), "gemma3"
                                         // (and post-norms, sliding windows), "gemma2"
                                         // (soft-caps), "phi3" (fused QKV and gate-up)
    int32_t n_embd = 64;
    int32_t n_layer = 2;
    int32_t n_head = 4;
    int32_t n_head_kv = 2;
    int32_t head_dim = 0;  // 0: n_embd / n_head; else written as attention.key_length
    // gemma3: the window and the period of its global layers (every swa_period-th layer;
    // written as attention.sliding_window_pattern), the local layers' RoPE base.
    int32_t sliding_window = 0;
    int32_t swa_period = 6;
    float rope_freq_base_swa = 10000.0f;
    // gemma2: soft-caps of the attention scores and the logits (0: keys not written).
    float attn_softcap = 0.0f;
    float final_softcap = 0.0f;
    // phi3 LongRoPE (0: none): rope.scaling.original_context_length, with random long and
    // short frequency factors (rope_factors_long/short) and rope.scaling.attn_factor.
    int32_t longrope_original_context = 0;
    float rope_attn_factor = 1.0f;
    int32_t n_ff = 96;
    int32_t context_length = 1024;
    float rope_freq_base = 10000.0f;
    quant::TensorType weight_type = quant::TensorType::F32;  // the projection matrices
    quant::TensorType embedding_type = quant::TensorType::F32;
    // The embeddings' standard deviation. Gemma multiplies them by √n_embd: 1/√n_embd keeps
    // its residual stream from being the input token alone (which makes a tied model
    // repeat it).
    float embedding_std = 1.0f;
    bool tied_embeddings = true;
    uint32_t seed = 1;
    // The chat template's text (empty: ChatML's).
    std::string chat_template;
    // Benchmark models (shapes of 1B-8B models, made in seconds): weights are random
    // quantised blocks written directly, with scales that keep activations finite, instead
    // of quantised normal floats; and the vocabulary is padded with unused tokens to this
    // size (0: the small synthetic vocabulary alone), so that the output layer costs what a
    // real model's does.
    bool fast_random_blocks = false;
    int32_t padded_vocab = 0;
};

// The complete GGUF file. Fails when a weight type's block size does not divide the
// row lengths (e.g. K-quants need n_embd and n_ff multiples of 256).
Result<std::vector<std::byte>> make_synthetic_model(const SyntheticModelSpec& spec);

// Number of tokens in the synthetic vocabulary (3 control tokens, 256 bytes, merges).
int32_t synthetic_vocab_size();

}  // namespace hearth
