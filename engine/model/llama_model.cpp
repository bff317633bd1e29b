#include "model/llama_model.h"

#include <algorithm>
#include <array>

#include <cmath>
#include <cstring>
#include <limits>

#include "common/log.h"
#include "kv/kv_storage.h"
#include "model/llama_layer.h"

namespace hearth {

LlamaModel::LlamaModel(const ModelConfig& config, kernels::Backend& backend)
    : config_(config), backend_(backend) {}
LlamaModel::~LlamaModel() {
    if (pending_.active) {
        try {
            backend_.synchronize();  // a step still writing into buffers about to be freed
        } catch (const kernels::BackendError&) {  // NOLINT(bugprone-empty-catch): moot now
        }
    }
    drop_graphs();
}

std::vector<const kernels::Weight*> LlamaModel::matmul_weights() const {
    std::vector<const kernels::Weight*> w;
    for (const Layer& l : layers_)
        for (const auto* p : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down})
            if (*p) w.push_back(p->get());
    w.push_back(output_ ? output_.get() : token_embd_.get());
    return w;
}

Result<void> LlamaModel::forward(std::span<const SequenceStep> seqs, KvStorage& kv,
                                 std::vector<float>& logits) {
    // Whole rows, into the caller's vector (its capacity is kept across steps).
    StepLogits out;
    out.rows.swap(logits);
    auto r = forward(seqs, kv, out);
    logits.swap(out.rows);
    return r;
}

Result<void> LlamaModel::forward(std::span<const SequenceStep> seqs, KvStorage& kv,
                                 StepLogits& out) {
    if (auto r = launch(seqs, kv, out.top_k); !r) return r;
    return collect(out);
}

Result<void> LlamaModel::set_context_length(int64_t n) {
    if (n < 2 || n > config_.trained_context)
        return make_error("a context of " + std::to_string(n) +
                          " tokens: this model was trained for " +
                          std::to_string(config_.trained_context) +
                          " (a longer one is not supported; a shorter one of at least 2 is)");
    config_.context_length = n;
    return {};
}

Result<void> LlamaModel::launch(std::span<const SequenceStep> seqs, KvStorage& kv, int32_t top_k) {
    if (pending_.active) return make_error("a step is already in flight (collect it first)");
    if (top_k < 0 || top_k > kernels::Backend::kMaxTopK)
        return make_error("top-k logits: k = " + std::to_string(top_k) + " is outside 0.." +
                          std::to_string(kernels::Backend::kMaxTopK));
    try {
        return run_launch(seqs, kv, top_k);
    } catch (const kernels::BackendError& e) {
        // Whatever was issued before the failure ends (or fails) before anything else runs.
        try {
            backend_.synchronize();
        } catch (const kernels::BackendError&) {  // NOLINT(bugprone-empty-catch): reported
        }
        return make_error(e.what());
    }
}

Result<void> LlamaModel::collect(StepLogits& out) {
    if (!pending_.active) return make_error("no step in flight");
    const Pending p = pending_;
    pending_ = {};
    try {
        backend_.synchronize();
    } catch (const kernels::BackendError& e) {
        return make_error(e.what());
    }
    const auto L = static_cast<size_t>(p.n_logits);
    const auto V = static_cast<size_t>(config_.n_vocab);
    const auto K = static_cast<size_t>(p.top_k);
    out.top_k = p.top_k;
    if (K == 0) {
        for (auto* v : {&out.top_ids, &out.invalid}) v->clear();
        for (auto* v : {&out.top_values, &out.picked}) v->clear();
        out.rows.resize(L * V);
        if (L > 0) std::memcpy(out.rows.data(), p.results, L * V * sizeof(float));
        return {};
    }
    const auto real = static_cast<size_t>(p.n_real_picks);
    out.rows.clear();
    out.top_ids.resize(L * K);
    out.top_values.resize(L * K);
    out.invalid.resize(L);
    out.picked.resize(real);
    if (L == 0) return {};
    const auto* h = static_cast<const std::uint32_t*>(p.results);
    std::memcpy(out.top_ids.data(), h, L * K * sizeof(int32_t));
    std::memcpy(out.invalid.data(), h + L * K, L * sizeof(int32_t));
    std::memcpy(out.top_values.data(), h + L * (K + 1), L * K * sizeof(float));
    // (No picks: picked is empty and its data() may be null, which memcpy must not see.)
    if (real > 0) std::memcpy(out.picked.data(), h + L * (2 * K + 1), real * sizeof(float));
    return {};
}

