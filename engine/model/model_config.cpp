#include "model/model_config.h"

#include <cmath>

#include "gguf/gguf_file.h"
#include "model/architectures.h"

namespace hearth {
namespace {

// Architectures Hearth runs, with what sets them apart from llama.
struct ArchInfo {
    std::string_view name;
    RopeStyle rope;
    bool qkv_bias;
    bool qk_norm;
    bool gemma;  // embedding scale, post-norms, GeGLU, query scale, sliding windows
};
constexpr ArchInfo kArchitectures[] = {
    {"llama", RopeStyle::Normal, false, false, false},
    {"qwen2", RopeStyle::Neox, true, false, false},
    {"qwen3", RopeStyle::Neox, false, true, false},
    {"phi3", RopeStyle::Neox, false, false, false},
    {"gemma2", RopeStyle::Neox, false, false, true},
    {"gemma3", RopeStyle::Neox, false, true, true},
};

// Gemma 2's and 3's keys, with llama.cpp's defaults: the sliding window (Gemma 2: 4096;
// Gemma 3: none without the key) and which layers have it (an array of bools, or a period
// n whose every n-th layer is global; Gemma 2: 2, Gemma 3: 6), the local layers' RoPE
// base (Gemma 2: the global one, scaled alike; Gemma 3: 10000, unscaled), the soft-caps
// (Gemma 2: 50 for attention scores, 30 for logits; Gemma 3: logits only, none by
// default), and the query scale (1/√head_dim; for the 27B models, which llama.cpp tells
// by their layer count, 1/√(n_embd / n_head)).
Result<void> read_gemma(const gguf::GgufFile& file, const std::string& p, ModelConfig& c) {
    const bool two = c.architecture == "gemma2";
    c.embedding_scale = true;
    c.post_norms = true;
    c.ffn = FfnActivation::GeGlu;
    const bool is_27b = c.n_layer == (two ? 46 : 62);
    c.query_scale = 1.0f / std::sqrt(static_cast<float>(is_27b ? c.n_embd / c.n_head : c.head_dim));
    c.attn_softcap = two ? 50.0f : 0.0f;
    c.final_softcap = two ? 30.0f : 0.0f;
    if (two) {
        if (auto v = file.get_f32(p + "attn_logit_softcapping")) c.attn_softcap = *v;
        c.tied_embeddings = true;  // llama.cpp reads the output from token_embd
        c.rope_freq_base_swa = c.rope_freq_base;
        c.rope_scaling_swa = true;
    }
    if (auto v = file.get_f32(p + "final_logit_softcapping")) c.final_softcap = *v;
    if (!(c.attn_softcap >= 0.0f) || !(c.final_softcap >= 0.0f))
        return make_error(p + "soft-capping values must not be negative");
    auto window = file.get_u64(p + "attention.sliding_window");
    if (!window && two) window = 4096;
    if (!window || *window == 0) return {};
    if (*window > (1ull << 31))
        return make_error(p + "attention.sliding_window has an invalid value");
    c.sliding_window = static_cast<int64_t>(*window);
    c.swa_layers.assign(static_cast<std::size_t>(c.n_layer), false);
    const std::string key = p + "attention.sliding_window_pattern";
    if (auto a = file.get_array(key)) {
        if (a->size() != static_cast<uint64_t>(c.n_layer))
            return make_error(key + " has " + std::to_string(a->size()) + " entries for " +
                              std::to_string(c.n_layer) + " layers");
        for (uint64_t l = 0; l < a->size(); ++l) {
            const auto b = a->at(l).as_bool();
            if (!b) return make_error(key + " is not an array of bools");
            c.swa_layers[static_cast<std::size_t>(l)] = *b;
        }
    } else {
        uint64_t period = two ? 2 : 6;
        if (file.find(key)) {
            const auto v = file.get_u64(key);
            if (!v || *v > (1ull << 31)) return make_error(key + " is not a valid period");
            period = *v;
        }
        for (int64_t l = 0; l < c.n_layer; ++l)
            c.swa_layers[static_cast<std::size_t>(l)] =
                period == 0 || static_cast<uint64_t>(l) % period < period - 1;
    }
    if (auto v = file.get_f32(p + "rope.freq_base_swa")) c.rope_freq_base_swa = *v;
    if (!(c.rope_freq_base_swa > 0.0f))
        return make_error(p + "rope.freq_base_swa must be positive");
    return {};
}

}  // namespace

bool is_supported_architecture(std::string_view architecture) {
    for (const ArchInfo& a : kArchitectures)
        if (a.name == architecture) return true;
    return false;
}

Result<ModelConfig> ModelConfig::from_gguf(const gguf::GgufFile& file) {
    ModelConfig c;
    const auto arch = file.get_string("general.architecture");
    if (!arch) return make_error("general.architecture is missing or not a string");
    c.architecture = std::string(*arch);
    const ArchInfo* info = nullptr;
    for (const ArchInfo& a : kArchitectures)
        if (a.name == c.architecture) info = &a;
    if (!info)
        return make_error("unsupported architecture \"" + c.architecture +
                          "\" (Hearth runs llama, qwen2, qwen3, phi3, gemma2 and gemma3 models)");
    c.rope_style = info->rope;
    c.has_qkv_bias = info->qkv_bias;
    c.qk_norm = info->qk_norm;
    if (auto n = file.get_string("general.name")) c.name = std::string(*n);

    const std::string p = c.architecture + ".";
    auto required = [&](const char* key, int64_t& out) -> Result<void> {
        const auto v = file.get_u64(p + key);
        if (!v) return make_error(p + key + " is missing or not an unsigned integer");
        if (*v == 0 || *v > (1ull << 31))
            return make_error(p + key + " has an invalid value " + std::to_string(*v));
        out = static_cast<int64_t>(*v);
        return {};
    };
    for (auto [key, out] :
         {std::pair{"context_length", &c.context_length}, std::pair{"embedding_length", &c.n_embd},
          std::pair{"block_count", &c.n_layer}, std::pair{"feed_forward_length", &c.n_ff},
          std::pair{"attention.head_count", &c.n_head}})
        if (auto r = required(key, *out); !r) return r.error();
    c.trained_context = c.context_length;

    c.n_head_kv = c.n_head;
    if (file.find(p + "attention.head_count_kv"))
        if (auto r = required("attention.head_count_kv", c.n_head_kv); !r) return r.error();
    if (c.n_head % c.n_head_kv != 0)
        return make_error(p + "attention.head_count " + std::to_string(c.n_head) +
                          " is not a multiple of head_count_kv " + std::to_string(c.n_head_kv));
    c.head_dim = c.n_embd / c.n_head;
    if (file.find(p + "attention.key_length"))
        if (auto r = required("attention.key_length", c.head_dim); !r) return r.error();
    if (c.head_dim % 2 != 0)
        return make_error("head dimension " + std::to_string(c.head_dim) + " is odd");
    if (auto v = file.get_u64(p + "attention.value_length");
        v && static_cast<int64_t>(*v) != c.head_dim)
        return make_error(p + "attention.value_length " + std::to_string(*v) +
                          " differs from the key length " + std::to_string(c.head_dim) +
                          " (not supported)");
    c.n_rot = c.head_dim;
    if (file.find(p + "rope.dimension_count"))
        if (auto r = required("rope.dimension_count", c.n_rot); !r) return r.error();
    if (c.n_rot > c.head_dim || c.n_rot % 2 != 0)
        return make_error(p + "rope.dimension_count " + std::to_string(c.n_rot) + " is invalid");

    if (auto v = file.get_f32(p + "attention.layer_norm_rms_epsilon")) c.rms_eps = *v;
    if (!(c.rms_eps > 0.0f))
        return make_error(p + "attention.layer_norm_rms_epsilon must be positive");
    if (auto v = file.get_f32(p + "rope.freq_base")) c.rope_freq_base = *v;
    if (!(c.rope_freq_base > 0.0f)) return make_error(p + "rope.freq_base must be positive");
    if (auto v = file.get_string(p + "rope.scaling.type")) c.rope_scaling_type = std::string(*v);
    if (auto v = file.get_f32(p + "rope.scaling.factor")) c.rope_scaling_factor = *v;
    if (auto v = file.get_u64(p + "rope.scaling.original_context_length"))
        c.rope_original_context = static_cast<int64_t>(*v);

    const auto* embd = file.find_tensor("token_embd.weight");
    if (!embd) return make_error("tensor token_embd.weight is missing");
    if (embd->ne[0] != c.n_embd)
        return make_error("tensor token_embd.weight has shape " + embd->shape_string() +
                          ", expected rows of " + std::to_string(c.n_embd));
    c.n_vocab = embd->ne[1];
    if (auto v = file.get_u64(p + "vocab_size"); v && static_cast<int64_t>(*v) != c.n_vocab)
        return make_error(p + "vocab_size " + std::to_string(*v) +
                          " disagrees with token_embd.weight " + embd->shape_string());
    c.tied_embeddings = file.find_tensor("output.weight") == nullptr;
    if (info->gemma) {
        if (auto r = read_gemma(file, p, c); !r) return r.error();
    }
    if (c.architecture == "phi3") {
        c.fused_gate_up = true;
        // Q scaled by 1/√head_dim before attention, as llama.cpp's phi3 graph. Its sliding
        // window key is ignored, as llama.cpp ignores it.
        c.query_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
        // LongRoPE (the 128k models): long and short frequency factors, one set chosen for
        // the context, and an attention factor on cos and sin.
        const bool has_long = file.find_tensor("rope_factors_long.weight") != nullptr;
        const bool has_short = file.find_tensor("rope_factors_short.weight") != nullptr;
        if (has_long != has_short)
            return make_error(
                "phi3 LongRoPE needs both rope_factors_long.weight and "
                "rope_factors_short.weight; the file has one of them");
        if (has_long) {
            const int64_t original =
                c.rope_original_context > 0 ? c.rope_original_context : c.context_length;
            c.rope_factors_tensor = c.context_length > original ? "rope_factors_long.weight"
                                                                : "rope_factors_short.weight";
            if (auto v = file.get_f32(p + "rope.scaling.attn_factor")) c.rope_attn_factor = *v;
            if (!std::isfinite(c.rope_attn_factor) || c.rope_attn_factor <= 0.0f)
                return make_error(p + "rope.scaling.attn_factor must be a positive number");
        }
    }
    return c;
}

}  // namespace hearth
