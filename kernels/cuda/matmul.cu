// The CUDA matrix products (see matmul.h). Tile filling, decoding and the matrix-vector
// lane code are __host__ __device__, so that matmul_on_host runs the kernels' own code.
#include <cuda_fp16.h>
#include <mma.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cuda/matmul.h"
#include "cuda/quant_decode.cuh"
#include "quant/quantize.h"

namespace hearth::gpu {

namespace {

using quant::TensorType;

// ---------------------------------------------------------------------------------------
// Shared by the tensor-core kernels
// ---------------------------------------------------------------------------------------

constexpr int kTcThreads = 128;                // 4 warps, 16 weight rows each
constexpr int kTcRows = int{kMatmulTileRows};  // weight rows per CUDA block
constexpr int kTcK = 32;                       // tiled kernel's K step
constexpr int kTcLd = kTcK + 8;  // shared tile row stride in halves (bank spread; 16-byte multiple)
constexpr int kSkK = 128;        // split-K kernel's K step: longer runs of each weight row
constexpr int kSkLd = kSkK + 8;
constexpr int kOsLd = kTcRows + 4;  // output tile stride (floats)
static_assert(kTcK % kSplitColumns == 0 || kSplitColumns % kTcK == 0);

__host__ __device__ __forceinline__ uint16_t half_bits(float v) {
#ifdef __CUDA_ARCH__
    return __half_as_ushort(__float2half_rn(v));
#else
    return quant::f32_to_fp16(v);  // round to nearest even, as __float2half_rn
#endif
}

__host__ __device__ __forceinline__ float pow2(int e) {
    return ldexpf(1.0f, e);
}

// K range [*kb, *ke) of split s (ke ≤ cols).
__host__ __device__ __forceinline__ void split_range(int64_t chunks, int32_t splits, int32_t s,
                                                     int64_t cols, int64_t* kb, int64_t* ke) {
    *kb = chunks * s / splits * kSplitColumns;
    const int64_t end = chunks * (s + 1) / splits * kSplitColumns;
    *ke = end < cols ? end : cols;
}

// Group g (16 columns from k) of weight row `row`, scaled by the row's 1 / 2^e and rounded
// to fp16 into dst[16]; zero past the matrix or at/after column `kend`.
template <TensorType T>
__host__ __device__ __forceinline__ void decode_group(const uint8_t* w, int64_t row_bytes,
                                                      int64_t rows, int64_t cols,
                                                      const float* row_scales, int64_t row,
                                                      int64_t k, int64_t kend, uint16_t* dst) {
    float f[16];
    if (row < rows && k < kend) {
        decode::decode16<T>(w + row * row_bytes, k / 16, cols, f);
        if (row_scales) {
            const float inv = 1.0f / row_scales[row];  // a power of two: exact
            for (float& v : f) v *= inv;
        }
    } else {
        for (float& v : f) v = 0.0f;
    }
    for (int i = 0; i < 16; ++i) dst[i] = half_bits(f[i]);
}

// The activation tile xs [bn][ld] from the prepared fp16 rows: element (n, k) of the step;
// zero past the tokens or the columns.
__host__ __device__ __forceinline__ void fill_activations(const uint16_t* xh, int32_t n_tokens,
                                                          int64_t cols, int64_t tok0, int64_t k0,
                                                          int bn, int kstep, int ld, int tid,
                                                          uint16_t* xs) {
    for (int i = tid; i < bn * kstep; i += kTcThreads) {
        const int n = i / kstep, kk = i % kstep;
        const int64_t t = tok0 + n, k = k0 + kk;
        xs[n * ld + kk] = t < n_tokens && k < cols ? xh[t * cols + k] : uint16_t{0};
    }
}

// The output of (token t, row r) from its sum over K: the scales undone (powers of two:
// exact), the bias added.
__host__ __device__ __forceinline__ float finish(float sum, const float* x_scales,
                                                 const float* row_scales, const float* bias,
                                                 int64_t t, int64_t r) {
    float v = sum * x_scales[t];
    if (row_scales) v *= row_scales[r];
    return bias ? v + bias[r] : v;
}

// Token t's row of x scaled by its 2^-e and rounded to fp16 (lanes `first`, `first + step`,
// ...); *scale = 2^e. amax: the row's largest |x|.
__host__ __device__ __forceinline__ void prepare_row(const float* x, int64_t cols, float amax,
                                                     int64_t first, int64_t step, uint16_t* xh,
                                                     float* scale) {
    const int e = fp16_operand_exponent(amax);
    const float inv = pow2(-e);
    for (int64_t c = first; c < cols; c += step) xh[c] = half_bits(x[c] * inv);
    if (first == 0) *scale = pow2(e);
}

constexpr int kPrepareThreads = 256;

__global__ void __launch_bounds__(kPrepareThreads)
    prepare_kernel(const float* __restrict__ x, int64_t cols, uint16_t* __restrict__ xh,
                   float* __restrict__ scales) {
    __shared__ float part[kPrepareThreads / 32];
    const int64_t t = blockIdx.x;
    const float* row = x + t * cols;
    float m = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += kPrepareThreads) m = fmaxf(m, fabsf(row[c]));
    for (int offset = 16; offset > 0; offset >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = m;
    __syncthreads();
    float amax = 0.0f;
    for (int i = 0; i < kPrepareThreads / 32; ++i) amax = fmaxf(amax, part[i]);  // max: exact
    prepare_row(row, cols, amax, threadIdx.x, kPrepareThreads, xh + t * cols, scales + t);
}

// The workspace's parts (matmul_workspace_bytes lays them out the same way).
struct Workspace {
    uint16_t* xh;
    float* x_scales;
    float* partial;
};

Workspace carve(void* base, int64_t cols, int32_t n_tokens) {
    const auto align = [](std::size_t b) { return (b + 255) & ~std::size_t{255}; };
    auto* p = static_cast<char*>(base);
    const auto n = static_cast<std::size_t>(n_tokens);
    Workspace ws{};
    ws.xh = reinterpret_cast<uint16_t*>(p);
    p += align(n * static_cast<std::size_t>(cols) * 2);
    ws.x_scales = reinterpret_cast<float*>(p);
    p += align(n * 4);
    ws.partial = reinterpret_cast<float*>(p);
    return ws;
}

// ---------------------------------------------------------------------------------------
// Tiled tensor-core kernel
// ---------------------------------------------------------------------------------------

// Thread `tid` decodes group (k0 / 16 + tid % 2) of weight row row0 + tid / 2 into the
// fp16 tile ws [kTcRows][kTcLd].
template <TensorType T>
__host__ __device__ __forceinline__ void fill_weights_tiled(const uint8_t* w, int64_t row_bytes,
                                                            int64_t rows, int64_t cols,
                                                            const float* row_scales, int64_t row0,
                                                            int64_t k0, int64_t kend, int tid,
                                                            uint16_t* ws) {
    const int r = tid / 2, h = tid % 2;
    decode_group<T>(w, row_bytes, rows, cols, row_scales, row0 + r, k0 + 16 * h, kend,
                    ws + r * kTcLd + 16 * h);
}

// The output tile os [bn][kOsLd] (token-major) written to out.
__host__ __device__ __forceinline__ void store_tile(const float* os, int bn, int64_t rows,
                                                    int32_t n_tokens, int64_t row0, int64_t tok0,
                                                    const float* x_scales, const float* row_scales,
                                                    const float* bias, int tid, float* out) {
    for (int i = tid; i < bn * kTcRows; i += kTcThreads) {
        const int n = i / kTcRows, m = i % kTcRows;
        const int64_t t = tok0 + n, r = row0 + m;
        if (t < n_tokens && r < rows)
            out[t * rows + r] = finish(os[n * kOsLd + m], x_scales, row_scales, bias, t, r);
    }
}

template <TensorType T, int BN>
__global__ void __launch_bounds__(kTcThreads)
    matmul_tc_kernel(const uint8_t* __restrict__ w, int64_t row_bytes, int64_t rows, int64_t cols,
                     const float* __restrict__ row_scales, MatmulPlan plan,
                     const uint16_t* __restrict__ xh, const float* __restrict__ x_scales,
                     int32_t n_tokens, float* __restrict__ out, const float* __restrict__ bias) {
    using namespace nvcuda;
    __shared__ __align__(32) uint16_t ws[kTcRows * kTcLd];
    __shared__ __align__(32) uint16_t xs[BN * kTcLd];
    __shared__ __align__(32) float os[BN * kOsLd];
    const int tid = static_cast<int>(threadIdx.x), warp = tid / 32;
    const int64_t row0 = int64_t{blockIdx.x} * kTcRows, tok0 = int64_t{blockIdx.y} * BN;

    using Acc = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
    Acc total[BN / 16];
#pragma unroll
    for (auto& a : total) wmma::fill_fragment(a, 0.0f);
    for (int32_t s = 0; s < plan.splits; ++s) {
        int64_t kb = 0, ke = 0;
        split_range(plan.chunks, plan.splits, s, cols, &kb, &ke);
        Acc acc[BN / 16];
#pragma unroll
        for (auto& a : acc) wmma::fill_fragment(a, 0.0f);
        for (int64_t k0 = kb; k0 < ke; k0 += kTcK) {
            fill_weights_tiled<T>(w, row_bytes, rows, cols, row_scales, row0, k0, ke, tid, ws);
            fill_activations(xh, n_tokens, cols, tok0, k0, BN, kTcK, kTcLd, tid, xs);
            __syncthreads();
            for (int kk = 0; kk < kTcK && k0 + kk < ke; kk += 16) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
                wmma::load_matrix_sync(
                    a, reinterpret_cast<const __half*>(ws + 16 * warp * kTcLd + kk), kTcLd);
#pragma unroll
                for (int j = 0; j < BN / 16; ++j) {
                    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
                    wmma::load_matrix_sync(
                        b, reinterpret_cast<const __half*>(xs + 16 * j * kTcLd + kk), kTcLd);
                    wmma::mma_sync(acc[j], a, b, acc[j]);
                }
            }
            __syncthreads();
        }
        // The range's sum joins the total as the split-K reduction adds it (fragments of
        // one type share their element layout).
#pragma unroll
        for (int j = 0; j < BN / 16; ++j)
            for (int i = 0; i < total[j].num_elements; ++i) total[j].x[i] += acc[j].x[i];
    }
    // total[j] (m, n) = row 16·warp + m, token 16·j + n → os[(16j + n) · kOsLd + 16·warp + m].
#pragma unroll
    for (int j = 0; j < BN / 16; ++j)
        wmma::store_matrix_sync(os + 16 * j * kOsLd + 16 * warp, total[j], kOsLd,
                                wmma::mem_col_major);
    __syncthreads();
    store_tile(os, BN, rows, n_tokens, row0, tok0, x_scales, row_scales, bias, tid, out);
}

// ---------------------------------------------------------------------------------------
// Split-K tensor-core kernel (decode)
// ---------------------------------------------------------------------------------------

// The 64 × kSkK weight tile: thread tid decodes groups tid + 128·j (j < 4), group i being
// row i / 8, columns 16 · (i % 8) on: a warp reads 4 rows × 128 columns, each row's run
// contiguous in memory.
template <TensorType T>
__host__ __device__ __forceinline__ void fill_weights_split(const uint8_t* w, int64_t row_bytes,
                                                            int64_t rows, int64_t cols,
                                                            const float* row_scales, int64_t row0,
                                                            int64_t k0, int64_t kend, int tid,
                                                            uint16_t* ws) {
    constexpr int kGroups = kSkK / 16;
    for (int j = 0; j < kTcRows * kGroups / kTcThreads; ++j) {
        const int i = tid + kTcThreads * j, r = i / kGroups, g = i % kGroups;
        decode_group<T>(w, row_bytes, rows, cols, row_scales, row0 + r, k0 + 16 * g, kend,
                        ws + r * kSkLd + 16 * g);
    }
}

// Partial sums of one 64-row tile over K range blockIdx.y: partial [splits][n_tokens][rows].
template <TensorType T>
__global__ void __launch_bounds__(kTcThreads)
    matmul_split_kernel(const uint8_t* __restrict__ w, int64_t row_bytes, int64_t rows,
                        int64_t cols, const float* __restrict__ row_scales, MatmulPlan plan,
                        const uint16_t* __restrict__ xh, int32_t n_tokens,
                        float* __restrict__ partial) {
    using namespace nvcuda;
    __shared__ __align__(32) uint16_t ws[kTcRows * kSkLd];
    __shared__ __align__(32) uint16_t xs[16 * kSkLd];
    __shared__ __align__(32) float os[16 * kOsLd];
    const int tid = static_cast<int>(threadIdx.x), warp = tid / 32;
    const int64_t row0 = int64_t{blockIdx.x} * kTcRows;
    const auto s = static_cast<int32_t>(blockIdx.y);
    int64_t kb = 0, ke = 0;
    split_range(plan.chunks, plan.splits, s, cols, &kb, &ke);
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int64_t k0 = kb; k0 < ke; k0 += kSkK) {
        fill_weights_split<T>(w, row_bytes, rows, cols, row_scales, row0, k0, ke, tid, ws);
        fill_activations(xh, n_tokens, cols, 0, k0, 16, kSkK, kSkLd, tid, xs);
        __syncthreads();
        for (int kk = 0; kk < kSkK && k0 + kk < ke; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
            wmma::load_matrix_sync(a, reinterpret_cast<const __half*>(ws + 16 * warp * kSkLd + kk),
                                   kSkLd);
            wmma::load_matrix_sync(b, reinterpret_cast<const __half*>(xs + kk), kSkLd);
            wmma::mma_sync(acc, a, b, acc);
        }
        __syncthreads();
    }
    wmma::store_matrix_sync(os + 16 * warp, acc, kOsLd, wmma::mem_col_major);
    __syncthreads();
    for (int i = tid; i < 16 * kTcRows; i += kTcThreads) {
        const int n = i / kTcRows, m = i % kTcRows;
        const int64_t r = row0 + m;
        if (n < n_tokens && r < rows)
            partial[(int64_t{s} * n_tokens + n) * rows + r] = os[n * kOsLd + m];
    }
}

