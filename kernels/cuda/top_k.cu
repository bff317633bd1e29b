// Backend::top_k on the GPU (see top_k.h). A row per CUDA block. Round r finds the best
// element that ranks after round r-1's pick: each thread scans its strided share of the
// row, then the block reduces the threads' candidates (warp shuffles, then one warp over
// the warps' results). The order "ranks before" is total (value, then id), so the picks
// are exactly the CPU's sorted top k.
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

// The better of two picks (none loses to anything).
__host__ __device__ __forceinline__ Pick better(Pick a, Pick b) {
    if (a.id < 0) return b;
    if (b.id < 0) return a;
    return ranks_before(a.value, a.id, b.value, b.id) ? a : b;
}

__host__ __device__ __forceinline__ bool finite_candidate(float v) {
    return !(v != v) && v != INFINITY && v != -INFINITY;
}

// Thread `t` of `n_threads`: its best element of the row that ranks after `prev` (all of
// them in the first round: prev.id < 0).
__host__ __device__ Pick thread_pick(const float* x, int32_t n, int32_t t, int32_t n_threads,
                                     Pick prev) {
    Pick best{-INFINITY, -1};
    for (int32_t i = t; i < n; i += n_threads) {
        const float v = x[i];
        if (!finite_candidate(v)) continue;
        if (prev.id >= 0 && !ranks_before(prev.value, prev.id, v, i)) continue;
        if (best.id < 0 || ranks_before(v, i, best.value, best.id)) best = Pick{v, i};
    }
    return best;
}

// Thread `t`'s first NaN or +inf (n when none).
__host__ __device__ int32_t thread_first_invalid(const float* x, int32_t n, int32_t t,
                                                 int32_t n_threads) {
    for (int32_t i = t; i < n; i += n_threads) {
        const float v = x[i];
        if (v != v || v == INFINITY) return i;
    }
    return n;
}

__device__ __forceinline__ Pick warp_best(Pick p) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        Pick other;
        other.value = __shfl_down_sync(0xffffffffu, p.value, offset);
        other.id = __shfl_down_sync(0xffffffffu, p.id, offset);
        p = better(p, other);
    }
    return p;
}

__global__ void top_k_kernel(const float* logits, int32_t n, int32_t k, int32_t* ids, float* values,
                             int32_t* invalid) {
    __shared__ Pick warp_picks[kThreads / 32];
    __shared__ Pick round_pick;
    __shared__ int32_t first_invalid;
    const int32_t row = static_cast<int32_t>(blockIdx.x);
    const float* x = logits + static_cast<int64_t>(row) * n;
    const int32_t t = static_cast<int32_t>(threadIdx.x);
    const int lane = t % 32, warp = t / 32;

    if (t == 0) first_invalid = n;
    __syncthreads();
    const int32_t mine = thread_first_invalid(x, n, t, kThreads);
    if (mine < n) atomicMin(&first_invalid, mine);

    Pick prev{-INFINITY, -1};
    for (int32_t r = 0; r < k; ++r) {
        Pick p = warp_best(thread_pick(x, n, t, kThreads, prev));
        if (lane == 0) warp_picks[warp] = p;
        __syncthreads();
        if (warp == 0) {
            p = lane < kThreads / 32 ? warp_picks[lane] : Pick{-INFINITY, -1};
            p = warp_best(p);
            if (lane == 0) {
                round_pick = p;
                ids[static_cast<int64_t>(row) * k + r] = p.id;
                values[static_cast<int64_t>(row) * k + r] = p.id >= 0 ? p.value : -INFINITY;
            }
        }
        __syncthreads();
        prev = round_pick;
        if (prev.id < 0) {  // the row has no more finite values: pad
            for (int32_t j = r + 1 + t; j < k; j += kThreads) {
                ids[static_cast<int64_t>(row) * k + j] = -1;
                values[static_cast<int64_t>(row) * k + j] = -INFINITY;
            }
            break;
        }
    }
    __syncthreads();
    if (t == 0) invalid[row] = first_invalid < n ? first_invalid : -1;
}

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
                   float* values, int32_t* invalid, int32_t n_threads) {
    if (!valid_call(logits, rows, n, k, ids, values, invalid) || n_threads < 1) return false;
    for (int32_t row = 0; row < rows; ++row) {
        const float* x = logits + static_cast<int64_t>(row) * n;
        int32_t first = n;
        for (int32_t t = 0; t < n_threads; ++t) {
            const int32_t mine = thread_first_invalid(x, n, t, n_threads);
            if (mine < first) first = mine;
        }
        invalid[row] = first < n ? first : -1;
        Pick prev{-INFINITY, -1};
        for (int32_t r = 0; r < k; ++r) {
            Pick p{-INFINITY, -1};
            if (r == 0 || prev.id >= 0)
                for (int32_t t = 0; t < n_threads; ++t)
                    p = better(p, thread_pick(x, n, t, n_threads, prev));
            ids[static_cast<int64_t>(row) * k + r] = p.id;
            values[static_cast<int64_t>(row) * k + r] = p.id >= 0 ? p.value : -INFINITY;
            prev = p;
        }
    }
    return true;
}

}  // namespace hearth::gpu
