// The per-thread code of the paged attention kernels (attention.h), shared by the kernels
// in attention.cu and their host twin: all __host__ __device__, included by attention.cu
// only. The warp-level steps (a score's dot product, a chunk's max and sum) are a lane
// part here plus a shuffle tree there that the host repeats in the same order.
//
// A work item is one CUDA block of kThreads threads over nv = rows × heads query vectors
// (nv ≤ 16) of one KV head. Per chunk of the context:
//   1. the cache rows of the chunk's visible positions into shared memory (slot);
//   2. per K sub-tile (positions_per_tile positions, fp16 pairs in shared memory): warp w
//      takes positions w, w + 4, ...: its lanes load their pairs of the K row once and
//      dot them with every query vector that sees the position (lane part + tree);
//   3. per vector, one warp: the max m and the sum l of exp(s − m) over the visible
//      positions (lanes striding, then trees), the scores replaced by exp(s − m); a whole
//      item folds (m, l) into its running state here;
//   4. per V sub-tile: each thread owns output elements (a dimension, or two for
//      head_dim > 128, of up to 16 vectors) and accumulates p · v over the positions in
//      increasing order;
//   5. split items write (m, l, acc) to the workspace; whole items fold acc into their
//      output accumulators. After the last chunk a whole item writes acc / l.
// The combine kernel folds each split row's partials in chunk order with the same fold.
#pragma once

#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "cuda/attention.h"

namespace hearth::gpu::attention_detail {

#if defined(__CUDA_ARCH__)
#define HEARTH_UNROLL _Pragma("unroll")
#else
#define HEARTH_UNROLL
#endif

constexpr int kWarps = kThreads / 32;
constexpr int kPairsPerLane = kMaxHeadDim / 64;  // dimension pairs of a lane in a dot product
constexpr int32_t kMaxVecDims = 2048;            // max_vecs · head_dim (see make_geometry)
constexpr unsigned kFullMask = 0xffffffffu;

// IEEE float operations that nvcc does not contract into fused multiply-adds (it could
// otherwise fuse a product into a following sum in one kernel and not in another).
__host__ __device__ __forceinline__ float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
__host__ __device__ __forceinline__ float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}
__host__ __device__ __forceinline__ float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
}
__host__ __device__ __forceinline__ float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
}
__host__ __device__ __forceinline__ int32_t imax(int32_t a, int32_t b) {
    return a > b ? a : b;
}
__host__ __device__ __forceinline__ int32_t imin(int32_t a, int32_t b) {
    return a < b ? a : b;
}
__host__ __device__ __forceinline__ int32_t iclamp(int32_t x, int32_t lo, int32_t hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}

// fp16 bits to float: exact on both sides.
__host__ __device__ __forceinline__ float half_to_float(uint32_t bits) {
#if defined(__CUDA_ARCH__)
    return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
#else
    return quant::fp16_to_f32(static_cast<uint16_t>(bits));
#endif
}
// A word of two fp16 values: element 2i in the low half, 2i + 1 in the high half.
__host__ __device__ __forceinline__ float lo_half(uint32_t w) {
    return half_to_float(w & 0xffffu);
}
__host__ __device__ __forceinline__ float hi_half(uint32_t w) {
    return half_to_float(w >> 16);
}
__host__ __device__ __forceinline__ uint32_t load_word(const uint16_t* p) {
#if defined(__CUDA_ARCH__)
    return __ldg(reinterpret_cast<const unsigned int*>(p));
#else
    uint32_t w;
    std::memcpy(&w, p, sizeof w);
    return w;
#endif
}

struct Params {
    const float* q;
    const uint16_t* k;
    const uint16_t* v;
    float* out;
    float* workspace;
    const int32_t* q_start;
    const int32_t* q_len;
    const int32_t* kv_len;
    const int32_t* table_start;
    const int32_t* tables;
    int32_t n_seqs;
    int32_t block_size;
    float scale;
    float softcap, inv_softcap;  // AttentionBatch::softcap and 1 / it (0: none)
    Geometry geo;                // with AttentionBatch::window (0: none)
};

