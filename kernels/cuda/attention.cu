// The paged attention kernels and their host twin (see attention.h); the per-thread code
// they share is attention_kernel.cuh.
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cuda/attention.h"
#include "cuda/attention_kernel.cuh"

namespace hearth::gpu {

namespace {

using namespace attention_detail;

// ---- device ---------------------------------------------------------------------------

// Shuffle-down trees: lane 0 ends with ((v0 ∘ v16) ∘ (v8 ∘ v24)) ∘ ..., as tree_on_host.
__device__ __forceinline__ float warp_tree_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v = add_rn(v, __shfl_down_sync(kFullMask, v, off));
    return v;
}
__device__ __forceinline__ float warp_tree_max(float v) {
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_down_sync(kFullMask, v, off));
    return v;
}

struct ScanSmem {
    long long key[kWarps], partials[kWarps];
    Located found;
};

// The sequence whose blocks hold block `target`: each thread counts a sequence (seq_key),
// then a block-wide exclusive scan of the counts, kThreads sequences at a time. seq = -1
// when target is past every sequence's blocks (a grid sized for a chunk bound).
// locate_on_host repeats it step by step.
__device__ Located locate(const Params& p, long long target, bool by_rows, ScanSmem& sm) {
    const int t = static_cast<int>(threadIdx.x), lane = t % 32, warp = t / 32;
    if (t == 0) sm.found = {-1, 0, 0};
    __syncthreads();
    long long carry_key = 0, carry_part = 0;
    for (int32_t base = 0; base < p.n_seqs; base += kThreads) {
        const SeqKey mine = seq_key(p, base + t, by_rows);
        long long ik = mine.key, ip = mine.partials;  // inclusive scans within the warp
        for (int off = 1; off < 32; off <<= 1) {
            const long long xk = __shfl_up_sync(kFullMask, ik, off);
            const long long xp = __shfl_up_sync(kFullMask, ip, off);
            if (lane >= off) {
                ik += xk;
                ip += xp;
            }
        }
        if (lane == 31) {
            sm.key[warp] = ik;
            sm.partials[warp] = ip;
        }
        __syncthreads();
        long long ek = carry_key + ik - mine.key, ep = carry_part + ip - mine.partials;
        for (int w = 0; w < kWarps; ++w) {
            if (w < warp) {
                ek += sm.key[w];
                ep += sm.partials[w];
            }
            carry_key += sm.key[w];
            carry_part += sm.partials[w];
        }
        if (mine.key > 0 && target >= ek && target < ek + mine.key) sm.found = {base + t, ek, ep};
        __syncthreads();
        if (target < carry_key) break;
    }
    return sm.found;
}

