// The CUDA matrix products (see matmul.h). Tile filling, decoding and the matrix-vector
// lane code are __host__ __device__, so that matmul_on_host runs the kernels' own code.
#include <cuda_fp16.h>
#include <mma.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cuda/matmul.h"
#include "cuda/quant_decode.cuh"
#include "quant/quantize.h"

namespace hearth::gpu {

namespace {

using quant::TensorType;

// ---------------------------------------------------------------------------------------
// Tensor-core kernel
// ---------------------------------------------------------------------------------------

constexpr int kTcThreads = 128;  // 4 warps, 16 weight rows each
constexpr int kTcRows = 64;      // weight rows per CUDA block
constexpr int kTcK = 32;         // K step
constexpr int kTcLd = kTcK + 8;  // shared tile row stride in halves (bank spread; 16-byte multiple)

__host__ __device__ __forceinline__ uint16_t half_bits(float v) {
#ifdef __CUDA_ARCH__
    return __half_as_ushort(__float2half_rn(v));
#else
    return quant::f32_to_fp16(v);  // round to nearest even, as __float2half_rn
#endif
}

// Thread `tid` decodes group (k0 / 16 + tid % 2) of weight row row0 + tid / 2 into the
// fp16 tile ws [kTcRows][kTcLd] (rows past the matrix are zero).
template <TensorType T>
__host__ __device__ __forceinline__ void fill_weights(const uint8_t* w, int64_t row_bytes,
                                                      int64_t rows, int64_t cols, int64_t row0,
                                                      int64_t k0, int tid, uint16_t* ws) {
    const int r = tid / 2, h = tid % 2;
    float f[16];
    const int64_t row = row0 + r;
    if (row < rows && k0 + 16 * h < cols) {
        decode::decode16<T>(w + row * row_bytes, k0 / 16 + h, cols, f);
    } else {
        for (float& v : f) v = 0.0f;
    }
    uint16_t* dst = ws + r * kTcLd + 16 * h;
    for (int i = 0; i < 16; ++i) dst[i] = half_bits(f[i]);
}

// The activation tile xs [bn][kTcLd]: element (n, k) of the step, fp16; zero past the
// tokens or the columns.
__host__ __device__ __forceinline__ void fill_activations(const float* x, int32_t n_tokens,
                                                          int64_t cols, int64_t tok0, int64_t k0,
                                                          int bn, int tid, uint16_t* xs) {
    for (int i = tid; i < bn * kTcK; i += kTcThreads) {
        const int n = i / kTcK, kk = i % kTcK;
        const int64_t t = tok0 + n, k = k0 + kk;
        xs[n * kTcLd + kk] = half_bits(t < n_tokens && k < cols ? x[t * cols + k] : 0.0f);
    }
}

// The output tile os [bn][kTcRows + 4] (token-major) written to out with the bias.
__host__ __device__ __forceinline__ void store_tile(const float* os, int bn, int64_t rows,
                                                    int32_t n_tokens, int64_t row0, int64_t tok0,
                                                    const float* bias, int tid, float* out) {
    constexpr int ldo = kTcRows + 4;
    for (int i = tid; i < bn * kTcRows; i += kTcThreads) {
        const int n = i / kTcRows, m = i % kTcRows;
        const int64_t t = tok0 + n, r = row0 + m;
        if (t < n_tokens && r < rows) out[t * rows + r] = os[n * ldo + m] + (bias ? bias[r] : 0.0f);
    }
}

template <TensorType T, int BN>
__global__ void __launch_bounds__(kTcThreads)
    matmul_tc_kernel(const uint8_t* __restrict__ w, int64_t row_bytes, int64_t rows, int64_t cols,
                     const float* __restrict__ x, int32_t n_tokens, float* __restrict__ out,
                     const float* __restrict__ bias) {
    using namespace nvcuda;
    __shared__ __align__(32) uint16_t ws[kTcRows * kTcLd];
    __shared__ __align__(32) uint16_t xs[BN * kTcLd];
    __shared__ __align__(32) float os[BN * (kTcRows + 4)];
    const int tid = static_cast<int>(threadIdx.x), warp = tid / 32;
    const int64_t row0 = int64_t{blockIdx.x} * kTcRows, tok0 = int64_t{blockIdx.y} * BN;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[BN / 16];
#pragma unroll
    for (auto& a : acc) wmma::fill_fragment(a, 0.0f);
    for (int64_t k0 = 0; k0 < cols; k0 += kTcK) {
        fill_weights<T>(w, row_bytes, rows, cols, row0, k0, tid, ws);
        fill_activations(x, n_tokens, cols, tok0, k0, BN, tid, xs);
        __syncthreads();
        for (int kk = 0; kk < kTcK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
            wmma::load_matrix_sync(a, reinterpret_cast<const __half*>(ws + 16 * warp * kTcLd + kk),
                                   kTcLd);
#pragma unroll
            for (int j = 0; j < BN / 16; ++j) {
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
                wmma::load_matrix_sync(b, reinterpret_cast<const __half*>(xs + 16 * j * kTcLd + kk),
                                       kTcLd);
                wmma::mma_sync(acc[j], a, b, acc[j]);
            }
        }
        __syncthreads();
    }
    // acc[j] (m, n) = row 16·warp + m, token 16·j + n → os[(16j + n) · ldo + 16·warp + m].
#pragma unroll
    for (int j = 0; j < BN / 16; ++j)
        wmma::store_matrix_sync(os + 16 * j * (kTcRows + 4) + 16 * warp, acc[j], kTcRows + 4,
                                wmma::mem_col_major);
    __syncthreads();
    store_tile(os, BN, rows, n_tokens, row0, tok0, bias, tid, out);
}

// ---------------------------------------------------------------------------------------
// Matrix-vector kernel
// ---------------------------------------------------------------------------------------

constexpr int kMvWarps = 4;  // rows per CUDA block

// Lane `lane`'s partial sums for up to kMatVecMaxTokens tokens: groups lane, lane + 32,
// ..., each decoded once and used for every token, products added in column order.
template <TensorType T>
__host__ __device__ __forceinline__ void matvec_lane(const uint8_t* wrow, int64_t cols,
                                                     const float* x, int32_t nt, int lane,
                                                     float* acc) {
    const int64_t groups = (cols + 15) / 16;
    for (int t = 0; t < kMatVecMaxTokens; ++t) acc[t] = 0.0f;
    for (int64_t g = lane; g < groups; g += 32) {
        float f[16];
        decode::decode16<T>(wrow, g, cols, f);
        const int64_t k0 = 16 * g;
        const int n = cols - k0 < 16 ? static_cast<int>(cols - k0) : 16;
        for (int t = 0; t < nt; ++t) {
            const float* xt = x + t * cols + k0;
            float a = acc[t];
            for (int i = 0; i < n; ++i) a = fmaf(f[i], xt[i], a);
            acc[t] = a;
        }
    }
}

template <TensorType T>
__global__ void __launch_bounds__(kMvWarps * 32)
    matvec_kernel(const uint8_t* __restrict__ w, int64_t row_bytes, int64_t rows, int64_t cols,
                  const float* __restrict__ x, int32_t n_tokens, float* __restrict__ out,
                  const float* __restrict__ bias) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int64_t row = int64_t{blockIdx.x} * kMvWarps + threadIdx.x / 32;
    if (row >= rows) return;
    for (int32_t t0 = 0; t0 < n_tokens; t0 += kMatVecMaxTokens) {
        const int32_t nt = n_tokens - t0 < kMatVecMaxTokens ? n_tokens - t0 : kMatVecMaxTokens;
        float acc[kMatVecMaxTokens];
        matvec_lane<T>(w + row * row_bytes, cols, x + int64_t{t0} * cols, nt, lane, acc);
        for (int t = 0; t < nt; ++t) {
            float v = acc[t];
            for (int offset = 16; offset > 0; offset >>= 1)
                v += __shfl_down_sync(0xffffffffu, v, offset);
            if (lane == 0) out[int64_t{t0 + t} * rows + row] = v + (bias ? bias[row] : 0.0f);
        }
    }
}

bool valid_call(TensorType type, const void* w, int64_t rows, int64_t cols, const float* x,
                int32_t n_tokens, const float* out) {
    const auto t = quant::traits(type);
    if (!t || rows < 1 || cols < 1 || cols % t->block_elems != 0 || n_tokens < 0) return false;
    if (n_tokens == 0) return true;
    const auto align = reinterpret_cast<uintptr_t>(w) % (type == TensorType::F32 ? 4 : 2);
    return w && x && out && align == 0;
}

}  // namespace