// A score from its dot product: times the scale, then soft-capped (as the CPU backend).
__host__ __device__ __forceinline__ float score_of(const Params& p, float dot) {
    const float s = mul_rn(dot, p.scale);
    return p.softcap > 0.0f ? mul_rn(tanhf(mul_rn(s, p.inv_softcap)), p.softcap) : s;
}

// One work item: query heads [h0, h0 + n_h) (all of KV head kv_head, or a slice of them)
// of rows [row0, row0 + n_rows) of a sequence, over chunks [chunk_first, chunk_last].
struct Item {
    int32_t q_start, first_pos;  // the sequence's first query row and its position
    const int32_t* table;
    int32_t kv_head, h0, n_h;
    int32_t row0, n_rows;
    int32_t chunk_first, chunk_last;
    bool split;
    int64_t partial;  // split: the workspace partial of (row0, chunk_first)
};

// The sequence's local-th item; partial_base is its first partial in the workspace.
__host__ __device__ inline Item decode_item(const Params& p, int32_t seq, int64_t local,
                                            int64_t partial_base) {
    const Geometry& g = p.geo;
    const int32_t q_len = p.q_len[seq];
    Item it{};
    it.q_start = p.q_start[seq];
    it.first_pos = p.kv_len[seq] - q_len;
    it.table = p.tables + p.table_start[seq];
    it.split = seq_splits(q_len, g.shape);
    int64_t head_block;  // kv_head · head_slices + slice
    if (it.split) {
        // Items by (KV head, slice), then by partial: row by row, chunk by chunk (each
        // row's from the first chunk of its window).
        const int32_t W = g.window;
        const int64_t per = partials_before(it.first_pos, q_len, W);
        head_block = local / per;
        const int64_t pi = local % per;
        int32_t lo = 0, hi = q_len - 1;  // the last row whose first partial is ≤ pi
        while (lo < hi) {
            const int32_t mid = (lo + hi + 1) / 2;
            if (partials_before(it.first_pos, mid, W) <= pi)
                lo = mid;
            else
                hi = mid - 1;
        }
        it.row0 = lo;
        it.n_rows = 1;
        it.chunk_first = kernels::first_chunk_seen(it.first_pos + lo, W) +
                         static_cast<int32_t>(pi - partials_before(it.first_pos, lo, W));
        it.chunk_last = it.chunk_first;
        it.partial = partial_base + pi;
    } else {
        // Items by (KV head, slice), then by tile, the last (longest) tiles first.
        const int32_t tiles = (q_len + g.rows_per_tile - 1) / g.rows_per_tile;
        head_block = local / tiles;
        const int32_t tile = tiles - 1 - static_cast<int32_t>(local % tiles);
        it.row0 = tile * g.rows_per_tile;
        it.n_rows = imin(g.rows_per_tile, q_len - it.row0);
        // A sliding window: the chunks before the first row's window are masked for every
        // row, and folding them would change nothing (fold_scalars): skipped.
        it.chunk_first = kernels::first_chunk_seen(it.first_pos + it.row0, g.window);
        it.chunk_last = (it.first_pos + it.row0 + it.n_rows - 1) / kChunk;
        it.partial = -1;
    }
    it.kv_head = static_cast<int32_t>(head_block / g.head_slices);
    const int32_t slice = static_cast<int32_t>(head_block % g.head_slices);
    it.h0 = it.kv_head * g.group + slice * g.heads_per_item;
    it.n_h = imin(g.heads_per_item, g.group - slice * g.heads_per_item);
    return it;
}

// The positions of chunk c that the item's last row sees (its other rows see fewer).
__host__ __device__ __forceinline__ int32_t chunk_extent(const Item& it, int32_t c) {
    return iclamp(it.first_pos + it.row0 + it.n_rows - c * kChunk, 0, kChunk);
}

