// Which steps a device backend runs as a captured graph (Backend::begin_capture), and
// under which key: a graph replays the ops it recorded with the same pointers and sizes,
// so steps share one only when every size the ops were given is the same. Decode steps
// qualify: one token per sequence, a logit row each, sampled from the top k (not whole
// rows), with an attention launch sized for a power-of-two bound on the context chunks a
// row sees (AttentionBatch::chunk_bound), so that one graph serves a conversation from 1
// to 256 · bound positions, and the picked tokens (the penalties' raw logits) padded to a
// power of two (the padding reads logit 0 of the first row; nobody looks at it).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <span>

namespace hearth {

struct SequenceStep;

struct StepGraphKey {
    int32_t n_seqs = 0;       // = tokens = logit rows
    int32_t top_k = 0;        // candidates per row
    int32_t chunk_bound = 0;  // power of two ≥ the chunks (kAttentionChunk) any row sees
    int32_t picks = 0;        // 0, or a power of two ≥ the picked tokens of all rows
    auto operator<=>(const StepGraphKey&) const = default;
};

// The key, or nullopt when the step runs op by op: a prefill chunk (more than one token
// in a sequence), a sequence without logits, whole logit rows (top_k == 0), or no
// sequence at all.
std::optional<StepGraphKey> step_graph_key(std::span<const SequenceStep> seqs, int32_t top_k);

}  // namespace hearth
