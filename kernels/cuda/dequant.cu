// CUDA dequantisation kernels: device helpers, one element op per type, one grid-stride
// __global__ template, then the host launchers. The formulas (and their evaluation
// order) are those of quant/dequant.cpp; every product is exact in float, so nvcc's FMA
// contraction cannot change a result and the output matches the CPU bit for bit.
//
// Work decomposition: a type's block is split into Op::kItems independent work items,
// one per thread. Each item reads the block header (scales; neighbouring threads share
// it through L1) and one or two quant bytes, and writes 2 or 4 outputs, so a warp reads
// a contiguous run of quant bytes and writes contiguous runs of floats.
#include <cstdint>
#include <cstring>

#include "cuda/dequant.h"
#include "cuda/quant_decode.cuh"
#include "quant/quant_types.h"

namespace hearth::gpu {

namespace {

using namespace hearth::quant;

// Block structs need only 2-byte alignment (their widest field is an fp16); the launcher
// checks the source pointer against that.
static_assert(alignof(BlockQ4_0) == 2 && alignof(BlockQ4_1) == 2 && alignof(BlockQ5_0) == 2 &&
              alignof(BlockQ5_1) == 2 && alignof(BlockQ8_0) == 2 && alignof(BlockQ4_K) == 2 &&
              alignof(BlockQ5_K) == 2 && alignof(BlockQ6_K) == 2 && alignof(BlockQ2_K) == 2 &&
              alignof(BlockQ3_K) == 2 && alignof(BlockIQ4_NL) == 2 && alignof(BlockIQ4_XS) == 2);

constexpr int kThreads = 256;          // threads per CUDA block
constexpr int64_t kMaxGrid = 1 << 16;  // CUDA blocks; larger tensors loop (grid stride)

// ---------------------------------------------------------------------------------------
// Device helpers
// ---------------------------------------------------------------------------------------

// Everything up to the kernel is __host__ __device__ so that dequantize_on_host() can
// run the very same per-thread code on the CPU (the kernels' indexing is then tested on
// machines without a GPU). The scalar decoders are the matrix products' (quant_decode.cuh).
__host__ __device__ __forceinline__ float fp16_to_f32(uint16_t h) {
    return decode::fp16(h);
}
__host__ __device__ __forceinline__ float bf16_to_f32(uint16_t h) {
    return decode::bf16(h);
}
using decode::k_scale_min;
using decode::load_qh;

// ---------------------------------------------------------------------------------------
// Element ops: Block is the storage unit, kElems its outputs, kItems the work items it is
// split into; apply(block, item, y) writes item's outputs into y = the block's outputs.
// ---------------------------------------------------------------------------------------

// Item j < 16: quant byte j → outputs j (low nibble) and j + 16 (high nibble).
struct OpQ4_0 {
    using Block = BlockQ4_0;
    static constexpr int kElems = 32, kItems = 16;
    __host__ __device__ static void apply(const Block& b, int j, float* y) {
        const float d = fp16_to_f32(b.d);
        const int q = b.qs[j];
        y[j] = static_cast<float>((q & 15) - 8) * d;
        y[j + 16] = static_cast<float>((q >> 4) - 8) * d;
    }
};

struct OpQ4_1 {
    using Block = BlockQ4_1;
    static constexpr int kElems = 32, kItems = 16;
    __host__ __device__ static void apply(const Block& b, int j, float* y) {
        const float d = fp16_to_f32(b.d), m = fp16_to_f32(b.m);
        const int q = b.qs[j];
        y[j] = static_cast<float>(q & 15) * d + m;
        y[j + 16] = static_cast<float>(q >> 4) * d + m;
    }
};

// As Q4_0, with the fifth bit of output e at bit e of qh.
struct OpQ5_0 {
    using Block = BlockQ5_0;
    static constexpr int kElems = 32, kItems = 16;
    __host__ __device__ static void apply(const Block& b, int j, float* y) {
        const float d = fp16_to_f32(b.d);
        const uint32_t qh = load_qh(b.qh);
        const int h0 = static_cast<int>(((qh >> j) << 4) & 0x10u);
        const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10u);
        const int q = b.qs[j];
        y[j] = static_cast<float>(((q & 15) | h0) - 16) * d;
        y[j + 16] = static_cast<float>(((q >> 4) | h1) - 16) * d;
    }
};

struct OpQ5_1 {
    using Block = BlockQ5_1;
    static constexpr int kElems = 32, kItems = 16;
    __host__ __device__ static void apply(const Block& b, int j, float* y) {
        const float d = fp16_to_f32(b.d), m = fp16_to_f32(b.m);
        const uint32_t qh = load_qh(b.qh);
        const int h0 = static_cast<int>(((qh >> j) << 4) & 0x10u);
        const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10u);
        const int q = b.qs[j];
        y[j] = static_cast<float>((q & 15) | h0) * d + m;
        y[j + 16] = static_cast<float>((q >> 4) | h1) * d + m;
    }
};