// out[t, r]: the ranges' partial sums added in range order (from 0, as the tiled kernel's
// total), then finished.
__host__ __device__ __forceinline__ float reduce_one(const float* partial, int32_t splits,
                                                     int32_t n_tokens, int64_t rows, int64_t t,
                                                     int64_t r) {
    float v = 0.0f;
    for (int32_t s = 0; s < splits; ++s) v += partial[(int64_t{s} * n_tokens + t) * rows + r];
    return v;
}

__global__ void __launch_bounds__(256)
    reduce_kernel(const float* __restrict__ partial, int32_t splits, int32_t n_tokens, int64_t rows,
                  const float* __restrict__ x_scales, const float* __restrict__ row_scales,
                  const float* __restrict__ bias, float* __restrict__ out) {
    const int64_t i = int64_t{blockIdx.x} * 256 + threadIdx.x;
    if (i >= n_tokens * rows) return;
    const int64_t t = i / rows, r = i % rows;
    out[i] =
        finish(reduce_one(partial, splits, n_tokens, rows, t, r), x_scales, row_scales, bias, t, r);
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

bool valid_call(const MatmulWeight& w, const float* x, int32_t n_tokens, const float* out) {
    const auto t = quant::traits(w.type);
    if (!t || w.rows < 1 || w.cols < 1 || w.cols % t->block_elems != 0 || n_tokens < 0)
        return false;
    const int64_t chunks = (w.cols + kSplitColumns - 1) / kSplitColumns;
    if (w.plan.chunks != chunks || w.plan.splits < 1 || w.plan.splits > chunks) return false;
    if (n_tokens == 0) return true;
    if (matmul_needs_row_scales(w.type) && !w.row_scales) return false;
    const auto align = reinterpret_cast<uintptr_t>(w.data) % (w.type == TensorType::F32 ? 4 : 2);
    return w.data && x && out && align == 0;
}

}  // namespace

