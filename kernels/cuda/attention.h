// Paged grouped-query attention on the GPU: Backend::attention (kernels/backend.h) over the
// fp16 paged KV cache, for batches that mix decode steps with prefill chunks.
//
// Batch invariance, bit for bit on a device: a query row's output depends only on its own
// query vector, its visible context and the scale, never on the other sequences of the
// batch, on how its prompt was cut into steps, or on whether it ran as a decode token or
// inside a prefill chunk. The context of a query is cut at fixed positions into chunks of
// kChunk = 256 positions. For each chunk with a visible position one routine computes the
// partial (m = max score, l = Σ exp(s − m), acc[d] = Σ exp(s − m)·v[d]) in a fixed order:
// the score q·k by 32 lanes splitting head_dim (fused multiply-adds over the lane's
// dimension pairs, then a fixed shuffle tree) times scale; m and l by lanes striding over
// the positions, then the same tree; acc over positions in increasing order, one thread
// per output element. The output is fold(partial_0, partial_1, ...) in chunk order with
// one fold (m' = max, both sides rescaled by exp(m − m')), then acc / l. A sliding window
// (AttentionBatch::window) masks the positions before it (−inf scores). The chunks wholly
// before it are not read: a split row's partials start at its window's first chunk
// (kernels::first_chunk_seen), a whole item at its first row's, so a local layer's decode
// reads the window and not the context (a masked chunk would fold as nothing); soft-capped
// scores (AttentionBatch::softcap) are cap · tanh(s / cap) after the scale. Multiplications
// and additions are explicitly unfused (__fmul_rn, __fadd_rn) so that the compiler cannot
// contract them differently in different places.
//
// Two execution shapes, both one CUDA block (128 threads) per work item of one kernel
// launch, planned on the host from the batch's host_* arrays (and the device's shared
// memory per SM: see attention_smem_budget):
//  * split (sequences with q_len ≤ 4: decode-like rows): an item is (query row, KV head,
//    chunk); it writes its partial to the workspace and a second kernel folds each row's
//    partials in chunk order. A long context is spread over many blocks.
//  * whole (longer q_len: prefill): an item is (sequence, tile of consecutive query rows,
//    KV head); it walks the chunks itself and folds as it goes.
// An item takes all the query heads of its KV head (slices of them when a group has more
// heads than an item's 16 query vectors, 8 for head_dim > 128), so each K/V sub-tile is
// staged once in shared memory and used by every query vector of the item (rows × heads;
// a whole item's tile has up to 16 / heads rows, at least one, fewer where the shared
// memory budget asks; see plan_attention). Both shapes run the same chunk
// routine and the same fold, so they give the same bits; a mixed batch is one launch of
// the item kernel plus, when rows were split, one launch of the combine kernel.
//
// Blocks find their item on the device (a scan of q_len and kv_len), so a launch depends
// on the host only through its grid size. With AttentionBatch::chunk_bound (step graphs:
// decode-like sequences only) the grid is sized for every split row seeing that many
// chunks and the blocks past the real items return at once: a captured launch then serves
// every later step whose rows see at most that many chunks, with the same bits.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "backend.h"
#include "quant/fp16.h"  // HEARTH_HOST_DEVICE

