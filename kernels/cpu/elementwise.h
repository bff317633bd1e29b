// The CPU backend's small ops: RMSNorm, RoPE, SwiGLU, add, row gather, embedding lookup
// and the KV-cache append. Each is memory-bound and cheap next to a matmul, so they run
// on the calling thread and only split over the pool when the tensor is large (prefill).
#pragma once

#include <cstdint>
#include <vector>

#include "backend.h"
#include "cpu/cpu_features.h"
#include "cpu/elementwise_fns.h"
#include "cpu/matmul.h"
#include "cpu/thread_pool.h"

namespace hearth::kernels::cpu {

// cos/sin of every (token, frequency) of a rope() call, kept between calls: a forward
// pass rotates Q and K of every layer at the same positions, so the table is built once
// per step instead of 2 · n_layers times.
class RopeTable {
  public:
    // Table for these positions and parameters: [n_tokens][n_rot/2] pairs (cos, sin).
    const float* get(const int32_t* positions, int32_t n_tokens, const RopeParams& p);
    // Whether the table was last built for these parameters (any positions).
    bool built_for(const RopeParams& p) const {
        return valid_ && params_.n_rot == p.n_rot && params_.freq_base == p.freq_base &&
               params_.freq_scale == p.freq_scale;
    }

  private:
    std::vector<int32_t> positions_;
    std::vector<float> factors_;
    RopeParams params_;
    std::vector<float> table_;  // [n_tokens][n_rot/2][2]
    bool valid_ = false;
};

void rope(ThreadPool& pool, RopeTable& table, float* x, const int32_t* positions, int32_t n_tokens,
          int32_t n_heads, int32_t head_dim, const RopeParams& params);

void rms_norm(ThreadPool& pool, const ElementwiseFns& f, const float* x, const float* w,
              int32_t rows, int32_t n, float eps, float* out);
void swiglu(ThreadPool& pool, const ElementwiseFns& f, const float* gate, const float* up,
            int64_t n, float* out);
void add(ThreadPool& pool, const ElementwiseFns& f, float* x, const float* y, int64_t n);
void scale(ThreadPool& pool, float* x, int64_t n, float s);
void softcap(ThreadPool& pool, float* x, int64_t n, float cap);
// Backend::geglu: ggml's table of fp16 GELU values (built once), as its CPU path reads it.
void geglu(ThreadPool& pool, const ElementwiseFns& f, const float* gate, const float* up, int64_t n,
           float* out);

// out[t, :] = dequantised row ids[t] of the table (zeros for an id outside it).
void embed(ThreadPool& pool, const WeightView& table, const int32_t* ids, int32_t n, float* out);

// out[i, :] = x[rows[i], :].
void gather_rows(const float* x, const int32_t* rows, int32_t count, int32_t n, float* out);

// Backend::top_k: one pass over each row keeping the k best in a small sorted array.
void top_k_rows(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids,
                float* values, int32_t* invalid);

// Writes token t's K and V rows ([n_kv_heads · head_dim] floats) to cache slot slots[t].
void kv_append(const ElementwiseFns& f, const PagedKvLayer& cache, const float* k, const float* v,
               const int32_t* slots, int32_t n_tokens);

}  // namespace hearth::kernels::cpu
