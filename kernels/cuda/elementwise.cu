// The element-wise CUDA kernels (see elementwise.h). Everything up to the __global__
// functions is __host__ __device__, so that the *_on_host twins run the same code.
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

#include "cuda/elementwise.h"
#include "quant/fp16.h"

namespace hearth::gpu {

namespace {

constexpr int kThreads = 256;          // threads per CUDA block
constexpr int64_t kMaxGrid = 1 << 16;  // blocks; larger arrays loop (grid stride)

// RMSNorm: thread t's sum of squares over its strided share of the row (fused
// multiply-adds, explicitly: the same rounding on host and device).
__host__ __device__ __forceinline__ float sum_squares(const float* x, int32_t n, int t) {
    float acc = 0.0f;
    for (int32_t i = t; i < n; i += kThreads) acc = fmaf(x[i], x[i], acc);
    return acc;
}

__host__ __device__ __forceinline__ float rms_scale(float sum, int32_t n, float eps) {
    return 1.0f / sqrtf(sum / static_cast<float>(n) + eps);
}

__host__ __device__ __forceinline__ float silu_mul(float g, float u) {
    return g / (1.0f + expf(-g)) * u;
}

__host__ __device__ __forceinline__ float round_fp16(float x) {
#if defined(__CUDA_ARCH__)
    return __half2float(__float2half_rn(x));
#else
    return quant::fp16_to_f32(quant::f32_to_fp16(x));
#endif
}

// ggml's CPU GeGLU without its table: gelu of g rounded to fp16, the result rounded to
// fp16 (the device's tanhf may differ from the host's in the last bit before rounding, and
// nvcc fuses the inner multiply-add, which the host twin rounds twice: the device is
// within a rounding of its twin here, not bit-equal).
__host__ __device__ __forceinline__ float gelu_mul(float g, float u) {
    if (g <= -10.0f) return 0.0f;
    if (g >= 10.0f) return g * u;
    const float x = round_fp16(g);
    const float y =
        0.5f * x *
        (1.0f + tanhf(0.79788456080286535587989211986876f * x * (1.0f + 0.044715f * x * x)));
    return round_fp16(y) * u;
}

// The tree a warp's shuffle-down reduction computes: lane 0 ends with it.
void warp_tree_on_host(float* v) {
    for (int offset = 16; offset > 0; offset >>= 1)
        for (int i = 0; i < offset; ++i) v[i] = v[i] + v[i + offset];
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__global__ void rms_norm_kernel(const float* x, const float* weight, int32_t n, float eps,
                                float* out) {
    __shared__ float warp_sums[32];
    __shared__ float scale;
    const int64_t row = blockIdx.x;
    const float* xr = x + row * n;
    const int t = static_cast<int>(threadIdx.x), lane = t % 32, warp = t / 32;
    float s = warp_sum(sum_squares(xr, n, t));
    if (lane == 0) warp_sums[warp] = s;
    __syncthreads();
    if (warp == 0) {
        s = warp_sum(lane < kThreads / 32 ? warp_sums[lane] : 0.0f);
        if (lane == 0) scale = rms_scale(s, n, eps);
    }
    __syncthreads();
    for (int32_t i = t; i < n; i += kThreads) out[row * n + i] = xr[i] * scale * weight[i];
}

__global__ void swiglu_kernel(const float* gate, const float* up, int64_t n, float* out) {
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
         i += int64_t{gridDim.x} * blockDim.x)
        out[i] = silu_mul(gate[i], up[i]);
}

__global__ void geglu_kernel(const float* gate, const float* up, int64_t n, float* out) {
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
         i += int64_t{gridDim.x} * blockDim.x)
        out[i] = gelu_mul(gate[i], up[i]);
}

__global__ void scale_kernel(float* x, int64_t n, float s) {
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
         i += int64_t{gridDim.x} * blockDim.x)
        x[i] *= s;
}

__global__ void softcap_kernel(float* x, int64_t n, float inv, float cap) {
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
         i += int64_t{gridDim.x} * blockDim.x)
        x[i] = tanhf(x[i] * inv) * cap;
}

