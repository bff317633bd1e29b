// The CPU backend's ops against the naive reference (kernels/reference) on random inputs
// with odd shapes, for both SIMD levels (AVX2 when the processor has it, and the forced
// scalar fallback) and 1, 2 and 3 threads. Seeds are fixed and printed.
//
// Tolerances (and why):
//  * matmul, quantised weights, against the float reference: relative L2 error ≤ 1e-2
//    (32-element formats) / 1.5e-2 (K-quants) / 4e-2 (Q3_K, IQ4_XS: signed sub-block
//    scales, more cancellation). The kernels round activations to 8 bits
//    per block (d = max|x|/127), an error of up to d/2 per element: ≈ 0.5 % RMS for
//    uniform inputs over 32-blocks, more over 256-blocks where max|x| is larger.
//  * matmul, quantised weights, against the reference with the same activation rounding
//    (reference::matmul_q8_activations): |out − ref| ≤ 2e-5 · Σ_c |W[r,c]·x̂[c]| per
//    element. The integer block sums are exact, so only float rounding of the scales and
//    of the block accumulation remains (~1e-7 per term); any unpacking or scale bug is
//    O(1) of that bound.
//  * matmul, F32/F16/BF16 weights: same per-element bound 2e-5 · Σ|W·x| against the float
//    reference (float accumulation vs double).
//  * AVX2 vs scalar matmul: identical bits for Q4_0, Q4_1, Q5_0 and Q5_1 (same operations
//    in the same order, llama.cpp's), 2e-5 · Σ|W·x̂| for the others (different float order).
//    AVX-512 vs AVX2: identical bits. The K-quants, Q8_0 and IQ4_NL follow orders of their own at
//    both levels (kernels/cpu/kquant_few.h, gemm_avx2_q8_0.cpp): those must give a scalar
//    model's bits (simd_order_model.h).
//  * activation quantisation: AVX2 bytes == scalar bytes, d·q == the reference's (d in
//    fp16, as llama.cpp's block_q8_0 / block_q8_1), s as llama.cpp stores it.
// The element-wise ops (RMSNorm, RoPE, the activations, top-k, embed) have their own
// suite, tst_cpu_elementwise.cpp.
#include <QTest>

#include <algorithm>
#include <map>
#include <memory>
#include <random>

#include "cpu/act_quant.h"
#include "cpu/cpu_backend.h"
#include "cpu/kernel_choice.h"
#include "cpu_backends.h"
#include "reference/reference_ops.h"
#include "simd_order_model.h"
#include "tst_cpu_helpers.h"

using hearth::kernels::CpuBackend;
using hearth::kernels::RopeParams;
using hearth::kernels::WeightSource;
using hearth::kernels::cpu::SimdLevel;
namespace ref = hearth::kernels::reference;
namespace cpu = hearth::kernels::cpu;
using namespace hearth::test;

namespace {

constexpr uint32_t kSeed = 20250611;

struct Shape {
    int rows, blocks, tokens;
};

}  // namespace

class TestCpuOps : public QObject {
    Q_OBJECT

    CpuBackends backends_;
    bool have_avx2_ = false;
    bool have_avx512_ = false;

    CpuBackend& backend(int threads, SimdLevel level) { return backends_.get(threads, level); }
    static std::vector<SimdLevel> levels() { return CpuBackends::levels(); }

  private slots:
    void initTestCase() {
        have_avx2_ = cpu::cpu_has_avx2();
        have_avx512_ = cpu::cpu_has_avx512();
        qInfo("seed %u; AVX2 %s; AVX-512 (F/BW/VL/VNNI) %s", kSeed,
              have_avx2_ ? "available (testing AVX2 and scalar)" : "not available (scalar only)",
              have_avx512_ ? "available (testing it against AVX2 bit for bit, and its K-quant and "
                             "Q8_0 products against their orders' scalar models)"
                           : "not available (its kernels are not tested on this machine)");
        QVERIFY(backend(2, SimdLevel::Scalar).name().find("scalar, 2 threads") !=
                std::string::npos);
        if (have_avx2_)
            QVERIFY(backend(3, SimdLevel::Avx2).name().find("AVX2, 3 threads") !=
                    std::string::npos);
        if (have_avx512_)
            QVERIFY(backend(2, SimdLevel::Avx512).name().find("AVX-512, 2 threads") !=
                    std::string::npos);
        QCOMPARE(backend(1, SimdLevel::Scalar).n_threads(), 1);
        QVERIFY(CpuBackend(0).n_threads() >= 1);
    }

