// Shared by the model golden suites (tst_architecture_golden, tst_gemma3_golden,
// tst_quant_golden): reading llama.cpp's recorded token ids, and comparing greedy
// continuations with them where a near tie may go either way.
#pragma once

#include <QJsonArray>

#include <cstdint>
#include <vector>

namespace hearth::test {

// llama.cpp's top-2 logit gap under which either token may win a greedy step.
inline constexpr double kTie = 1e-3;

inline std::vector<int32_t> ints(const QJsonArray& a) {
    std::vector<int32_t> v;
    for (const auto& x : a) v.push_back(x.toInt());
    return v;
}

// How many of `got` equal llama.cpp's greedy tokens (`want`, with its top-2 gap at every
// step in `gaps`) before a difference; a difference at a near tie (gap below kTie) ends
// the comparison as a match.
struct Continuation {
    int matched = 0;
    bool tie = false;
    bool all(size_t n) const { return tie || matched == static_cast<int>(n); }
};
inline Continuation compare_greedy(const std::vector<int32_t>& got,
                                   const std::vector<int32_t>& want, const QJsonArray& gaps) {
    Continuation c;
    for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
        if (got[i] != want[i]) {
            c.tie = gaps[static_cast<qsizetype>(i)].toDouble() < kTie;
            return c;
        }
        ++c.matched;
    }
    return c;
}

}  // namespace hearth::test
