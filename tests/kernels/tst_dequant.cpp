// CPU dequantisation and the fp16/bf16 scalar conversions, against the independent
// reference in quant_reference.cpp. Agreement is exact: identical bits (+0 and -0 are
// different), except that NaN only has to be NaN of the same sign (see same_float).
// Random data comes from a fixed seed, printed at start; HEARTH_TEST_SEED overrides it.
#include <QtTest>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "quant/dequant.h"
#include "quant/dequant_rows.h"
#include "quant/fp16.h"
#include "quant_reference.h"

using hearth::quant::TensorType;
namespace q = hearth::quant;
namespace t = hearth::test;

namespace {

constexpr uint32_t kSentinel = 0x7fc0dead;  // a NaN no decoder produces here

std::vector<float> sentinel_floats(size_t n) {
    return std::vector<float>(n, std::bit_cast<float>(kSentinel));
}

bool untouched(const std::vector<float>& v, size_t from) {
    for (size_t i = from; i < v.size(); ++i) {
        if (std::bit_cast<uint32_t>(v[i]) != kSentinel) return false;
    }
    return true;
}

QString hex_block(const uint8_t* p, int64_t bytes) {
    return QString::fromLatin1(
        QByteArray(reinterpret_cast<const char*>(p), static_cast<int>(bytes)).toHex());
}

// Correctly rounded value of x in a binary format with `mant_bits` stored mantissa bits,
// smallest normal exponent min_exp and largest finite value max_finite; ties to even
// (nearbyint in the default rounding mode); beyond max_finite after rounding: inf.
double ref_round(float x, int mant_bits, int min_exp, double max_finite) {
    if (std::isnan(x) || std::isinf(x) || x == 0.0f) return x;
    const double a = std::fabs(static_cast<double>(x));
    int e;
    std::frexp(a, &e);  // a = f · 2^e, f in [0.5, 1): the leading bit is 2^(e-1)
    const int quantum = std::max(e - 1, min_exp) - mant_bits;
    double r = std::ldexp(std::nearbyint(std::ldexp(a, -quantum)), quantum);
    if (r > max_finite) r = std::numeric_limits<double>::infinity();
    return std::copysign(r, static_cast<double>(x));
}

// Floats that exercise rounding into a 16-bit format whose values `decode` gives: random
// bit patterns (all exponents, subnormal floats, inf, NaN), exact midpoints between
// neighbouring 16-bit values and the floats either side of them, log-uniform magnitudes
// around the format's range, and the listed specials.
std::vector<float> rounding_inputs(std::mt19937_64& rng, double (*decode)(uint16_t),
                                   std::initializer_list<float> specials) {
    std::vector<float> xs(specials);
    for (int i = 0; i < 20000; ++i)
        xs.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
    for (int i = 0; i < 20000; ++i) {
        const auto h = static_cast<uint16_t>(rng());
        const double a = decode(h), b = decode(static_cast<uint16_t>(h + 1));
        if (!std::isfinite(a) || !std::isfinite(b) || ((h + 1) & 0x7fff) == 0) continue;
        const auto mid = static_cast<float>((a + b) / 2);  // exact: 1 bit more than the format
        xs.push_back(mid);
        xs.push_back(std::nextafter(mid, INFINITY));
        xs.push_back(std::nextafter(mid, -INFINITY));
    }
    std::uniform_real_distribution<double> expo(-150.0, 130.0);
    for (int i = 0; i < 20000; ++i) {
        const auto x = static_cast<float>(std::exp2(expo(rng)));
        xs.push_back((rng() & 1) ? -x : x);
    }
    return xs;
}

}  // namespace

class TstDequant : public QObject {
    Q_OBJECT

  private:
    uint64_t seed_ = 0;

  private slots:
    void initTestCase() {
        seed_ = t::test_seed(0x5eed'0001'2024ull);
        qInfo("random seed: 0x%llx (set HEARTH_TEST_SEED to change)",
              static_cast<unsigned long long>(seed_));
    }

    void layoutsMatchTraits() {
        for (TensorType type : t::all_types()) {
            const auto tr = q::traits(type);
            QVERIFY(tr.has_value());
            const t::RefLayout lay = t::ref_layout(type);
            QCOMPARE(tr->block_elems, lay.elems);
            QCOMPARE(tr->block_bytes, lay.bytes);
            QVERIFY(q::dequantize_row_fn(type) != nullptr);
        }
    }

    // Names and types both ways: every supported type by its name; ggml types Hearth does
    // not read, and unknown names, are no type.
    void typesByName() {
        for (TensorType type : t::all_types()) {
            const auto back = q::type_from_name(q::traits(type)->name);
            QVERIFY(back && *back == type);
        }
        QVERIFY(!q::type_from_name("IQ2_XS"));
        QVERIFY(!q::type_from_name("Q8_K"));
        QVERIFY(!q::type_from_name("q4_k"));
        QVERIFY(!q::type_from_name(""));
    }

