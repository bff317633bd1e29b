// What the CUDA matrix-product suites share (tst_cuda_matmul, tst_cuda_matmul_range):
// random weights of every type with the CPU's decoding, the kernels' view of them, the
// double-precision reference and its error bound, the order the tensor-core kernels
// claim, and one product on the device.
#pragma once

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "cuda/cuda_buffer.h"
#include "cuda/cuda_device.h"
#include "cuda/matmul.h"
#include "gpu/gpu_test.h"
#include "quant/dequant.h"
#include "quant/fp16.h"
#include "quant/quantize.h"
#include "quant_reference.h"
#include "reference/reference_ops.h"

using hearth::quant::TensorType;
namespace g = hearth::gpu;
namespace q = hearth::quant;
namespace ref = hearth::kernels::reference;

namespace cuda_matmul_test {

const TensorType kTypes[] = {
    TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q4_0,   TensorType::Q4_1,
    TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K,   TensorType::Q3_K,
    TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K, TensorType::IQ4_NL, TensorType::IQ4_XS};

inline int64_t block_of(TensorType t) {
    return q::traits(t)->block_elems;
}

struct Matrix {
    TensorType type;
    int64_t rows, cols;
    std::vector<uint8_t> bytes;
    std::vector<float> dequant;  // the CPU's decoding, [rows, cols]
};

inline Matrix random_matrix(std::mt19937& rng, TensorType type, int64_t rows, int64_t cols) {
    std::normal_distribution<float> d(0.0f, 1.0f);
    Matrix m{type, rows, cols, {}, {}};
    std::vector<float> src(static_cast<size_t>(rows * cols));
    for (float& f : src) f = d(rng);
    const int64_t rb = q::quantized_size(type, cols);
    m.bytes.resize(static_cast<size_t>(rb * rows) + 8);
    m.dequant.resize(src.size());
    const hearth::test::RefLayout lay = hearth::test::ref_layout(type);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(0.001f, 0.02f);
    for (int64_t r = 0; r < rows; ++r) {
        uint8_t* row = m.bytes.data() + r * rb;
        if (!q::quantize(type, src.data() + r * cols, row, cols)) {
            // A type Hearth reads but does not write: random quants, moderate scales.
            for (int64_t i = 0; i < rb; ++i) row[i] = static_cast<uint8_t>(byte(rng));
            for (int64_t b = 0; b < rb / lay.bytes; ++b)
                for (int off : lay.fp16_offsets) {
                    const uint16_t h = q::f32_to_fp16(scale(rng));
                    std::memcpy(row + b * lay.bytes + off, &h, 2);
                }
        }
        if (!q::dequantize(type, m.bytes.data() + r * rb, m.dequant.data() + r * cols, cols))
            qFatal("dequantize failed");
    }
    return m;
}

// The matrix as the kernels see it (host pointers), its row scales in *scales.
inline g::MatmulWeight weight_of(const Matrix& m, std::vector<float>* scales, int sm_count = 132) {
    g::MatmulWeight w{m.type, m.bytes.data(), m.rows,
                      m.cols, nullptr,        g::matmul_plan(m.rows, m.cols, sm_count)};
    if (g::matmul_needs_row_scales(m.type)) {
        scales->resize(static_cast<size_t>(m.rows));
        if (!g::matmul_row_scales(m.type, m.bytes.data(), m.rows, m.cols, scales->data()))
            qFatal("row scales refused");
        w.row_scales = scales->data();
    }
    return w;
}

// 2^e with amax < 2^(e + 14), as the kernels choose it (written here from frexp: amax = m·2^p).
float pow2_scale(float amax) {
    if (!(amax > 0.0f) || std::isinf(amax)) return 1.0f;
    int p = 0;
    std::frexp(amax, &p);
    return std::ldexp(1.0f, std::clamp(p - 14, -126, 126));
}

// The order the tensor-core kernels claim, written out: operands scaled (tokens by their
// row's power of two, F32/BF16 weights by their row's) and rounded to fp16; each K range
// summed from zero in 16-column products (each a float sum of fp16 products), the ranges
// added in order, the scales undone, the bias added.
inline std::vector<float> claimed_order(const Matrix& m, const g::MatmulPlan& plan,
                                        const std::vector<float>& x, int32_t n, const float* bias) {
    const auto h = [](float v) { return q::fp16_to_f32(q::f32_to_fp16(v)); };
    std::vector<float> wq(m.dequant.size()), wscale(static_cast<size_t>(m.rows), 1.0f);
    const bool scaled = m.type == TensorType::F32 || m.type == TensorType::BF16;
    for (int64_t r = 0; r < m.rows; ++r) {
        float amax = 0.0f;
        for (int64_t c = 0; c < m.cols; ++c)
            amax = std::max(amax, std::fabs(m.dequant[static_cast<size_t>(r * m.cols + c)]));
        if (scaled) wscale[static_cast<size_t>(r)] = pow2_scale(amax);
        for (int64_t c = 0; c < m.cols; ++c) {
            const auto i = static_cast<size_t>(r * m.cols + c);
            wq[i] = h(m.dequant[i] / wscale[static_cast<size_t>(r)]);
        }
    }
    std::vector<float> out(static_cast<size_t>(n * m.rows));
    for (int32_t t = 0; t < n; ++t) {
        float amax = 0.0f;
        for (int64_t c = 0; c < m.cols; ++c)
            amax = std::max(amax, std::fabs(x[static_cast<size_t>(t * m.cols + c)]));
        const float xs = pow2_scale(amax);
        std::vector<float> xq(static_cast<size_t>(m.cols));
        for (int64_t c = 0; c < m.cols; ++c)
            xq[static_cast<size_t>(c)] = h(x[static_cast<size_t>(t * m.cols + c)] / xs);
        for (int64_t r = 0; r < m.rows; ++r) {
            float total = 0.0f;
            for (int32_t s = 0; s < plan.splits; ++s) {
                const int64_t kb = g::split_first_chunk(plan, s) * 32;
                const int64_t ke = std::min(g::split_first_chunk(plan, s + 1) * 32, m.cols);
                float acc = 0.0f;
                for (int64_t k = kb; k < ke; k += 16) {
                    float dot = 0.0f;
                    for (int64_t c = k; c < std::min(k + 16, m.cols); ++c)
                        dot += wq[static_cast<size_t>(r * m.cols + c)] * xq[static_cast<size_t>(c)];
                    acc += dot;
                }
                total += acc;
            }
            float v = total * xs * wscale[static_cast<size_t>(r)];
            if (bias) v += bias[r];
            out[static_cast<size_t>(t * m.rows + r)] = v;
        }
    }
    return out;
}

inline std::vector<float> random_floats(std::mt19937& rng, size_t n) {
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& f : v) f = d(rng);
    return v;
}

