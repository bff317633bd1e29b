// The CUDA matrix products' fp16 operands and launch plan (kernels/cuda/matmul.h):
// operands far outside fp16's range (activations of 1e4 to 1e6, F32/BF16 weights below
// 6e-5 or above 65504) within the bound of ordinary ones, on the host everywhere and
// finite on a device; the operand exponent over the whole float range; the launch plan
// filling devices of 46 to 132 SMs for the decode products of the models Hearth is used
// with.
#include "cuda_matmul_fixture.h"

using namespace cuda_matmul_test;

class TstCudaMatmulRange : public QObject {
    Q_OBJECT

  private slots:

    // Rows far outside fp16's range stay finite and as accurate as ordinary ones: tokens
    // holding 1e4 to 1e6 (Gemma's GeGLU products into the down projection), F32/BF16
    // weights of 1e-6 (fp16 subnormals: 6 % steps, or zero) and of 1e5 (inf in fp16).
    // Without the scales the first and last gave inf and NaN, the middle errors of 3 %.
    void operandsOutsideFp16Range() {
        std::mt19937 rng(29);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        struct Case {
            TensorType type;
            float w_scale, x_scale;
        };
        for (const Case c : {Case{TensorType::Q8_0, 1.0f, 1e6f}, Case{TensorType::Q4_K, 1.0f, 3e4f},
                             Case{TensorType::F16, 1.0f, 1e5f}, Case{TensorType::F32, 1e-6f, 1.0f},
                             Case{TensorType::BF16, 1e-6f, 1.0f}, Case{TensorType::F32, 1e5f, 1.0f},
                             Case{TensorType::BF16, 2e-5f, 1e6f}}) {
            Matrix m = random_matrix(rng, c.type, 66, 512);
            if (c.w_scale != 1.0f) {  // re-encode the float types at the scale
                std::vector<float> src(m.dequant);
                for (float& v : src) v *= c.w_scale;
                for (int64_t r = 0; r < m.rows; ++r)
                    QVERIFY(q::quantize(c.type, src.data() + r * m.cols,
                                        m.bytes.data() + r * q::quantized_size(c.type, m.cols),
                                        m.cols));
                for (int64_t r = 0; r < m.rows; ++r)
                    QVERIFY(q::dequantize(c.type,
                                          m.bytes.data() + r * q::quantized_size(c.type, m.cols),
                                          m.dequant.data() + r * m.cols, m.cols));
            }
            std::vector<float> scales;
            const g::MatmulWeight w = weight_of(m, &scales);
            std::vector<float> x(static_cast<size_t>(20 * m.cols));
            for (size_t i = 0; i < x.size(); ++i)
                x[i] = u(rng) * c.x_scale * (i % 7 == 0 ? 4.0f : 1.0f);
            for (int32_t n : {1, 20}) {
                std::vector<double> want, mag;
                reference(m, x, n, nullptr, want, mag);
                for (auto kernel : {g::MatmulKernel::TensorCore, g::MatmulKernel::SplitK}) {
                    if (kernel == g::MatmulKernel::SplitK && n > g::kSplitKMaxTokens) continue;
                    std::vector<float> out(static_cast<size_t>(n * m.rows));
                    QVERIFY(g::matmul_on_host(w, x.data(), n, out.data(), nullptr, kernel));
                    QString why;
                    QVERIFY2(close(out, want, mag, 2e-3, &why),
                             qPrintable(QString("%1 weights x%2 activations x%3: %4")
                                            .arg(q::traits(c.type)->name.data())
                                            .arg(double{c.w_scale})
                                            .arg(double{c.x_scale})
                                            .arg(why)));
                }
            }
        }
    }

    // The operand exponent: 2^13 ≤ amax / 2^e < 2^14, from 1e-33 to the largest float.
    void operandExponent() {
        for (float amax : {1e-33f, 1e-30f, 6e-5f, 0.5f, 1.0f, 1.5f, 16383.0f, 16384.0f, 65504.0f,
                           1e6f, 1e30f, 3.4e38f}) {
            const int e = g::fp16_operand_exponent(amax);
            QVERIFY2(amax / std::ldexp(1.0f, e) < 16384.0f, qPrintable(QString::number(amax)));
            QVERIFY(amax / std::ldexp(1.0f, e) >= 8192.0f);
        }
        QCOMPARE(g::fp16_operand_exponent(0.0f), 0);
        QCOMPARE(g::fp16_operand_exponent(std::numeric_limits<float>::infinity()), 0);
        QCOMPARE(g::fp16_operand_exponent(std::numeric_limits<float>::quiet_NaN()), 0);
    }