    // Auto takes the best level the CPU has; HEARTH_CPU_SIMD caps it; a level the CPU
    // lacks falls to the best one below it.
    void simd_level_resolution() {
        const SimdLevel best = have_avx512_ ? SimdLevel::Avx512
                               : have_avx2_ ? SimdLevel::Avx2
                                            : SimdLevel::Scalar;
        const QByteArray saved = qgetenv("HEARTH_CPU_SIMD");
        const bool had = qEnvironmentVariableIsSet("HEARTH_CPU_SIMD");
        qunsetenv("HEARTH_CPU_SIMD");
        QCOMPARE(cpu::resolve_simd_level(SimdLevel::Auto), best);
        qputenv("HEARTH_CPU_SIMD", "avx2");
        QCOMPARE(cpu::resolve_simd_level(SimdLevel::Auto),
                 have_avx2_ ? SimdLevel::Avx2 : SimdLevel::Scalar);
        QVERIFY(CpuBackend(1).simd_level() != SimdLevel::Avx512);
        qputenv("HEARTH_CPU_SIMD", "scalar");
        QCOMPARE(cpu::resolve_simd_level(SimdLevel::Auto), SimdLevel::Scalar);
        // An explicit request is not capped by the variable.
        QCOMPARE(cpu::resolve_simd_level(SimdLevel::Avx512), best);
        QCOMPARE(cpu::resolve_simd_level(SimdLevel::Avx2),
                 have_avx2_ ? SimdLevel::Avx2 : SimdLevel::Scalar);
        if (had)
            qputenv("HEARTH_CPU_SIMD", saved);
        else
            qunsetenv("HEARTH_CPU_SIMD");
    }

    void buffers_are_aligned() {
        CpuBackend& b = backend(1, SimdLevel::Scalar);
        // Plain buffers, and scratch (huge-page advice from 2 MiB on: 2 MiB aligned).
        for (std::size_t n : {1u, 3u, 100u, 4096u, 3u << 20}) {
            const bool big = n >= (2u << 20);
            auto buf = big ? b.alloc_scratch(n) : b.alloc(n);
            QCOMPARE(buf->bytes(), n);
            QCOMPARE(reinterpret_cast<uintptr_t>(buf->data()) % (big ? (2u << 20) : 64u),
                     uintptr_t{0});
            std::vector<uint8_t> src(n), dst(n);
            for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<uint8_t>(i * 7);
            b.upload(*buf, 0, src.data(), n);
            b.download(dst.data(), *buf, 0, n);
            QVERIFY(src == dst);
        }
    }