std::uint64_t LlamaModel::scratch_bytes(const ModelConfig& c, int32_t n_tokens, int32_t n_logits,
                                        int32_t n_seqs, int32_t table_ints) {
    // The buffers of ensure_scratch, and the index arrays of forward.
    const auto u = [](int64_t v) { return static_cast<std::uint64_t>(std::max<int64_t>(v, 0)); };
    const std::uint64_t T = u(n_tokens), E = u(c.n_embd), D = u(c.head_dim), H = u(c.n_head),
                        HKV = u(c.n_head_kv), F = u(c.n_ff), V = u(c.n_vocab);
    const std::uint64_t per_token = 2 * E + H * D + 2 * HKV * D + std::max(H * D, E) + 2 * F;
    const std::uint64_t L = u(n_logits), K = kernels::Backend::kMaxTopK;
    const std::uint64_t floats = T * per_token + L * (E + V);
    const std::uint64_t ints = 3 * T + 4 * u(n_seqs) + L + L * K + u(table_ints);
    const std::uint64_t top = L * (2 * K + 1) + L * K;  // ids | invalid | values | picked
    return 4 * (floats + ints + top);
}

void LlamaModel::ensure_scratch(int32_t n_tokens, int32_t n_logits, std::size_t n_index_ints) {
    const auto f32 = [this](int64_t n) {
        return backend_.alloc_scratch(static_cast<std::size_t>(n) * sizeof(float));
    };
    // Step graphs point into these buffers: any that moves drops them first.
    if (n_tokens > scratch_tokens_ || n_logits > scratch_logits_ || n_index_ints > scratch_ints_)
        drop_graphs();
    if (n_tokens > scratch_tokens_) {
        const int64_t T = n_tokens, E = config_.n_embd, D = config_.head_dim;
        x_ = f32(T * E);
        h_ = f32(T * E);
        q_ = f32(T * config_.n_head * D);
        k_ = f32(T * config_.n_head_kv * D);
        v_ = f32(T * config_.n_head_kv * D);
        attn_ = f32(T * std::max(config_.n_head * D, E));
        gate_ = f32(T * config_.n_ff);
        up_ = f32(T * config_.n_ff);
        scratch_tokens_ = n_tokens;
    }
    if (n_logits > scratch_logits_) {
        sel_ = f32(int64_t{n_logits} * config_.n_embd);
        logits_ = f32(int64_t{n_logits} * config_.n_vocab);
        scratch_logits_ = n_logits;
    }
    if (n_index_ints > scratch_ints_) {
        // Doubling: the block tables at its end grow a block at a time as contexts do.
        const std::size_t n = std::max(n_index_ints, 2 * scratch_ints_);
        ints_ = backend_.alloc(n * sizeof(int32_t));
        scratch_ints_ = n;
    }
}