    // Every decode product of the models Hearth is used with launches at least 2 blocks per
    // SM on GPUs of 46 (RTX 4060 Ti), 82 (RTX 3090), 128 (RTX 4090) and 132 (H100) SMs; the
    // plan depends on the shape and the device only.
    void launchPlanFillsTheDevice() {
        struct Model {
            const char* name;
            int64_t embd, heads, kv_heads, head_dim, ff, vocab;
        };
        const Model models[] = {{"Llama 3.2 1B", 2048, 32, 8, 64, 8192, 128256},
                                {"Llama 3.2 3B", 3072, 24, 8, 128, 8192, 128256},
                                {"Llama 3.1 8B", 4096, 32, 8, 128, 14336, 128256},
                                {"Qwen2.5 7B", 3584, 28, 4, 128, 18944, 152064},
                                {"Gemma 3 4B", 2560, 8, 4, 256, 10240, 262144},
                                {"Gemma 3 12B", 3840, 16, 8, 256, 15360, 262144}};
        for (const Model& md : models) {
            struct Product {
                const char* what;
                int64_t rows, cols;
            };
            const Product products[] = {{"q", md.heads * md.head_dim, md.embd},
                                        {"k/v", md.kv_heads * md.head_dim, md.embd},
                                        {"o", md.embd, md.heads * md.head_dim},
                                        {"gate/up", md.ff, md.embd},
                                        {"down", md.embd, md.ff},
                                        {"output", md.vocab, md.embd}};
            for (const Product& p : products) {
                for (int sm : {46, 82, 128, 132}) {
                    const g::MatmulPlan plan = g::matmul_plan(p.rows, p.cols, sm);
                    QCOMPARE(plan.chunks, (p.cols + 31) / 32);
                    QVERIFY(plan.splits >= 1 && plan.splits <= std::min<int64_t>(plan.chunks, 64));
                    for (int32_t n : {1, 4, 16}) {
                        const auto kernel = g::matmul_kernel_for(g::MatmulMode::Invariant, n);
                        QCOMPARE(kernel, g::MatmulKernel::SplitK);
                        const int64_t blocks = g::matmul_blocks(kernel, plan, p.rows, n);
                        QVERIFY2(blocks >= 2 * sm,
                                 qPrintable(QString("%1 %2 (%3 x %4) on %5 SMs: %6 blocks")
                                                .arg(md.name)
                                                .arg(p.what)
                                                .arg(p.rows)
                                                .arg(p.cols)
                                                .arg(sm)
                                                .arg(blocks)));
                    }
                }
            }
        }
        // The ranges tile the chunks in order.
        const g::MatmulPlan plan = g::matmul_plan(512, 2048, 132);
        QCOMPARE(g::split_first_chunk(plan, 0), int64_t{0});
        QCOMPARE(g::split_first_chunk(plan, plan.splits), plan.chunks);
        for (int32_t s = 0; s < plan.splits; ++s)
            QVERIFY(g::split_first_chunk(plan, s + 1) > g::split_first_chunk(plan, s));
    }

    // Activations of 1e6 and F32/BF16 weights of 1e-6 and 1e5 on the device: finite, and
    // within fp32 rounding of the host runs.
    void deviceOperandsOutsideFp16Range() {
        HEARTH_REQUIRE_CUDA_DEVICE();
        std::mt19937 rng(31);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (const auto& [type, ws, xs] :
             {std::tuple{TensorType::Q8_0, 1.0f, 1e6f}, std::tuple{TensorType::F32, 1e-6f, 1.0f},
              std::tuple{TensorType::BF16, 1e5f, 1e4f}}) {
            Matrix m = random_matrix(rng, type, 130, 1024);
            if (ws != 1.0f) {
                std::vector<float> src(m.dequant);
                for (float& v : src) v *= ws;
                for (int64_t r = 0; r < m.rows; ++r)
                    QVERIFY(q::quantize(type, src.data() + r * m.cols,
                                        m.bytes.data() + r * q::quantized_size(type, m.cols),
                                        m.cols));
            }
            std::vector<float> scales;
            const g::MatmulWeight w = weight_of(m, &scales, hearth::test::device_sm_count());
            for (int32_t n : {1, 40}) {
                std::vector<float> x(static_cast<size_t>(n * m.cols));
                for (float& v : x) v = u(rng) * xs;
                std::vector<float> host(static_cast<size_t>(n * m.rows));
                QVERIFY(g::matmul_on_host(w, x.data(), n, host.data(), nullptr,
                                          g::matmul_kernel_for(g::MatmulMode::Invariant, n)));
                const auto dev = run_device(m, x, n, nullptr, g::MatmulMode::Invariant);
                for (size_t i = 0; i < dev.size(); ++i)
                    QVERIFY2(std::isfinite(dev[i]) &&
                                 std::fabs(dev[i] - host[i]) <= 1e-4f * std::fabs(host[i]) + 1e-30f,
                             qPrintable(QString("%1 n %2 output %3: %4 vs %5")
                                            .arg(q::traits(type)->name.data())
                                            .arg(n)
                                            .arg(i)
                                            .arg(double{dev[i]}, 0, 'g', 9)
                                            .arg(double{host[i]}, 0, 'g', 9)));
            }
        }
    }

    // The VRAM plan's bound holds every product of the shapes in steps of up to its token
    // count, on devices of up to its SM count (the K splits grow with the SMs).
    void workspaceBound() {
        const g::MatmulShape shapes[] = {{4096, 4096},  {1024, 4096},   {14336, 4096},
                                         {4096, 14336}, {128256, 4096}, {64, 256}};
        for (int sm : {1, 46, 132, 256}) {
            const std::size_t bound =
                g::matmul_workspace_bound(shapes, std::size(shapes), 2048, sm);
            for (int devsm : {1, 46, sm})
                for (const g::MatmulShape& s : shapes)
                    for (int32_t n : {1, 7, 16, 17, 512, 2048})
                        for (auto mode : {g::MatmulMode::Invariant, g::MatmulMode::Fastest}) {
                            const auto kernel = g::matmul_kernel_for(mode, n);
                            const std::size_t need = g::matmul_workspace_bytes(
                                kernel, g::matmul_plan(s.rows, s.cols, devsm), s.rows, s.cols, n);
                            QVERIFY2(need <= bound, qPrintable(QString("%1 x %2, %3 tokens, %4 SMs")
                                                                   .arg(s.rows)
                                                                   .arg(s.cols)
                                                                   .arg(n)
                                                                   .arg(devsm)));
                        }
        }
        // 2048 tokens of the 14336-wide down projection's fp16 activations dominate.
        QVERIFY(g::matmul_workspace_bound(shapes, std::size(shapes), 2048, 132) >=
                std::size_t{2048} * 14336 * 2);
    }
};

QTEST_GUILESS_MAIN(TstCudaMatmulRange)
#include "tst_cuda_matmul_range.moc"
