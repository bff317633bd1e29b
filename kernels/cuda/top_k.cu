// Backend::top_k on the GPU (see top_k.h). A row per CUDA block, read once: each warp
// keeps the best k of its segment, then one warp merges the warps' lists. The order
// "ranks before" is total (value, then id), so the picks are exactly the CPU's sorted top k.
#include <cmath>
#include <cstdint>

#include "cuda/top_k.h"

namespace hearth::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kMaxK = 64;

struct Pick {
    float value;
    int32_t id;  // -1: none
};

__host__ __device__ __forceinline__ bool ranks_before(float av, int32_t ai, float bv, int32_t bi) {
    return av > bv || (av == bv && ai < bi);
}

// One pass over the row. Each warp keeps the best kMaxK picks of its contiguous segment,
// sorted, spread over its lanes (position p at lane p % 32, slot p / 32): a lane's element
// that ranks before the list's k-th is inserted (a ballot, then one insertion per such lane
// in lane order: its position is the number of entries ranking before it, and the entries
// from there shift by one). Then warp 0 merges the warps' lists the same way. Only
// comparisons, so the picks are exactly the CPU's sorted top k.

// a ranks before b; "none" (id < 0) ranks after everything.
__host__ __device__ __forceinline__ bool pick_before(Pick a, Pick b) {
    if (a.id < 0) return false;
    if (b.id < 0) return true;
    return ranks_before(a.value, a.id, b.value, b.id);
}

__host__ __device__ __forceinline__ bool finite_candidate(float v) {
    return !(v != v) && v != INFINITY && v != -INFINITY;
}

__host__ __device__ __forceinline__ bool invalid_value(float v) {
    return v != v || v == INFINITY;
}

// The segment of warp w of n_warps: [begin, end), whole multiples of 32 but the last.
__host__ __device__ __forceinline__ void segment(int32_t n, int32_t w, int32_t n_warps,
                                                 int32_t* begin, int32_t* end) {
    const int32_t per = (n + 32 * n_warps - 1) / (32 * n_warps) * 32;
    *begin = per * w < n ? per * w : n;
    *end = per * (w + 1) < n ? per * (w + 1) : n;
}

__device__ __forceinline__ Pick shfl_pick(Pick p, int lane) {
    return Pick{__shfl_sync(0xffffffffu, p.value, lane), __shfl_sync(0xffffffffu, p.id, lane)};
}

__device__ __forceinline__ Pick shfl_up_pick(Pick p) {
    return Pick{__shfl_up_sync(0xffffffffu, p.value, 1), __shfl_up_sync(0xffffffffu, p.id, 1)};
}

// Inserts x (the same on every lane) into the warp's sorted list s (positions lane and
// 32 + lane).
__device__ __forceinline__ void warp_insert(Pick (&s)[2], Pick x, int lane) {
    const int pos = __popc(__ballot_sync(0xffffffffu, pick_before(s[0], x))) +
                    __popc(__ballot_sync(0xffffffffu, pick_before(s[1], x)));
    const Pick up0 = shfl_up_pick(s[0]), up1 = shfl_up_pick(s[1]), last0 = shfl_pick(s[0], 31);
    if (lane > pos)
        s[0] = up0;
    else if (lane == pos)
        s[0] = x;
    if (32 + lane > pos)
        s[1] = lane == 0 ? last0 : up1;
    else if (32 + lane == pos)
        s[1] = x;
}

// The list's k-th pick (none until k are in).
__device__ __forceinline__ Pick warp_kth(const Pick (&s)[2], int32_t k) {
    const Pick slot = (k - 1) / 32 == 0 ? s[0] : s[1];
    return shfl_pick(slot, (k - 1) % 32);
}

// Offers each lane's candidate c (id < 0: none) to the list, in lane order.
__device__ __forceinline__ void warp_offer(Pick (&s)[2], Pick c, int32_t k, int lane) {
    unsigned want = __ballot_sync(0xffffffffu, c.id >= 0 && pick_before(c, warp_kth(s, k)));
    while (want) {
        const int from = __ffs(want) - 1;
        want &= want - 1;
        const Pick x = shfl_pick(c, from);
        if (pick_before(x, warp_kth(s, k))) warp_insert(s, x, lane);
    }
}