    void matchesReference_data() {
        QTest::addColumn<uint32_t>("type_id");
        for (TensorType type : t::all_types()) {
            QTest::newRow(q::traits(type)->name.data()) << static_cast<uint32_t>(type);
        }
    }

    // Many random blocks, dequantised whole and in sub-ranges of several lengths at
    // random block offsets; every element against the reference, nothing written past n.
    void matchesReference() {
        QFETCH(uint32_t, type_id);
        const auto type = static_cast<TensorType>(type_id);
        const t::RefLayout lay = t::ref_layout(type);
        std::mt19937_64 rng(seed_ ^ type_id);
        const int64_t n_blocks = lay.elems == 1 ? 100000 : lay.elems == 32 ? 8192 : 1024;
        const std::vector<uint8_t> data = t::random_blocks(type, n_blocks, rng);

        for (const int64_t blocks : {n_blocks, int64_t{1}, int64_t{2}, int64_t{3}, int64_t{7},
                                     int64_t{64}, int64_t{333}}) {
            const int64_t first =
                blocks == n_blocks
                    ? 0
                    : static_cast<int64_t>(rng() % static_cast<uint64_t>(n_blocks - blocks + 1));
            const uint8_t* src = data.data() + first * lay.bytes;
            const int64_t n = blocks * lay.elems;
            std::vector<float> out = sentinel_floats(static_cast<size_t>(n + 16));
            QVERIFY(q::dequantize(type, src, out.data(), n));
            QVERIFY2(untouched(out, static_cast<size_t>(n)), "wrote past n");
            int64_t bad = 0, first_bad = -1;
            for (int64_t i = 0; i < n; ++i) {
                if (!t::same_float(out[static_cast<size_t>(i)], t::ref_element(type, src, i))) {
                    if (bad++ == 0) first_bad = i;
                }
            }
            if (bad) {
                const int64_t b = first_bad / lay.elems;
                const float got = out[static_cast<size_t>(first_bad)];
                const float want = t::ref_element(type, src, first_bad);
                QFAIL(qPrintable(
                    QStringLiteral("%1 of %2 elements differ; first: element %3 of block "
                                   "%4: got %5, want %6; block bytes %7")
                        .arg(bad)
                        .arg(n)
                        .arg(first_bad % lay.elems)
                        .arg(first + b)
                        .arg(QString::fromStdString(t::describe_float(got)),
                             QString::fromStdString(t::describe_float(want)),
                             hex_block(src + b * lay.bytes, lay.bytes))));
            }
        }
    }

    // Every fp16 and bf16 bit pattern through dequantize() and the scalar decoders.
    void halfFormatsAllValues() {
        std::vector<uint16_t> all(65536);
        for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
        std::vector<float> f16(65536), bf16(65536);
        QVERIFY(q::dequantize(TensorType::F16, all.data(), f16.data(), 65536));
        QVERIFY(q::dequantize(TensorType::BF16, all.data(), bf16.data(), 65536));
        for (uint32_t i = 0; i < 65536; ++i) {
            const auto h = static_cast<uint16_t>(i);
            const auto want16 = static_cast<float>(t::ref_fp16(h));
            const auto wantb16 = static_cast<float>(t::ref_bf16(h));
            QVERIFY2(t::same_float(f16[i], want16), qPrintable(QString::number(i, 16)));
            QVERIFY2(t::same_float(bf16[i], wantb16), qPrintable(QString::number(i, 16)));
            QVERIFY2(t::same_float(q::fp16_to_f32(h), want16), qPrintable(QString::number(i, 16)));
            QVERIFY2(t::same_float(q::bf16_to_f32(h), wantb16), qPrintable(QString::number(i, 16)));
            if (std::isnan(want16)) {
                // fp16.h promises NaN payloads survive: mantissa shifted into place.
                QCOMPARE(std::bit_cast<uint32_t>(q::fp16_to_f32(h)) & 0x7fffffu,
                         uint32_t{h & 0x3ffu} << 13);
                QCOMPARE(std::bit_cast<uint32_t>(f16[i]) & 0x7fffffu, uint32_t{h & 0x3ffu} << 13);
            }
        }
    }

    // f32_to_x(x_to_f32(h)) == h for every non-NaN pattern; NaN stays NaN of its sign.
    void halfFormatsRoundTrip() {
        for (uint32_t i = 0; i < 65536; ++i) {
            const auto h = static_cast<uint16_t>(i);
            const uint16_t h16 = q::f32_to_fp16(q::fp16_to_f32(h));
            const uint16_t hb16 = q::f32_to_bf16(q::bf16_to_f32(h));
            if (std::isnan(t::ref_fp16(h))) {
                QVERIFY(std::isnan(t::ref_fp16(h16)) && (h16 & 0x8000) == (h & 0x8000));
            } else {
                QCOMPARE(h16, h);
            }
            if (std::isnan(t::ref_bf16(h))) {
                QVERIFY(std::isnan(t::ref_bf16(hb16)) && (hb16 & 0x8000) == (h & 0x8000));
            } else {
                QCOMPARE(hb16, h);
            }
        }
    }

