// The float → block encoders: dequantize(quantize(x)) stays within the per-type bound
// derived in quant/quantize.h, recomputed here from the input alone, on several input
// distributions. The dequantisation is the library's (checked against the reference by
// tst_dequant), and the blocks are also decoded with the reference to catch an encoder
// and decoder that agree with each other but not with the format.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <random>

#include "quant/dequant.h"
#include "quant/fp16.h"
#include "quant/quantize.h"
#include "quant_reference.h"

using hearth::quant::TensorType;
namespace q = hearth::quant;
namespace t = hearth::test;

namespace {

// Upper bound of the fp16 round-up of v ≥ 0: one fp16 ulp, 2^-10 relative for normals,
// 2^-24 absolute for subnormals. The (1 + 2^-20) allows for the float rounding of v.
double ceil16_ub(double v) {
    return v * (1 + 0x1p-20) * (1 + 0x1p-10) + 0x1p-24;
}

double max_abs(const float* x, int64_t n) {
    double a = 0;
    for (int64_t i = 0; i < n; ++i) a = std::max(a, std::fabs(static_cast<double>(x[i])));
    return a;
}

// Sub-block bounds of the K-quants (quantize.h): sub-blocks of 32, `steps` levels.
void k_bounds(const float* x, int steps, double slack, double* b) {
    double lo[8], hi[8], max_neg = 0;
    for (int j = 0; j < 8; ++j) {
        lo[j] = std::min(0.0, static_cast<double>(*std::min_element(x + 32 * j, x + 32 * j + 32)));
        hi[j] = *std::max_element(x + 32 * j, x + 32 * j + 32);
        max_neg = std::max(max_neg, -lo[j]);
    }
    const double dmin = ceil16_ub(max_neg / 63);
    double need[8], max_need = 0;
    for (int j = 0; j < 8; ++j) {
        need[j] = (hi[j] - lo[j] + dmin) / steps * (1 + 0x1p-20);
        max_need = std::max(max_need, need[j]);
    }
    const double d = ceil16_ub(max_need / 63);
    for (int e = 0; e < 256; ++e) b[e] = (need[e / 32] + d) / 2 + slack;
}

// Per-element error bound for `type` (see quant/quantize.h for the derivation). The slack
// of 2^-20 · amax covers float rounding in the encoder's divisions and the decoder's
// final rounding; it is far below every step size (≥ amax / 254 for Q8_0).
std::vector<double> error_bounds(TensorType type, const std::vector<float>& x) {
    const auto n = static_cast<int64_t>(x.size());
    std::vector<double> b(x.size());
    const int64_t be = q::traits(type)->block_elems;
    for (int64_t i0 = 0; i0 < n; i0 += be) {
        const float* xb = x.data() + i0;
        double* bb = b.data() + i0;
        const double amax = max_abs(xb, be);
        const double slack = 0x1p-20 * amax;
        const double lo = be > 1 ? *std::min_element(xb, xb + be) : 0.0;
        const double hi = be > 1 ? *std::max_element(xb, xb + be) : 0.0;
        switch (type) {
            case TensorType::F32:
                bb[0] = 0;
                break;
            case TensorType::F16:
                bb[0] = 0x1p-11 * amax + 0x1p-25;
                break;
            case TensorType::BF16:
                bb[0] = 0x1p-8 * amax + 0x1p-134;
                break;
            case TensorType::Q8_0:
                std::fill(bb, bb + be, ceil16_ub(amax / 127) / 2 + slack);
                break;
            // Levels -half..half-1 of d = fp16(-x_amax / half); the far side of the other
            // sign loses a step, and (half - 1)·|fp16(d) - d| ≤ 2^-11·amax + half·2^-25.
            case TensorType::Q4_0:
                std::fill(bb, bb + be, amax / 8 + 0x1p-11 * amax + 0x1p-22 + slack);
                break;
            case TensorType::Q5_0:
                std::fill(bb, bb + be, amax / 16 + 0x1p-11 * amax + 0x1p-21 + slack);
                break;
            case TensorType::Q4_1:
            case TensorType::Q5_1: {
                // m = floor16(lo) is at most one fp16 ulp below lo.
                const int steps = type == TensorType::Q4_1 ? 15 : 31;
                const double d = ceil16_ub((hi - lo + 0x1p-10 * std::fabs(lo) + 0x1p-24) / steps);
                std::fill(bb, bb + be, d / 2 + slack);
                break;
            }
            case TensorType::Q4_K:
                k_bounds(xb, 15, slack, bb);
                break;
            case TensorType::Q5_K:
                k_bounds(xb, 31, slack, bb);
                break;
            case TensorType::Q2_K:
            case TensorType::Q3_K:
            case TensorType::IQ4_NL:
            case TensorType::IQ4_XS:
                break;  // not written by Hearth (writable_types)
            case TensorType::Q6_K: {
                double need[16], max_need = 0;
                for (int j = 0; j < 16; ++j) {
                    need[j] = max_abs(xb + 16 * j, 16) / 31 * (1 + 0x1p-20);
                    max_need = std::max(max_need, need[j]);
                }
                const double d = ceil16_ub(max_need / 127);
                for (int e = 0; e < 256; ++e) bb[e] = (need[e / 16] + d) / 2 + slack;
                break;
            }
        }
    }
    return b;
}

// Test inputs: 16384 floats (64 K-quant super-blocks) of one distribution.
std::vector<float> make_input(const QString& dist, std::mt19937_64& rng) {
    std::vector<float> x(16384);
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    std::uniform_real_distribution<float> uni(0.0f, 1.0f);
    for (size_t i = 0; i < x.size(); ++i) {
        float v;
        if (dist == "gauss-1e-3")
            v = 1e-3f * gauss(rng);
        else if (dist == "gauss-0.02")
            v = 0.02f * gauss(rng);
        else if (dist == "gauss-1")
            v = gauss(rng);
        else if (dist == "gauss-100")
            v = 100.0f * gauss(rng);
        else if (dist == "tiny-1e-6")
            v = 1e-6f * gauss(rng);
        else if (dist == "uniform")
            v = 2.0f * uni(rng) - 1.0f;
        else if (dist == "positive")
            v = uni(rng);
        else if (dist == "negative")
            v = -2.0f - uni(rng);
        else if (dist == "outliers")
            v = (rng() % 100 == 0 ? 50.0f : 1.0f) * gauss(rng);
        else if (dist == "sparse")
            v = rng() % 10 == 0 ? gauss(rng) : 0.0f;
        else if (dist == "blocky")
            v = ((i / 16) % 3 == 0 ? 1e-3f : 1.0f) * gauss(rng);  // uneven sub-blocks
        else
            v = 0.0f;  // "zeros"
        x[i] = v;
    }
    return x;
}

}  // namespace