// At least 4 blocks per SM where shared memory allows (attention_smem_budget): the
// registers are held to what 4 blocks leave (128 a thread).
template <int R>
__global__ void __launch_bounds__(kThreads, 4) attention_items_kernel(Params p) {
    extern __shared__ __align__(16) unsigned char dynamic_smem[];
    const TileSmem s = tile_smem(dynamic_smem, p.geo);
    __shared__ ScanSmem scan;
    const int t = static_cast<int>(threadIdx.x), lane = t % 32, warp = t / 32;
    const Located at = locate(p, blockIdx.x, false, scan);
    if (at.seq < 0) return;  // past the items (the same for every thread of the block)
    const Item it = decode_item(p, at.seq, blockIdx.x - at.first, at.partial_base);
    const Geometry& g = p.geo;
    const int32_t D = g.head_dim, W = D / 2, nv = it.n_rows * it.n_h;
    ThreadAcc<R> a;
    init_thread(a);
    load_q(s, p, it, t);
    __syncthreads();
    for (int32_t c = it.chunk_first; c <= it.chunk_last; ++c) {
        const int32_t extent = chunk_extent(it, c);
        chunk_setup(s, p, it, c, extent, t);
        __syncthreads();
        for (int32_t j0 = 0; j0 < extent; j0 += g.positions_per_tile) {  // step 2
            const int32_t n = imin(g.positions_per_tile, extent - j0);
            load_tile(s, p.k, p, it, j0, n, t);
            __syncthreads();
            for (int32_t jj = warp; jj < n; jj += kWarps) {
                const LaneK k = lane_k(s.kv + jj * W, lane, W);
                for (int32_t v = 0; v < nv; ++v) {
                    if (j0 + jj >= s.n_vis[v]) continue;
                    if (j0 + jj < s.lo_vis[v]) {  // before the window: masked
                        if (lane == 0) s.p[v * kChunk + j0 + jj] = -INFINITY;
                        continue;
                    }
                    const float dot = warp_tree_sum(lane_dot(s.q + v * D, k, lane, W));
                    if (lane == 0) s.p[v * kChunk + j0 + jj] = score_of(p, dot);
                }
            }
            __syncthreads();
        }
        for (int32_t v = warp; v < nv; v += kWarps) {  // step 3
            const int32_t n = s.n_vis[v];
            if (n == 0) continue;
            float* sc = s.p + v * kChunk;
            const float m = __shfl_sync(kFullMask, warp_tree_max(lane_max(sc, n, lane)), 0);
            const float l = warp_tree_sum(m == -INFINITY ? lane_zero(sc, n, lane)
                                                         : lane_exp_sum(sc, n, lane, m));
            if (lane == 0) finish_stats(s, v, m, l, it.split);
        }
        zero_acc(a);
        __syncthreads();
        for (int32_t j0 = 0; j0 < extent; j0 += g.positions_per_tile) {  // step 4
            const int32_t n = imin(g.positions_per_tile, extent - j0);
            load_tile(s, p.v, p, it, j0, n, t);
            __syncthreads();
            accumulate(a, s, g, nv, j0, n, t);
            __syncthreads();
        }
        finish_chunk(a, s, p, it, t);  // step 5
        __syncthreads();               // the next chunk rewrites n_vis and the fold factors
    }
    if (!it.split) write_out(a, s, p, it, t);
}

__global__ void __launch_bounds__(kThreads) attention_combine_kernel(Params p) {
    __shared__ ScanSmem scan;
    const Located at = locate(p, blockIdx.x, true, scan);
    if (at.seq < 0) return;
    combine_row(p, at.seq, static_cast<int32_t>(blockIdx.x - at.first), at.partial_base,
                static_cast<int>(threadIdx.x));
}

static_assert(sizeof(ScanSmem) <= kStaticSmem, "the item kernel's static shared memory");

// ---- host -----------------------------------------------------------------------------

// The device's shuffle-down tree over 32 lane values; lane 0's result.
template <typename Op>
float tree_on_host(float* v, Op op) {
    for (int off = 16; off > 0; off >>= 1)
        for (int i = 0; i < off; ++i) v[i] = op(v[i], v[i + off]);
    return v[0];
}

// locate() step by step: the shuffle-up scans and the warps' totals.
Located locate_on_host(const Params& p, long long target, bool by_rows) {
    Located found{-1, 0, 0};
    long long carry_key = 0, carry_part = 0;
    for (int32_t base = 0; base < p.n_seqs; base += kThreads) {
        SeqKey mine[kThreads];
        long long ik[kThreads], ip[kThreads], prev_k[kThreads], prev_p[kThreads];
        for (int t = 0; t < kThreads; ++t) {
            mine[t] = seq_key(p, base + t, by_rows);
            ik[t] = mine[t].key;
            ip[t] = mine[t].partials;
        }
        for (int off = 1; off < 32; off <<= 1) {
            std::memcpy(prev_k, ik, sizeof ik);
            std::memcpy(prev_p, ip, sizeof ip);
            for (int t = 0; t < kThreads; ++t) {
                if (t % 32 < off) continue;
                ik[t] += prev_k[t - off];
                ip[t] += prev_p[t - off];
            }
        }
        long long block_k = 0, block_p = 0;
        for (int t = 0; t < kThreads; ++t) {
            long long ek = carry_key + ik[t] - mine[t].key;
            long long ep = carry_part + ip[t] - mine[t].partials;
            for (int w = 0; w < t / 32; ++w) {
                ek += ik[32 * w + 31];
                ep += ip[32 * w + 31];
            }
            if (mine[t].key > 0 && target >= ek && target < ek + mine[t].key)
                found = {base + t, ek, ep};
        }
        for (int w = 0; w < kWarps; ++w) {
            block_k += ik[32 * w + 31];
            block_p += ip[32 * w + 31];
        }
        carry_key += block_k;
        carry_part += block_p;
        if (target < carry_key) break;
    }
    return found;
}