cudaError_t matmul_cuda(const MatmulWeight& w, const float* d_x, int32_t n_tokens, float* d_out,
                        const float* d_bias, MatmulMode mode, void* d_workspace,
                        std::size_t workspace_bytes, cudaStream_t stream) {
    if (!valid_call(w, d_x, n_tokens, d_out)) return cudaErrorInvalidValue;
    if (n_tokens == 0) return cudaSuccess;
    const MatmulKernel kernel = matmul_kernel_for(mode, n_tokens);
    const std::size_t need = matmul_workspace_bytes(kernel, w.plan, w.rows, w.cols, n_tokens);
    if (need > 0 && (!d_workspace || workspace_bytes < need ||
                     reinterpret_cast<uintptr_t>(d_workspace) % 256 != 0))
        return cudaErrorInvalidValue;
    const int64_t row_bytes = quant::quantized_size(w.type, w.cols);  // valid: checked above
    const auto* wb = static_cast<const uint8_t*>(w.data);
    const auto grid_x = static_cast<unsigned>((w.rows + kTcRows - 1) / kTcRows);
    const Workspace ws =
        kernel == MatmulKernel::MatVec ? Workspace{} : carve(d_workspace, w.cols, n_tokens);
    if (kernel != MatmulKernel::MatVec)
        prepare_kernel<<<static_cast<unsigned>(n_tokens), kPrepareThreads, 0, stream>>>(
            d_x, w.cols, ws.xh, ws.x_scales);
    decode::with_type(w.type, [&](auto tag) {
        constexpr TensorType T = decltype(tag)::value;
        switch (kernel) {
            case MatmulKernel::MatVec: {
                const auto grid = static_cast<unsigned>((w.rows + kMvWarps - 1) / kMvWarps);
                matvec_kernel<T><<<grid, kMvWarps * 32, 0, stream>>>(wb, row_bytes, w.rows, w.cols,
                                                                     d_x, n_tokens, d_out, d_bias);
                return;
            }
            case MatmulKernel::SplitK: {
                matmul_split_kernel<T>
                    <<<dim3(grid_x, static_cast<unsigned>(w.plan.splits)), kTcThreads, 0, stream>>>(
                        wb, row_bytes, w.rows, w.cols, w.row_scales, w.plan, ws.xh, n_tokens,
                        ws.partial);
                const int64_t outputs = int64_t{n_tokens} * w.rows;
                reduce_kernel<<<static_cast<unsigned>((outputs + 255) / 256), 256, 0, stream>>>(
                    ws.partial, w.plan.splits, n_tokens, w.rows, ws.x_scales, w.row_scales, d_bias,
                    d_out);
                return;
            }
            case MatmulKernel::TensorCore:
                if (n_tokens <= 16) {
                    matmul_tc_kernel<T, 16><<<dim3(grid_x, 1), kTcThreads, 0, stream>>>(
                        wb, row_bytes, w.rows, w.cols, w.row_scales, w.plan, ws.xh, ws.x_scales,
                        n_tokens, d_out, d_bias);
                } else {
                    const auto grid_y = static_cast<unsigned>((n_tokens + 63) / 64);
                    matmul_tc_kernel<T, 64><<<dim3(grid_x, grid_y), kTcThreads, 0, stream>>>(
                        wb, row_bytes, w.rows, w.cols, w.row_scales, w.plan, ws.xh, ws.x_scales,
                        n_tokens, d_out, d_bias);
                }
                return;
        }
    });
    return cudaGetLastError();
}