__global__ void add_kernel(float* x, const float* y, int64_t n) {
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
         i += int64_t{gridDim.x} * blockDim.x)
        x[i] += y[i];
}

__global__ void gather_rows_kernel(const float* x, const int32_t* rows, int64_t total, int32_t n,
                                   float* out) {
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
         i += int64_t{gridDim.x} * blockDim.x)
        out[i] = x[int64_t{rows[i / n]} * n + i % n];
}

__global__ void kv_append_kernel(uint16_t* kc, uint16_t* vc, const float* k, const float* v,
                                 const int32_t* slots, int64_t total, int64_t row) {
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
         i += int64_t{gridDim.x} * blockDim.x) {
        const int64_t at = int64_t{slots[i / row]} * row + i % row;
        kc[at] = quant::f32_to_fp16(k[i]);
        vc[at] = quant::f32_to_fp16(v[i]);
    }
}

// RoPE, one (token, pair) item: its angle, then the pair rotated in every head.
__host__ __device__ __forceinline__ void rope_item(float* x, const int32_t* positions, int64_t item,
                                                   int32_t half, int32_t n_heads, int32_t head_dim,
                                                   bool neox, float theta_scale, float freq_scale,
                                                   const float* factors, float attn_factor) {
    const int64_t t = item / half;
    const int32_t i = static_cast<int32_t>(item % half);
    float theta = static_cast<float>(positions[t]);
    for (int32_t j = 0; j < i; ++j) theta *= theta_scale;
    const float th = freq_scale * (factors ? theta / factors[i] : theta);
    const float c = cosf(th) * attn_factor, sn = sinf(th) * attn_factor;
    for (int32_t h = 0; h < n_heads; ++h) {
        float* v = x + (t * n_heads + h) * head_dim;
        float& a = v[neox ? i : 2 * i];
        float& b = v[neox ? i + half : 2 * i + 1];
        const float a0 = a, b0 = b;
        a = fmaf(a0, c, -(b0 * sn));
        b = fmaf(a0, sn, b0 * c);
    }
}

__host__ __device__ __forceinline__ float fp16_bits_to_f32(uint16_t h) {
#if defined(__CUDA_ARCH__)
    return __half2float(__ushort_as_half(h));
#else
    return quant::fp16_to_f32(h);
#endif
}

// The context shift, one (move, element) item of a K/V row (row = n_kv_heads · head_dim):
// V copied; K's element from its pair rotated by the move's delta, the angle computed as
// rope_item computes it, cos and sin unscaled (the stored K carries the attention factor).
__host__ __device__ __forceinline__ void kv_shift_item(const kernels::PagedKvLayer& c,
                                                       const int32_t* src, const int32_t* dst,
                                                       const int32_t* deltas, int64_t item,
                                                       int64_t row, int32_t half, bool neox,
                                                       float theta_scale, float freq_scale,
                                                       const float* factors) {
    const int64_t m = item / row;
    const int64_t e = item % row;
    const int64_t s = int64_t{src[m]} * row;
    const int64_t d = int64_t{dst[m]} * row;
    c.v[d + e] = c.v[s + e];
    const int32_t dim = static_cast<int32_t>(e % c.head_dim);
    if (dim >= 2 * half) {
        c.k[d + e] = c.k[s + e];
        return;
    }
    const int64_t head = e - dim;
    const bool first = neox ? dim < half : dim % 2 == 0;
    const int32_t i = neox ? (first ? dim : dim - half) : dim / 2;
    const int64_t ia = head + (neox ? i : 2 * i);
    const int64_t ib = head + (neox ? i + half : 2 * i + 1);
    float theta = static_cast<float>(deltas[m]);
    for (int32_t j = 0; j < i; ++j) theta *= theta_scale;
    const float th = freq_scale * (factors ? theta / factors[i] : theta);
    const float cs = cosf(th), sn = sinf(th);
    const float a0 = fp16_bits_to_f32(c.k[s + ia]), b0 = fp16_bits_to_f32(c.k[s + ib]);
    const float out = first ? fmaf(a0, cs, -(b0 * sn)) : fmaf(a0, sn, b0 * cs);
    c.k[d + e] = quant::f32_to_fp16(out);
}

