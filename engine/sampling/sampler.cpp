#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace hearth {

int32_t argmax(std::span<const float> values) {
    int32_t best = 0;
    for (size_t i = 1; i < values.size(); ++i)
        if (values[i] > values[static_cast<size_t>(best)]) best = static_cast<int32_t>(i);
    return best;
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {}

double Sampler::uniform() {
    return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

Result<int32_t> Sampler::sample(std::span<const float> logits, std::span<const int32_t> history) {
    if (logits.empty()) return make_error("no logits to sample from");
    for (size_t i = 0; i < logits.size(); ++i) {
        // -inf is a legitimate mask; NaN and +inf mean the forward pass broke.
        if (std::isnan(logits[i]) || logits[i] == INFINITY)
            return make_error("the model produced an invalid logit (" +
                              std::string(std::isnan(logits[i]) ? "NaN" : "+Inf") + ") for token " +
                              std::to_string(i) + "; the model file may be broken");
    }
    const SamplingParams& p = params_;
    std::span<const float> scores = logits;

    const bool penalise =
        p.repeat_penalty != 1.0f || p.frequency_penalty != 0.0f || p.presence_penalty != 0.0f;
    if (penalise && p.penalty_last_n != 0 && !history.empty()) {
        penalised_.assign(logits.begin(), logits.end());
        const size_t window = p.penalty_last_n < 0
                                  ? history.size()
                                  : std::min(history.size(), static_cast<size_t>(p.penalty_last_n));
        std::unordered_map<int32_t, int> counts;
        for (size_t i = history.size() - window; i < history.size(); ++i) ++counts[history[i]];
        for (const auto& [id, count] : counts) {
            if (id < 0 || static_cast<size_t>(id) >= penalised_.size()) continue;
            float& l = penalised_[static_cast<size_t>(id)];
            l = l > 0 ? l / p.repeat_penalty : l * p.repeat_penalty;
            l -= static_cast<float>(count) * p.frequency_penalty + p.presence_penalty;
        }
        scores = penalised_;
    }
    if (p.temperature <= 0.0f) return argmax(scores);

    // Candidates sorted by logit, descending (ties by id for determinism).
    candidates_.clear();
    candidates_.reserve(scores.size());
    for (size_t i = 0; i < scores.size(); ++i)
        if (scores[i] != -INFINITY) candidates_.push_back({static_cast<int32_t>(i), scores[i]});
    if (candidates_.empty()) return make_error("every token is masked out");
    const auto by_logit = [](const Candidate& a, const Candidate& b) {
        return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
    };
    size_t keep = candidates_.size();
    if (p.top_k > 0) keep = std::min(keep, static_cast<size_t>(p.top_k));
    std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<ptrdiff_t>(keep),
                      candidates_.end(), by_logit);
    candidates_.resize(keep);

    // Softmax over the kept candidates at temperature 1 for the p-based filters (as
    // llama.cpp's chain: filters before temperature).
    std::vector<double>& probs = probs_;
    probs.resize(keep);
    const double max_logit = candidates_[0].logit;
    double sum = 0;
    for (size_t i = 0; i < keep; ++i)
        sum += probs[i] = std::exp(static_cast<double>(candidates_[i].logit) - max_logit);
    for (double& q : probs) q /= sum;

    if (p.top_p < 1.0f) {
        double cumulative = 0;
        size_t n = 0;
        while (n < keep) {
            cumulative += probs[n++];
            if (cumulative >= p.top_p) break;
        }
        keep = std::max<size_t>(n, 1);
    }
    if (p.min_p > 0.0f) {
        const double threshold = probs[0] * p.min_p;
        size_t n = 1;
        while (n < keep && probs[n] >= threshold) ++n;
        keep = n;
    }

    // Temperature, then draw.
    double total = 0;
    for (size_t i = 0; i < keep; ++i)
        total += probs[i] =
            std::exp((static_cast<double>(candidates_[i].logit) - max_logit) / p.temperature);
    double r = uniform() * total;
    for (size_t i = 0; i < keep; ++i) {
        r -= probs[i];
        if (r < 0) return candidates_[i].id;
    }
    return candidates_[keep - 1].id;
}

}  // namespace hearth