    void load_weight_rejects_bad_shapes() {
        CpuBackend& b = backend(1, SimdLevel::Scalar);
        std::vector<uint8_t> bytes(1024);
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            b.load_weight(WeightSource{"w", TensorType::Q4_K, 1, 128, bytes.data()}));
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            b.load_weight(WeightSource{"w", TensorType::Q8_0, 1, 33, bytes.data()}));
        QVERIFY(b.load_weight(WeightSource{"w", TensorType::Q8_0, 2, 64, bytes.data()}) != nullptr);
    }

    // The AVX2 activation quantiser writes the scalar one's bytes, both match the
    // reference rounding (fp16 d), and s is llama.cpp's: fp16(d·Σq) for Q8_1, d·Σq
    // (exact) for Q8_0.
    void activation_quantisation() {
        std::mt19937 rng(kSeed);
        for (cpu::Q8Sums sums : {cpu::Q8Sums::Q8_0, cpu::Q8Sums::Q8_1}) {
            for (int nb : {1, 3, 18}) {
                for (int G : {1, 4}) {
                    for (int nt = 1; nt <= G; ++nt) {
                        std::vector<float> x =
                            random_floats(rng, static_cast<std::size_t>(nt * nb * 32), -3.0f, 3.0f);
                        if (nb > 1)
                            std::fill(x.begin(), x.begin() + 32, 0.0f);  // an all-zero block
                        const std::size_t bytes = cpu::q8x32_group_bytes(nb, G);
                        std::vector<uint8_t> a(bytes, 0xAA), s(bytes, 0x55);
                        cpu::quantize_q8x32_scalar(x.data(), static_cast<std::size_t>(nb) * 32, nt,
                                                   G, nb, sums, s.data());
                        if (have_avx2_) {
                            cpu::quantize_q8x32_avx2(x.data(), static_cast<std::size_t>(nb) * 32,
                                                     nt, G, nb, sums, a.data());
                            QVERIFY(std::memcmp(a.data(), s.data(),
                                                cpu::q8x32_ds_offset(nb, G) + nb * 8 * G) == 0);
                        }
                        const auto* qs = reinterpret_cast<const int8_t*>(s.data());
                        const auto* ds =
                            reinterpret_cast<const float*>(s.data() + cpu::q8x32_ds_offset(nb, G));
                        for (int t = 0; t < nt; ++t) {
                            const float* xt = x.data() + t * nb * 32;
                            const std::vector<double> r = ref::q8_roundtrip(xt, nb * 32, 32);
                            for (int b = 0; b < nb; ++b) {
                                int sum = 0;
                                float amax = 0.0f;
                                for (int i = 0; i < 32; ++i) {
                                    const int q = qs[(b * G + t) * 32 + i];
                                    sum += q;
                                    amax = std::max(amax, std::fabs(xt[b * 32 + i]));
                                    QCOMPARE(static_cast<double>(ds[b * 2 * G + t]) * q,
                                             r[static_cast<std::size_t>(b * 32 + i)]);
                                }
                                const float want_s =
                                    sums == cpu::Q8Sums::Q8_1
                                        ? hearth::quant::fp16_to_f32(hearth::quant::f32_to_fp16(
                                              amax / 127.0f * static_cast<float>(sum)))
                                        : ds[b * 2 * G + t] * static_cast<float>(sum);
                                QCOMPARE(ds[b * 2 * G + G + t], want_s);
                            }
                        }
                    }
                }
            }
        }
        for (int nb : {1, 2}) {
            std::vector<float> x =
                random_floats(rng, static_cast<std::size_t>(nb) * 256, -2.0f, 2.0f);
            const std::size_t bytes = cpu::q8k_row_bytes(nb);
            std::vector<uint8_t> a(bytes, 0), s(bytes, 0);
            cpu::quantize_q8k_scalar(x.data(), nb, s.data());
            if (have_avx2_) {
                cpu::quantize_q8k_avx2(x.data(), nb, a.data());
                QVERIFY(std::memcmp(a.data(), s.data(), cpu::q8k_d_offset(nb) + 4u * nb) == 0);
            }
            const auto* qs = reinterpret_cast<const int8_t*>(s.data());
            const auto* bsums =
                reinterpret_cast<const int16_t*>(s.data() + cpu::q8k_bsums_offset(nb));
            const auto* d = reinterpret_cast<const float*>(s.data() + cpu::q8k_d_offset(nb));
            const std::vector<double> r = ref::q8_roundtrip(x.data(), nb * 256, 256);
            for (int b = 0; b < nb; ++b)
                for (int j = 0; j < 16; ++j) {
                    int sum = 0;
                    for (int i = 0; i < 16; ++i) {
                        const int e = b * 256 + 16 * j + i;
                        sum += qs[e];
                        QCOMPARE(static_cast<double>(d[b]) * qs[e], r[static_cast<std::size_t>(e)]);
                    }
                    QCOMPARE(static_cast<int>(bsums[b * 16 + j]), sum);
                }
        }
    }

    void matmul_data() {
        QTest::addColumn<int>("type_id");
        for (TensorType t : all_weight_types())
            QTest::newRow(qPrintable(type_name(t))) << static_cast<int>(t);
    }

    void matmul() {
        QFETCH(int, type_id);
        const auto type = static_cast<TensorType>(type_id);
        std::mt19937 rng(kSeed + static_cast<uint32_t>(type_id));
        const int64_t blk = is_float_type(type) ? 32 : block_of(type);
        // Rows and tokens 1, 3, 7, 33, 130, 257 (several row chunks and 64 × 64 tiles),
        // token counts on both sides of the decode / tiled switch (4 / 5), of the 4-token
        // groups and of the AVX-512 K-quant and Q8_0 kernels' 16-token groups (25: a last
        // group of 9, 300: two 256-token tiles, 530: two of the AVX-512 K-quants' 512-token
        // tiles); columns from one block up (17: Q8_0's 8-block units and a part one).
        const std::vector<Shape> shapes = {{1, 1, 1},    {3, 2, 1},     {7, 1, 2},   {33, 3, 3},
                                           {130, 2, 4},  {33, 5, 5},    {7, 3, 7},   {130, 1, 33},
                                           {257, 2, 1},  {130, 3, 130}, {19, 2, 25}, {70, 1, 300},
                                           {40, 17, 20}, {9, 1, 530}};
        // Q3_K and IQ4_XS: signed sub-block scales, so more cancellation in a product and a
        // larger relative share of the activations' rounding (one 256-column row: ~2.5 %).
        const double tol_float = type == TensorType::Q3_K || type == TensorType::IQ4_XS ? 4e-2
                                 : is_k_quant(type)                                     ? 1.5e-2
                                                                                        : 1e-2;
        int checked = 0;
        for (const Shape& s : shapes) {
            // Float weights take any column count: odd ones exercise the vector tails.
            const int64_t cols =
                s.blocks * blk + (is_float_type(type) && s.tokens % 2 == 1 ? 5 : 0);
            const std::vector<uint8_t> wbytes = random_weights(rng, type, s.rows, cols);
            const std::vector<float> x =
                random_floats(rng, static_cast<std::size_t>(s.tokens * cols));
            const bool with_bias = s.tokens % 2 == 1;
            const std::vector<float> bias = random_floats(rng, static_cast<std::size_t>(s.rows));
            const ref::WeightRef wr{type, s.rows, cols, wbytes.data()};
            const std::size_t n_out = static_cast<std::size_t>(s.rows) * s.tokens;

            // References: float activations, and the kernels' 8-bit activation rounding.
            std::vector<float> exact(n_out), rounded(n_out);
            ref::matmul(wr, x.data(), s.tokens, exact.data(), with_bias ? bias.data() : nullptr);
            const std::vector<float> wf = ref::dequantize_matrix(wr);
            std::vector<double> mag(n_out);  // Σ_c |W[r,c] · x̂[c]|
            for (int t = 0; t < s.tokens; ++t) {
                const float* xt = x.data() + t * cols;
                std::vector<double> xq(static_cast<std::size_t>(cols));
                if (is_float_type(type)) {
                    for (int64_t c = 0; c < cols; ++c) xq[static_cast<std::size_t>(c)] = xt[c];
                } else {
                    xq = ref::q8_roundtrip(xt, cols, block_of(type));
                }
                for (int r = 0; r < s.rows; ++r) {
                    double m = 0.0;
                    for (int64_t c = 0; c < cols; ++c)
                        m += std::fabs(wf[static_cast<std::size_t>(r * cols + c)] *
                                       xq[static_cast<std::size_t>(c)]);
                    mag[static_cast<std::size_t>(t * s.rows + r)] = m;
                }
            }
            if (is_float_type(type)) {
                rounded = exact;
            } else {
                ref::matmul_q8_activations(wr, x.data(), s.tokens, block_of(type), rounded.data());
                if (with_bias)
                    for (int t = 0; t < s.tokens; ++t)
                        for (int r = 0; r < s.rows; ++r)
                            rounded[static_cast<std::size_t>(t * s.rows + r)] += bias[r];
            }

            // The AVX-512 level's own orders (K-quants, Q8_0), modelled per (row, token).
            const float* b_or_null = with_bias ? bias.data() : nullptr;
            // The K-quants' and Q8_0's own orders hold at both SIMD levels.
            const bool q8_order = type == TensorType::Q8_0 || type == TensorType::IQ4_NL;
            const bool own_order_type = is_k_quant(type) || q8_order;
            const std::vector<float> order_model =
                is_k_quant(type) ? kquant_order_model_matmul(type, wbytes.data(), s.rows, cols,
                                                             x.data(), s.tokens, b_or_null)
                : q8_order ? q8_0_order_model_matmul(type, wbytes.data(), s.rows, cols, x.data(),
                                                     s.tokens, b_or_null)
                           : std::vector<float>{};

            std::vector<float> first, avx2;
            for (SimdLevel level : levels()) {
                for (int threads : {1, 2, 3}) {
                    CpuBackend& b = backend(threads, level);
                    auto w = b.load_weight(WeightSource{"w", type, s.rows, cols, wbytes.data()});
                    std::vector<float> out(n_out, std::nanf(""));
                    b.matmul(*w, x.data(), s.tokens, out.data(), with_bias ? bias.data() : nullptr);
                    const QString where = QString("%1 rows %2 cols %3 tokens %4, %5")
                                              .arg(type_name(type))
                                              .arg(s.rows)
                                              .arg(cols)
                                              .arg(s.tokens)
                                              .arg(QString::fromStdString(b.name()));
                    if (!is_float_type(type)) {
                        const double e = rel_l2(out.data(), exact.data(), n_out);
                        HEARTH_CHECK(e <= tol_float,
                                     (where + QString(": rel L2 %1 vs float").arg(e)));
                    }
                    for (std::size_t i = 0; i < n_out; ++i) {
                        const double bound = 2e-5 * mag[i] + 1e-6;
                        const double e = std::fabs(static_cast<double>(out[i]) - rounded[i]);
                        HEARTH_CHECK(e <= bound,
                                     (where + QString(": out[%1] = %2, reference %3 (bound %4)")
                                                  .arg(i)
                                                  .arg(out[i])
                                                  .arg(rounded[i])
                                                  .arg(bound)));
                    }
                    if (level == SimdLevel::Avx2 && avx2.empty()) avx2 = out;
                    const bool own_order = level != SimdLevel::Scalar && own_order_type;
                    if (own_order) {
                        // The K-quants' and Q8_0's own float orders, whichever kernel ran and
                        // whatever the batch: the model's bits.
                        for (std::size_t i = 0; i < n_out; ++i)
                            HEARTH_CHECK(std::memcmp(&out[i], &order_model[i], sizeof(float)) == 0,
                                         (where + QString(": out[%1] = %2, order model %3")
                                                      .arg(i)
                                                      .arg(double(out[i]), 0, 'g', 9)
                                                      .arg(double(order_model[i]), 0, 'g', 9)));
                    } else if (level == SimdLevel::Avx512) {
                        // Same integer sums and float operations as AVX2: same bits for
                        // every thread count.
                        HEARTH_CHECK(
                            std::memcmp(out.data(), avx2.data(), n_out * sizeof(float)) == 0,
                            (where + " differs from the AVX2 single-thread result"));
                    }
                    if (first.empty()) {
                        first = out;
                    } else if (block_of(type) == 32 && !own_order) {
                        // The 32-element formats: every level and thread count, same bits.
                        HEARTH_CHECK(
                            std::memcmp(out.data(), first.data(), n_out * sizeof(float)) == 0,
                            (where + " differs from the scalar single-thread result"));
                    } else {
                        // Every level and thread count agrees (only float order differs).
                        for (std::size_t i = 0; i < n_out; ++i)
                            HEARTH_CHECK(std::fabs(static_cast<double>(out[i]) - first[i]) <=
                                             2e-5 * mag[i] + 1e-6,
                                         (where + " differs from the scalar single-thread result"));
                    }
                    ++checked;
                }
            }
        }
        QVERIFY(checked >= static_cast<int>(shapes.size()) * 3);
    }

    // Every kernel the choice can pick (kernels/cpu/kernel_choice.h) gives the default
    // kernel's bits, which matmul() checks against the references: the choice never
    // changes a result.
    void matmul_every_candidate_data() { matmul_data(); }
    void matmul_every_candidate() {
        QFETCH(int, type_id);
        const auto type = static_cast<TensorType>(type_id);
        const SimdLevel level = levels().back();
        std::mt19937 rng(kSeed + 100 + static_cast<uint32_t>(type_id));
        const int64_t blk = is_float_type(type) ? 32 : block_of(type);
        const std::vector<Shape> shapes = {{130, 3, 1}, {33, 5, 3},  {7, 17, 4},
                                           {70, 2, 5},  {19, 3, 37}, {40, 2, 300}};
        int compared = 0;
        for (const Shape& s : shapes) {
            const int64_t cols = s.blocks * blk;
            const auto wbytes = random_weights(rng, type, s.rows, cols);
            const auto x = random_floats(rng, static_cast<std::size_t>(s.tokens * cols));
            const std::size_t n_out = static_cast<std::size_t>(s.rows) * s.tokens;
            const WeightSource src{"w", type, s.rows, cols, wbytes.data()};
            CpuBackend& plain = backend(2, level);
            std::vector<float> want(n_out);
            plain.matmul(*plain.load_weight(src), x.data(), s.tokens, want.data());
            const cpu::ShapeClass cls = cpu::shape_class(s.tokens);
            for (const cpu::KernelVariant& v : cpu::kernel_variants(type, cls, level)) {
                CpuBackend b(2, level);
                const std::string spec = type_name(type).toStdString() + "." +
                                         std::string(cpu::shape_class_name(cls)) + "=" + v.name;
                QVERIFY2(b.force_kernels(spec).empty(), spec.c_str());
                QCOMPARE(b.kernel_plan().get(type, cls).name, v.name);
                std::vector<float> out(n_out, std::nanf(""));
                b.matmul(*b.load_weight(src), x.data(), s.tokens, out.data());
                HEARTH_CHECK(std::memcmp(out.data(), want.data(), n_out * sizeof(float)) == 0,
                             QString("%1, %2 rows %3 cols %4 tokens: differs from the default")
                                 .arg(QString::fromStdString(spec))
                                 .arg(s.rows)
                                 .arg(cols)
                                 .arg(s.tokens));
                ++compared;
            }
        }
        QVERIFY(compared >= static_cast<int>(shapes.size()));
    }
};

QTEST_GUILESS_MAIN(TestCpuOps)
#include "tst_cpu_ops.moc"