namespace {

// One 16-column product of the twins: float sums of the fp16 products, added to acc.
float dot16(const uint16_t* a, const uint16_t* b) {
    float s = 0.0f;
    for (int i = 0; i < 16; ++i) s += quant::fp16_to_f32(a[i]) * quant::fp16_to_f32(b[i]);
    return s;
}

// The prepare kernel on the host.
void prepare_on_host(const float* x, int32_t n_tokens, int64_t cols, uint16_t* xh, float* scales) {
    for (int32_t t = 0; t < n_tokens; ++t) {
        const float* row = x + int64_t{t} * cols;
        float amax = 0.0f;
        for (int64_t c = 0; c < cols; ++c) amax = std::fmax(amax, std::fabs(row[c]));
        prepare_row(row, cols, amax, 0, 1, xh + int64_t{t} * cols, scales + t);
    }
}

template <TensorType T>
void tiled_on_host(const MatmulWeight& w, int64_t row_bytes, const uint16_t* xh,
                   const float* x_scales, int32_t n_tokens, float* out, const float* bias) {
    const auto* wb = static_cast<const uint8_t*>(w.data);
    const int bn = n_tokens <= 16 ? 16 : 64;
    std::vector<uint16_t> ws(kTcRows * kTcLd), xs(static_cast<size_t>(bn) * kTcLd);
    std::vector<float> os(static_cast<size_t>(bn) * kOsLd), acc(os.size());
    for (int64_t row0 = 0; row0 < w.rows; row0 += kTcRows) {
        for (int64_t tok0 = 0; tok0 < n_tokens; tok0 += bn) {
            std::fill(os.begin(), os.end(), 0.0f);
            for (int32_t s = 0; s < w.plan.splits; ++s) {
                int64_t kb = 0, ke = 0;
                split_range(w.plan.chunks, w.plan.splits, s, w.cols, &kb, &ke);
                std::fill(acc.begin(), acc.end(), 0.0f);
                for (int64_t k0 = kb; k0 < ke; k0 += kTcK) {
                    for (int tid = 0; tid < kTcThreads; ++tid) {
                        fill_weights_tiled<T>(wb, row_bytes, w.rows, w.cols, w.row_scales, row0, k0,
                                              ke, tid, ws.data());
                        fill_activations(xh, n_tokens, w.cols, tok0, k0, bn, kTcK, kTcLd, tid,
                                         xs.data());
                    }
                    // Only the step's tokens: the padding's sums are never stored.
                    const int live = static_cast<int>(std::min<int64_t>(bn, n_tokens - tok0));
                    for (int kk = 0; kk < kTcK && k0 + kk < ke; kk += 16)
                        for (int n = 0; n < live; ++n)
                            for (int m = 0; m < kTcRows; ++m)
                                acc[n * kOsLd + m] +=
                                    dot16(&ws[m * kTcLd + kk], &xs[n * kTcLd + kk]);
                }
                for (size_t i = 0; i < os.size(); ++i) os[i] += acc[i];
            }
            for (int tid = 0; tid < kTcThreads; ++tid)
                store_tile(os.data(), bn, w.rows, n_tokens, row0, tok0, x_scales, w.row_scales,
                           bias, tid, out);
        }
    }
}

template <TensorType T>
void split_on_host(const MatmulWeight& w, int64_t row_bytes, const uint16_t* xh,
                   const float* x_scales, int32_t n_tokens, float* out, const float* bias) {
    const auto* wb = static_cast<const uint8_t*>(w.data);
    std::vector<float> partial(static_cast<size_t>(w.plan.splits) * n_tokens * w.rows);
    std::vector<uint16_t> ws(kTcRows * kSkLd), xs(16 * kSkLd);
    std::vector<float> acc(16 * kOsLd);
    for (int64_t row0 = 0; row0 < w.rows; row0 += kTcRows) {
        for (int32_t s = 0; s < w.plan.splits; ++s) {
            int64_t kb = 0, ke = 0;
            split_range(w.plan.chunks, w.plan.splits, s, w.cols, &kb, &ke);
            std::fill(acc.begin(), acc.end(), 0.0f);
            for (int64_t k0 = kb; k0 < ke; k0 += kSkK) {
                for (int tid = 0; tid < kTcThreads; ++tid) {
                    fill_weights_split<T>(wb, row_bytes, w.rows, w.cols, w.row_scales, row0, k0, ke,
                                          tid, ws.data());
                    fill_activations(xh, n_tokens, w.cols, 0, k0, 16, kSkK, kSkLd, tid, xs.data());
                }
                for (int kk = 0; kk < kSkK && k0 + kk < ke; kk += 16)
                    for (int n = 0; n < n_tokens; ++n)
                        for (int m = 0; m < kTcRows; ++m)
                            acc[n * kOsLd + m] += dot16(&ws[m * kSkLd + kk], &xs[n * kSkLd + kk]);
            }
            for (int n = 0; n < n_tokens; ++n)
                for (int m = 0; m < kTcRows && row0 + m < w.rows; ++m)
                    partial[static_cast<size_t>((int64_t{s} * n_tokens + n) * w.rows + row0 + m)] =
                        acc[n * kOsLd + m];
        }
    }
    for (int64_t t = 0; t < n_tokens; ++t)
        for (int64_t r = 0; r < w.rows; ++r)
            out[t * w.rows + r] =
                finish(reduce_one(partial.data(), w.plan.splits, n_tokens, w.rows, t, r), x_scales,
                       w.row_scales, bias, t, r);
}

}  // namespace

