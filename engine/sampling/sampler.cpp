#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>

namespace hearth {

int32_t argmax(std::span<const float> values) {
    int32_t best = 0;
    for (size_t i = 1; i < values.size(); ++i)
        if (values[i] > values[static_cast<size_t>(best)]) best = static_cast<int32_t>(i);
    return best;
}

Sampler::Sampler(const SamplingParams& params) : params_(params) {}

namespace {

uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

}  // namespace

double Sampler::uniform(uint64_t position) const {
    // Two rounds: seeds and positions are small consecutive integers, the mix must still
    // spread (seed, position) and (seed + 1, position - 1) apart.
    const uint64_t bits = splitmix64(splitmix64(params_.seed) ^ position);
    return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

bool Sampler::penalties_on(std::span<const int32_t> history) const {
    const SamplingParams& p = params_;
    return (p.repeat_penalty != 1.0f || p.frequency_penalty != 0.0f ||
            p.presence_penalty != 0.0f) &&
           p.penalty_last_n != 0 && !history.empty();
}

std::vector<std::pair<int32_t, int>> Sampler::penalty_counts(
    std::span<const int32_t> history) const {
    std::vector<std::pair<int32_t, int>> counts;
    if (!penalties_on(history)) return counts;
    const size_t window =
        params_.penalty_last_n < 0
            ? history.size()
            : std::min(history.size(), static_cast<size_t>(params_.penalty_last_n));
    std::vector<int32_t> ids(history.end() - static_cast<ptrdiff_t>(window), history.end());
    std::sort(ids.begin(), ids.end());
    for (size_t i = 0; i < ids.size();) {
        size_t j = i;
        while (j < ids.size() && ids[j] == ids[i]) ++j;
        counts.emplace_back(ids[i], static_cast<int>(j - i));
        i = j;
    }
    return counts;
}

float Sampler::penalised(float l, int count) const {
    const SamplingParams& p = params_;
    l = l > 0 ? l / p.repeat_penalty : l * p.repeat_penalty;
    l -= static_cast<float>(count) * p.frequency_penalty + p.presence_penalty;
    return l;
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
    std::span<const float> scores = logits;
    const auto counts = penalty_counts(history);
    if (!counts.empty()) {
        penalised_.assign(logits.begin(), logits.end());
        for (const auto& [id, count] : counts) {
            if (id < 0 || static_cast<size_t>(id) >= penalised_.size()) continue;
            float& l = penalised_[static_cast<size_t>(id)];
            l = penalised(l, count);
        }
        scores = penalised_;
    }
    if (params_.temperature <= 0.0f) return argmax(scores);

    candidates_.clear();
    candidates_.reserve(scores.size());
    for (size_t i = 0; i < scores.size(); ++i)
        if (scores[i] != -INFINITY) candidates_.push_back({static_cast<int32_t>(i), scores[i]});
    return draw(history.size());
}

std::vector<int32_t> Sampler::penalised_tokens(std::span<const int32_t> history) const {
    std::vector<int32_t> ids;
    for (const auto& [id, count] : penalty_counts(history)) ids.push_back(id);
    return ids;
}

int32_t Sampler::top_needed(std::span<const int32_t> history) const {
    const SamplingParams& p = params_;
    int32_t best = 1;  // greedy
    if (p.temperature > 0.0f) {
        if (p.top_k <= 0 || p.top_k > kMaxTopCandidates) return 0;
        best = p.top_k;
    }
    // Penalties only move the penalised tokens, and every one of them is given: the best
    // `best` after them are among the best `best` + (number penalised) before them.
    const auto penalised_count = static_cast<int32_t>(penalty_counts(history).size());
    const int32_t needed = best + penalised_count;
    return needed <= kMaxTopCandidates ? needed : 0;
}

Result<int32_t> Sampler::sample_top(std::span<const int32_t> top_ids,
                                    std::span<const float> top_values,
                                    std::span<const float> penalised_values,
                                    std::span<const int32_t> history) {
    const auto counts = penalty_counts(history);
    if (penalised_values.size() != counts.size() || top_ids.size() != top_values.size())
        return make_error("sample_top: the candidates do not match the history");
    candidates_.clear();
    // The penalised tokens with their new values, then the others from the top.
    for (size_t i = 0; i < counts.size(); ++i) {
        const float v = penalised(penalised_values[i], counts[i].second);
        if (v != -INFINITY) candidates_.push_back({counts[i].first, v});
    }
    const auto is_penalised = [&counts](int32_t id) {
        return std::binary_search(counts.begin(), counts.end(), std::pair<int32_t, int>{id, 0},
                                  [](const auto& a, const auto& b) { return a.first < b.first; });
    };
    for (size_t i = 0; i < top_ids.size(); ++i)
        if (top_ids[i] >= 0 && top_values[i] != -INFINITY && !is_penalised(top_ids[i]))
            candidates_.push_back({top_ids[i], top_values[i]});
    if (params_.temperature <= 0.0f) {
        // argmax: the largest, the lowest id among equals (token 0 when all are masked,
        // as argmax over a row of -inf).
        if (candidates_.empty()) return 0;
        Candidate best = candidates_[0];
        for (const Candidate& c : candidates_)
            if (c.logit > best.logit || (c.logit == best.logit && c.id < best.id)) best = c;
        return best.id;
    }
    return draw(history.size());
}

Result<int32_t> Sampler::draw(uint64_t position) {
    const SamplingParams& p = params_;
    if (candidates_.empty()) return make_error("every token is masked out");
    // Candidates sorted by logit, descending (ties by id for determinism).
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
    double r = uniform(position) * total;
    for (size_t i = 0; i < keep; ++i) {
        r -= probs[i];
        if (r < 0) return candidates_[i].id;
    }
    return candidates_[keep - 1].id;
}

}  // namespace hearth
