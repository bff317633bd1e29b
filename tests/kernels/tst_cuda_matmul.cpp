// The CUDA matrix products (kernels/cuda/matmul.h) for every weight type. Everywhere:
// the kernels' code run on the host (matmul_on_host) against the double-precision
// reference, the decoded weights equal to the CPU's dequantisation bit for bit, split-K
// equal to the tiled kernel and to the order both claim bit for bit, a token's result
// independent of its company. With a device (skipped otherwise): the device against the
// host runs, bit for bit for the matrix-vector kernel (same fused multiply-adds and
// shuffle tree), within fp32 rounding for the tensor cores; split-K and tiled batch
// invariance on the device, bit for bit. The fp16 range and the launch plan:
// tst_cuda_matmul_range.
#include "cuda_matmul_fixture.h"

using namespace cuda_matmul_test;

class TstCudaMatmul : public QObject {
    Q_OBJECT

  private slots:
    // One-hot activations make each output a single decoded weight: the kernels' decoding
    // equals the CPU's dequantisation bit for bit, for every type and column (rounded to
    // fp16 for the tensor cores, after the row's power-of-two scale for F32/BF16).
    void decodingEqualsTheCpu() {
        std::mt19937 rng(7);
        for (TensorType type : kTypes) {
            const int64_t cols =
                type == TensorType::F16 ? 40 : std::max<int64_t>(block_of(type), 64);
            const Matrix m = random_matrix(rng, type, 5, cols);
            std::vector<float> scales;
            const g::MatmulWeight w = weight_of(m, &scales);
            for (auto kernel :
                 {g::MatmulKernel::MatVec, g::MatmulKernel::TensorCore, g::MatmulKernel::SplitK}) {
                for (int64_t c0 = 0; c0 < cols; c0 += 8) {
                    const auto n = static_cast<int32_t>(std::min<int64_t>(8, cols - c0));
                    std::vector<float> x(static_cast<size_t>(n * cols), 0.0f);
                    for (int32_t t = 0; t < n; ++t)
                        x[static_cast<size_t>(t * cols + c0 + t)] = 1.0f;
                    std::vector<float> out(static_cast<size_t>(n * m.rows));
                    QVERIFY(g::matmul_on_host(w, x.data(), n, out.data(), nullptr, kernel));
                    for (int32_t t = 0; t < n; ++t)
                        for (int64_t r = 0; r < m.rows; ++r) {
                            float want = m.dequant[static_cast<size_t>(r * cols + c0 + t)];
                            // The tensor cores see the weight (over its row scale) in fp16.
                            if (kernel != g::MatmulKernel::MatVec) {
                                const float s =
                                    scales.empty() ? 1.0f : scales[static_cast<size_t>(r)];
                                want = q::fp16_to_f32(q::f32_to_fp16(want / s)) * s;
                            }
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
                std::vector<float> scales;
                const g::MatmulWeight w = weight_of(m, &scales);
                const auto x = random_floats(rng, static_cast<size_t>(s.n * s.cols));
                const auto bias = random_floats(rng, static_cast<size_t>(s.rows));
                std::vector<double> want, mag;
                reference(m, x, s.n, bias.data(), want, mag);
                for (auto kernel : {g::MatmulKernel::MatVec, g::MatmulKernel::TensorCore,
                                    g::MatmulKernel::SplitK}) {
                    if (kernel == g::MatmulKernel::SplitK && s.n > g::kSplitKMaxTokens) continue;
                    std::vector<float> out(static_cast<size_t>(s.n * s.rows));
                    QVERIFY(g::matmul_on_host(w, x.data(), s.n, out.data(), bias.data(), kernel));
                    QString why;
                    const double rel = kernel == g::MatmulKernel::MatVec ? 1e-5 : 2e-3;
                    QVERIFY2(close(out, want, mag, rel, &why),
                             qPrintable(QString("%1 %2x%3 n %4 kernel %5: %6")
                                            .arg(q::traits(type)->name.data())
                                            .arg(s.rows)
                                            .arg(s.cols)
                                            .arg(s.n)
                                            .arg(static_cast<int>(kernel))
                                            .arg(why)));
                }
            }
        }
    }

    // Split-K (decode) and the tiled kernel give the same bits, and both the bits of the
    // order they claim (claimed_order), for plans of 1 to 64 ranges.
    void splitKEqualsTheTiledKernel() {
        std::mt19937 rng(23);
        for (TensorType type : kTypes) {
            const int64_t b = block_of(type);
            const int64_t cols = b == 256 ? 1024 : (b == 1 ? 1000 : 2048);
            const Matrix m = random_matrix(rng, type, 70, cols);
            for (int sm : {1, 46, 132}) {
                std::vector<float> scales;
                const g::MatmulWeight w = weight_of(m, &scales, sm);
                for (int32_t n : {1, 5, 16}) {
                    const auto x = random_floats(rng, static_cast<size_t>(n * cols));
                    const auto bias = random_floats(rng, 70);
                    std::vector<float> split(static_cast<size_t>(n * 70)), tiled(split.size());
                    QVERIFY(g::matmul_on_host(w, x.data(), n, split.data(), bias.data(),
                                              g::MatmulKernel::SplitK));
                    QVERIFY(g::matmul_on_host(w, x.data(), n, tiled.data(), bias.data(),
                                              g::MatmulKernel::TensorCore));
                    const auto claimed = claimed_order(m, w.plan, x, n, bias.data());
                    const QString what = QString("%1 %2 splits n %3")
                                             .arg(q::traits(type)->name.data())
                                             .arg(w.plan.splits)
                                             .arg(n);
                    QVERIFY2(std::memcmp(split.data(), tiled.data(), split.size() * 4) == 0,
                             qPrintable(what + ": split-K differs from the tiled kernel"));
                    QVERIFY2(std::memcmp(split.data(), claimed.data(), split.size() * 4) == 0,
                             qPrintable(what + ": split-K differs from the claimed order"));
                }
            }
        }
    }

    // A token's output is the same alone (split-K), in a small tile (16) and in a large one
    // (64).
    void tokenResultIndependentOfCompany() {
        std::mt19937 rng(13);
        for (TensorType type :
             {TensorType::Q4_0, TensorType::Q6_K, TensorType::F16, TensorType::BF16}) {
            const Matrix m = random_matrix(rng, type, 70, 256);
            std::vector<float> scales;
            const g::MatmulWeight w = weight_of(m, &scales);
            const auto x = random_floats(rng, 70 * 256);
            for (auto kernel : {g::MatmulKernel::MatVec, g::MatmulKernel::TensorCore}) {
                std::vector<float> all(70 * 70), alone(70);
                QVERIFY(g::matmul_on_host(w, x.data(), 70, all.data(), nullptr, kernel));
                for (int32_t t : {0, 15, 16, 63, 64, 69}) {
                    const auto one =
                        kernel == g::MatmulKernel::MatVec ? kernel : g::MatmulKernel::SplitK;
                    QVERIFY(g::matmul_on_host(w, x.data() + int64_t{t} * 256, 1, alone.data(),
                                              nullptr, one));
                    QVERIFY(std::memcmp(alone.data(), all.data() + int64_t{t} * 70, 70 * 4) == 0);
                }
            }
        }
    }

    void kernelChoice() {
        QCOMPARE(g::matmul_kernel_for(g::MatmulMode::Invariant, 1), g::MatmulKernel::SplitK);
        QCOMPARE(g::matmul_kernel_for(g::MatmulMode::Invariant, 16), g::MatmulKernel::SplitK);
        QCOMPARE(g::matmul_kernel_for(g::MatmulMode::Invariant, 17), g::MatmulKernel::TensorCore);
        QCOMPARE(g::matmul_kernel_for(g::MatmulMode::Fastest, 1), g::MatmulKernel::MatVec);
        QCOMPARE(g::matmul_kernel_for(g::MatmulMode::Fastest, g::kMatVecMaxTokens),
                 g::MatmulKernel::MatVec);
        QCOMPARE(g::matmul_kernel_for(g::MatmulMode::Fastest, g::kMatVecMaxTokens + 1),
                 g::MatmulKernel::TensorCore);
    }

    void invalidCallsAreRefused() {
        float x[64] = {}, out[64] = {};
        uint8_t w[64] = {};
        alignas(256) static float ws[1 << 14];
        const auto weight = [&](TensorType type, int64_t rows, int64_t cols, const void* wp) {
            return g::MatmulWeight{type,    wp,
                                   rows,    cols,
                                   nullptr, g::matmul_plan(rows, std::max<int64_t>(cols, 1), 132)};
        };
        const auto run = [&](const g::MatmulWeight& mw, int32_t n) {
            return g::matmul_cuda(mw, x, n, out, nullptr, g::MatmulMode::Invariant, ws, sizeof ws,
                                  nullptr);
        };
        QCOMPARE(run(weight(TensorType::Q4_0, 1, 48, w), 1),
                 cudaErrorInvalidValue);  // not 32-multiple
        QCOMPARE(run(weight(TensorType::Q4_K, 1, 32, w), 1), cudaErrorInvalidValue);   // not 256
        QCOMPARE(run(weight(TensorType::Q4_0, 0, 32, w), 1), cudaErrorInvalidValue);   // no rows
        QCOMPARE(run(weight(TensorType::Q4_0, 1, 32, w), -1), cudaErrorInvalidValue);  // negative
        QCOMPARE(run(weight(TensorType::Q4_0, 1, 32, nullptr), 1), cudaErrorInvalidValue);
        float scale = 1.0f;
        g::MatmulWeight f32 = weight(TensorType::F32, 1, 8, w + 2);
        f32.row_scales = &scale;
        QCOMPARE(run(f32, 1), cudaErrorInvalidValue);                               // misaligned
        QCOMPARE(run(weight(TensorType::F32, 1, 8, w), 1), cudaErrorInvalidValue);  // no row scales
        QCOMPARE(run(weight(static_cast<TensorType>(16), 1, 256, w), 1),
                 cudaErrorInvalidValue);  // IQ2_XXS
        g::MatmulWeight bad_plan = weight(TensorType::Q4_0, 1, 64, w);
        bad_plan.plan.chunks = 3;  // not the weight's
        QCOMPARE(run(bad_plan, 1), cudaErrorInvalidValue);
        bad_plan = weight(TensorType::Q4_0, 1, 64, w);
        bad_plan.plan.splits = 3;  // more ranges than chunks
        QCOMPARE(run(bad_plan, 1), cudaErrorInvalidValue);
        // A workspace too short or missing.
        const g::MatmulWeight q40 = weight(TensorType::Q4_0, 1, 32, w);
        QCOMPARE(g::matmul_cuda(q40, x, 1, out, nullptr, g::MatmulMode::Invariant, ws, 16, nullptr),
                 cudaErrorInvalidValue);
        QCOMPARE(
            g::matmul_cuda(q40, x, 1, out, nullptr, g::MatmulMode::Invariant, nullptr, 0, nullptr),
            cudaErrorInvalidValue);
        QCOMPARE(run(weight(TensorType::Q4_0, 1, 32, nullptr), 0), cudaSuccess);  // nothing to do
        QVERIFY(!g::matmul_on_host(weight(TensorType::Q4_0, 1, 48, w), x, 1, out, nullptr,
                                   g::MatmulKernel::MatVec));
        QVERIFY(!g::matmul_on_host(weight(TensorType::Q4_0, 1, 32, w), x, 17, out, nullptr,
                                   g::MatmulKernel::SplitK));  // split-K takes ≤ 16 tokens
        QVERIFY(!g::matmul_row_scales(TensorType::Q4_0, w, 1, 32, out));
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
                std::vector<float> scales;
                const g::MatmulWeight w = weight_of(m, &scales, hearth::test::device_sm_count());
                for (auto mode : {g::MatmulMode::Fastest, g::MatmulMode::Invariant}) {
                    const auto kernel = g::matmul_kernel_for(mode, n);
                    std::vector<float> host(static_cast<size_t>(n * 200));
                    QVERIFY(g::matmul_on_host(w, x.data(), n, host.data(), bias.data(), kernel));
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
    // 16 (split-K), 37 or 130 tokens (tiled).
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