bool matmul_on_host(const MatmulWeight& w, const float* x, int32_t n_tokens, float* out,
                    const float* bias, MatmulKernel kernel) {
    if (!valid_call(w, x, n_tokens, out)) return false;
    if (n_tokens == 0) return true;
    if (kernel == MatmulKernel::SplitK && n_tokens > kSplitKMaxTokens) return false;
    const int64_t row_bytes = quant::quantized_size(w.type, w.cols);  // valid: checked above
    const auto* wb = static_cast<const uint8_t*>(w.data);
    std::vector<uint16_t> xh;
    std::vector<float> x_scales;
    if (kernel != MatmulKernel::MatVec) {
        xh.resize(static_cast<size_t>(n_tokens * w.cols));
        x_scales.resize(static_cast<size_t>(n_tokens));
        prepare_on_host(x, n_tokens, w.cols, xh.data(), x_scales.data());
    }
    return decode::with_type(w.type, [&](auto tag) {
        constexpr TensorType T = decltype(tag)::value;
        switch (kernel) {
            case MatmulKernel::MatVec: {
                float lanes[32][kMatVecMaxTokens];
                for (int64_t row = 0; row < w.rows; ++row) {
                    for (int32_t t0 = 0; t0 < n_tokens; t0 += kMatVecMaxTokens) {
                        const int32_t nt = std::min(n_tokens - t0, kMatVecMaxTokens);
                        for (int lane = 0; lane < 32; ++lane)
                            matvec_lane<T>(wb + row * row_bytes, w.cols, x + int64_t{t0} * w.cols,
                                           nt, lane, lanes[lane]);
                        for (int t = 0; t < nt; ++t) {
                            float v[32];
                            for (int lane = 0; lane < 32; ++lane) v[lane] = lanes[lane][t];
                            for (int offset = 16; offset > 0; offset >>= 1)
                                for (int i = 0; i < offset; ++i) v[i] = v[i] + v[i + offset];
                            out[int64_t{t0 + t} * w.rows + row] = v[0] + (bias ? bias[row] : 0.0f);
                        }
                    }
                }
                return;
            }
            case MatmulKernel::SplitK:
                split_on_host<T>(w, row_bytes, xh.data(), x_scales.data(), n_tokens, out, bias);
                return;
            case MatmulKernel::TensorCore:
                tiled_on_host<T>(w, row_bytes, xh.data(), x_scales.data(), n_tokens, out, bias);
                return;
        }
    });
}

}  // namespace hearth::gpu
