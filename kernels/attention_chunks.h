// How the CUDA attention cuts a context into chunks, as plain arithmetic that the engine
// (step-graph keys), the launch planner and the kernels share. A context is cut at fixed
// positions into chunks of kAttentionChunk positions; a query at position pos sees the
// chunks from the one holding the first position of its sliding window (0 without a
// window) to the one holding pos.
#pragma once

#include <cstdint>

#include "quant/fp16.h"  // HEARTH_HOST_DEVICE

namespace hearth::kernels {

inline constexpr int32_t kAttentionChunk = 256;

// The first chunk a query at position pos sees (window 0: no sliding window).
HEARTH_HOST_DEVICE constexpr int32_t first_chunk_seen(int32_t pos, int32_t window) {
    return window > 0 && pos >= window ? (pos - window + 1) / kAttentionChunk : 0;
}

// The chunks a query at position pos sees.
HEARTH_HOST_DEVICE constexpr int32_t chunks_seen(int32_t pos, int32_t window = 0) {
    return pos / kAttentionChunk + 1 - first_chunk_seen(pos, window);
}

// The most chunks any query sees under a window of `window` positions (> 0): the window
// starting on a chunk's last position.
HEARTH_HOST_DEVICE constexpr int32_t window_chunk_bound(int32_t window) {
    return static_cast<int32_t>((int64_t{window} + 2 * (kAttentionChunk - 1)) / kAttentionChunk);
}

// A step graph's bound (AttentionBatch::chunk_bound; 0: none) for a layer with this window:
// a local layer's rows see at most its window's chunks, so its launch is sized by the
// window, not by the context.
HEARTH_HOST_DEVICE constexpr int32_t layer_chunk_bound(int32_t step_bound, int32_t window) {
    if (step_bound <= 0 || window <= 0) return step_bound;
    const int32_t w = window_chunk_bound(window);
    return w < step_bound ? w : step_bound;
}

// Σ over x in [0, n) of x / kAttentionChunk (0 for n ≤ 0).
HEARTH_HOST_DEVICE constexpr int64_t floor_chunk_sum(int64_t n) {
    if (n <= 0) return 0;
    const int64_t a = n / kAttentionChunk, b = n % kAttentionChunk;
    return kAttentionChunk * (a * (a - 1) / 2) + a * b;
}

// The chunks that queries at positions first_pos .. first_pos + i - 1 see together: the
// index of the i-th query's first partial among its sequence's partials. With a window,
// Σ first_chunk_seen over those positions is Σ max(0, y) / kAttentionChunk over
// y = first_pos - window + 1 .. first_pos + i - window.
HEARTH_HOST_DEVICE constexpr int64_t partials_before(int32_t first_pos, int32_t i,
                                                     int32_t window = 0) {
    const int64_t f = first_pos;
    const int64_t all = floor_chunk_sum(f + i) - floor_chunk_sum(f) + i;
    if (window <= 0) return all;
    return all - (floor_chunk_sum(f + i - window + 1) - floor_chunk_sum(f - window + 1));
}

}  // namespace hearth::kernels