struct OpQ8_0 {
    using Block = BlockQ8_0;
    static constexpr int kElems = 32, kItems = 32;
    __host__ __device__ static void apply(const Block& b, int j, float* y) {
        y[j] = static_cast<float>(b.qs[j]) * fp16_to_f32(b.d);
    }
};

// Item k < 128: quant byte k of chunk c = k / 32 → outputs 64c + l (low nibble,
// sub-block 2c) and 64c + 32 + l (high nibble, sub-block 2c + 1), l = k % 32.
struct OpQ4_K {
    using Block = BlockQ4_K;
    static constexpr int kElems = 256, kItems = 128;
    __host__ __device__ static void apply(const Block& b, int k, float* y) {
        const int c = k / 32, l = k % 32, is = 2 * c;
        const float d = fp16_to_f32(b.d), dmin = fp16_to_f32(b.dmin);
        int sc, m;
        k_scale_min(is, b.scales, &sc, &m);
        const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
        k_scale_min(is + 1, b.scales, &sc, &m);
        const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
        const int q = b.qs[k];
        y[64 * c + l] = d1 * static_cast<float>(q & 15) - m1;
        y[64 * c + 32 + l] = d2 * static_cast<float>(q >> 4) - m2;
    }
};

// As Q4_K; the fifth bit of an output in sub-block s is bit s of qh[l].
struct OpQ5_K {
    using Block = BlockQ5_K;
    static constexpr int kElems = 256, kItems = 128;
    __host__ __device__ static void apply(const Block& b, int k, float* y) {
        const int c = k / 32, l = k % 32, is = 2 * c;
        const float d = fp16_to_f32(b.d), dmin = fp16_to_f32(b.dmin);
        int sc, m;
        k_scale_min(is, b.scales, &sc, &m);
        const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
        k_scale_min(is + 1, b.scales, &sc, &m);
        const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
        const int q = b.qs[k], h = b.qh[l];
        y[64 * c + l] = d1 * static_cast<float>((q & 15) | (((h >> is) & 1) << 4)) - m1;
        y[64 * c + 32 + l] = d2 * static_cast<float>((q >> 4) | (((h >> (is + 1)) & 1) << 4)) - m2;
    }
};