// attention_items_kernel's steps for one item, thread by thread and warp by warp.
template <int R>
void run_item_on_host(const Params& p, const Item& it, const TileSmem& s,
                      std::vector<ThreadAcc<R>>& th) {
    const Geometry& g = p.geo;
    const int32_t D = g.head_dim, W = D / 2, nv = it.n_rows * it.n_h;
    float lanes[32];
    for (int t = 0; t < kThreads; ++t) {
        init_thread(th[static_cast<size_t>(t)]);
        load_q(s, p, it, t);
    }
    for (int32_t c = it.chunk_first; c <= it.chunk_last; ++c) {
        const int32_t extent = chunk_extent(it, c);
        for (int t = 0; t < kThreads; ++t) chunk_setup(s, p, it, c, extent, t);
        for (int32_t j0 = 0; j0 < extent; j0 += g.positions_per_tile) {
            const int32_t n = imin(g.positions_per_tile, extent - j0);
            for (int t = 0; t < kThreads; ++t) load_tile(s, p.k, p, it, j0, n, t);
            for (int32_t jj = 0; jj < n; ++jj) {
                for (int32_t v = 0; v < nv; ++v) {
                    if (j0 + jj >= s.n_vis[v]) continue;
                    if (j0 + jj < s.lo_vis[v]) {
                        s.p[v * kChunk + j0 + jj] = -INFINITY;
                        continue;
                    }
                    for (int lane = 0; lane < 32; ++lane)
                        lanes[lane] =
                            lane_dot(s.q + v * D, lane_k(s.kv + jj * W, lane, W), lane, W);
                    s.p[v * kChunk + j0 + jj] = score_of(p, tree_on_host(lanes, add_rn));
                }
            }
        }
        for (int32_t v = 0; v < nv; ++v) {
            const int32_t n = s.n_vis[v];
            if (n == 0) continue;
            float* sc = s.p + v * kChunk;
            for (int lane = 0; lane < 32; ++lane) lanes[lane] = lane_max(sc, n, lane);
            const float m = tree_on_host(lanes, [](float x, float y) { return fmaxf(x, y); });
            for (int lane = 0; lane < 32; ++lane)
                lanes[lane] =
                    m == -INFINITY ? lane_zero(sc, n, lane) : lane_exp_sum(sc, n, lane, m);
            finish_stats(s, v, m, tree_on_host(lanes, add_rn), it.split);
        }
        for (auto& a : th) zero_acc(a);
        for (int32_t j0 = 0; j0 < extent; j0 += g.positions_per_tile) {
            const int32_t n = imin(g.positions_per_tile, extent - j0);
            for (int t = 0; t < kThreads; ++t) load_tile(s, p.v, p, it, j0, n, t);
            for (int t = 0; t < kThreads; ++t)
                accumulate(th[static_cast<size_t>(t)], s, g, nv, j0, n, t);
        }
        for (int t = 0; t < kThreads; ++t) finish_chunk(th[static_cast<size_t>(t)], s, p, it, t);
    }
    if (!it.split)
        for (int t = 0; t < kThreads; ++t) write_out(th[static_cast<size_t>(t)], s, p, it, t);
}

// Both grids, block by block: every item, then every combine.
template <int R>
void run_on_host(const Params& p, const AttentionPlan& plan) {
    std::vector<uint32_t> smem(static_cast<size_t>(p.geo.smem_bytes) / 4);
    const TileSmem s = tile_smem(reinterpret_cast<unsigned char*>(smem.data()), p.geo);
    std::vector<ThreadAcc<R>> th(kThreads);
    for (long long b = 0; b < plan.split_items + plan.whole_items; ++b) {
        const Located at = locate_on_host(p, b, false);
        if (at.seq < 0) continue;
        run_item_on_host<R>(p, decode_item(p, at.seq, b - at.first, at.partial_base), s, th);
    }
    for (long long b = 0; b < plan.split_rows; ++b) {
        const Located at = locate_on_host(p, b, true);
        if (at.seq < 0) continue;
        for (int t = 0; t < kThreads; ++t)
            combine_row(p, at.seq, static_cast<int32_t>(b - at.first), at.partial_base, t);
    }
}