__global__ void kv_shift_kernel(kernels::PagedKvLayer c, const int32_t* src, const int32_t* dst,
                                const int32_t* deltas, int64_t items, int64_t row, int32_t half,
                                bool neox, float theta_scale, float freq_scale,
                                const float* factors) {
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < items;
         i += int64_t{gridDim.x} * blockDim.x)
        kv_shift_item(c, src, dst, deltas, i, row, half, neox, theta_scale, freq_scale, factors);
}

__global__ void rope_kernel(float* x, const int32_t* positions, int64_t items, int32_t half,
                            int32_t n_heads, int32_t head_dim, bool neox, float theta_scale,
                            float freq_scale, const float* factors, float attn_factor) {
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < items;
         i += int64_t{gridDim.x} * blockDim.x)
        rope_item(x, positions, i, half, n_heads, head_dim, neox, theta_scale, freq_scale, factors,
                  attn_factor);
}

bool rope_args_ok(const void* x, const int32_t* positions, int32_t n_tokens, int32_t n_heads,
                  int32_t head_dim, const kernels::RopeParams& p) {
    if (n_tokens < 0 || n_heads < 1 || p.n_rot < 0 || p.n_rot % 2 != 0 || p.n_rot > head_dim)
        return false;
    return n_tokens == 0 || p.n_rot == 0 || (x && positions);
}

unsigned grid_for(int64_t n) {
    const int64_t blocks = (n + kThreads - 1) / kThreads;
    return static_cast<unsigned>(blocks < kMaxGrid ? blocks : kMaxGrid);
}

}  // namespace

cudaError_t rms_norm_cuda(const float* x, const float* weight, int32_t rows, int32_t n, float eps,
                          float* out, cudaStream_t stream) {
    if (rows < 0 || n < 1) return cudaErrorInvalidValue;
    if (rows == 0) return cudaSuccess;
    if (!x || !weight || !out) return cudaErrorInvalidValue;
    rms_norm_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(x, weight, n, eps, out);
    return cudaGetLastError();
}

bool rms_norm_on_host(const float* x, const float* weight, int32_t rows, int32_t n, float eps,
                      float* out) {
    if (rows < 0 || n < 1 || (rows > 0 && (!x || !weight || !out))) return false;
    for (int32_t r = 0; r < rows; ++r) {
        const float* xr = x + int64_t{r} * n;
        float warps[32] = {};
        for (int w = 0; w < kThreads / 32; ++w) {
            float lanes[32];
            for (int l = 0; l < 32; ++l) lanes[l] = sum_squares(xr, n, w * 32 + l);
            warp_tree_on_host(lanes);
            warps[w] = lanes[0];
        }
        warp_tree_on_host(warps);
        const float scale = rms_scale(warps[0], n, eps);
        for (int32_t i = 0; i < n; ++i) out[int64_t{r} * n + i] = xr[i] * scale * weight[i];
    }
    return true;
}

cudaError_t swiglu_cuda(const float* gate, const float* up, int64_t n, float* out,
                        cudaStream_t stream) {
    if (n < 0) return cudaErrorInvalidValue;
    if (n == 0) return cudaSuccess;
    if (!gate || !up || !out) return cudaErrorInvalidValue;
    swiglu_kernel<<<grid_for(n), kThreads, 0, stream>>>(gate, up, n, out);
    return cudaGetLastError();
}

bool swiglu_on_host(const float* gate, const float* up, int64_t n, float* out) {
    if (n < 0 || (n > 0 && (!gate || !up || !out))) return false;
    for (int64_t i = 0; i < n; ++i) out[i] = silu_mul(gate[i], up[i]);
    return true;
}

cudaError_t geglu_cuda(const float* gate, const float* up, int64_t n, float* out,
                       cudaStream_t stream) {
    if (n < 0) return cudaErrorInvalidValue;
    if (n == 0) return cudaSuccess;
    if (!gate || !up || !out) return cudaErrorInvalidValue;
    geglu_kernel<<<grid_for(n), kThreads, 0, stream>>>(gate, up, n, out);
    return cudaGetLastError();
}

