// The CUDA matrix products (kernels/cuda/matmul.h) for every weight type. Everywhere:
// the kernels' code run on the host (matmul_on_host) against the double-precision
// reference, the decoded weights equal to the CPU's dequantisation bit for bit, a token's
// result independent of its company. With a device (skipped otherwise): the device
// against the host runs, bit for bit for the matrix-vector kernel (same fused
// multiply-adds and shuffle tree), within fp32 rounding for the tensor cores; and the
// tensor-core kernel's batch invariance on the device, bit for bit.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>
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

namespace {

const TensorType kTypes[] = {
    TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q4_0,   TensorType::Q4_1,
    TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K,   TensorType::Q3_K,
    TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K, TensorType::IQ4_NL, TensorType::IQ4_XS};

int64_t block_of(TensorType t) {
    return q::traits(t)->block_elems;
}

struct Matrix {
    TensorType type;
    int64_t rows, cols;
    std::vector<uint8_t> bytes;
    std::vector<float> dequant;  // the CPU's decoding, [rows, cols]
};

Matrix random_matrix(std::mt19937& rng, TensorType type, int64_t rows, int64_t cols) {
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

std::vector<float> random_floats(std::mt19937& rng, size_t n) {
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& f : v) f = d(rng);
    return v;
}

// Reference products in double, and Σ|w·x| per output for the error bound.
void reference(const Matrix& m, const std::vector<float>& x, int32_t n, const float* bias,
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
bool close(const std::vector<float>& got, const std::vector<double>& want,
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
std::vector<float> run_device(const Matrix& m, const std::vector<float>& x, int32_t n,
                              const float* bias_host, g::MatmulMode mode) {
    auto w = on_device(m.bytes);
    auto dx = on_device(x);
    g::DeviceBuffer<float> out, bias;
    if (out.allocate(static_cast<size_t>(n * m.rows)) != cudaSuccess) qFatal("alloc");
    if (bias_host) bias = on_device(std::vector<float>(bias_host, bias_host + m.rows));
    if (g::matmul_cuda(m.type, w.data(), m.rows, m.cols, dx.data(), n, out.data(),
                       bias_host ? bias.data() : nullptr, mode, nullptr) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess)
        qFatal("matmul_cuda failed");
    std::vector<float> host(static_cast<size_t>(n * m.rows));
    if (cudaMemcpy(host.data(), out.data(), host.size() * 4, cudaMemcpyDeviceToHost) != cudaSuccess)
        qFatal("copy back failed");
    return host;
}

}  // namespace

class TstCudaMatmul : public QObject {
    Q_OBJECT

  private slots:
    // One-hot activations make each output a single decoded weight: the kernels' decoding
    // equals the CPU's dequantisation bit for bit, for every type and column.
    void decodingEqualsTheCpu() {
        std::mt19937 rng(7);
        for (TensorType type : kTypes) {
            const int64_t cols =
                type == TensorType::F16 ? 40 : std::max<int64_t>(block_of(type), 64);
            const Matrix m = random_matrix(rng, type, 5, cols);
            for (auto kernel : {g::MatmulKernel::MatVec, g::MatmulKernel::TensorCore}) {
                for (int64_t c0 = 0; c0 < cols; c0 += 8) {
                    const auto n = static_cast<int32_t>(std::min<int64_t>(8, cols - c0));
                    std::vector<float> x(static_cast<size_t>(n * cols), 0.0f);
                    for (int32_t t = 0; t < n; ++t)
                        x[static_cast<size_t>(t * cols + c0 + t)] = 1.0f;
                    std::vector<float> out(static_cast<size_t>(n * m.rows));
                    QVERIFY(g::matmul_on_host(type, m.bytes.data(), m.rows, cols, x.data(), n,
                                              out.data(), nullptr, kernel));
                    for (int32_t t = 0; t < n; ++t)
                        for (int64_t r = 0; r < m.rows; ++r) {
                            float want = m.dequant[static_cast<size_t>(r * cols + c0 + t)];
                            // The tensor cores see the weight rounded to fp16.
                            if (kernel == g::MatmulKernel::TensorCore)
                                want = q::fp16_to_f32(q::f32_to_fp16(want));
                            const float got = out[static_cast<size_t>(t * m.rows + r)];
                            QVERIFY2(got == want,  // == : a decoded 0 may be -0, the sum +0
                                     qPrintable(QString("%1 col %2 row %3: %4 vs %5")
                                                    .arg(q::traits(type)->name.data())
                                                    .arg(c0 + t)
                                                    .arg(r)
                                                    .arg(double{got})
                                                    .arg(double{want})));
                        }
                }
            }
        }
    }

    // Random products against the reference: fp32 sums (matrix-vector) to 1e-5 of Σ|w·x|;
    // fp16 operands (tensor cores) to 2e-3.
    void hostRunsMatchTheReference() {
        std::mt19937 rng(11);
        struct Shape {
            int64_t rows, cols;
            int32_t n;
        };
        for (TensorType type : kTypes) {
            const int64_t b = block_of(type);
            const int64_t wide = std::max<int64_t>(b, 32) * (b == 256 ? 2 : 8);
            for (const Shape s : {Shape{1, b == 1 ? 48 : b, 1}, Shape{65, wide, 3},
                                  Shape{130, wide, 17}, Shape{64, b == 1 ? 72 : b, 9}}) {
                const Matrix m = random_matrix(rng, type, s.rows, s.cols);
                const auto x = random_floats(rng, static_cast<size_t>(s.n * s.cols));
                const auto bias = random_floats(rng, static_cast<size_t>(s.rows));
                std::vector<double> want, mag;
                reference(m, x, s.n, bias.data(), want, mag);
                for (auto kernel : {g::MatmulKernel::MatVec, g::MatmulKernel::TensorCore}) {
                    std::vector<float> out(static_cast<size_t>(s.n * s.rows));
                    QVERIFY(g::matmul_on_host(type, m.bytes.data(), s.rows, s.cols, x.data(), s.n,
                                              out.data(), bias.data(), kernel));
                    QString why;
                    const double rel = kernel == g::MatmulKernel::MatVec ? 1e-5 : 2e-3;
                    QVERIFY2(
                        close(out, want, mag, rel, &why),
                        qPrintable(QString("%1 %2x%3 n %4 %5: %6")
                                       .arg(q::traits(type)->name.data())
                                       .arg(s.rows)
                                       .arg(s.cols)
                                       .arg(s.n)
                                       .arg(kernel == g::MatmulKernel::MatVec ? "matvec" : "tensor")
                                       .arg(why)));
                }
            }
        }
    }

    // A token's output is the same alone, in a small tile (16) and in a large one (64).
    void tokenResultIndependentOfCompany() {
        std::mt19937 rng(13);
        for (TensorType type : {TensorType::Q4_0, TensorType::Q6_K, TensorType::F16}) {
            const Matrix m = random_matrix(rng, type, 70, 256);
            const auto x = random_floats(rng, 70 * 256);
            for (auto kernel : {g::MatmulKernel::MatVec, g::MatmulKernel::TensorCore}) {
                std::vector<float> all(70 * 70), alone(70);
                QVERIFY(g::matmul_on_host(type, m.bytes.data(), 70, 256, x.data(), 70, all.data(),
                                          nullptr, kernel));
                for (int32_t t : {0, 15, 16, 63, 64, 69}) {
                    QVERIFY(g::matmul_on_host(type, m.bytes.data(), 70, 256,
                                              x.data() + int64_t{t} * 256, 1, alone.data(), nullptr,
                                              kernel));
                    QVERIFY(std::memcmp(alone.data(), all.data() + int64_t{t} * 70, 70 * 4) == 0);
                }
            }
        }
    }

    void kernelChoice() {
        QCOMPARE(g::matmul_kernel_for(g::MatmulMode::Invariant, 1), g::MatmulKernel::TensorCore);
        QCOMPARE(g::matmul_kernel_for(g::MatmulMode::Fastest, 1), g::MatmulKernel::MatVec);
        QCOMPARE(g::matmul_kernel_for(g::MatmulMode::Fastest, g::kMatVecMaxTokens),
                 g::MatmulKernel::MatVec);
        QCOMPARE(g::matmul_kernel_for(g::MatmulMode::Fastest, g::kMatVecMaxTokens + 1),
                 g::MatmulKernel::TensorCore);
    }

    void invalidCallsAreRefused() {
        float x[64] = {}, out[64] = {};
        uint8_t w[64] = {};
        const auto run = [&](TensorType type, int64_t rows, int64_t cols, int32_t n,
                             const void* wp) {
            return g::matmul_cuda(type, wp, rows, cols, x, n, out, nullptr,
                                  g::MatmulMode::Invariant, nullptr);
        };
        QCOMPARE(run(TensorType::Q4_0, 1, 48, 1, w), cudaErrorInvalidValue);   // not 32-multiple
        QCOMPARE(run(TensorType::Q4_K, 1, 32, 1, w), cudaErrorInvalidValue);   // not 256
        QCOMPARE(run(TensorType::Q4_0, 0, 32, 1, w), cudaErrorInvalidValue);   // no rows
        QCOMPARE(run(TensorType::Q4_0, 1, 32, -1, w), cudaErrorInvalidValue);  // negative
        QCOMPARE(run(TensorType::Q4_0, 1, 32, 1, nullptr), cudaErrorInvalidValue);
        QCOMPARE(run(TensorType::F32, 1, 8, 1, w + 2), cudaErrorInvalidValue);  // misaligned
        QCOMPARE(run(static_cast<TensorType>(16), 1, 256, 1, w), cudaErrorInvalidValue);  // IQ2_XXS
        QCOMPARE(run(TensorType::Q4_0, 1, 32, 0, nullptr), cudaSuccess);  // nothing to do
        QVERIFY(!g::matmul_on_host(TensorType::Q4_0, w, 1, 48, x, 1, out, nullptr,
                                   g::MatmulKernel::MatVec));
    }

    // --- with a device -------------------------------------------------------------------

    void deviceMatchesTheHostRuns() {
        HEARTH_REQUIRE_CUDA_DEVICE();
        std::mt19937 rng(17);
        for (TensorType type : kTypes) {
            const int64_t cols =
                std::max<int64_t>(block_of(type), 32) * (block_of(type) == 256 ? 3 : 24);
            for (int32_t n : {1, 5, 8, 16, 17, 100}) {
                const Matrix m = random_matrix(rng, type, 200, cols);
                const auto x = random_floats(rng, static_cast<size_t>(n * cols));
                const auto bias = random_floats(rng, 200);
                for (auto mode : {g::MatmulMode::Fastest, g::MatmulMode::Invariant}) {
                    const auto kernel = g::matmul_kernel_for(mode, n);
                    std::vector<float> host(static_cast<size_t>(n * 200));
                    QVERIFY(g::matmul_on_host(type, m.bytes.data(), 200, cols, x.data(), n,
                                              host.data(), bias.data(), kernel));
                    const auto dev = run_device(m, x, n, bias.data(), mode);
                    for (size_t i = 0; i < dev.size(); ++i) {
                        const bool ok = kernel == g::MatmulKernel::MatVec
                                            ? std::memcmp(&dev[i], &host[i], 4) == 0
                                            : std::fabs(dev[i] - host[i]) <=
                                                  1e-4f * (1.0f + std::fabs(host[i]));
                        QVERIFY2(ok,
                                 qPrintable(QString("%1 n %2 %3 output %4: %5 vs %6")
                                                .arg(q::traits(type)->name.data())
                                                .arg(n)
                                                .arg(kernel == g::MatmulKernel::MatVec ? "matvec"
                                                                                       : "tensor")
                                                .arg(i)
                                                .arg(double{dev[i]}, 0, 'g', 9)
                                                .arg(double{host[i]}, 0, 'g', 9)));
                    }
                }
            }
        }
    }

    // The engine's mode: a token's output is bit for bit the same alone or in a step of
    // 16, 37 or 130 tokens.
    void deviceBatchInvariance() {
        HEARTH_REQUIRE_CUDA_DEVICE();
        std::mt19937 rng(19);
        for (TensorType type : {TensorType::Q4_0, TensorType::Q4_K, TensorType::Q6_K,
                                TensorType::Q8_0, TensorType::F16}) {
            const Matrix m = random_matrix(rng, type, 300, 512);
            const auto x = random_floats(rng, 130 * 512);
            const auto all = run_device(m, x, 130, nullptr, g::MatmulMode::Invariant);
            for (int32_t n : {1, 16, 37}) {
                for (int32_t t0 : {0, 50, 130 - n}) {
                    const std::vector<float> part(x.begin() + int64_t{t0} * 512,
                                                  x.begin() + int64_t{t0 + n} * 512);
                    const auto some = run_device(m, part, n, nullptr, g::MatmulMode::Invariant);
                    QVERIFY2(std::memcmp(some.data(), all.data() + int64_t{t0} * 300,
                                         some.size() * 4) == 0,
                             qPrintable(QString("%1: tokens %2..%3 differ from the full step")
                                            .arg(q::traits(type)->name.data())
                                            .arg(t0)
                                            .arg(t0 + n)));
                }
            }
        }
    }
};

QTEST_GUILESS_MAIN(TstCudaMatmul)
#include "tst_cuda_matmul.moc"
