// Token sampling: repetition/frequency/presence penalties, then top-k, top-p, min-p and
// temperature, then a draw from a seeded RNG (greedy when temperature is 0). The same
// seed, logits and history give the same token on every platform.
#pragma once

#include <cstdint>
#include <random>
#include <span>
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
    explicit Sampler(const SamplingParams& params);

    // Picks the next token. `history` is the sequence so far (prompt and generated), used
    // by the penalties. Fails on NaN or +Inf logits (a broken model) instead of sampling.
    Result<int32_t> sample(std::span<const float> logits, std::span<const int32_t> history);

    const SamplingParams& params() const { return params_; }

  private:
    double uniform();  // [0, 1), 53 bits, independent of the standard library

    struct Candidate {
        int32_t id;
        float logit;
    };
    SamplingParams params_;
    std::mt19937_64 rng_;
    // Scratch reused across calls: sampling runs once per generated token.
    std::vector<Candidate> candidates_;
    std::vector<float> penalised_;
    std::vector<double> probs_;
};

// Index of the largest value, lowest index on ties.
int32_t argmax(std::span<const float> values);

}  // namespace hearth
