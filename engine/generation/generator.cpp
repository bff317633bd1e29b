#include "generation/generator.h"

#include <chrono>
#include <numeric>

#include "generation/text_stream.h"
#include "kv/kv_storage.h"
#include "model/llama_model.h"
#include "tokenizer/tokenizer.h"

namespace hearth {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

constexpr int32_t kBlockSize = 16;

}  // namespace

const char* stop_reason_name(StopReason r) {
    switch (r) {
        case StopReason::EndOfGeneration:
            return "end_of_generation";
        case StopReason::StopString:
            return "stop_string";
        case StopReason::MaxTokens:
            return "max_tokens";
        case StopReason::Cancelled:
            return "cancelled";
    }
    return "unknown";
}

Generator::Generator(LlamaModel& model, const Tokenizer& tokenizer)
    : model_(model), tokenizer_(tokenizer) {}
Generator::~Generator() = default;

Result<void> Generator::prepare_cache(int32_t tokens_needed) {
    const int32_t blocks = (tokens_needed + kBlockSize - 1) / kBlockSize;
    if (!kv_ || kv_->n_blocks() < blocks) {
        const ModelConfig& c = model_.config();
        KvShape shape{static_cast<int32_t>(c.n_layer), static_cast<int32_t>(c.n_head_kv),
                      static_cast<int32_t>(c.head_dim), kBlockSize};
        kv_.reset();
        auto kv = KvStorage::create(model_.backend(), shape, blocks);
        if (!kv) return kv.error();
        kv_ = std::move(kv).value();
    }
    // One sequence owns the blocks in order.
    block_table_.resize(static_cast<size_t>(blocks));
    std::iota(block_table_.begin(), block_table_.end(), 0);
    return {};
}

Result<void> Generator::prefill(const std::vector<int32_t>& tokens, int32_t chunk,
                                std::vector<float>& logits, const std::atomic<bool>* cancel) {
    const auto n = static_cast<int32_t>(tokens.size());
    chunk = std::max(chunk, 1);
    for (int32_t start = 0; start < n; start += chunk) {
        if (cancel && cancel->load(std::memory_order_relaxed)) return {};
        const int32_t len = std::min(chunk, n - start);
        SequenceStep step;
        step.tokens =
            std::span(tokens).subspan(static_cast<size_t>(start), static_cast<size_t>(len));
        step.start_pos = start;
        step.block_table = block_table_;
        step.want_logits = start + len == n;
        if (auto r = model_.forward(std::span(&step, 1), *kv_, logits); !r) return r;
    }
    return {};
}

Result<std::vector<float>> Generator::last_logits(const std::vector<int32_t>& tokens) {
    if (tokens.empty()) return make_error("the prompt is empty");
    if (static_cast<int64_t>(tokens.size()) > model_.config().context_length)
        return make_error("the prompt has " + std::to_string(tokens.size()) +
                          " tokens; the model's context holds " +
                          std::to_string(model_.config().context_length));
    if (auto r = prepare_cache(static_cast<int32_t>(tokens.size())); !r) return r.error();
    std::vector<float> logits;
    if (auto r = prefill(tokens, 512, logits, nullptr); !r) return r.error();
    return logits;
}

Result<void> Generator::forced_logits(
    const std::vector<int32_t>& prompt, const std::vector<int32_t>& continuation,
    const std::function<void(size_t, const std::vector<float>&)>& on_logits) {
    if (prompt.empty()) return make_error("the prompt is empty");
    const size_t total = prompt.size() + continuation.size();
    if (static_cast<int64_t>(total) > model_.config().context_length)
        return make_error("the prompt and continuation have " + std::to_string(total) +
                          " tokens; the model's context holds " +
                          std::to_string(model_.config().context_length));
    if (auto r = prepare_cache(static_cast<int32_t>(total)); !r) return r.error();
    std::vector<float> logits;
    if (auto r = prefill(prompt, 512, logits, nullptr); !r) return r.error();
    for (size_t i = 0; i < continuation.size(); ++i) {
        on_logits(i, logits);
        if (i + 1 == continuation.size()) break;
        SequenceStep step;
        step.tokens = std::span(&continuation[i], 1);
        step.start_pos = static_cast<int32_t>(prompt.size() + i);
        step.block_table = block_table_;
        if (auto r = model_.forward(std::span(&step, 1), *kv_, logits); !r) return r.error();
    }
    return {};
}

Result<GenerationResult> Generator::generate(const GenerationRequest& req,
                                             const TokenCallback& on_token,
                                             const std::atomic<bool>* cancel) {
    const int64_t ctx = model_.config().context_length;
    if (req.prompt.empty()) return make_error("the prompt is empty");
    if (static_cast<int64_t>(req.prompt.size()) >= ctx)
        return make_error("the prompt has " + std::to_string(req.prompt.size()) +
                          " tokens but the model's context holds " + std::to_string(ctx) +
                          " (including room for the reply); shorten it");
    const int64_t budget =
        std::min<int64_t>(req.max_tokens, ctx - static_cast<int64_t>(req.prompt.size()));
    if (auto r =
            prepare_cache(static_cast<int32_t>(req.prompt.size() + static_cast<size_t>(budget)));
        !r)
        return r.error();

    GenerationResult out;
    out.prompt_tokens = static_cast<int32_t>(req.prompt.size());
    const auto cancelled = [cancel] { return cancel && cancel->load(std::memory_order_relaxed); };
    const auto t0 = Clock::now();
    std::vector<float> logits;
    if (auto r = prefill(req.prompt, req.prefill_chunk, logits, cancel); !r) return r.error();
    out.prefill_ms = ms_since(t0);
    if (cancelled()) {
        out.stop = StopReason::Cancelled;
        return out;
    }

    Sampler sampler(req.sampling);
    TextStream stream(req.stop_strings);
    std::vector<int32_t> history = req.prompt;
    Clock::time_point first_token_at;
    for (int64_t i = 0; i < budget; ++i) {
        auto next = sampler.sample(logits, history);
        if (!next) return next.error();
        const int32_t token = *next;
        out.tokens.push_back(token);
        history.push_back(token);
        if (i == 0) {
            first_token_at = Clock::now();
            out.ttft_ms = ms_since(t0);
        }
        if (req.stop_at_end_of_generation && tokenizer_.is_end_of_generation(token)) {
            out.stop = StopReason::EndOfGeneration;
            break;
        }
        const std::string visible = stream.push(tokenizer_.token_to_piece(token, false));
        if (on_token && !visible.empty()) on_token(token, visible);
        if (stream.stopped()) {
            out.stop = StopReason::StopString;
            break;
        }
        if (i + 1 == budget) break;  // no forward pass for a token we will not sample
        if (cancelled()) {
            out.stop = StopReason::Cancelled;
            break;
        }
        SequenceStep step;
        step.tokens = std::span(&history.back(), 1);
        step.start_pos = static_cast<int32_t>(history.size()) - 1;
        step.block_table = block_table_;
        if (auto r = model_.forward(std::span(&step, 1), *kv_, logits); !r) return r.error();
    }
    if (!out.tokens.empty()) out.decode_ms = ms_since(first_token_at);
    const std::string tail = stream.flush();
    if (on_token && !tail.empty()) on_token(-1, tail);
    out.text = stream.text();
    return out;
}

}  // namespace hearth
