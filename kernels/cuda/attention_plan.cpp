// Launch planning of the paged attention (attention.h): plain host code, from the batch's
// host copies of q_len and kv_len.
#include <algorithm>
#include <climits>

#include "cuda/attention.h"

namespace hearth::gpu {

int32_t attention_smem_budget(int32_t smem_per_sm) {
    const int32_t blocks = smem_per_sm >= 96 * 1024 ? 4 : 2;
    return std::clamp(
        smem_per_sm / blocks - attention_detail::kBlockReservedSmem - attention_detail::kStaticSmem,
        0, attention_detail::kMaxDynamicSmem);
}

namespace {

using namespace attention_detail;

bool head_dim_ok(int32_t head_dim) {
    return head_dim >= 2 && head_dim <= kMaxHeadDim && head_dim % 2 == 0;
}

// The host arrays' lengths are consistent: every query sees at least itself.
bool host_lengths_ok(const kernels::AttentionBatch& b) {
    if (b.n_seqs < 0) return false;
    if (b.n_seqs > 0 && (!b.host_q_len || !b.host_kv_len)) return false;
    for (int32_t s = 0; s < b.n_seqs; ++s) {
        const int32_t q = b.host_q_len[s], kv = b.host_kv_len[s];
        if (q < 0 || kv < q) return false;
    }
    return true;
}

// Bytes of shared memory per staged query vector (its values and its chunk's scores), and
// of everything but the vectors and the K/V sub-tile.
int32_t vec_bytes(int32_t head_dim) {
    return (head_dim + kChunk) * 4;
}
constexpr int32_t kFixedSmem = kSmallArrays * kMaxVecs * 4 + kChunk * 4;

Geometry make_geometry(int32_t n_heads, int32_t n_kv_heads, int32_t head_dim, int32_t window,
                       AttentionShape shape, int32_t budget) {
    Geometry g;
    g.n_heads = n_heads;
    g.n_kv_heads = n_kv_heads;
    g.group = n_heads / n_kv_heads;
    g.head_dim = head_dim;
    g.dims_per_thread = head_dim > kThreads ? 2 : 1;
    g.thread_groups = head_dim <= kThreads ? kThreads / head_dim : 1;
    // An item's vectors: as many as a thread's accumulators allow, fewer where they and
    // the smallest sub-tile would not fit the budget (more head slices, fewer rows per
    // whole item).
    const int32_t min_tile = kMinTilePositions * (head_dim / 2) * 4;
    const int32_t fit = (budget - kFixedSmem - min_tile) / vec_bytes(head_dim);
    g.max_vecs =
        std::clamp(fit, 1, std::min(kMaxVecs, g.thread_groups * (kAccRegs / g.dims_per_thread)));
    g.head_slices = (g.group + g.max_vecs - 1) / g.max_vecs;
    g.heads_per_item = (g.group + g.head_slices - 1) / g.head_slices;
    g.rows_per_tile = std::max(1, g.max_vecs / g.heads_per_item);
    g.window = window;
    g.shape = shape;
    return g;
}

// The launch's staged vectors (vecs) and the K/V sub-tile the rest of the budget holds:
// up to a chunk and kKvTileWords, at least kMinTilePositions, a multiple of the warps.
void fit_tiles(Geometry& g, bool any_whole, int32_t budget) {
    g.vecs = any_whole ? g.heads_per_item * g.rows_per_tile : g.heads_per_item;
    const int32_t row_bytes = (g.head_dim / 2) * 4;
    const int32_t room = budget - kFixedSmem - g.vecs * vec_bytes(g.head_dim);
    int32_t n = std::min({kChunk, kKvTileWords / (g.head_dim / 2), std::max(0, room) / row_bytes});
    if (n > kMinTilePositions) n -= n % (kThreads / 32);  // whole rounds of the warps
    g.positions_per_tile = std::max(kMinTilePositions, n);
    g.smem_bytes = smem_layout(g).bytes;
}

// The (row, chunk) partials of a split sequence: those its rows see, or with a chunk
// bound (step graphs) the bound for every row; -1 when a row sees more than the bound.
int64_t split_partials(int32_t q_len, int32_t kv_len, int32_t window, int32_t bound) {
    if (bound == 0) return partials_before(kv_len - q_len, q_len, window);
    if (kernels::chunks_seen(kv_len - 1, window) > bound) return -1;
    return int64_t{q_len} * bound;
}

}  // namespace

bool plan_attention(const kernels::AttentionBatch& batch, int32_t n_heads, int32_t n_kv_heads,
                    int32_t head_dim, AttentionShape shape, AttentionPlan* plan,
                    int32_t smem_per_sm) {
    if (!plan || n_kv_heads < 1 || n_heads < n_kv_heads || n_heads % n_kv_heads != 0 ||
        !head_dim_ok(head_dim) || batch.window < 0 || !host_lengths_ok(batch) || smem_per_sm <= 0)
        return false;
    AttentionPlan p;
    const int32_t budget = attention_smem_budget(smem_per_sm);
    p.geometry = make_geometry(n_heads, n_kv_heads, head_dim, batch.window, shape, budget);
    const int32_t bound = batch.chunk_bound;
    if (bound < 0) return false;
    for (int32_t s = 0; s < batch.n_seqs; ++s) {
        const int32_t q_len = batch.host_q_len[s];
        SeqCounts c = seq_counts(p.geometry, q_len, batch.host_kv_len[s]);
        if (bound > 0 && q_len > 0) {  // every row of a split sequence sees bound chunks
            c.partials = split_partials(q_len, batch.host_kv_len[s], batch.window, bound);
            if (!seq_splits(q_len, shape) || c.partials < 0) return false;
            c.items = int64_t{p.geometry.n_kv_heads} * p.geometry.head_slices * c.partials;
        }
        if (q_len > 0 && seq_splits(q_len, shape)) {
            p.split_rows += q_len;
            p.split_items += c.items;
            p.partials += c.partials;
        } else {
            p.whole_rows += q_len;
            p.whole_items += c.items;
        }
        // A grid holds at most 2^31 - 1 blocks (both kernels' grids are 1-D).
        if (p.split_items + p.whole_items > INT_MAX || p.split_rows > INT_MAX) return false;
    }
    fit_tiles(p.geometry, p.whole_items > 0, budget);
    p.workspace_bytes = static_cast<std::size_t>(p.partials) * static_cast<std::size_t>(n_heads) *
                        static_cast<std::size_t>(head_dim + 2) * sizeof(float);
    *plan = p;
    return true;
}

std::size_t attention_workspace_bytes(const kernels::AttentionBatch& batch, int32_t n_heads,
                                      int32_t head_dim, AttentionShape shape) {
    if (n_heads < 1 || !head_dim_ok(head_dim) || !host_lengths_ok(batch) || batch.chunk_bound < 0 ||
        batch.window < 0)
        return 0;
    int64_t partials = 0;
    for (int32_t s = 0; s < batch.n_seqs; ++s) {
        const int32_t q_len = batch.host_q_len[s];
        if (q_len <= 0 || !seq_splits(q_len, shape)) continue;
        const int64_t n =
            split_partials(q_len, batch.host_kv_len[s], batch.window, batch.chunk_bound);
        if (n < 0) return 0;
        partials += n;
    }
    return static_cast<std::size_t>(partials) * static_cast<std::size_t>(n_heads) *
           static_cast<std::size_t>(head_dim + 2) * sizeof(float);
}

std::size_t attention_workspace_bound(int32_t max_rows, int32_t max_seqs, int32_t max_context,
                                      int32_t n_heads, int32_t head_dim) {
    if (max_rows <= 0 || max_seqs <= 0 || max_context <= 0 || n_heads <= 0 || head_dim <= 0)
        return 0;
    const int64_t rows =
        std::min<int64_t>(max_rows, int64_t{max_seqs} * attention_detail::kSplitMaxQLen);
    const int64_t chunks =
        (int64_t{max_context} + attention_detail::kChunk - 1) / attention_detail::kChunk;
    return static_cast<std::size_t>(rows * chunks * n_heads * (head_dim + 2)) * sizeof(float);
}

}  // namespace hearth::gpu