MatmulKernel matmul_kernel_for(MatmulMode mode, int32_t n_tokens) {
    return mode == MatmulMode::Fastest && n_tokens <= kMatVecMaxTokens ? MatmulKernel::MatVec
                                                                       : MatmulKernel::TensorCore;
}

cudaError_t matmul_cuda(TensorType type, const void* d_w, int64_t rows, int64_t cols,
                        const float* d_x, int32_t n_tokens, float* d_out, const float* d_bias,
                        MatmulMode mode, cudaStream_t stream) {
    if (!valid_call(type, d_w, rows, cols, d_x, n_tokens, d_out)) return cudaErrorInvalidValue;
    if (n_tokens == 0) return cudaSuccess;
    const int64_t row_bytes = quant::quantized_size(type, cols);  // valid: checked above
    const auto* w = static_cast<const uint8_t*>(d_w);
    const MatmulKernel kernel = matmul_kernel_for(mode, n_tokens);
    decode::with_type(type, [&](auto tag) {
        constexpr TensorType T = decltype(tag)::value;
        if (kernel == MatmulKernel::MatVec) {
            const auto grid = static_cast<unsigned>((rows + kMvWarps - 1) / kMvWarps);
            matvec_kernel<T><<<grid, kMvWarps * 32, 0, stream>>>(w, row_bytes, rows, cols, d_x,
                                                                 n_tokens, d_out, d_bias);
            return;
        }
        const auto grid_x = static_cast<unsigned>((rows + kTcRows - 1) / kTcRows);
        if (n_tokens <= 16) {
            matmul_tc_kernel<T, 16><<<dim3(grid_x, 1), kTcThreads, 0, stream>>>(
                w, row_bytes, rows, cols, d_x, n_tokens, d_out, d_bias);
        } else {
            const auto grid_y = static_cast<unsigned>((n_tokens + 63) / 64);
            matmul_tc_kernel<T, 64><<<dim3(grid_x, grid_y), kTcThreads, 0, stream>>>(
                w, row_bytes, rows, cols, d_x, n_tokens, d_out, d_bias);
        }
    });
    return cudaGetLastError();
}