// The checks both entry points make; fills plan and params. false: invalid arguments.
bool prepare(const float* q, const kernels::PagedKvLayer& cache,
             const kernels::AttentionBatch& batch, int32_t n_heads, float scale, float* out,
             float* workspace, std::size_t workspace_bytes, AttentionShape shape,
             int32_t smem_per_sm, AttentionPlan* plan, Params* p) {
    if (batch.window < 0 || !(batch.softcap >= 0.0f)) return false;
    if (!plan_attention(batch, n_heads, cache.n_kv_heads, cache.head_dim, shape, plan, smem_per_sm))
        return false;
    if (plan->split_rows + plan->whole_rows == 0) return true;
    if (!q || !out || !cache.k || !cache.v || !batch.q_start || !batch.q_len || !batch.kv_len ||
        !batch.block_table_start || !batch.block_tables)
        return false;
    if (reinterpret_cast<uintptr_t>(cache.k) % 4 != 0 ||
        reinterpret_cast<uintptr_t>(cache.v) % 4 != 0)
        return false;
    if (cache.block_size < 1 || cache.n_blocks < 1 ||
        int64_t{cache.n_blocks} * cache.block_size > INT_MAX)
        return false;
    if (workspace_bytes < plan->workspace_bytes || (plan->workspace_bytes > 0 && !workspace))
        return false;
    p->q = q;
    p->k = cache.k;
    p->v = cache.v;
    p->out = out;
    p->workspace = workspace;
    p->q_start = batch.q_start;
    p->q_len = batch.q_len;
    p->kv_len = batch.kv_len;
    p->table_start = batch.block_table_start;
    p->tables = batch.block_tables;
    p->n_seqs = batch.n_seqs;
    p->block_size = cache.block_size;
    p->scale = scale;
    p->softcap = batch.softcap;
    p->inv_softcap = batch.softcap > 0.0f ? 1.0f / batch.softcap : 0.0f;
    p->geo = plan->geometry;
    return true;
}

}  // namespace

cudaError_t attention_cuda(const float* q, const kernels::PagedKvLayer& cache,
                           const kernels::AttentionBatch& batch, int32_t n_heads, float scale,
                           float* out, float* workspace, std::size_t workspace_bytes,
                           cudaStream_t stream, AttentionShape shape, int32_t smem_per_sm) {
    AttentionPlan plan;
    Params p{};
    if (!prepare(q, cache, batch, n_heads, scale, out, workspace, workspace_bytes, shape,
                 smem_per_sm, &plan, &p))
        return cudaErrorInvalidValue;
    const int64_t items = plan.split_items + plan.whole_items;
    if (items == 0) return cudaSuccess;
    const auto grid = static_cast<unsigned>(items);
    const auto smem = static_cast<size_t>(p.geo.smem_bytes);
    if (p.geo.dims_per_thread == 1)
        attention_items_kernel<1><<<grid, kThreads, smem, stream>>>(p);
    else
        attention_items_kernel<2><<<grid, kThreads, smem, stream>>>(p);
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || plan.split_rows == 0) return err;
    attention_combine_kernel<<<static_cast<unsigned>(plan.split_rows), kThreads, 0, stream>>>(p);
    return cudaGetLastError();
}

cudaError_t attention_occupancy(const AttentionPlan& plan, int* blocks) {
    if (!blocks) return cudaErrorInvalidValue;
    const auto smem = static_cast<size_t>(plan.geometry.smem_bytes);
    return plan.geometry.dims_per_thread == 1
               ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, attention_items_kernel<1>,
                                                               kThreads, smem)
               : cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, attention_items_kernel<2>,
                                                               kThreads, smem);
}

bool attention_on_host(const float* q, const kernels::PagedKvLayer& cache,
                       const kernels::AttentionBatch& batch, int32_t n_heads, float scale,
                       float* out, float* workspace, std::size_t workspace_bytes,
                       AttentionShape shape, int32_t smem_per_sm) {
    AttentionPlan plan;
    Params p{};
    if (!prepare(q, cache, batch, n_heads, scale, out, workspace, workspace_bytes, shape,
                 smem_per_sm, &plan, &p))
        return false;
    if (p.geo.dims_per_thread == 1)
        run_on_host<1>(p, plan);
    else
        run_on_host<2>(p, plan);
    return true;
}

}  // namespace hearth::gpu
