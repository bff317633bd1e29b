// CUDA versions of the CPU backend's element-wise ops (kernels/backend.h): RMSNorm,
// SwiGLU, add, gather of logit rows and the KV append into fp16 blocks. Device pointers;
// each returns cudaErrorInvalidValue before touching the device for bad sizes or null
// pointers (a zero size is a no-op), otherwise the launch status.
//
// Each has a *_on_host twin that runs the kernel's own per-thread code on the CPU (and,
// for RMSNorm, its reduction tree in the same order), so the kernels' logic is tested on
// machines without a GPU against the reference ops.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backend.h"

namespace hearth::gpu {

// out[r, :] = x[r, :] / sqrt(mean(x[r, :]²) + eps) · weight. A row per CUDA block;
// float partial sums per thread, then a fixed tree: the result depends on the row only
// (batch invariant), never on how many rows share the launch.
cudaError_t rms_norm_cuda(const float* x, const float* weight, int32_t rows, int32_t n, float eps,
                          float* out, cudaStream_t stream);
bool rms_norm_on_host(const float* x, const float* weight, int32_t rows, int32_t n, float eps,
                      float* out);

// out = silu(gate) · up (out may be gate); x += y.
cudaError_t swiglu_cuda(const float* gate, const float* up, int64_t n, float* out,
                        cudaStream_t stream);
bool swiglu_on_host(const float* gate, const float* up, int64_t n, float* out);
cudaError_t add_cuda(float* x, const float* y, int64_t n, cudaStream_t stream);
bool add_on_host(float* x, const float* y, int64_t n);

// out = gelu(gate) · up, Backend::geglu (computed, not from a table); x *= s.
cudaError_t geglu_cuda(const float* gate, const float* up, int64_t n, float* out,
                       cudaStream_t stream);
bool geglu_on_host(const float* gate, const float* up, int64_t n, float* out);
cudaError_t scale_cuda(float* x, int64_t n, float s, cudaStream_t stream);
bool scale_on_host(float* x, int64_t n, float s);
// x = tanh(x · (1/cap)) · cap (Backend::softcap); cap > 0.
cudaError_t softcap_cuda(float* x, int64_t n, float cap, cudaStream_t stream);
bool softcap_on_host(float* x, int64_t n, float cap);

// out[i, :] = x[rows[i], :].
cudaError_t gather_rows_cuda(const float* x, const int32_t* rows, int32_t count, int32_t n,
                             float* out, cudaStream_t stream);
bool gather_rows_on_host(const float* x, const int32_t* rows, int32_t count, int32_t n, float* out);

// Rotary embedding in place: x [n_tokens, n_heads, head_dim], the first n_rot dimensions
// of each head rotated by θ(t, i) = freq_scale · pos_t · base^(−2i / n_rot) / ff[i],
// computed as the CPU backend does (the power by repeated multiplication in float, then
// cos and sin; the rotation as a·cos − (b·sin), a·sin + (b·cos) with fused multiply-adds).
// params.freq_factors, when set, is device memory. The host twin equals the CPU backend
// bit for bit; the device differs from it only by its cosf / sinf.
cudaError_t rope_cuda(float* x, const int32_t* positions, int32_t n_tokens, int32_t n_heads,
                      int32_t head_dim, const kernels::RopeParams& params, cudaStream_t stream);
bool rope_on_host(float* x, const int32_t* positions, int32_t n_tokens, int32_t n_heads,
                  int32_t head_dim, const kernels::RopeParams& params);

// K and V rows of n_tokens tokens written as fp16 (round to nearest even, as the CPU's
// quant::f32_to_fp16, bit for bit) into the cache rows slots[t].
cudaError_t kv_append_cuda(const kernels::PagedKvLayer& cache, const float* k, const float* v,
                           const int32_t* slots, int32_t n_tokens, cudaStream_t stream);
bool kv_append_on_host(const kernels::PagedKvLayer& cache, const float* k, const float* v,
                       const int32_t* slots, int32_t n_tokens);

// Backend::kv_shift: a thread per (move, K/V element): V copied, K's element computed
// from its RoPE pair rotated by the move's delta, with rope_cuda's angle (cos and sin
// unscaled) and rotation, rounded to fp16. The host twin equals the CPU backend bit for
// bit; the device differs from it only by its cosf / sinf.
cudaError_t kv_shift_cuda(const kernels::PagedKvLayer& cache, const int32_t* src_slots,
                          const int32_t* dst_slots, const int32_t* deltas, int32_t n,
                          const kernels::RopeParams& params, cudaStream_t stream);
bool kv_shift_on_host(const kernels::PagedKvLayer& cache, const int32_t* src_slots,
                      const int32_t* dst_slots, const int32_t* deltas, int32_t n,
                      const kernels::RopeParams& params);

}  // namespace hearth::gpu
