// LlamaModel's layer: its weights and norm vectors in backend memory. Private to the
// model's own files (llama_model.cpp steps it, llama_load.cpp fills it from the file).
#pragma once

#include <memory>

#include "model/llama_model.h"

namespace hearth {

struct LlamaModel::Layer {
    std::unique_ptr<kernels::Buffer> attn_norm, ffn_norm;  // [n_embd] f32
    std::unique_ptr<kernels::Weight> wq, wk, wv, wo, gate, up, down;
    std::unique_ptr<kernels::Buffer> bq, bk, bv;      // qwen2 biases, else null
    std::unique_ptr<kernels::Buffer> q_norm, k_norm;  // qwen3/gemma3 per-head norms [head_dim]
    std::unique_ptr<kernels::Buffer> attn_post_norm, ffn_post_norm;  // gemma2/3 [n_embd]
};

}  // namespace hearth
