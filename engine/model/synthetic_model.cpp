#include "model/synthetic_model.h"

#include <cmath>
#include <cstring>
#include <random>

#include "gguf/gguf_writer.h"
#include "quant/fp16.h"
#include "quant/quantize.h"

namespace hearth {
namespace {

using quant::TensorType;

// GPT-2's byte → unicode mapping, as the text of each byte token.
std::string byte_token_text(int b) {
    int cp = b;
    if (!((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF))) {
        int n = 0;
        for (int x = 0; x < b; ++x)
            if (!((x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE && x <= 0xFF)))
                ++n;
        cp = 256 + n;
    }
    std::string s;
    if (cp < 0x80) {
        s.push_back(static_cast<char>(cp));
    } else {
        s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
    return s;
}

struct Vocab {
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    std::vector<std::string> merges;
};

Vocab make_vocab() {
    Vocab v;
    for (const char* special : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}) {
        v.tokens.emplace_back(special);
        v.types.push_back(3);  // control
    }
    for (int b = 0; b < 256; ++b) {
        v.tokens.push_back(byte_token_text(b));
        v.types.push_back(1);
    }
    // A few merges of common English pairs ("Ġ" is the space byte's text).
    const std::string space = byte_token_text(' ');
    const std::vector<std::pair<std::string, std::string>> pairs = {
        {"t", "h"},   {"h", "e"},   {"i", "n"},  {"e", "r"}, {"a", "n"},
        {space, "t"}, {space, "a"}, {"o", "n"},  {"r", "e"}, {space + "t", "h"},
        {"th", "e"},  {space, "s"}, {"e", "n"},  {"o", "u"}, {space + "th", "e"},
        {"u", "ser"}, {"s", "er"},  {"as", "s"}, {"a", "s"}, {"ss", "istant"}};
    for (const auto& [a, b] : pairs) {
        // Only merges whose parts exist (in order) are kept.
        bool have_a = false, have_b = false;
        for (const std::string& t : v.tokens) have_a |= t == a, have_b |= t == b;
        if (!have_a || !have_b) continue;
        v.merges.push_back(a + " " + b);
        v.tokens.push_back(a + b);
        v.types.push_back(1);
    }
    return v;
}

class Weights {
  public:
    explicit Weights(uint32_t seed) : rng_(seed) {}

    std::vector<float> normal(int64_t n, float stddev) {
        std::normal_distribution<float> dist(0.0f, stddev);
        std::vector<float> out(static_cast<size_t>(n));
        for (float& x : out) x = dist(rng_);
        return out;
    }