class TstQuantize : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() {
        seed_ = t::test_seed(0x9a27'0001ull);
        qInfo("random seed: 0x%llx (set HEARTH_TEST_SEED to change)",
              static_cast<unsigned long long>(seed_));
    }

    void withinBound_data() {
        QTest::addColumn<uint32_t>("type_id");
        QTest::addColumn<QString>("dist");
        for (TensorType type : t::writable_types()) {
            for (const char* dist :
                 {"gauss-1e-3", "gauss-0.02", "gauss-1", "gauss-100", "tiny-1e-6", "uniform",
                  "positive", "negative", "outliers", "sparse", "blocky", "zeros"}) {
                QTest::addRow("%s/%s", q::traits(type)->name.data(), dist)
                    << static_cast<uint32_t>(type) << QString(dist);
            }
        }
    }

    void withinBound() {
        QFETCH(uint32_t, type_id);
        QFETCH(QString, dist);
        const auto type = static_cast<TensorType>(type_id);
        std::mt19937_64 rng(seed_ ^ (type_id * 1000003u) ^ qHash(dist));
        const std::vector<float> x = make_input(dist, rng);
        const auto n = static_cast<int64_t>(x.size());

        const int64_t bytes = q::quantized_size(type, n);
        QCOMPARE(bytes, n / q::traits(type)->block_elems * q::traits(type)->block_bytes);
        std::vector<uint8_t> blocks(static_cast<size_t>(bytes) + 8, 0xa5);
        QVERIFY(q::quantize(type, x.data(), blocks.data(), n));
        for (size_t i = static_cast<size_t>(bytes); i < blocks.size(); ++i)
            QCOMPARE(blocks[i], uint8_t{0xa5});

        std::vector<float> y(x.size());
        QVERIFY(q::dequantize(type, blocks.data(), y.data(), n));
        const std::vector<double> bound = error_bounds(type, x);
        double worst = 0;  // largest error / bound seen, for the log
        for (int64_t i = 0; i < n; ++i) {
            const size_t k = static_cast<size_t>(i);
            QVERIFY2(t::same_float(y[k], t::ref_element(type, blocks.data(), i)),
                     "library and reference disagree");
            const double err = std::fabs(static_cast<double>(y[k]) - x[k]);
            if (err > bound[k]) {
                QFAIL(qPrintable(QStringLiteral("element %1: x=%2 y=%3 |err|=%4 > bound %5")
                                     .arg(i)
                                     .arg(x[k], 0, 'g', 9)
                                     .arg(y[k], 0, 'g', 9)
                                     .arg(err, 0, 'g', 6)
                                     .arg(bound[k], 0, 'g', 6)));
            }
            if (bound[k] > 0) worst = std::max(worst, err / bound[k]);
        }
        if (dist == "zeros") QCOMPARE(worst, 0.0);
        qInfo("max |error| / bound = %.3f", worst);
    }