Result<void> LlamaModel::run_launch(std::span<const SequenceStep> seqs, KvStorage& kv,
                                    int32_t top_k) {
    // Host-side index arrays, uploaded in one buffer:
    //   ids[T] | positions[T] | slots[T] | q_start[S] | q_len[S] | kv_len[S] | bt_start[S] |
    //   logit_rows[L] | picks[P] | tables
    // picks are the flat indices (logit row · n_vocab + token) of the rows' pick tokens.
    const int32_t bs = kv.block_size();
    StepIndex& st = step_;
    auto& [ids, pos, slots, q_start, q_len, kv_len, bt_start, logit_rows, picks, tables, staged] =
        st;
    for (std::vector<int32_t>* v :
         {&ids, &pos, &slots, &q_start, &q_len, &kv_len, &bt_start, &logit_rows, &picks, &tables})
        v->clear();
    int32_t max_q = 0, max_kv = 0;
    for (const SequenceStep& s : seqs) {
        const auto n = static_cast<int32_t>(s.tokens.size());
        if (n == 0) return make_error("a sequence step has no tokens");
        const int64_t end = int64_t{s.start_pos} + n;
        if (end > config_.context_length)
            return make_error("the prompt needs " + std::to_string(end) +
                              " tokens but the model's context holds " +
                              std::to_string(config_.context_length));
        if (static_cast<int64_t>(s.block_table.size()) * bs < end)
            return make_error("block table too short for the sequence");
        q_start.push_back(static_cast<int32_t>(ids.size()));
        q_len.push_back(n);
        kv_len.push_back(static_cast<int32_t>(end));
        bt_start.push_back(static_cast<int32_t>(tables.size()));
        for (int32_t b : s.block_table) {
            if (b < 0 || b >= kv.n_blocks()) return make_error("block id out of range");
            tables.push_back(b);
        }
        for (int32_t i = 0; i < n; ++i) {
            const int32_t t = s.tokens[static_cast<size_t>(i)];
            if (t < 0 || t >= config_.n_vocab)
                return make_error("token id " + std::to_string(t) + " is outside the vocabulary");
            const int32_t p = s.start_pos + i;
            ids.push_back(t);
            pos.push_back(p);
            slots.push_back(s.block_table[static_cast<size_t>(p / bs)] * bs + p % bs);
        }
        if (s.want_logits && (s.n_logits < 1 || s.n_logits > n))
            return make_error("a sequence step asks for " + std::to_string(s.n_logits) +
                              " logit rows of its " + std::to_string(n) + " tokens");
        const int32_t rows = s.want_logits ? s.n_logits : 0;
        if (rows > 0 && top_k > 0 &&
            s.pick.size() > static_cast<size_t>(kernels::Backend::kMaxTopK))
            return make_error("top-k logits: more than " +
                              std::to_string(kernels::Backend::kMaxTopK) +
                              " picked tokens in a row");
        for (int32_t r = 0; r < rows; ++r) {
            if (top_k > 0) {
                const auto row = static_cast<int64_t>(logit_rows.size());
                for (int32_t t : s.pick) {
                    if (t < 0 || t >= config_.n_vocab)
                        return make_error("picked token id " + std::to_string(t) +
                                          " is outside the vocabulary");
                    picks.push_back(static_cast<int32_t>(row * config_.n_vocab + t));
                }
            }
            logit_rows.push_back(static_cast<int32_t>(ids.size()) - rows + r);
        }
        max_q = std::max(max_q, n);
        max_kv = std::max(max_kv, static_cast<int32_t>(end));
    }
    const auto T = static_cast<int32_t>(ids.size());
    const auto S = static_cast<int32_t>(seqs.size());
    const auto L = static_cast<int32_t>(logit_rows.size());
    if (T == 0) return make_error("empty forward step");

    if (int64_t{L} * config_.n_vocab > std::numeric_limits<int32_t>::max())
        return make_error("too many logit rows in one step");
    if (top_k > config_.n_vocab) return make_error("top-k logits: k exceeds the vocabulary");

    // A decode step on a backend with graphs runs its shape's graph (captured the first
    // time), its picks padded to the key's count (flat index 0: a real logit, unread).
    std::optional<StepGraphKey> key;
    if (step_graphs()) key = step_graph_key(seqs, top_k);
    const auto real_picks = static_cast<int32_t>(picks.size());
    if (key) picks.resize(static_cast<size_t>(key->picks), 0);

    staged.clear();
    std::array<size_t, 10> at{};
    size_t part_index = 0;
    for (const auto* part :
         {&ids, &pos, &slots, &q_start, &q_len, &kv_len, &bt_start, &logit_rows, &picks, &tables}) {
        at[part_index++] = staged.size();
        staged.insert(staged.end(), part->begin(), part->end());
    }
    ensure_scratch(T, std::max(L, 1), staged.size());
    const int32_t K = top_k;
    const auto P = static_cast<int32_t>(picks.size());
    kernels::Backend& b = backend_;
    if (L > 0 && K > 0) {
        // ids[L·k] | invalid[L] | values[L·k] | picked[P], computed on the backend, one copy.
        const auto words =
            static_cast<size_t>(L) * (2 * static_cast<size_t>(K) + 1) + static_cast<size_t>(P);
        if (words > top_words_) {
            drop_graphs();
            top_ = b.alloc(words * sizeof(std::uint32_t));
            top_words_ = words;
        }
    }
    b.upload(*ints_, 0, staged.data(), staged.size() * sizeof(int32_t));
    const int32_t* dev = ints_->as<int32_t>();

    kernels::AttentionBatch batch;
    batch.n_seqs = S;
    batch.q_start = dev + at[3];
    batch.q_len = dev + at[4];
    batch.kv_len = dev + at[5];
    batch.block_table_start = dev + at[6];
    batch.block_tables = dev + at[9];
    batch.host_q_start = staged.data() + at[3];
    batch.host_q_len = staged.data() + at[4];
    batch.host_kv_len = staged.data() + at[5];
    batch.max_q_len = max_q;
    batch.max_kv_len = max_kv;
    batch.batch_invariant = batch_invariant_;
    batch.softcap = config_.attn_softcap;

    bool replayed = false;
    if (key) {
        // The graphs write into the cache they were captured on: its layers' addresses.
        std::uint64_t sig = 1469598103934665603ull;
        const auto mix = [&sig](std::uintptr_t v) { sig = (sig ^ v) * 1099511628211ull; };
        mix(static_cast<std::uintptr_t>(kv.n_blocks()));
        for (int32_t l = 0; l < static_cast<int32_t>(layers_.size()); ++l) {
            const kernels::PagedKvLayer layer = kv.layer(l);
            mix(reinterpret_cast<std::uintptr_t>(layer.k));
            mix(reinterpret_cast<std::uintptr_t>(layer.v));
        }
        if (sig != graph_kv_) {
            drop_graphs();
            graph_kv_ = sig;
        }
        batch.chunk_bound = key->chunk_bound;
        try {
            auto graph = graphs_.find(*key);
            if (graph == graphs_.end()) {
                constexpr std::size_t kMaxGraphs = 64;  // shapes seen; past that, start again
                if (graphs_.size() >= kMaxGraphs) drop_graphs();
                b.begin_capture();
                issue_step(batch, kv, T, at, L, P, K);
                graph = graphs_.emplace(*key, b.end_capture()).first;
            }
            b.replay(graph->second);
            ++graph_replays_;
            replayed = true;
        } catch (const kernels::BackendError& e) {
            // A capture or a replay failed: op by op from now on, not retried at every step
            // of this shape; this step too (what a replay cut short wrote, its ops write
            // again; none of it was read yet). drop_graphs() ends a capture left open.
            drop_graphs();
            graphs_on_ = false;
            log::get("model")->warn("step graphs off, running op by op: {}", e.what());
        }
    }
    if (!replayed) {
        batch.chunk_bound = 0;
        issue_step(batch, kv, T, at, L, P, K);
    }
    read_back(L, P, real_picks, K);
    return {};
}