// Item k < 64: half = k / 32, l = k % 32 → outputs 128·half + l + {0, 32, 64, 96}, from
// ql[64·half + l], ql[64·half + l + 32] and qh[32·half + l] (see quant/dequant.cpp).
struct OpQ6_K {
    using Block = BlockQ6_K;
    static constexpr int kElems = 256, kItems = 64;
    __host__ __device__ static void apply(const Block& b, int k, float* y) {
        const int half = k / 32, l = k % 32, is = l / 16;
        const uint8_t* ql = b.ql + 64 * half;
        const int qh = b.qh[32 * half + l];
        const int8_t* sc = b.scales + 8 * half;
        const float d = fp16_to_f32(b.d);
        const int q1 = ((ql[l] & 15) | (((qh >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 15) | (((qh >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh >> 6) & 3) << 4)) - 32;
        y += 128 * half;
        y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
        y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
    }
};

// Q2_K, Q3_K, IQ4_NL, IQ4_XS: item j decodes the block's 16-element group j with the
// matrix products' decoder (quant_decode.cuh, the same formulas as quant/dequant.cpp).
template <TensorType T, typename B>
struct OpGroups16 {
    using Block = B;
    static constexpr int kElems = static_cast<int>(T == TensorType::IQ4_NL ? kQK : kQKK);
    static constexpr int kItems = kElems / 16;
    __host__ __device__ static void apply(const Block& b, int j, float* y) {
        decode::decode16<T>(&b, j, kElems, y + 16 * j);
    }
};

struct OpF16 {
    using Block = uint16_t;
    static constexpr int kElems = 1, kItems = 1;
    __host__ __device__ static void apply(const Block& h, int, float* y) { *y = fp16_to_f32(h); }
};

struct OpBF16 {
    using Block = uint16_t;
    static constexpr int kElems = 1, kItems = 1;
    __host__ __device__ static void apply(const Block& h, int, float* y) { *y = bf16_to_f32(h); }
};

// ---------------------------------------------------------------------------------------
// Kernel
// ---------------------------------------------------------------------------------------

// x: n_items / Op::kItems blocks, contiguous. y: n_items / Op::kItems · Op::kElems floats,
// contiguous; block b's outputs are y[b·kElems, (b+1)·kElems). Thread `thread` of
// `n_threads` handles work items thread, thread + n_threads, ... (item t is item
// t % kItems of block t / kItems).
template <typename Op>
__host__ __device__ __forceinline__ void run_thread(const typename Op::Block* __restrict__ x,
                                                    float* __restrict__ y, int64_t n_items,
                                                    int64_t thread, int64_t n_threads) {
    for (int64_t t = thread; t < n_items; t += n_threads) {
        const int64_t b = t / Op::kItems;
        Op::apply(x[b], static_cast<int>(t % Op::kItems), y + b * Op::kElems);
    }
}

template <typename Op>
__global__ void __launch_bounds__(kThreads)
    dequantize_kernel(const typename Op::Block* __restrict__ x, float* __restrict__ y,
                      int64_t n_items) {
    run_thread<Op>(x, y, n_items, static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x,
                   static_cast<int64_t>(gridDim.x) * blockDim.x);
}

// The embedding: item t is item (t % items_per_row) of token t / items_per_row, whose
// blocks are row ids[token] of the table.
template <typename Op>
__host__ __device__ __forceinline__ void run_embed_thread(
    const typename Op::Block* __restrict__ table, const int32_t* __restrict__ ids,
    int64_t blocks_per_row, float* __restrict__ y, int64_t n_items, int64_t thread,
    int64_t n_threads) {
    const int64_t items_per_row = blocks_per_row * Op::kItems;
    for (int64_t t = thread; t < n_items; t += n_threads) {
        const int64_t token = t / items_per_row, within = t % items_per_row;
        const int64_t b = within / Op::kItems;
        Op::apply(table[int64_t{ids[token]} * blocks_per_row + b],
                  static_cast<int>(within % Op::kItems),
                  y + token * blocks_per_row * Op::kElems + b * Op::kElems);
    }
}

template <typename Op>
__global__ void __launch_bounds__(kThreads)
    embed_kernel(const typename Op::Block* __restrict__ table, const int32_t* __restrict__ ids,
                 int64_t blocks_per_row, float* __restrict__ y, int64_t n_items) {
    run_embed_thread<Op>(table, ids, blocks_per_row, y, n_items,
                         static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x,
                         static_cast<int64_t>(gridDim.x) * blockDim.x);
}

// F32 tables: element t of the output is element t % cols of row ids[t / cols].
__host__ __device__ __forceinline__ void run_embed_f32_thread(const float* __restrict__ table,
                                                              const int32_t* __restrict__ ids,
                                                              int64_t cols, float* __restrict__ y,
                                                              int64_t n, int64_t thread,
                                                              int64_t n_threads) {
    for (int64_t t = thread; t < n; t += n_threads)
        y[t] = table[int64_t{ids[t / cols]} * cols + t % cols];
}

__global__ void __launch_bounds__(kThreads)
    embed_f32_kernel(const float* __restrict__ table, const int32_t* __restrict__ ids, int64_t cols,
                     float* __restrict__ y, int64_t n) {
    run_embed_f32_thread(table, ids, cols, y, n,
                         static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x,
                         static_cast<int64_t>(gridDim.x) * blockDim.x);
}

// ---------------------------------------------------------------------------------------
// Host launchers
// ---------------------------------------------------------------------------------------

bool aligned(const void* p, size_t alignment) {
    return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

// Calls f(Op{}) with the element op of `type`; false for F32 (a plain copy) and for
// unsupported types.
template <typename F>
bool with_op(TensorType type, F&& f) {
    switch (type) {
        case TensorType::F16:
            f(OpF16{});
            return true;
        case TensorType::BF16:
            f(OpBF16{});
            return true;
        case TensorType::Q4_0:
            f(OpQ4_0{});
            return true;
        case TensorType::Q4_1:
            f(OpQ4_1{});
            return true;
        case TensorType::Q5_0:
            f(OpQ5_0{});
            return true;
        case TensorType::Q5_1:
            f(OpQ5_1{});
            return true;
        case TensorType::Q8_0:
            f(OpQ8_0{});
            return true;
        case TensorType::Q4_K:
            f(OpQ4_K{});
            return true;
        case TensorType::Q5_K:
            f(OpQ5_K{});
            return true;
        case TensorType::Q6_K:
            f(OpQ6_K{});
            return true;
        case TensorType::Q2_K:
            f(OpGroups16<TensorType::Q2_K, BlockQ2_K>{});
            return true;
        case TensorType::Q3_K:
            f(OpGroups16<TensorType::Q3_K, BlockQ3_K>{});
            return true;
        case TensorType::IQ4_NL:
            f(OpGroups16<TensorType::IQ4_NL, BlockIQ4_NL>{});
            return true;
        case TensorType::IQ4_XS:
            f(OpGroups16<TensorType::IQ4_XS, BlockIQ4_XS>{});
            return true;
        case TensorType::F32:
            return false;
    }
    return false;
}

// The checks dequantize_cuda documents; also used by dequantize_on_host.
bool valid_call(TensorType type, const void* src, const float* dst, int64_t n) {
    const auto t = traits(type);
    if (!t || n < 0 || n % t->block_elems != 0) return false;
    if (n == 0) return true;
    const size_t align =
        type == TensorType::F32 ? alignof(float) : alignof(uint16_t);  // see static_assert
    return src && dst && aligned(src, align) && aligned(dst, alignof(float));
}

}  // namespace

namespace detail {
cudaError_t probe_kernel_image() {
    cudaFuncAttributes attr{};
    return cudaFuncGetAttributes(&attr, dequantize_kernel<OpQ4_0>);
}
}  // namespace detail

cudaError_t dequantize_cuda(TensorType type, const void* d_src, float* d_dst, int64_t n,
                            cudaStream_t stream) {
    if (!valid_call(type, d_src, d_dst, n)) return cudaErrorInvalidValue;
    if (n == 0) return cudaSuccess;
    if (type == TensorType::F32) {
        return cudaMemcpyAsync(d_dst, d_src, static_cast<size_t>(n) * sizeof(float),
                               cudaMemcpyDeviceToDevice, stream);
    }
    with_op(type, [&](auto op) {
        using Op = decltype(op);
        const int64_t n_items = n / Op::kElems * Op::kItems;
        const int64_t grid = (n_items + kThreads - 1) / kThreads;
        dequantize_kernel<Op>
            <<<static_cast<unsigned>(grid < kMaxGrid ? grid : kMaxGrid), kThreads, 0, stream>>>(
                static_cast<const typename Op::Block*>(d_src), d_dst, n_items);
    });
    return cudaGetLastError();
}

bool dequantize_on_host(TensorType type, const void* src, float* dst, int64_t n,
                        int64_t n_threads) {
    if (!valid_call(type, src, dst, n) || n_threads <= 0) return false;
    if (n == 0) return true;
    if (type == TensorType::F32) {
        std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
        return true;
    }
    return with_op(type, [&](auto op) {
        using Op = decltype(op);
        const int64_t n_items = n / Op::kElems * Op::kItems;
        for (int64_t thread = 0; thread < n_threads; ++thread) {
            run_thread<Op>(static_cast<const typename Op::Block*>(src), dst, n_items, thread,
                           n_threads);
        }
    });
}

namespace {

bool valid_embed(TensorType type, const void* table, int64_t cols, const int32_t* ids,
                 int32_t n_tokens, const float* out) {
    const auto t = traits(type);
    if (!t || cols < 1 || cols % t->block_elems != 0 || n_tokens < 0) return false;
    if (n_tokens == 0) return true;
    return ids && valid_call(type, table, out, cols);
}

}  // namespace

cudaError_t embed_cuda(TensorType type, const void* d_table, int64_t cols, const int32_t* d_ids,
                       int32_t n_tokens, float* d_out, cudaStream_t stream) {
    if (!valid_embed(type, d_table, cols, d_ids, n_tokens, d_out)) return cudaErrorInvalidValue;
    if (n_tokens == 0) return cudaSuccess;
    const auto grid_of = [](int64_t items) {
        const int64_t grid = (items + kThreads - 1) / kThreads;
        return static_cast<unsigned>(grid < kMaxGrid ? grid : kMaxGrid);
    };
    if (type == TensorType::F32) {
        const int64_t n = cols * n_tokens;
        embed_f32_kernel<<<grid_of(n), kThreads, 0, stream>>>(static_cast<const float*>(d_table),
                                                              d_ids, cols, d_out, n);
        return cudaGetLastError();
    }
    with_op(type, [&](auto op) {
        using Op = decltype(op);
        const int64_t blocks_per_row = cols / Op::kElems;
        const int64_t n_items = blocks_per_row * Op::kItems * n_tokens;
        embed_kernel<Op><<<grid_of(n_items), kThreads, 0, stream>>>(
            static_cast<const typename Op::Block*>(d_table), d_ids, blocks_per_row, d_out, n_items);
    });
    return cudaGetLastError();
}

bool embed_on_host(TensorType type, const void* table, int64_t cols, const int32_t* ids,
                   int32_t n_tokens, float* out, int64_t n_threads) {
    if (!valid_embed(type, table, cols, ids, n_tokens, out) || n_threads <= 0) return false;
    if (n_tokens == 0) return true;
    if (type == TensorType::F32) {
        for (int64_t thread = 0; thread < n_threads; ++thread)
            run_embed_f32_thread(static_cast<const float*>(table), ids, cols, out, cols * n_tokens,
                                 thread, n_threads);
        return true;
    }
    return with_op(type, [&](auto op) {
        using Op = decltype(op);
        const int64_t blocks_per_row = cols / Op::kElems;
        const int64_t n_items = blocks_per_row * Op::kItems * n_tokens;
        for (int64_t thread = 0; thread < n_threads; ++thread)
            run_embed_thread<Op>(static_cast<const typename Op::Block*>(table), ids, blocks_per_row,
                                 out, n_items, thread, n_threads);
    });
}

}  // namespace hearth::gpu