    void halfFormatsAreTheScalarConversions() {
        std::mt19937_64 rng(seed_);
        std::vector<float> x(4096);
        for (auto& v : x) v = std::bit_cast<float>(static_cast<uint32_t>(rng()));
        std::vector<uint16_t> h(x.size()), b(x.size());
        q::quantize_row_f16(x.data(), h.data(), static_cast<int64_t>(x.size()));
        q::quantize_row_bf16(x.data(), b.data(), static_cast<int64_t>(x.size()));
        for (size_t i = 0; i < x.size(); ++i) {
            QCOMPARE(h[i], q::f32_to_fp16(x[i]));
            QCOMPARE(b[i], q::f32_to_bf16(x[i]));
        }
    }

    void rejectsBadArguments() {
        float x[512] = {};
        uint8_t out[1024];
        for (TensorType type : t::writable_types()) {
            const int64_t be = q::traits(type)->block_elems;
            QCOMPARE(q::quantized_size(type, 0), int64_t{0});
            QCOMPARE(q::quantized_size(type, -be), int64_t{-1});
            QVERIFY(q::quantize(type, x, out, 0));
            if (be > 1) {
                QCOMPARE(q::quantized_size(type, be + 1), int64_t{-1});
                QVERIFY(!q::quantize(type, x, out, be + 1));
            }
        }
        for (uint32_t id : {16u, 34u, 1000u}) {  // IQ2_XXS, TQ1_0 (read by neither), junk
            QCOMPARE(q::quantized_size(static_cast<TensorType>(id), 256), int64_t{-1});
            QVERIFY(!q::quantize(static_cast<TensorType>(id), x, out, 256));
        }
        // Read, not written: a clear false, nothing written.
        for (TensorType type :
             {TensorType::Q2_K, TensorType::Q3_K, TensorType::IQ4_NL, TensorType::IQ4_XS}) {
            QVERIFY(q::quantized_size(type, 256) > 0);
            std::fill(std::begin(out), std::end(out), uint8_t{0xa5});
            QVERIFY(!q::quantize(type, x, out, 256));
            QVERIFY(
                std::all_of(std::begin(out), std::end(out), [](uint8_t b) { return b == 0xa5; }));
        }
    }

  private:
    uint64_t seed_ = 0;
};

QTEST_APPLESS_MAIN(TstQuantize)
#include "tst_quantize.moc"