bool matmul_on_host(TensorType type, const void* w, int64_t rows, int64_t cols, const float* x,
                    int32_t n_tokens, float* out, const float* bias, MatmulKernel kernel) {
    if (!valid_call(type, w, rows, cols, x, n_tokens, out)) return false;
    if (n_tokens == 0) return true;
    const int64_t row_bytes = quant::quantized_size(type, cols);  // valid: checked above
    const auto* wb = static_cast<const uint8_t*>(w);
    return decode::with_type(type, [&](auto tag) {
        constexpr TensorType T = decltype(tag)::value;
        if (kernel == MatmulKernel::MatVec) {
            float lanes[32][kMatVecMaxTokens];
            for (int64_t row = 0; row < rows; ++row) {
                for (int32_t t0 = 0; t0 < n_tokens; t0 += kMatVecMaxTokens) {
                    const int32_t nt = std::min(n_tokens - t0, kMatVecMaxTokens);
                    for (int lane = 0; lane < 32; ++lane)
                        matvec_lane<T>(wb + row * row_bytes, cols, x + int64_t{t0} * cols, nt, lane,
                                       lanes[lane]);
                    for (int t = 0; t < nt; ++t) {
                        float v[32];
                        for (int lane = 0; lane < 32; ++lane) v[lane] = lanes[lane][t];
                        for (int offset = 16; offset > 0; offset >>= 1)
                            for (int i = 0; i < offset; ++i) v[i] = v[i] + v[i + offset];
                        out[int64_t{t0 + t} * rows + row] = v[0] + (bias ? bias[row] : 0.0f);
                    }
                }
            }
            return;
        }
        const int bn = n_tokens <= 16 ? 16 : 64;
        std::vector<uint16_t> ws(kTcRows * kTcLd), xs(static_cast<size_t>(bn) * kTcLd);
        std::vector<float> os(static_cast<size_t>(bn) * (kTcRows + 4));
        for (int64_t row0 = 0; row0 < rows; row0 += kTcRows) {
            for (int64_t tok0 = 0; tok0 < n_tokens; tok0 += bn) {
                std::fill(os.begin(), os.end(), 0.0f);
                for (int64_t k0 = 0; k0 < cols; k0 += kTcK) {
                    for (int tid = 0; tid < kTcThreads; ++tid) {
                        fill_weights<T>(wb, row_bytes, rows, cols, row0, k0, tid, ws.data());
                        fill_activations(x, n_tokens, cols, tok0, k0, bn, tid, xs.data());
                    }
                    for (int kk = 0; kk < kTcK; kk += 16)
                        for (int n = 0; n < bn; ++n)
                            for (int m = 0; m < kTcRows; ++m) {
                                float s = 0.0f;
                                for (int i = 0; i < 16; ++i)
                                    s += quant::fp16_to_f32(ws[m * kTcLd + kk + i]) *
                                         quant::fp16_to_f32(xs[n * kTcLd + kk + i]);
                                os[n * (kTcRows + 4) + m] += s;
                            }
                }
                for (int tid = 0; tid < kTcThreads; ++tid)
                    store_tile(os.data(), bn, rows, n_tokens, row0, tok0, bias, tid, out);
            }
        }
    });
}

}  // namespace hearth::gpu