bool geglu_on_host(const float* gate, const float* up, int64_t n, float* out) {
    if (n < 0 || (n > 0 && (!gate || !up || !out))) return false;
    for (int64_t i = 0; i < n; ++i) out[i] = gelu_mul(gate[i], up[i]);
    return true;
}

cudaError_t scale_cuda(float* x, int64_t n, float s, cudaStream_t stream) {
    if (n < 0) return cudaErrorInvalidValue;
    if (n == 0) return cudaSuccess;
    if (!x) return cudaErrorInvalidValue;
    scale_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, n, s);
    return cudaGetLastError();
}

bool scale_on_host(float* x, int64_t n, float s) {
    if (n < 0 || (n > 0 && !x)) return false;
    for (int64_t i = 0; i < n; ++i) x[i] *= s;
    return true;
}

cudaError_t softcap_cuda(float* x, int64_t n, float cap, cudaStream_t stream) {
    if (n < 0 || !(cap > 0.0f)) return cudaErrorInvalidValue;
    if (n == 0) return cudaSuccess;
    if (!x) return cudaErrorInvalidValue;
    softcap_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, n, 1.0f / cap, cap);
    return cudaGetLastError();
}

bool softcap_on_host(float* x, int64_t n, float cap) {
    if (n < 0 || !(cap > 0.0f) || (n > 0 && !x)) return false;
    const float inv = 1.0f / cap;
    for (int64_t i = 0; i < n; ++i) x[i] = tanhf(x[i] * inv) * cap;
    return true;
}

cudaError_t add_cuda(float* x, const float* y, int64_t n, cudaStream_t stream) {
    if (n < 0) return cudaErrorInvalidValue;
    if (n == 0) return cudaSuccess;
    if (!x || !y) return cudaErrorInvalidValue;
    add_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, y, n);
    return cudaGetLastError();
}

bool add_on_host(float* x, const float* y, int64_t n) {
    if (n < 0 || (n > 0 && (!x || !y))) return false;
    for (int64_t i = 0; i < n; ++i) x[i] += y[i];
    return true;
}

cudaError_t gather_rows_cuda(const float* x, const int32_t* rows, int32_t count, int32_t n,
                             float* out, cudaStream_t stream) {
    if (count < 0 || n < 1) return cudaErrorInvalidValue;
    if (count == 0) return cudaSuccess;
    if (!x || !rows || !out) return cudaErrorInvalidValue;
    const int64_t total = int64_t{count} * n;
    gather_rows_kernel<<<grid_for(total), kThreads, 0, stream>>>(x, rows, total, n, out);
    return cudaGetLastError();
}

bool gather_rows_on_host(const float* x, const int32_t* rows, int32_t count, int32_t n,
                         float* out) {
    if (count < 0 || n < 1 || (count > 0 && (!x || !rows || !out))) return false;
    for (int64_t i = 0; i < int64_t{count} * n; ++i) out[i] = x[int64_t{rows[i / n]} * n + i % n];
    return true;
}

cudaError_t rope_cuda(float* x, const int32_t* positions, int32_t n_tokens, int32_t n_heads,
                      int32_t head_dim, const kernels::RopeParams& p, cudaStream_t stream) {
    if (!rope_args_ok(x, positions, n_tokens, n_heads, head_dim, p)) return cudaErrorInvalidValue;
    const int32_t half = p.n_rot / 2;
    if (n_tokens == 0 || half == 0) return cudaSuccess;
    const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
    const int64_t items = int64_t{n_tokens} * half;
    rope_kernel<<<grid_for(items), kThreads, 0, stream>>>(
        x, positions, items, half, n_heads, head_dim, p.neox, theta_scale, p.freq_scale,
        p.freq_factors, p.attn_factor);
    return cudaGetLastError();
}

bool rope_on_host(float* x, const int32_t* positions, int32_t n_tokens, int32_t n_heads,
                  int32_t head_dim, const kernels::RopeParams& p) {
    if (!rope_args_ok(x, positions, n_tokens, n_heads, head_dim, p)) return false;
    const int32_t half = p.n_rot / 2;
    if (n_tokens == 0 || half == 0) return true;
    const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
    for (int64_t i = 0; i < int64_t{n_tokens} * half; ++i)
        rope_item(x, positions, i, half, n_heads, head_dim, p.neox, theta_scale, p.freq_scale,
                  p.freq_factors, p.attn_factor);
    return true;
}