// A block's dynamic shared memory (attention.h: SmemLayout), carved by tile_smem.
struct TileSmem {
    float* q;              // [vector][head_dim]: vector = row · n_h + head
    float* p;              // [vector][chunk position]: scores, then exp(s - m)
    uint32_t* kv;          // [position][head_dim / 2]: a K or V sub-tile, fp16 pairs
    int32_t* slot;         // [kChunk] cache row of each chunk position
    int32_t* n_vis;        // [kMaxVecs] positions of the chunk each vector sees
    int32_t* lo_vis;       // of those, the first in its sliding window (0: all)
    float *m_run, *l_run;  // whole items: the fold so far
    float *fa, *fb;        // whole items: this chunk's fold factors
    float *mc, *lc;        // split items: this chunk's m and l
};
static_assert(kSmallArrays == 8, "TileSmem's per-vector arrays");
__host__ __device__ inline TileSmem tile_smem(unsigned char* base, const Geometry& g) {
    const SmemLayout l = smem_layout(g);
    TileSmem s;
    int32_t* small = reinterpret_cast<int32_t*>(base);
    float* smallf = reinterpret_cast<float*>(base);
    s.n_vis = small;
    s.lo_vis = small + kMaxVecs;
    s.m_run = smallf + 2 * kMaxVecs;
    s.l_run = smallf + 3 * kMaxVecs;
    s.fa = smallf + 4 * kMaxVecs;
    s.fb = smallf + 5 * kMaxVecs;
    s.mc = smallf + 6 * kMaxVecs;
    s.lc = smallf + 7 * kMaxVecs;
    s.slot = reinterpret_cast<int32_t*>(base + l.slot);
    s.q = reinterpret_cast<float*>(base + l.q);
    s.p = reinterpret_cast<float*>(base + l.p);
    s.kv = reinterpret_cast<uint32_t*>(base + l.kv);
    return s;
}

// Output elements a thread owns in steps 4-5: dimensions dim + r · kThreads (r < R, below
// head_dim) of vectors group + thread_groups · k (k < kAccRegs / R, below nv).
struct Owner {
    int32_t group, dim;
    bool active;
};
__host__ __device__ __forceinline__ Owner owner_of(const Geometry& g, int t) {
    if (g.head_dim > kThreads) return {0, t, true};
    return {t / g.head_dim, t % g.head_dim, t / g.head_dim < g.thread_groups};
}

template <int R>
struct ThreadAcc {
    static constexpr int kVecs = kAccRegs / R;
    float acc[R][kVecs];  // this chunk
    float o[R][kVecs];    // whole items: the fold so far
};

// The fold of a chunk's (m_c, l_c, acc_c) into a running (m, l, o): m' = max(m, m_c),
// l' = l·a + l_c·b, o' = o·a + acc_c·b with a = exp(m − m'), b = exp(m_c − m'). From the
// empty state (−inf, 0, 0) the first fold gives the chunk itself.
struct Fold {
    float m, l, a, b;
};
__host__ __device__ __forceinline__ Fold fold_scalars(float m, float l, float m_c, float l_c) {
    // A chunk with no position in its window (m_c = −inf) changes nothing; computing it
    // would give exp(−inf − (−inf)) when the running state is still empty.
    if (m_c == -INFINITY) return {m, l, 1.0f, 0.0f};
    const float mx = fmaxf(m, m_c);
    const float a = expf(sub_rn(m, mx)), b = expf(sub_rn(m_c, mx));
    return {mx, add_rn(mul_rn(l, a), mul_rn(l_c, b)), a, b};
}
__host__ __device__ __forceinline__ float fold_elem(float o, float acc, float a, float b) {
    return add_rn(mul_rn(o, a), mul_rn(acc, b));
}