    void f32ToFp16Rounding() {
        std::mt19937_64 rng(seed_ + 16);
        const std::vector<float> xs = rounding_inputs(rng, t::ref_fp16,
                                                      {0.0f,
                                                       -0.0f,
                                                       65504.0f,
                                                       65519.0f,
                                                       std::nextafter(65520.0f, 0.0f),
                                                       65520.0f,
                                                       -65520.0f,
                                                       65536.0f,
                                                       1e10f,
                                                       INFINITY,
                                                       -INFINITY,
                                                       NAN,
                                                       -NAN,
                                                       FLT_MIN,
                                                       FLT_TRUE_MIN,
                                                       0x1p-14f,
                                                       std::nextafter(0x1p-14f, 0.0f),
                                                       0x1p-24f,
                                                       0x1p-25f,
                                                       std::nextafter(0x1p-25f, 1.0f),
                                                       0x3p-26f,
                                                       -0x3p-26f,
                                                       0x1.ffcp-15f,
                                                       1.0f,
                                                       1.0009765625f,
                                                       1.00048828125f});
        check_rounding(xs, q::f32_to_fp16, t::ref_fp16, 10, -14, 65504.0);
    }

    void f32ToBf16Rounding() {
        std::mt19937_64 rng(seed_ + 30);
        const double bf16_max = std::ldexp(255.0, 120);  // (2 - 2^-7) · 2^127
        const std::vector<float> xs = rounding_inputs(
            rng, t::ref_bf16,
            {0.0f, -0.0f, FLT_MAX, -FLT_MAX, 0x1.fep127f, 0x1.ffp127f, INFINITY, NAN, -NAN, FLT_MIN,
             FLT_TRUE_MIN, 0x1p-133f, 0x1p-134f, 0x3p-135f, 1.0f, 1.00390625f, 1.01171875f});
        check_rounding(xs, q::f32_to_bf16, t::ref_bf16, 7, -126, bf16_max);
    }

    void edgeCases() {
        std::vector<uint8_t> src(4096, 0x11);
        for (TensorType type : t::all_types()) {
            const int64_t be = q::traits(type)->block_elems;
            std::vector<float> out = sentinel_floats(1024);
            QVERIFY(q::dequantize(type, src.data(), out.data(), 0));  // 0 is a multiple
            QVERIFY(q::dequantize(type, nullptr, nullptr, 0));
            QVERIFY(!q::dequantize(type, src.data(), out.data(), -be));
            if (be > 1) {
                QVERIFY(!q::dequantize(type, src.data(), out.data(), be - 1));
                QVERIFY(!q::dequantize(type, src.data(), out.data(), be + 1));
                QVERIFY(!q::dequantize(type, src.data(), out.data(), 3 * be / 2));
            }
            QVERIFY2(untouched(out, 0), q::traits(type)->name.data());
        }
        // Valid ggml types Hearth does not read, removed ids, and ids past the table.
        for (uint32_t id : {4u, 5u, 9u, 15u, 16u, 17u, 18u, 19u, 21u, 22u, 24u, 26u, 28u, 29u, 31u,
                            34u, 39u, 1000u, 0xffffffffu}) {
            std::vector<float> out = sentinel_floats(512);
            QVERIFY2(!q::dequantize(static_cast<TensorType>(id), src.data(), out.data(), 256),
                     qPrintable(QString::number(id)));
            QVERIFY(untouched(out, 0));
            QVERIFY(q::dequantize_row_fn(static_cast<TensorType>(id)) == nullptr);
        }
    }

  private:
    static void check_rounding(const std::vector<float>& xs, uint16_t (*encode)(float),
                               double (*decode)(uint16_t), int mant_bits, int min_exp,
                               double max_finite) {
        int64_t bad = 0;
        QString first;
        for (float x : xs) {
            const uint16_t h = encode(x);
            const double got = decode(h);
            const double want = ref_round(x, mant_bits, min_exp, max_finite);
            const bool ok = std::isnan(want)
                                ? std::isnan(got) && std::signbit(got) == std::signbit(x)
                                : got == want && std::signbit(got) == std::signbit(want);
            if (!ok && bad++ == 0) {
                first = QStringLiteral("x = %1: got 0x%2 (%3), want %4")
                            .arg(QString::fromStdString(t::describe_float(x)))
                            .arg(h, 4, 16, QLatin1Char('0'))
                            .arg(got, 0, 'g', 17)
                            .arg(want, 0, 'g', 17);
            }
        }
        qInfo("%zu inputs checked", xs.size());
        QVERIFY2(bad == 0, qPrintable(QStringLiteral("%1 wrong; first: %2").arg(bad).arg(first)));
    }
};

QTEST_APPLESS_MAIN(TstDequant)
#include "tst_dequant.moc"