cudaError_t kv_append_cuda(const kernels::PagedKvLayer& cache, const float* k, const float* v,
                           const int32_t* slots, int32_t n_tokens, cudaStream_t stream) {
    const int64_t row = int64_t{cache.n_kv_heads} * cache.head_dim;
    if (n_tokens < 0 || row < 1) return cudaErrorInvalidValue;
    if (n_tokens == 0) return cudaSuccess;
    if (!cache.k || !cache.v || !k || !v || !slots) return cudaErrorInvalidValue;
    const int64_t total = int64_t{n_tokens} * row;
    kv_append_kernel<<<grid_for(total), kThreads, 0, stream>>>(cache.k, cache.v, k, v, slots, total,
                                                               row);
    return cudaGetLastError();
}

bool kv_append_on_host(const kernels::PagedKvLayer& cache, const float* k, const float* v,
                       const int32_t* slots, int32_t n_tokens) {
    const int64_t row = int64_t{cache.n_kv_heads} * cache.head_dim;
    if (n_tokens < 0 || row < 1) return false;
    if (n_tokens > 0 && (!cache.k || !cache.v || !k || !v || !slots)) return false;
    for (int64_t i = 0; i < int64_t{n_tokens} * row; ++i) {
        const int64_t at = int64_t{slots[i / row]} * row + i % row;
        cache.k[at] = quant::f32_to_fp16(k[i]);
        cache.v[at] = quant::f32_to_fp16(v[i]);
    }
    return true;
}

namespace {

bool kv_shift_args_ok(const kernels::PagedKvLayer& c, const int32_t* src, const int32_t* dst,
                      const int32_t* deltas, int32_t n, const kernels::RopeParams& p) {
    if (n < 0 || c.n_kv_heads < 1 || c.head_dim < 1 || p.n_rot < 0 || p.n_rot % 2 != 0 ||
        p.n_rot > c.head_dim)
        return false;
    return n == 0 || (c.k && c.v && src && dst && deltas);
}

}  // namespace

cudaError_t kv_shift_cuda(const kernels::PagedKvLayer& cache, const int32_t* src_slots,
                          const int32_t* dst_slots, const int32_t* deltas, int32_t n,
                          const kernels::RopeParams& p, cudaStream_t stream) {
    if (!kv_shift_args_ok(cache, src_slots, dst_slots, deltas, n, p)) return cudaErrorInvalidValue;
    if (n == 0) return cudaSuccess;
    const int64_t row = int64_t{cache.n_kv_heads} * cache.head_dim;
    const float theta_scale =
        p.n_rot > 0 ? std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot)) : 1.0f;
    const int64_t items = int64_t{n} * row;
    kv_shift_kernel<<<grid_for(items), kThreads, 0, stream>>>(
        cache, src_slots, dst_slots, deltas, items, row, p.n_rot / 2, p.neox, theta_scale,
        p.freq_scale, p.freq_factors);
    return cudaGetLastError();
}

bool kv_shift_on_host(const kernels::PagedKvLayer& cache, const int32_t* src_slots,
                      const int32_t* dst_slots, const int32_t* deltas, int32_t n,
                      const kernels::RopeParams& p) {
    if (!kv_shift_args_ok(cache, src_slots, dst_slots, deltas, n, p)) return false;
    const int64_t row = int64_t{cache.n_kv_heads} * cache.head_dim;
    const float theta_scale =
        p.n_rot > 0 ? std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot)) : 1.0f;
    // Every element reads its source row, which no move writes: the order is free.
    for (int64_t i = 0; i < int64_t{n} * row; ++i)
        kv_shift_item(cache, src_slots, dst_slots, deltas, i, row, p.n_rot / 2, p.neox, theta_scale,
                      p.freq_scale, p.freq_factors);
    return true;
}

}  // namespace hearth::gpu