template <int R>
__host__ __device__ __forceinline__ void init_thread(ThreadAcc<R>& a) {
    HEARTH_UNROLL
    for (int r = 0; r < R; ++r) {
        HEARTH_UNROLL
        for (int k = 0; k < ThreadAcc<R>::kVecs; ++k) a.acc[r][k] = a.o[r][k] = 0.0f;
    }
}

template <int R>
__host__ __device__ __forceinline__ void zero_acc(ThreadAcc<R>& a) {
    HEARTH_UNROLL
    for (int r = 0; r < R; ++r) {
        HEARTH_UNROLL
        for (int k = 0; k < ThreadAcc<R>::kVecs; ++k) a.acc[r][k] = 0.0f;
    }
}

__host__ __device__ inline void load_q(const TileSmem& s, const Params& p, const Item& it, int t) {
    const int32_t D = p.geo.head_dim, nv = it.n_rows * it.n_h;
    for (int32_t i = t; i < nv * D; i += kThreads) {
        const int32_t v = i / D, d = i - v * D, r = v / it.n_h, hh = v - r * it.n_h;
        s.q[i] = p.q[(int64_t{it.q_start + it.row0 + r} * p.geo.n_heads + it.h0 + hh) * D + d];
    }
    if (t < nv) {
        s.m_run[t] = -INFINITY;
        s.l_run[t] = 0.0f;
    }
}

// Step 1: each vector's visible positions in chunk c, and the cache rows of the chunk.
__host__ __device__ inline void chunk_setup(const TileSmem& s, const Params& p, const Item& it,
                                            int32_t c, int32_t extent, int t) {
    const int32_t c0 = c * kChunk, bs = p.block_size;
    if (t < it.n_rows * it.n_h) {
        const int32_t pos = it.first_pos + it.row0 + t / it.n_h;
        s.n_vis[t] = iclamp(pos + 1 - c0, 0, kChunk);
        const int32_t W = p.geo.window;
        s.lo_vis[t] = W > 0 ? iclamp(pos - W + 1 - c0, 0, s.n_vis[t]) : 0;
    }
    for (int32_t j = t; j < extent; j += kThreads) {
        const int32_t pos = c0 + j;
        s.slot[j] = it.table[pos / bs] * bs + pos % bs;
    }
}

// Steps 2 and 4: positions [j0, j0 + n) of the chunk, K or V, into shared memory.
__host__ __device__ inline void load_tile(const TileSmem& s, const uint16_t* cache, const Params& p,
                                          const Item& it, int32_t j0, int32_t n, int t) {
    const int32_t D = p.geo.head_dim, W = D / 2;
    for (int32_t w = t; w < n * W; w += kThreads) {
        const int32_t jj = w / W, ww = w - jj * W;
        const int64_t row = int64_t{s.slot[j0 + jj]} * p.geo.n_kv_heads + it.kv_head;
        s.kv[w] = load_word(cache + row * D + 2 * ww);
    }
}

// Step 2, a lane's part: its dimension pairs lane, lane + 32, ... of a K row.
struct LaneK {
    float k[2 * kPairsPerLane];
};
__host__ __device__ __forceinline__ LaneK lane_k(const uint32_t* row, int lane, int32_t W) {
    LaneK k;
    HEARTH_UNROLL
    for (int i = 0; i < kPairsPerLane; ++i) {
        const int32_t pr = lane + 32 * i;
        const uint32_t w = pr < W ? row[pr] : 0u;
        k.k[2 * i] = lo_half(w);
        k.k[2 * i + 1] = hi_half(w);
    }
    return k;
}
__host__ __device__ __forceinline__ float lane_dot(const float* qv, const LaneK& k, int lane,
                                                   int32_t W) {
    float acc = 0.0f;
    HEARTH_UNROLL
    for (int i = 0; i < kPairsPerLane; ++i) {
        const int32_t pr = lane + 32 * i;
        if (pr < W) {
            acc = fmaf(qv[2 * pr], k.k[2 * i], acc);
            acc = fmaf(qv[2 * pr + 1], k.k[2 * i + 1], acc);
        }
    }
    return acc;
}