__global__ void __launch_bounds__(kThreads)
    top_k_kernel(const float* logits, int32_t n, int32_t k, int32_t* ids, float* values,
                 int32_t* invalid) {
    constexpr int kWarps = kThreads / 32;
    __shared__ Pick lists[kWarps][kMaxK];
    __shared__ int32_t first_invalid;
    const int32_t row = static_cast<int32_t>(blockIdx.x);
    const float* x = logits + static_cast<int64_t>(row) * n;
    const int t = static_cast<int>(threadIdx.x), lane = t % 32, warp = t / 32;
    if (t == 0) first_invalid = n;
    __syncthreads();

    Pick s[2] = {Pick{-INFINITY, -1}, Pick{-INFINITY, -1}};
    int32_t begin = 0, end = 0, mine = n;
    segment(n, warp, kWarps, &begin, &end);
    for (int32_t base = begin; base < end; base += 32) {
        const int32_t i = base + lane;
        Pick c{-INFINITY, -1};
        if (i < end) {
            const float v = x[i];
            if (invalid_value(v) && i < mine) mine = i;
            if (finite_candidate(v)) c = Pick{v, i};
        }
        warp_offer(s, c, k, lane);
    }
    if (mine < n) atomicMin(&first_invalid, mine);
    lists[warp][lane] = s[0];
    lists[warp][32 + lane] = s[1];
    __syncthreads();
    if (warp == 0) {
        Pick r[2] = {Pick{-INFINITY, -1}, Pick{-INFINITY, -1}};
        for (int w = 0; w < kWarps; ++w)
            for (int p0 = 0; p0 < k; p0 += 32)
                warp_offer(r, lane + p0 < k ? lists[w][p0 + lane] : Pick{-INFINITY, -1}, k, lane);
        for (int slot = 0; slot < 2; ++slot) {
            const int p = 32 * slot + lane;
            if (p < k) {
                const Pick q = r[slot];
                ids[static_cast<int64_t>(row) * k + p] = q.id;
                values[static_cast<int64_t>(row) * k + p] = q.id >= 0 ? q.value : -INFINITY;
            }
        }
        if (lane == 0) invalid[row] = first_invalid < n ? first_invalid : -1;
    }
}

// The warp's list on the host: the same positions, inserted as warp_insert does.
struct HostList {
    Pick p[kMaxK];
    HostList() {
        for (Pick& q : p) q = Pick{-INFINITY, -1};
    }
    Pick kth(int32_t k) const { return p[k - 1]; }
    void offer(Pick c, int32_t k) {
        if (c.id < 0 || !pick_before(c, kth(k))) return;
        int pos = 0;
        while (pos < kMaxK && pick_before(p[pos], c)) ++pos;
        for (int q = kMaxK - 1; q > pos; --q) p[q] = p[q - 1];
        if (pos < kMaxK) p[pos] = c;
    }
};

bool valid_call(const void* logits, int32_t rows, int32_t n, int32_t k, const void* ids,
                const void* values, const void* invalid) {
    if (rows < 0 || k < 1 || k > kMaxK || n < k) return false;
    return rows == 0 || (logits && ids && values && invalid);
}

}  // namespace

cudaError_t top_k_cuda(const float* d_logits, int32_t rows, int32_t n, int32_t k, int32_t* d_ids,
                       float* d_values, int32_t* d_invalid, cudaStream_t stream) {
    if (!valid_call(d_logits, rows, n, k, d_ids, d_values, d_invalid)) return cudaErrorInvalidValue;
    if (rows == 0) return cudaSuccess;
    top_k_kernel<<<rows, kThreads, 0, stream>>>(d_logits, n, k, d_ids, d_values, d_invalid);
    return cudaGetLastError();
}

bool top_k_on_host(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids,
                   float* values, int32_t* invalid, int32_t n_warps) {
    if (!valid_call(logits, rows, n, k, ids, values, invalid) || n_warps < 1) return false;
    for (int32_t row = 0; row < rows; ++row) {
        const float* x = logits + static_cast<int64_t>(row) * n;
        int32_t first = n;
        HostList merged;
        for (int32_t w = 0; w < n_warps; ++w) {
            HostList list;
            int32_t begin = 0, end = 0;
            segment(n, w, n_warps, &begin, &end);
            for (int32_t base = begin; base < end; base += 32)
                for (int lane = 0; lane < 32; ++lane) {  // lane order, as the ballot's bits
                    const int32_t i = base + lane;
                    if (i >= end) continue;
                    const float v = x[i];
                    if (invalid_value(v) && i < first) first = i;
                    if (finite_candidate(v)) list.offer(Pick{v, i}, k);
                }
            for (int32_t p = 0; p < k; ++p) merged.offer(list.p[p], k);
        }
        invalid[row] = first < n ? first : -1;
        for (int32_t p = 0; p < k; ++p) {
            ids[static_cast<int64_t>(row) * k + p] = merged.p[p].id;
            values[static_cast<int64_t>(row) * k + p] =
                merged.p[p].id >= 0 ? merged.p[p].value : -INFINITY;
        }
    }
    return true;
}

}  // namespace hearth::gpu
