// Naive reference versions of every Backend op (backend.h), for tests only: plain loops,
// double accumulation, dequantise-then-dot matmul, two-pass softmax attention over the
// paged cache. Host memory; same argument conventions and shapes as the Backend ops.
#pragma once

#include <cstdint>
#include <vector>

#include "backend.h"
#include "quant/quant_types.h"

namespace hearth::kernels::reference {

// A weight matrix in GGUF layout: rows × cols elements of `type`, rows contiguous.
struct WeightRef {
    quant::TensorType type = quant::TensorType::F32;
    int64_t rows = 0;
    int64_t cols = 0;
    const void* data = nullptr;
};

std::size_t row_bytes(quant::TensorType type, int64_t cols);

// The whole matrix as floats [rows, cols] (quant::dequantize row by row).
std::vector<float> dequantize_matrix(const WeightRef& w);

void embed(const WeightRef& table, const int32_t* ids, int32_t n, float* out);

void rms_norm(const float* x, const float* weight, int32_t rows, int32_t n, float eps, float* out);

// out[t, r] = Σ_c W[r, c] · x[t, c] (+ bias[r]) with W dequantised and double sums.
void matmul(const WeightRef& w, const float* x, int32_t n_tokens, float* out,
            const float* bias = nullptr);

// The activation rounding of the CPU backend's integer dot products, undone: each block
// of `block` values (32, or 256 for the K-quants) is quantised symmetrically to int8 —
// d = max|x| / 127, q = nearest-even(x · (127 / max|x|)) in float, as llama.cpp's Q8_0 —
// and returned as d · q in double, where d is rounded to fp16 for 32-blocks (llama.cpp's
// block_q8_0 / block_q8_1 store it so) and stays float for 256 (block_q8_K). matmul over
// these values is what the integer kernels compute up to float rounding, independent of
// their unpacking and summation tricks.
std::vector<double> q8_roundtrip(const float* x, int64_t n, int64_t block);

// out[t, r] = Σ_c W[r, c] · q8_roundtrip(x[t, :])[c], double sums; block as above. For
// Q4_1 / Q5_1 weights the offset m of each weight block meets the activation block's
// s = fp16(d · Σq) of llama.cpp's block_q8_1, as in its dot product, instead of Σ d · q.
void matmul_q8_activations(const WeightRef& w, const float* x, int32_t n_tokens, int64_t block,
                           float* out);

void rope(float* x, const int32_t* positions, int32_t n_tokens, int32_t n_heads, int32_t head_dim,
          const RopeParams& params);

void kv_append(const PagedKvLayer& cache, const float* k, const float* v, const int32_t* slots,
               int32_t n_tokens);

// Backend::kv_shift with the angles in double (delta · freq_scale · base^(−2i/n_rot) / ff[i]).
void kv_shift(const PagedKvLayer& cache, const int32_t* src_slots, const int32_t* dst_slots,
              const int32_t* deltas, int32_t n, const RopeParams& rope);

void attention(const float* q, const PagedKvLayer& cache, const AttentionBatch& batch,
               int32_t n_heads, float scale, float* out);

void swiglu(const float* gate, const float* up, int64_t n, float* out);
// gelu(gate) · up with the tanh GELU in double (no fp16 table).
void geglu(const float* gate, const float* up, int64_t n, float* out);
void scale(float* x, int64_t n, float s);
void softcap(float* x, int64_t n, float cap);  // tanh(x / cap) · cap in double

void add(float* x, const float* y, int64_t n);

void gather_rows(const float* x, const int32_t* rows, int32_t count, int32_t n, float* out);
// Backend::top_k by sorting each whole row.
void top_k(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids, float* values,
           int32_t* invalid);

}  // namespace hearth::kernels::reference
