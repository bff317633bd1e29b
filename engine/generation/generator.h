// Single-conversation generation on one model: chunked prefill of the prompt, then
// sampling token by token until an end-of-generation token, a stop string, max_tokens,
// or cancellation. Used by hearth-cli generate/chat and the golden tests; the engine
// thread with the shared paged cache builds on the same model and sampler.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "sampling/sampler.h"

namespace hearth {

class LlamaModel;
class Tokenizer;
class KvStorage;

struct GenerationRequest {
    std::vector<int32_t> prompt;
    SamplingParams sampling;
    int32_t max_tokens = 256;
    std::vector<std::string> stop_strings;
    int32_t prefill_chunk = 512;            // tokens per prefill step (bounds scratch memory)
    bool stop_at_end_of_generation = true;  // false: keep going (golden tests, benchmarks)
};

enum class StopReason { EndOfGeneration, StopString, MaxTokens, Cancelled };
const char* stop_reason_name(StopReason r);

struct GenerationResult {
    std::vector<int32_t> tokens;  // sampled ids, including a final end-of-generation token
    std::string text;             // visible text (no stop string, no control tokens)
    StopReason stop = StopReason::MaxTokens;
    int32_t prompt_tokens = 0;
    double prefill_ms = 0;  // time to process the prompt
    double ttft_ms = 0;     // prompt processed and the first token sampled
    double decode_ms = 0;   // from the first token to the last
    double prefill_tokens_per_s() const {
        return prefill_ms > 0 ? prompt_tokens * 1000.0 / prefill_ms : 0;
    }
    double decode_tokens_per_s() const {
        return decode_ms > 0 && tokens.size() > 1
                   ? static_cast<double>(tokens.size() - 1) * 1000.0 / decode_ms
                   : 0;
    }
};

// Called with each newly visible piece of text and the token that produced it.
using TokenCallback = std::function<void(int32_t token, const std::string& text)>;

class Generator {
  public:
    Generator(LlamaModel& model, const Tokenizer& tokenizer);
    ~Generator();

    // Runs a request from an empty cache. The KV cache is sized for the prompt plus
    // max_tokens (clamped to the context): a prompt that does not fit is an error
    // before any work is done.
    Result<GenerationResult> generate(const GenerationRequest& request,
                                      const TokenCallback& on_token = {},
                                      const std::atomic<bool>* cancel = nullptr);

    // Logits (n_vocab floats) at the last position of `tokens`, from an empty cache.
    Result<std::vector<float>> last_logits(const std::vector<int32_t>& tokens);

    // Teacher forcing: the prompt in one prefill, then `continuation` one token per step
    // as generate() would have sampled it; on_logits(i, logits) receives the logits that
    // predict continuation[i] (i = 0: the prompt's last position). For comparisons with a
    // reference's own continuation that one early difference cannot derail.
    Result<void> forced_logits(
        const std::vector<int32_t>& prompt, const std::vector<int32_t>& continuation,
        const std::function<void(size_t, const std::vector<float>&)>& on_logits);

  private:
    Result<void> prepare_cache(int32_t tokens_needed);
    Result<void> prefill(const std::vector<int32_t>& tokens, int32_t chunk,
                         std::vector<float>& logits, const std::atomic<bool>* cancel);

    LlamaModel& model_;
    const Tokenizer& tokenizer_;
    std::unique_ptr<KvStorage> kv_;
    std::vector<int32_t> block_table_;
};

}  // namespace hearth
