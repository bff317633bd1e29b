// Token sampling: repetition/frequency/presence penalties, then top-k, top-p, min-p and
// temperature, then a draw (greedy when temperature is 0). The same seed, logits and
// history give the same token on every platform.
//
// The draw's random number is a function of (seed, position), the position being the
// index the new token will have in its sequence (history.size()), not of how many draws
// came before: sampling a position again gives the same token. Speculative decoding
// (sched/scheduler.h) relies on it: verifying a draft token at position p draws exactly
// the number plain decoding would draw there, so accepted text equals plain text.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "common/result.h"

namespace hearth {

struct SamplingParams {
    float temperature = 0.8f;        // 0: greedy (argmax, lowest id on ties)
    int32_t top_k = 40;              // 0: off
    float top_p = 0.95f;             // 1: off
    float min_p = 0.05f;             // 0: off; keeps tokens with p ≥ min_p · p_max
    float repeat_penalty = 1.0f;     // 1: off; llama.cpp's rule (divide positive logits)
    float frequency_penalty = 0.0f;  // subtracted × count in the window
    float presence_penalty = 0.0f;   // subtracted once if present in the window
    int32_t penalty_last_n = 64;     // window of recent tokens the penalties look at
    uint64_t seed = 0;

    static SamplingParams greedy() {
        SamplingParams p;
        p.temperature = 0.0f;
        return p;
    }
};

class Sampler {
  public:
    static constexpr int32_t kMaxTopCandidates = 64;  // = kernels::Backend::kMaxTopK

    explicit Sampler(const SamplingParams& params);

    // Picks the next token. `history` is the sequence so far (prompt and generated), used
    // by the penalties. Fails on NaN or +Inf logits (a broken model) instead of sampling.
    Result<int32_t> sample(std::span<const float> logits, std::span<const int32_t> history);

    // Sampling from a few values instead of the row (the CUDA backend's logits stay on
    // the device; Backend::top_k gives the best of each row):
    //   penalised_tokens(history): the tokens the penalties change, in the order
    //     sample_top() wants their raw logits (empty when the penalties are off);
    //   top_needed(history): how many of the row's best raw logits sample_top() needs to
    //     give exactly the token sample() would (1 when greedy, else top_k, plus one per
    //     penalised token), or 0 when it needs the whole row (top_k off, or more than
    //     Backend::kMaxTopK);
    //   sample_top(): top_ids/top_values are the row's best raw logits as Backend::top_k
    //     gives them (at least top_needed(); padded with id -1), penalised_values the raw
    //     logits of penalised_tokens(). Same token, same random draws as sample().
    std::vector<int32_t> penalised_tokens(std::span<const int32_t> history) const;
    int32_t top_needed(std::span<const int32_t> history) const;
    Result<int32_t> sample_top(std::span<const int32_t> top_ids, std::span<const float> top_values,
                               std::span<const float> penalised_values,
                               std::span<const int32_t> history);

    const SamplingParams& params() const { return params_; }

  private:
    // [0, 1), 53 bits, from (seed, position) alone (splitmix64; independent of the
    // standard library).
    double uniform(uint64_t position) const;
    bool penalties_on(std::span<const int32_t> history) const;
    // Token → how often it occurs in the penalty window, by token id.
    std::vector<std::pair<int32_t, int>> penalty_counts(std::span<const int32_t> history) const;
    float penalised(float logit, int count) const;
    // From candidates_ (every token that can still be drawn, any order): top-k, top-p,
    // min-p, temperature and the draw for the token at `position`.
    Result<int32_t> draw(uint64_t position);

    struct Candidate {
        int32_t id;
        float logit;
    };
    SamplingParams params_;
    // Scratch reused across calls: sampling runs once per generated token.
    std::vector<Candidate> candidates_;
    std::vector<float> penalised_;
    std::vector<double> probs_;
};

// Index of the largest value, lowest index on ties.
int32_t argmax(std::span<const float> values);

}  // namespace hearth
