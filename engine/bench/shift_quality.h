// What a context shift costs in quality (issue 33): a long text read as a chat that
// outgrows its context, once with each step's kept history computed again (drop: exact,
// the reference) and once with it moved (shift: its K rotated to the new positions, the
// engine's own LlamaModel::shift_kv), side by side on one model.
//
// The text's tokens (BOS first) are read in turns of `turn` tokens after a persona (its
// first `persona` tokens, which always stay). Before a turn that would pass the context,
// the oldest whole turns leave until the window is at most `keep` of the context: a step.
// Every token is read teacher-forced with its logits, in both runs. Measured:
//   - after 1, 5 and 20 steps (`after`), on the turn right after the step: the logits' relative
//     L2 distance (|shift - drop| / |drop|, per token: mean and largest) and how often the
//     two runs' most likely next tokens agree (greedy agreement);
//   - the perplexity of each run over every token after the first step.
// Qt-free: `hearth-cli bench shift-quality` prints it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/result.h"

namespace hearth {

struct ShiftQualityOptions {
    std::string model_path;
    std::string text_path;  // UTF-8 text, read as it is (no chat template)
    int n_threads = 0;
    int context = 2048;
    int persona = 64;
    int turn = 128;
    double keep = 0.5;
    std::vector<int> after = {1, 5, 20};
    std::function<void(const std::string&)> progress;  // may be empty
};

struct ShiftQualityPoint {
    int steps = 0;   // measured on the turn after this many steps
    int tokens = 0;  // logits compared
    double rel_l2_mean = 0, rel_l2_max = 0;
    double greedy_agreement = 0;  // share of tokens whose argmax agrees
};

struct ShiftQualityReport {
    std::string model;
    int context = 0, steps = 0;
    int64_t tokens_read = 0, tokens_scored = 0;  // scored: after the first step
    double perplexity_drop = 0, perplexity_shift = 0;
    std::vector<ShiftQualityPoint> points;
    std::string table() const;
};

Result<ShiftQualityReport> run_shift_quality(const ShiftQualityOptions& options);

}  // namespace hearth