void LlamaModel::issue_step(const kernels::AttentionBatch& step_batch, KvStorage& kv,
                            int32_t n_tokens, const std::array<size_t, 10>& at, int32_t n_logits,
                            int32_t n_picks, int32_t top_k) {
    kernels::Backend& b = backend_;
    kernels::AttentionBatch batch = step_batch;
    const int32_t* dev = ints_->as<int32_t>();
    const int32_t T = n_tokens, L = n_logits;
    const ModelConfig& c = config_;
    const auto E = static_cast<int32_t>(c.n_embd), H = static_cast<int32_t>(c.n_head),
               HKV = static_cast<int32_t>(c.n_head_kv), D = static_cast<int32_t>(c.head_dim),
               F = static_cast<int32_t>(c.n_ff);
    float* x = x_->as<float>();
    float* h = h_->as<float>();
    float* q = q_->as<float>();
    float* k = k_->as<float>();
    float* v = v_->as<float>();
    float* attn = attn_->as<float>();
    float* gate = gate_->as<float>();
    float* up = up_->as<float>();
    // Gemma and Phi-3 scale the queries themselves and leave the scores unscaled.
    const float scale = c.query_scale > 0.0f ? 1.0f : 1.0f / std::sqrt(static_cast<float>(D));

    b.embed(*token_embd_, dev + at[0], T, x);
    if (c.embedding_scale) b.scale(x, int64_t{T} * E, std::sqrt(static_cast<float>(E)));
    for (int32_t l = 0; l < static_cast<int32_t>(layers_.size()); ++l) {
        const Layer& ly = layers_[static_cast<size_t>(l)];
        const kernels::PagedKvLayer cache = kv.layer(l);
        const bool swa = c.is_swa(l);
        const kernels::RopeParams& rope = swa ? rope_swa_ : rope_;
        batch.window = swa ? static_cast<int32_t>(c.sliding_window) : 0;
        batch.chunk_bound = kernels::layer_chunk_bound(step_batch.chunk_bound, batch.window);
        b.rms_norm(x, ly.attn_norm->as<float>(), T, E, c.rms_eps, h);
        b.matmul(*ly.wq, h, T, q, ly.bq ? ly.bq->as<float>() : nullptr);
        b.matmul(*ly.wk, h, T, k, ly.bk ? ly.bk->as<float>() : nullptr);
        b.matmul(*ly.wv, h, T, v, ly.bv ? ly.bv->as<float>() : nullptr);
        if (ly.q_norm) {  // qwen3, gemma3: each head's vector, before RoPE
            b.rms_norm(q, ly.q_norm->as<float>(), T * H, D, c.rms_eps, q);
            b.rms_norm(k, ly.k_norm->as<float>(), T * HKV, D, c.rms_eps, k);
        }
        b.rope(q, dev + at[1], T, H, D, rope);
        b.rope(k, dev + at[1], T, HKV, D, rope);
        if (c.query_scale > 0.0f) b.scale(q, int64_t{T} * H * D, c.query_scale);
        b.kv_append(cache, k, v, dev + at[2], T);
        b.attention(q, cache, batch, H, scale, attn);
        b.matmul(*ly.wo, attn, T, h);
        if (ly.attn_post_norm) b.rms_norm(h, ly.attn_post_norm->as<float>(), T, E, c.rms_eps, h);
        b.add(x, h, int64_t{T} * E);
        b.rms_norm(x, ly.ffn_norm->as<float>(), T, E, c.rms_eps, h);
        b.matmul(*ly.gate, h, T, gate);
        b.matmul(*ly.up, h, T, up);
        if (c.ffn == FfnActivation::GeGlu)
            b.geglu(gate, up, int64_t{T} * F, gate);
        else
            b.swiglu(gate, up, int64_t{T} * F, gate);
        b.matmul(*ly.down, gate, T, h);
        if (ly.ffn_post_norm) b.rms_norm(h, ly.ffn_post_norm->as<float>(), T, E, c.rms_eps, h);
        b.add(x, h, int64_t{T} * E);
    }
    if (L == 0) return;
    float* sel = sel_->as<float>();
    float* logits = logits_->as<float>();
    b.gather_rows(x, dev + at[7], L, E, sel);
    b.rms_norm(sel, output_norm_->as<float>(), L, E, c.rms_eps, sel);
    b.matmul(output_ ? *output_ : *token_embd_, sel, L, logits);
    if (c.final_softcap > 0.0f) b.softcap(logits, int64_t{L} * c.n_vocab, c.final_softcap);
    if (top_k == 0) return;
    auto* ids = top_->as<int32_t>();
    auto* values = reinterpret_cast<float*>(ids + int64_t{L} * (top_k + 1));
    b.top_k(logits, L, static_cast<int32_t>(c.n_vocab), top_k, ids, values,
            ids + int64_t{L} * top_k);
    if (n_picks > 0) b.gather_rows(logits, dev + at[8], n_picks, 1, values + int64_t{L} * top_k);
}

