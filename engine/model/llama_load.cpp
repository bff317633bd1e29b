// LlamaModel::load: a GGUF file's tensors checked against the model's shape and copied into
// backend memory (weights, norm vectors, biases; Phi-3's fused matrices split by rows).
#include <cstring>
#include <vector>

#include "common/log.h"
#include "gguf/gguf_file.h"
#include "model/llama_layer.h"
#include "model/llama_model.h"
#include "quant/dequant.h"
#include "quant/quantize.h"

namespace hearth {

namespace {

using quant::TensorType;

// Finds a tensor and checks its shape (ne order, as in the file).
Result<const gguf::TensorInfo*> tensor(const gguf::GgufFile& f, const std::string& name,
                                       std::initializer_list<int64_t> ne) {
    const gguf::TensorInfo* t = f.find_tensor(name);
    if (!t) return make_error("tensor " + name + " is missing");
    bool ok = true;
    auto want = ne.begin();
    for (size_t d = 0; d < 4; ++d) ok = ok && t->ne[d] == (want != ne.end() ? *want++ : 1);
    if (!ok) {
        std::string expected = "[";
        for (int64_t v : ne) expected += (expected.size() > 1 ? ", " : "") + std::to_string(v);
        return make_error("tensor " + name + " has shape " + t->shape_string() + ", expected " +
                          expected + "]");
    }
    return t;
}

Result<std::unique_ptr<kernels::Weight>> weight(kernels::Backend& b, const gguf::GgufFile& f,
                                                const std::string& name, int64_t cols,
                                                int64_t rows) {
    auto t = tensor(f, name, {cols, rows});
    if (!t) return t.error();
    kernels::WeightSource src{name, (*t)->type, rows, cols, (*t)->data, true};
    return b.load_weight(src);
}

// Rows [row0, row0 + n) of a fused matrix (Phi-3's attn_qkv and gate-up ffn_up), as a
// weight of its own: the rows' bytes are contiguous, and each output is the same dot
// product as in the fused product.
Result<std::unique_ptr<kernels::Weight>> weight_rows(kernels::Backend& b, const gguf::TensorInfo& t,
                                                     const std::string& name, int64_t cols,
                                                     int64_t row0, int64_t n) {
    const int64_t row_bytes = quant::quantized_size(t.type, cols);
    if (row_bytes <= 0) return make_error("tensor " + name + " has a type Hearth cannot read");
    kernels::WeightSource src{name + " rows " + std::to_string(row0) + "+" + std::to_string(n),
                              t.type,
                              n,
                              cols,
                              t.data + row0 * row_bytes,
                              true};
    return b.load_weight(src);
}

// A vector tensor (norm weight, bias) as f32 in backend memory, whatever its file type.
Result<std::unique_ptr<kernels::Buffer>> vector(kernels::Backend& b, const gguf::GgufFile& f,
                                                const std::string& name, int64_t n) {
    auto t = tensor(f, name, {n});
    if (!t) return t.error();
    std::vector<float> host(static_cast<size_t>(n));
    if (!quant::dequantize((*t)->type, (*t)->data, host.data(), n))
        return make_error("tensor " + name + " has a type that cannot hold a vector");
    auto buf = b.alloc(host.size() * sizeof(float));
    b.upload(*buf, 0, host.data(), host.size() * sizeof(float));
    return buf;
}

// Moves a successful result into dst.
template <typename T>
Result<void> take(T& dst, Result<T> r) {
    if (!r) return r.error();
    dst = std::move(r).value();
    return {};
}

}  // namespace

// A device backend reports a failed allocation, copy or launch by throwing (backend.h):
// loading and stepping turn that into an error result, as a bad file is.
Result<std::unique_ptr<LlamaModel>> LlamaModel::load(const gguf::GgufFile& file,
                                                     kernels::Backend& backend) {
    try {
        return load_weights(file, backend);
    } catch (const kernels::BackendError& e) {
        return make_error(e.what());
    } catch (const std::invalid_argument& e) {
        return make_error(e.what());
    }
}

Result<std::unique_ptr<LlamaModel>> LlamaModel::load_weights(const gguf::GgufFile& file,
                                                             kernels::Backend& backend) {
    auto config = ModelConfig::from_gguf(file);
    if (!config) return config.error();
    const ModelConfig& c = *config;
    if (!c.rope_scaling_type.empty() && c.rope_scaling_type != "none" &&
        c.rope_scaling_type != "linear")
        return make_error("rope scaling \"" + c.rope_scaling_type +
                          "\" is not supported (none and linear are)");

    std::unique_ptr<LlamaModel> m(new LlamaModel(c, backend));
    const int64_t E = c.n_embd, D = c.head_dim, Q = c.n_head * D, KV = c.n_head_kv * D, F = c.n_ff;

#define HEARTH_TRY(dst, expr) \
    if (auto taken = take(dst, expr); !taken) return taken.error()

    HEARTH_TRY(m->token_embd_, weight(backend, file, "token_embd.weight", E, c.n_vocab));
    if (!c.tied_embeddings) {
        HEARTH_TRY(m->output_, weight(backend, file, "output.weight", E, c.n_vocab));
    }
    HEARTH_TRY(m->output_norm_, vector(backend, file, "output_norm.weight", E));
    if (file.find_tensor("rope_freqs.weight")) {
        HEARTH_TRY(m->rope_freqs_, vector(backend, file, "rope_freqs.weight", c.n_rot / 2));
    } else if (!c.rope_factors_tensor.empty()) {  // Phi-3 LongRoPE: long or short factors
        HEARTH_TRY(m->rope_freqs_, vector(backend, file, c.rope_factors_tensor, c.n_rot / 2));
    }
    m->layers_.resize(static_cast<size_t>(c.n_layer));
    for (int64_t l = 0; l < c.n_layer; ++l) {
        Layer& L = m->layers_[static_cast<size_t>(l)];
        const std::string p = "blk." + std::to_string(l) + ".";
        HEARTH_TRY(L.attn_norm, vector(backend, file, p + "attn_norm.weight", E));
        HEARTH_TRY(L.ffn_norm, vector(backend, file, p + "ffn_norm.weight", E));
        if (file.find_tensor(p + "attn_qkv.weight")) {  // Phi-3: Q, K and V fused
            auto qkv = tensor(file, p + "attn_qkv.weight", {E, Q + 2 * KV});
            if (!qkv) return qkv.error();
            HEARTH_TRY(L.wq, weight_rows(backend, **qkv, p + "attn_qkv.weight", E, 0, Q));
            HEARTH_TRY(L.wk, weight_rows(backend, **qkv, p + "attn_qkv.weight", E, Q, KV));
            HEARTH_TRY(L.wv, weight_rows(backend, **qkv, p + "attn_qkv.weight", E, Q + KV, KV));
        } else {
            HEARTH_TRY(L.wq, weight(backend, file, p + "attn_q.weight", E, Q));
            HEARTH_TRY(L.wk, weight(backend, file, p + "attn_k.weight", E, KV));
            HEARTH_TRY(L.wv, weight(backend, file, p + "attn_v.weight", E, KV));
        }
        HEARTH_TRY(L.wo, weight(backend, file, p + "attn_output.weight", Q, E));
        if (c.fused_gate_up) {  // the gate's rows first (ggml_swiglu)
            auto up = tensor(file, p + "ffn_up.weight", {E, 2 * F});
            if (!up) return up.error();
            HEARTH_TRY(L.gate, weight_rows(backend, **up, p + "ffn_up.weight", E, 0, F));
            HEARTH_TRY(L.up, weight_rows(backend, **up, p + "ffn_up.weight", E, F, F));
        } else {
            HEARTH_TRY(L.gate, weight(backend, file, p + "ffn_gate.weight", E, F));
            HEARTH_TRY(L.up, weight(backend, file, p + "ffn_up.weight", E, F));
        }
        HEARTH_TRY(L.down, weight(backend, file, p + "ffn_down.weight", F, E));
        if (c.has_qkv_bias) {
            HEARTH_TRY(L.bq, vector(backend, file, p + "attn_q.bias", Q));
            HEARTH_TRY(L.bk, vector(backend, file, p + "attn_k.bias", KV));
            HEARTH_TRY(L.bv, vector(backend, file, p + "attn_v.bias", KV));
        }
        if (c.qk_norm) {
            HEARTH_TRY(L.q_norm, vector(backend, file, p + "attn_q_norm.weight", D));
            HEARTH_TRY(L.k_norm, vector(backend, file, p + "attn_k_norm.weight", D));
        }
        if (c.post_norms) {
            HEARTH_TRY(L.attn_post_norm,
                       vector(backend, file, p + "post_attention_norm.weight", E));
            HEARTH_TRY(L.ffn_post_norm, vector(backend, file, p + "post_ffw_norm.weight", E));
        }
    }
#undef HEARTH_TRY

    m->rope_.n_rot = static_cast<int>(c.n_rot);
    m->rope_.neox = c.rope_style == RopeStyle::Neox;
    m->rope_.freq_base = c.rope_freq_base;
    m->rope_.freq_scale = c.rope_scaling_type == "linear" && c.rope_scaling_factor > 0
                              ? 1.0f / c.rope_scaling_factor
                              : 1.0f;
    m->rope_.freq_factors = m->rope_freqs_ ? m->rope_freqs_->as<float>() : nullptr;
    m->rope_.attn_factor = c.rope_attn_factor;
    m->rope_swa_ = m->rope_;  // llama.cpp: the local base, scaled only for Gemma 2
    m->rope_swa_.freq_base = c.rope_freq_base_swa;
    if (!c.rope_scaling_swa) m->rope_swa_.freq_scale = 1.0f;
    log::get("model")->info("loaded {} ({} layers, {} embd, {} heads / {} kv) on {}",
                            c.architecture, c.n_layer, c.n_embd, c.n_head, c.n_head_kv,
                            backend.name());
    return m;
}

}  // namespace hearth