// Step 3, a lane's parts: over positions lane, lane + 32, ... below n.
__host__ __device__ __forceinline__ float lane_max(const float* sc, int32_t n, int lane) {
    float m = -INFINITY;
    for (int32_t j = lane; j < n; j += 32) m = fmaxf(m, sc[j]);
    return m;
}
// A vector whose window misses the whole chunk (m = −inf): probabilities 0, sum 0.
__host__ __device__ __forceinline__ float lane_zero(float* sc, int32_t n, int lane) {
    for (int32_t j = lane; j < n; j += 32) sc[j] = 0.0f;
    return 0.0f;
}
__host__ __device__ __forceinline__ float lane_exp_sum(float* sc, int32_t n, int lane, float m) {
    float l = 0.0f;
    for (int32_t j = lane; j < n; j += 32) {
        const float e = expf(sub_rn(sc[j], m));
        sc[j] = e;
        l = add_rn(l, e);
    }
    return l;
}

// Step 3, by lane 0 of the vector's warp.
__host__ __device__ __forceinline__ void finish_stats(const TileSmem& s, int32_t v, float m,
                                                      float l, bool split) {
    if (split) {
        s.mc[v] = m;
        s.lc[v] = l;
        return;
    }
    const Fold f = fold_scalars(s.m_run[v], s.l_run[v], m, l);
    s.m_run[v] = f.m;
    s.l_run[v] = f.l;
    s.fa[v] = f.a;
    s.fb[v] = f.b;
}

// Step 4: acc += p[j] · v[j] over positions j0 .. j0 + n - 1 of the sub-tile, in order.
template <int R>
__host__ __device__ inline void accumulate(ThreadAcc<R>& a, const TileSmem& s, const Geometry& g,
                                           int32_t nv, int32_t j0, int32_t n, int t) {
    const Owner ow = owner_of(g, t);
    if (!ow.active) return;
    const int32_t D = g.head_dim;
    for (int32_t jj = 0; jj < n; ++jj) {
        const int32_t j = j0 + jj;
        const uint32_t* row = s.kv + jj * (D / 2);
        float vv[R];
        HEARTH_UNROLL
        for (int r = 0; r < R; ++r) {
            const int32_t d = ow.dim + r * kThreads;
            vv[r] = d >= D ? 0.0f : (d & 1) ? hi_half(row[d >> 1]) : lo_half(row[d >> 1]);
        }
        HEARTH_UNROLL
        for (int k = 0; k < ThreadAcc<R>::kVecs; ++k) {
            const int32_t v = ow.group + g.thread_groups * k;
            if (v >= nv || j >= s.n_vis[v]) continue;
            const float pv = s.p[v * kChunk + j];
            HEARTH_UNROLL
            for (int r = 0; r < R; ++r)
                if (ow.dim + r * kThreads < D) a.acc[r][k] = fmaf(pv, vv[r], a.acc[r][k]);
        }
    }
}