  private:
    std::mt19937 rng_;
};

// Random blocks of `type` written directly (fast_random_blocks): random quant bits, the
// scales set so that elements have a standard deviation of about `stddev`.
Result<void> add_random_blocks(gguf::GgufWriter& w, const std::string& name, TensorType type,
                               int64_t cols, int64_t rows, float stddev, uint64_t seed) {
    const auto traits = quant::traits(type);
    if (!traits || cols % traits->block_elems != 0 || type == TensorType::F32 ||
        type == TensorType::BF16)
        return make_error("tensor " + name + ": no random blocks of type " +
                          std::string(quant::type_name(static_cast<uint32_t>(type))));
    const auto n_blocks = static_cast<size_t>(cols / traits->block_elems * rows);
    const auto block = static_cast<size_t>(traits->block_bytes);
    std::vector<std::byte> data(n_blocks * block);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;  // splitmix64
    const auto next = [&x] {
        uint64_t z = (x += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    for (size_t i = 0; i + 8 <= data.size(); i += 8) {
        const uint64_t r = next();
        std::memcpy(data.data() + i, &r, 8);
    }
    const auto put16 = [&](size_t at, float v) {
        const uint16_t h = quant::f32_to_fp16(v);
        std::memcpy(data.data() + at, &h, 2);
    };
    // Uniform levels over 2^bits steps have a deviation of about 2^bits / 3.5 steps.
    const auto step_for = [&](int bits) { return stddev * 3.5f / static_cast<float>(1 << bits); };
    for (size_t b = 0; b < n_blocks; ++b) {
        const size_t at = b * block;
        switch (type) {
            case TensorType::F16:  // sign, a small exponent, random mantissa
            {
                uint16_t h;
                std::memcpy(&h, data.data() + at, 2);
                const float mag = stddev * static_cast<float>(1 + (h & 0x3ff)) / 1024.0f * 1.7f;
                put16(at, (h & 0x8000) ? -mag : mag);
                break;
            }
            case TensorType::Q4_0:
            case TensorType::Q5_0:
            case TensorType::Q8_0:
                put16(at, step_for(type == TensorType::Q4_0   ? 4
                                   : type == TensorType::Q5_0 ? 5
                                                              : 8));
                break;
            case TensorType::Q4_1:
            case TensorType::Q5_1: {
                const int bits = type == TensorType::Q4_1 ? 4 : 5;
                put16(at, step_for(bits));
                put16(at + 2, -step_for(bits) * static_cast<float>(1 << (bits - 1)));
                break;
            }
            case TensorType::Q4_K:
            case TensorType::Q5_K: {
                // Sub-block scales and mins are random 6-bit values (mean ~32).
                const int bits = type == TensorType::Q4_K ? 4 : 5;
                put16(at, step_for(bits) / 32.0f);
                put16(at + 2, step_for(bits) * static_cast<float>(1 << (bits - 1)) / 32.0f);
                break;
            }
            case TensorType::Q6_K:  // d after ql, qh and 16 int8 scales (random: |sc| ~ 64)
                put16(at + 128 + 64 + 16, step_for(6) / 64.0f);
                break;
            case TensorType::Q2_K:  // 4-bit scales and mins (mean ~7.5); q 0..3 around m
                put16(at + 80, step_for(2) / 7.5f);
                put16(at + 82, step_for(2) * 1.5f);
                break;
            case TensorType::Q3_K:  // d after hmask, qs, scales (6-bit from −32: |sc| ~ 16)
                put16(at + 32 + 64 + 12, step_for(3) / 16.0f);
                break;
            case TensorType::IQ4_NL:  // the grid's values deviate by ~65
                put16(at, stddev / 65.0f);
                break;
            case TensorType::IQ4_XS:  // 6-bit scales from −32 (|ls| ~ 16) × the grid (~65)
                put16(at, stddev / (16.0f * 65.0f));
                break;
            default:
                break;
        }
    }
    const std::vector<int64_t> ne =
        rows == 1 ? std::vector<int64_t>{cols} : std::vector<int64_t>{cols, rows};
    return w.add_tensor(name, type, ne, data);
}

Result<void> add_matrix(gguf::GgufWriter& w, const std::string& name, TensorType type, int64_t cols,
                        int64_t rows, const std::vector<float>& values) {
    const auto traits = quant::traits(type);
    if (!traits || cols % traits->block_elems != 0)
        return make_error("tensor " + name + ": rows of " + std::to_string(cols) +
                          " do not fit type " +
                          std::string(quant::type_name(static_cast<uint32_t>(type))));
    std::vector<std::byte> data(
        static_cast<size_t>(cols / traits->block_elems * traits->block_bytes * rows));
    const size_t row_bytes = data.size() / static_cast<size_t>(rows);
    for (int64_t r = 0; r < rows; ++r)
        if (!quant::quantize(type, values.data() + r * cols,
                             data.data() + static_cast<size_t>(r) * row_bytes, cols))
            return make_error("cannot quantise " + name);
    const std::vector<int64_t> ne =
        rows == 1 ? std::vector<int64_t>{cols} : std::vector<int64_t>{cols, rows};
    return w.add_tensor(name, type, ne, data);
}

}  // namespace

int32_t synthetic_vocab_size() {
    return static_cast<int32_t>(make_vocab().tokens.size());
}

Result<std::vector<std::byte>> make_synthetic_model(const SyntheticModelSpec& s) {
    if (s.n_head % s.n_head_kv != 0 || (s.head_dim == 0 && s.n_embd % s.n_head != 0))
        return make_error("inconsistent head counts");
    Vocab vocab = make_vocab();
    for (auto i = static_cast<int32_t>(vocab.tokens.size()); i < s.padded_vocab; ++i) {
        vocab.tokens.push_back("<unused" + std::to_string(i) + ">");
        vocab.types.push_back(5);  // unused
    }
    const auto n_vocab = static_cast<int64_t>(vocab.tokens.size());
    const int64_t E = s.n_embd, D = s.head_dim > 0 ? s.head_dim : s.n_embd / s.n_head,
                  Q = s.n_head * D, KV = s.n_head_kv * D, F = s.n_ff;
    const std::string a = s.architecture;

    gguf::GgufWriter w;
    w.add_string("general.architecture", a);
    // Not the architecture's name: llama.cpp gives vocabularies of models named "phi3"
    // Phi-3's special tokens, which this one does not have.
    w.add_string("general.name",
                 a == "phi3" ? "Hearth synthetic (fused layout)" : "Hearth synthetic " + a);
    w.add_u32(a + ".context_length", static_cast<uint32_t>(s.context_length));
    w.add_u32(a + ".embedding_length", static_cast<uint32_t>(E));
    w.add_u32(a + ".block_count", static_cast<uint32_t>(s.n_layer));
    w.add_u32(a + ".feed_forward_length", static_cast<uint32_t>(F));
    w.add_u32(a + ".attention.head_count", static_cast<uint32_t>(s.n_head));
    w.add_u32(a + ".attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
    if (s.head_dim > 0) {
        w.add_u32(a + ".attention.key_length", static_cast<uint32_t>(D));
        w.add_u32(a + ".attention.value_length", static_cast<uint32_t>(D));
    }
    w.add_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
    if (s.attn_softcap > 0.0f) w.add_f32(a + ".attn_logit_softcapping", s.attn_softcap);
    if (s.final_softcap > 0.0f) w.add_f32(a + ".final_logit_softcapping", s.final_softcap);
    if ((a == "gemma2" || a == "gemma3") && s.sliding_window > 0) {
        w.add_u32(a + ".attention.sliding_window", static_cast<uint32_t>(s.sliding_window));
        w.add_u32(a + ".attention.sliding_window_pattern", static_cast<uint32_t>(s.swa_period));
        w.add_f32(a + ".rope.freq_base_swa", s.rope_freq_base_swa);
    }
    w.add_f32(a + ".rope.freq_base", s.rope_freq_base);
    if (s.longrope_original_context > 0) {
        w.add_u32(a + ".rope.scaling.original_context_length",
                  static_cast<uint32_t>(s.longrope_original_context));
        w.add_f32(a + ".rope.scaling.attn_factor", s.rope_attn_factor);
    }
    w.add_u32(a + ".vocab_size", static_cast<uint32_t>(n_vocab));
    w.add_string("tokenizer.ggml.model", "gpt2");
    w.add_string("tokenizer.ggml.pre", "smollm");
    w.add_strings("tokenizer.ggml.tokens", vocab.tokens);
    w.add_i32s("tokenizer.ggml.token_type", vocab.types);
    w.add_strings("tokenizer.ggml.merges", vocab.merges);
    w.add_u32("tokenizer.ggml.bos_token_id", 1);
    w.add_u32("tokenizer.ggml.eos_token_id", 2);
    w.add_bool("tokenizer.ggml.add_bos_token", false);
    w.add_string("tokenizer.chat_template",
                 !s.chat_template.empty()
                     ? s.chat_template
                     : "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
                       "message['content'] + "
                       "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ "
                       "'<|im_start|>assistant\\n' }}"
                       "{% endif %}");

    Weights rng(s.seed);
    uint64_t stream = 0;
    const auto matrix = [&](const std::string& name, TensorType type, int64_t cols, int64_t rows) {
        const float stddev = 1.0f / std::sqrt(static_cast<float>(cols));
        if (s.fast_random_blocks)
            return add_random_blocks(w, name, type, cols, rows, stddev,
                                     s.seed * 1000003u + ++stream);
        return add_matrix(w, name, type, cols, rows, rng.normal(cols * rows, stddev));
    };
    const auto norm = [&](const std::string& name, int64_t n) {
        std::vector<float> v = rng.normal(n, 0.1f);
        for (float& x : v) x += 1.0f;
        return add_matrix(w, name, TensorType::F32, n, 1, v);
    };
#define HEARTH_CHECK(expr) \
    if (auto r = (expr); !r) return r.error()
    if (s.fast_random_blocks) {
        HEARTH_CHECK(add_random_blocks(w, "token_embd.weight", s.embedding_type, E, n_vocab,
                                       s.embedding_std, s.seed));
    } else {
        HEARTH_CHECK(add_matrix(w, "token_embd.weight", s.embedding_type, E, n_vocab,
                                rng.normal(E * n_vocab, s.embedding_std)));
    }
    HEARTH_CHECK(norm("output_norm.weight", E));
    if (!s.tied_embeddings) {
        HEARTH_CHECK(matrix("output.weight", s.weight_type, E, n_vocab));
    }
    if (s.longrope_original_context > 0) {  // long factors 1..8, short ones 1..1.5
        std::vector<float> lf = rng.normal(D / 2, 1.0f), sf = rng.normal(D / 2, 1.0f);
        for (float& x : lf) x = 1.0f + 3.5f * (1.0f + std::tanh(x));
        for (float& x : sf) x = 1.0f + 0.25f * (1.0f + std::tanh(x));
        HEARTH_CHECK(add_matrix(w, "rope_factors_long.weight", TensorType::F32, D / 2, 1, lf));
        HEARTH_CHECK(add_matrix(w, "rope_factors_short.weight", TensorType::F32, D / 2, 1, sf));
    }
    for (int l = 0; l < s.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        HEARTH_CHECK(norm(p + "attn_norm.weight", E));
        HEARTH_CHECK(norm(p + "ffn_norm.weight", E));
        if (a == "phi3") {  // fused Q, K, V rows, and gate then up rows
            HEARTH_CHECK(matrix(p + "attn_qkv.weight", s.weight_type, E, Q + 2 * KV));
        } else {
            HEARTH_CHECK(matrix(p + "attn_q.weight", s.weight_type, E, Q));
            HEARTH_CHECK(matrix(p + "attn_k.weight", s.weight_type, E, KV));
            HEARTH_CHECK(matrix(p + "attn_v.weight", s.weight_type, E, KV));
        }
        HEARTH_CHECK(matrix(p + "attn_output.weight", s.weight_type, Q, E));
        if (a == "phi3") {
            HEARTH_CHECK(matrix(p + "ffn_up.weight", s.weight_type, E, 2 * F));
        } else {
            HEARTH_CHECK(matrix(p + "ffn_gate.weight", s.weight_type, E, F));
            HEARTH_CHECK(matrix(p + "ffn_up.weight", s.weight_type, E, F));
        }
        HEARTH_CHECK(matrix(p + "ffn_down.weight", s.weight_type, F, E));
        if (a == "qwen2") {
            HEARTH_CHECK(
                add_matrix(w, p + "attn_q.bias", TensorType::F32, Q, 1, rng.normal(Q, 0.1f)));
            HEARTH_CHECK(
                add_matrix(w, p + "attn_k.bias", TensorType::F32, KV, 1, rng.normal(KV, 0.1f)));
            HEARTH_CHECK(
                add_matrix(w, p + "attn_v.bias", TensorType::F32, KV, 1, rng.normal(KV, 0.1f)));
        }
        if (a == "qwen3" || a == "gemma3") {
            HEARTH_CHECK(norm(p + "attn_q_norm.weight", D));
            HEARTH_CHECK(norm(p + "attn_k_norm.weight", D));
        }
        if (a == "gemma2" || a == "gemma3") {
            HEARTH_CHECK(norm(p + "post_attention_norm.weight", E));
            HEARTH_CHECK(norm(p + "post_ffw_norm.weight", E));
        }
    }
#undef HEARTH_CHECK
    return w.bytes();
}

}  // namespace hearth