void LlamaModel::read_back(int32_t n_logits, int32_t n_picks, int32_t n_real_picks, int32_t top_k) {
    const auto L = static_cast<size_t>(n_logits);
    const void* results = nullptr;
    if (L > 0 && top_k == 0)
        results = backend_.read_back(*logits_, 0,
                                     L * static_cast<size_t>(config_.n_vocab) * sizeof(float));
    else if (L > 0)
        // ids[L·k] | invalid[L] | values[L·k] | picked[P]
        results = backend_.read_back(
            *top_, 0,
            (L * (2 * static_cast<size_t>(top_k) + 1) + static_cast<size_t>(n_picks)) *
                sizeof(std::uint32_t));
    pending_ = {true, n_logits, n_picks, n_real_picks, top_k, results};
}

void LlamaModel::drop_graphs() {
    graphs_.clear();
    // Also with no graph kept: a capture that an error cut short (the first one, say) is
    // ended there, or every later op would be recorded into it instead of run.
    backend_.drop_graphs();
}

void LlamaModel::set_step_graphs(bool on) {
    graphs_on_ = on;
    if (!on) drop_graphs();
}

void LlamaModel::set_batch_invariant(bool on) {
    if (on != batch_invariant_) drop_graphs();  // the captured kernels are the other ones
    batch_invariant_ = on;
}

}  // namespace hearth