// Step 5.
template <int R>
__host__ __device__ inline void finish_chunk(ThreadAcc<R>& a, const TileSmem& s, const Params& p,
                                             const Item& it, int t) {
    const Geometry& g = p.geo;
    const int32_t D = g.head_dim, nv = it.n_rows * it.n_h;
    const int64_t stride = int64_t{g.n_heads} * (D + 2);  // floats per partial
    float* part = it.split ? p.workspace + it.partial * stride : nullptr;
    if (it.split && t < nv) {  // a split item has one row: vector v is head h0 + v
        part[int64_t{g.n_heads} * D + it.h0 + t] = s.mc[t];
        part[int64_t{g.n_heads} * (D + 1) + it.h0 + t] = s.lc[t];
    }
    const Owner ow = owner_of(g, t);
    if (!ow.active) return;
    HEARTH_UNROLL
    for (int k = 0; k < ThreadAcc<R>::kVecs; ++k) {
        const int32_t v = ow.group + g.thread_groups * k;
        if (v >= nv || s.n_vis[v] == 0) continue;
        HEARTH_UNROLL
        for (int r = 0; r < R; ++r) {
            const int32_t d = ow.dim + r * kThreads;
            if (d >= D) continue;
            if (it.split)
                part[int64_t{it.h0 + v} * D + d] = a.acc[r][k];
            else
                a.o[r][k] = fold_elem(a.o[r][k], a.acc[r][k], s.fa[v], s.fb[v]);
        }
    }
}

// A whole item's output: o / l.
template <int R>
__host__ __device__ inline void write_out(const ThreadAcc<R>& a, const TileSmem& s, const Params& p,
                                          const Item& it, int t) {
    const Geometry& g = p.geo;
    const Owner ow = owner_of(g, t);
    if (!ow.active) return;
    const int32_t D = g.head_dim, nv = it.n_rows * it.n_h;
    HEARTH_UNROLL
    for (int k = 0; k < ThreadAcc<R>::kVecs; ++k) {
        const int32_t v = ow.group + g.thread_groups * k;
        if (v >= nv) continue;
        const int32_t r_local = v / it.n_h, hh = v - r_local * it.n_h;
        float* o = p.out + (int64_t{it.q_start + it.row0 + r_local} * g.n_heads + it.h0 + hh) * D;
        HEARTH_UNROLL
        for (int r = 0; r < R; ++r) {
            const int32_t d = ow.dim + r * kThreads;
            if (d < D) o[d] = div_rn(a.o[r][k], s.l_run[v]);
        }
    }
}

// What the block-wide scan that maps a block to its sequence counts for sequence seq: its
// blocks (items, or split rows for the combine) and its partials.
struct SeqKey {
    long long key, partials;
};
// A block's sequence, found by that scan: the sequence's first block and first partial.
struct Located {
    int32_t seq;
    long long first, partial_base;
};
__host__ __device__ inline SeqKey seq_key(const Params& p, int32_t seq, bool by_rows) {
    if (seq >= p.n_seqs) return {0, 0};
    const SeqCounts c = seq_counts(p.geo, p.q_len[seq], p.kv_len[seq]);
    return {by_rows ? c.split_rows : c.items, c.partials};
}

// The combine of split row i of a sequence: each output element folds the row's partials
// (the chunks of its window) in chunk order.
__host__ __device__ inline void combine_row(const Params& p, int32_t seq, int32_t i,
                                            int64_t partial_base, int t) {
    const Geometry& g = p.geo;
    const int32_t D = g.head_dim, H = g.n_heads;
    const int32_t first_pos = p.kv_len[seq] - p.q_len[seq];
    const int32_t n_chunks = kernels::chunks_seen(first_pos + i, g.window);
    const int64_t stride = int64_t{H} * (D + 2);
    const float* first =
        p.workspace + (partial_base + partials_before(first_pos, i, g.window)) * stride;
    float* o = p.out + int64_t{p.q_start[seq] + i} * H * D;
    for (int32_t e = t; e < H * D; e += kThreads) {
        const int32_t h = e / D;
        float m = -INFINITY, l = 0.0f, acc = 0.0f;
        for (int32_t c = 0; c < n_chunks; ++c) {
            const float* part = first + c * stride;
            const Fold f =
                fold_scalars(m, l, part[int64_t{H} * D + h], part[int64_t{H} * (D + 1) + h]);
            acc = fold_elem(acc, part[e], f.a, f.b);
            m = f.m;
            l = f.l;
        }
        o[e] = div_rn(acc, l);
    }
}

}  // namespace hearth::gpu::attention_detail
