#include "model/step_graph.h"

#include <algorithm>

#include "model/llama_model.h"

namespace hearth {

std::optional<StepGraphKey> step_graph_key(std::span<const SequenceStep> seqs, int32_t top_k) {
    if (seqs.empty() || top_k <= 0) return std::nullopt;
    int32_t max_chunks = 0;
    int64_t picks = 0;
    for (const SequenceStep& s : seqs) {
        if (s.tokens.size() != 1 || !s.want_logits || s.start_pos < 0) return std::nullopt;
        max_chunks = std::max(max_chunks, kernels::chunks_seen(s.start_pos));
        picks += static_cast<int64_t>(s.pick.size());
    }
    const auto pow2 = [](int64_t n) {
        int32_t p = 1;
        while (p < n) p *= 2;
        return p;
    };
    return StepGraphKey{static_cast<int32_t>(seqs.size()), top_k, pow2(max_chunks),
                        picks == 0 ? 0 : pow2(picks)};
}

}  // namespace hearth