namespace hearth::gpu {

// Which execution shape serves which sequence: as planned (split for q_len ≤ 4, whole
// otherwise), or every sequence forced into one shape (tests: the shapes agree bit for bit).
enum class AttentionShape { Planned, AllSplit, AllWhole };

namespace attention_detail {

inline constexpr int32_t kChunk = kernels::kAttentionChunk;  // positions per context chunk
inline constexpr int32_t kThreads = 128;                     // threads per CUDA block
inline constexpr int32_t kMaxVecs = 16;        // query vectors (rows × heads) per work item
inline constexpr int32_t kAccRegs = 16;        // output accumulators per thread
inline constexpr int32_t kKvTileWords = 4096;  // shared K/V sub-tile: at most 16 KiB of fp16 pairs
inline constexpr int32_t kMinTilePositions = 8;  // and at least this many positions
inline constexpr int32_t kSplitMaxQLen = 4;      // planned: sequences up to this q_len split
inline constexpr int32_t kMaxHeadDim = 256;
// Shared memory: the item kernel's static part (its scan) is at most kStaticSmem bytes, a
// block's dynamic part at most kMaxDynamicSmem (no opt-in needed), and the device keeps
// kBlockReservedSmem bytes per resident block (sm_80 and later; sm_75 none).
inline constexpr int32_t kStaticSmem = 128;
inline constexpr int32_t kMaxDynamicSmem = 48 * 1024 - kStaticSmem;
inline constexpr int32_t kBlockReservedSmem = 1024;
// The smallest shared memory per SM of a supported device (sm_75): plans made without
// naming a device (the host twins) assume it.
inline constexpr int32_t kSmemPerSmFloor = 64 * 1024;

// The launch geometry, a function of the head counts, head_dim and the shape option.
struct Geometry {
    int32_t n_heads = 0, n_kv_heads = 0, group = 0, head_dim = 0;
    int32_t dims_per_thread = 0;     // 1 (head_dim ≤ 128) or 2: output dims a thread owns
    int32_t thread_groups = 0;       // threads split into this many groups of head_dim
    int32_t max_vecs = 0;            // query vectors an item may take
    int32_t heads_per_item = 0;      // query heads of one KV head an item takes
    int32_t head_slices = 0;         // items per KV head and row tile: ceil(group / heads_per_item)
    int32_t rows_per_tile = 0;       // query rows of a whole-shape item
    int32_t vecs = 0;                // query vectors staged in shared memory: the launch's
                                     // largest item (heads_per_item when no item is whole)
    int32_t positions_per_tile = 0;  // K/V positions staged in shared memory at a time
    int32_t smem_bytes = 0;          // the item kernel's dynamic shared memory (SmemLayout)
    int32_t window = 0;              // AttentionBatch::window: split rows skip the chunks
                                     // before their window
    AttentionShape shape = AttentionShape::Planned;
};

HEARTH_HOST_DEVICE inline bool seq_splits(int32_t q_len, AttentionShape shape) {
    return shape == AttentionShape::AllSplit ||
           (shape == AttentionShape::Planned && q_len <= kSplitMaxQLen);
}

using kernels::partials_before;

// The item kernel's dynamic shared memory, as byte offsets: per-vector scalars
// (kSmallArrays arrays of kMaxVecs), the chunk's cache rows (kChunk), the query vectors
// (vecs × head_dim floats), their chunk's scores (vecs × kChunk floats) and a K or V
// sub-tile (positions_per_tile × head_dim / 2 words of fp16 pairs). 4-byte elements only.
inline constexpr int32_t kSmallArrays = 8;
struct SmemLayout {
    int32_t slot, q, p, kv, bytes;
};
HEARTH_HOST_DEVICE inline SmemLayout smem_layout(const Geometry& g) {
    SmemLayout l{};
    l.slot = kSmallArrays * kMaxVecs * 4;
    l.q = l.slot + kChunk * 4;
    l.p = l.q + g.vecs * g.head_dim * 4;
    l.kv = l.p + g.vecs * kChunk * 4;
    l.bytes = l.kv + g.positions_per_tile * (g.head_dim / 2) * 4;
    return l;
}

struct SeqCounts {
    int64_t items = 0;     // work items (CUDA blocks of the item kernel)
    int64_t partials = 0;  // (row, chunk) partials in the workspace (split sequences)
    int64_t split_rows = 0;
};

HEARTH_HOST_DEVICE inline SeqCounts seq_counts(const Geometry& g, int32_t q_len, int32_t kv_len) {
    SeqCounts c;
    if (q_len <= 0) return c;
    const int64_t per_row_block = int64_t{g.n_kv_heads} * g.head_slices;
    if (seq_splits(q_len, g.shape)) {
        c.partials = partials_before(kv_len - q_len, q_len, g.window);
        c.items = per_row_block * c.partials;
        c.split_rows = q_len;
    } else {
        c.items = per_row_block * ((q_len + g.rows_per_tile - 1) / g.rows_per_tile);
    }
    return c;
}

}  // namespace attention_detail

// What a launch does, from the host arrays. Tests inspect it.
struct AttentionPlan {
    attention_detail::Geometry geometry;
    int64_t split_rows = 0, whole_rows = 0;    // query rows served by each shape
    int64_t split_items = 0, whole_items = 0;  // CUDA blocks of the item kernel, by shape
    int64_t partials = 0;                      // (row, chunk) partials of split rows
    std::size_t workspace_bytes = 0;           // partials · n_heads · (head_dim + 2) floats
};

// The plan of a call; false for arguments attention_cuda rejects as sizes: n_heads not a
// positive multiple of n_kv_heads, head_dim odd or outside [2, 256], n_seqs < 0, missing
// host_q_len / host_kv_len, q_len < 0, kv_len < q_len, a query with no context, more items
// than a grid holds, or a chunk_bound that a sequence exceeds or does not split under.
// With a chunk_bound, the items and partials are the bound's (upper bounds).
//
// The geometry fits the item kernel's shared memory in attention_smem_budget(smem_per_sm)
// where it can (fewer query rows per whole item, smaller K/V sub-tiles), so that the
// device keeps 2 blocks per SM resident on sm_75 and 4 on sm_80 and later. The bits do
// not depend on it: every row's chunks, positions and folds are the same whatever the
// tiles.
bool plan_attention(const kernels::AttentionBatch& batch, int32_t n_heads, int32_t n_kv_heads,
                    int32_t head_dim, AttentionShape shape, AttentionPlan* plan,
                    int32_t smem_per_sm = attention_detail::kSmemPerSmFloor);

// The dynamic shared memory an item block may use on a device with smem_per_sm bytes of
// shared memory per SM (cudaDevAttrMaxSharedMemoryPerMultiprocessor): a quarter of it on
// devices of 96 KiB or more (sm_80 and later), half on smaller ones (sm_75: 64 KiB),
// less the device's per-block reserve and the kernel's static part; at most
// kMaxDynamicSmem.
int32_t attention_smem_budget(int32_t smem_per_sm);

// The workspace attention_cuda / attention_on_host need (0 when no row splits, or for
// invalid host arrays): partials · n_heads · (head_dim + 2) · 4 bytes, where partials
// counts, over the split rows, the chunks each row sees.
std::size_t attention_workspace_bytes(const kernels::AttentionBatch& batch, int32_t n_heads,
                                      int32_t head_dim,
                                      AttentionShape shape = AttentionShape::Planned);

// The most workspace any call can need in steps of at most max_rows query rows over at
// most max_seqs sequences, none seeing more than max_context positions: every row that
// can split (kSplitMaxQLen per sequence) seeing a full context's chunks. For the VRAM plan,
// which counts it so that the workspace is allocated once, before the KV cache takes the
// rest.
std::size_t attention_workspace_bound(int32_t max_rows, int32_t max_seqs, int32_t max_context,
                                      int32_t n_heads, int32_t head_dim);

// Enqueues the attention on `stream`. q, out [n_tokens, n_heads, head_dim] fp32, the cache,
// the batch's arrays (q_start, q_len, kv_len, block_table_start, block_tables) and the
// workspace are device memory; host_q_len / host_kv_len are the host copies the launch is
// planned from. The cache's k and v must be 4-byte aligned. Returns cudaErrorInvalidValue
// before touching the device for invalid sizes (see plan_attention), null pointers, or a
// workspace smaller than attention_workspace_bytes(batch, n_heads, head_dim, shape);
// otherwise the launch status. n_seqs = 0 or no query rows: a no-op.
// smem_per_sm: the device's shared memory per SM (plan_attention).
cudaError_t attention_cuda(const float* q, const kernels::PagedKvLayer& cache,
                           const kernels::AttentionBatch& batch, int32_t n_heads, float scale,
                           float* out, float* workspace, std::size_t workspace_bytes,
                           cudaStream_t stream, AttentionShape shape = AttentionShape::Planned,
                           int32_t smem_per_sm = attention_detail::kSmemPerSmFloor);

// The item kernel's blocks that can be resident on one SM of the current device for a
// plan's geometry (cudaOccupancyMaxActiveBlocksPerMultiprocessor with its dynamic shared
// memory): what plan_attention sizes for, measured on a device by the GPU bundle.
cudaError_t attention_occupancy(const AttentionPlan& plan, int* blocks);

// The kernels' per-thread code run on the host: every work item as a block of 128 virtual
// threads, the warps' shuffle trees in the same order, then the combine. Host pointers
// (the batch's device-side arrays are read as host arrays); false where attention_cuda
// would return an error. Equals the device up to the device's expf (a few ulps).
bool attention_on_host(const float* q, const kernels::PagedKvLayer& cache,
                       const kernels::AttentionBatch& batch, int32_t n_heads, float scale,
                       float* out, float* workspace, std::size_t workspace_bytes,
                       AttentionShape shape = AttentionShape::Planned,
                       int32_t smem_per_sm = attention_detail::kSmemPerSmFloor);

}  // namespace hearth::gpu
