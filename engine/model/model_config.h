// Hyperparameters of a llama-family model, read from GGUF metadata and validated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace hearth::gguf {
class GgufFile;
}

namespace hearth {

enum class RopeStyle { Normal, Neox };
enum class FfnActivation { SwiGlu, GeGlu };  // silu(gate) · up, or gelu(gate) · up (Gemma)

struct ModelConfig {
    std::string architecture;  // "llama", "qwen2", "qwen3", "phi3", "gemma2", "gemma3"
    std::string name;          // general.name, may be empty
    // The context served (the model's own unless the engine was asked for less:
    // LlamaModel::set_context_length) and the one the model was trained for (the file's).
    int64_t context_length = 0;
    int64_t trained_context = 0;
    int64_t n_embd = 0;
    int64_t n_layer = 0;
    int64_t n_ff = 0;
    int64_t n_head = 0;
    int64_t n_head_kv = 0;
    int64_t head_dim = 0;  // attention.key_length or n_embd / n_head
    int64_t n_vocab = 0;
    int64_t n_rot = 0;  // rope.dimension_count or head_dim
    float rms_eps = 1e-5f;
    float rope_freq_base = 10000.0f;
    std::string rope_scaling_type;  // "", "none", "linear", "yarn"
    float rope_scaling_factor = 1.0f;
    int64_t rope_original_context = 0;
    RopeStyle rope_style = RopeStyle::Normal;
    bool tied_embeddings = false;  // no output.weight: logits use token_embd
    bool has_qkv_bias = false;     // qwen2
    bool qk_norm = false;          // qwen3, gemma3: each head's query and key RMS-normalised
    bool fused_gate_up = false;    // phi3: gate rows then up rows in one ffn_up matrix
    // Gemma 2 and 3: the embeddings times √n_embd, RMSNorms of the attention and FFN
    // outputs before their residual adds, GeGLU, and (Gemma, Phi-3) the queries scaled
    // before attention (whose scores are then not scaled again); 0 keeps 1/√head_dim in
    // the attention.
    bool embedding_scale = false;
    bool post_norms = false;
    FfnActivation ffn = FfnActivation::SwiGlu;
    float query_scale = 0.0f;
    // Sliding-window layers (swa_layers[l]) see only the last sliding_window positions and
    // rotate with their own RoPE base (no scaling); the others with rope_freq_base and the
    // file's RoPE scaling. Empty: no sliding windows.
    int64_t sliding_window = 0;
    std::vector<bool> swa_layers;
    float rope_freq_base_swa = 10000.0f;
    bool rope_scaling_swa = false;  // the local layers scale RoPE as the global ones (Gemma 2)
    // Gemma 2: attention scores → cap · tanh(score / cap) before the softmax, and the
    // logits likewise; 0: none.
    float attn_softcap = 0.0f;
    float final_softcap = 0.0f;
    // Phi-3 LongRoPE (the 128k models): the frequency factors to use, "rope_factors_long"
    // or "rope_factors_short" (empty: none), and the factor cos and sin are scaled by.
    // As llama.cpp: the long ones when the context (Hearth serves the model's whole
    // context_length) is longer than rope.scaling.original_context_length.
    std::string rope_factors_tensor;
    float rope_attn_factor = 1.0f;
    bool is_swa(int64_t layer) const {
        return layer >= 0 && layer < static_cast<int64_t>(swa_layers.size()) &&
               swa_layers[static_cast<std::size_t>(layer)];
    }

    // Reads and checks the configuration; errors name the missing or bad key.
    static Result<ModelConfig> from_gguf(const gguf::GgufFile& file);
};

}  // namespace hearth