// Reference products in double, and Σ|w·x| per output for the error bound.
inline void reference(const Matrix& m, const std::vector<float>& x, int32_t n, const float* bias,
                      std::vector<double>& want, std::vector<double>& mag) {
    want.assign(static_cast<size_t>(n * m.rows), 0.0);
    mag.assign(want.size(), 0.0);
    for (int32_t t = 0; t < n; ++t)
        for (int64_t r = 0; r < m.rows; ++r) {
            double s = bias ? bias[r] : 0.0, a = bias ? std::fabs(bias[r]) : 0.0;
            for (int64_t c = 0; c < m.cols; ++c) {
                const double p = double{m.dequant[static_cast<size_t>(r * m.cols + c)]} *
                                 x[static_cast<size_t>(t * m.cols + c)];
                s += p;
                a += std::fabs(p);
            }
            want[static_cast<size_t>(t * m.rows + r)] = s;
            mag[static_cast<size_t>(t * m.rows + r)] = a;
        }
}

// |got - want| ≤ rel · Σ|w·x| for every output.
inline bool close(const std::vector<float>& got, const std::vector<double>& want,
                  const std::vector<double>& mag, double rel, QString* why) {
    for (size_t i = 0; i < got.size(); ++i) {
        if (!(std::fabs(got[i] - want[i]) <= rel * mag[i] + 1e-30)) {
            *why = QString("output %1: %2 vs %3 (scale %4)")
                       .arg(i)
                       .arg(double{got[i]}, 0, 'g', 9)
                       .arg(want[i], 0, 'g', 9)
                       .arg(mag[i]);
            return false;
        }
    }
    return true;
}

using hearth::test::on_device;

// One device product; out has n_tokens · rows floats.
inline std::vector<float> run_device(const Matrix& m, const std::vector<float>& x, int32_t n,
                                     const float* bias_host, g::MatmulMode mode) {
    auto w = on_device(m.bytes);
    auto dx = on_device(x);
    std::vector<float> scales_host;
    g::MatmulWeight mw = weight_of(m, &scales_host, hearth::test::device_sm_count());
    g::DeviceBuffer<float> out, bias, scales, ws;
    if (!scales_host.empty()) {
        scales = on_device(scales_host);
        mw.row_scales = scales.data();
    }
    mw.data = w.data();
    const std::size_t ws_bytes =
        g::matmul_workspace_bytes(g::matmul_kernel_for(mode, n), mw.plan, m.rows, m.cols, n);
    if (out.allocate(static_cast<size_t>(n * m.rows)) != cudaSuccess ||
        ws.allocate(ws_bytes / 4 + 1) != cudaSuccess)
        qFatal("alloc");
    if (bias_host) bias = on_device(std::vector<float>(bias_host, bias_host + m.rows));
    if (g::matmul_cuda(mw, dx.data(), n, out.data(), bias_host ? bias.data() : nullptr, mode,
                       ws.data(), ws.bytes(), nullptr) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess)
        qFatal("matmul_cuda failed");
    std::vector<float> host(static_cast<size_t>(n * m.rows));
    if (cudaMemcpy(host.data(), out.data(), host.size() * 4, cudaMemcpyDeviceToHost) != cudaSuccess)
        qFatal("copy back failed");
    return host;
}

}  // namespace cuda_matmul_test
