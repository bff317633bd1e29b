// The CPU backend's element-wise ops against the naive reference (kernels/reference) on
// random inputs with odd shapes, at every SIMD level the processor has and 1-3 threads.
// (Matrix products and activation quantisation: tst_cpu_ops.cpp.) Seeds are fixed.
//
// Tolerances (and why):
//  * rms_norm: 1e-5 relative per element (ggml's float mean and scale vs double).
//  * rope: 2e-5 + 4e-7 · max position absolute on |x| ≤ 1. The backend computes the
//    angles as ggml does, in float with base^(−2i/n) by repeated multiplication, which
//    loses up to ~3 ulp of θ (θ ≤ position) against the reference's double angles.
//  * swiglu: 1e-5 relative + 1e-30 absolute (ggml's vector exp is within a few ulp).
//  * geglu: see geglu_scale (ggml's fp16 table against a double GELU).
//  * add, scale, gather_rows, embed: exact (no arithmetic beyond the shared dequantise).
//  * fma_exact (the scalar kernels' fused multiply-add): bit for bit against glibc's fmaf,
//    which is correctly rounded (this suite is built for Linux only; MinGW's is not).
#include <QTest>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "cpu/cpu_backend.h"
#include "cpu/scalar_math.h"
#include "cpu_backends.h"
#include "quant/fp16.h"
#include "reference/reference_ops.h"
#include "tst_cpu_helpers.h"

using hearth::kernels::CpuBackend;
using hearth::kernels::RopeParams;
using hearth::kernels::WeightSource;
using hearth::kernels::cpu::SimdLevel;
namespace ref = hearth::kernels::reference;
using namespace hearth::test;

namespace {

constexpr uint32_t kSeed = 20250611;

}  // namespace

class TestCpuElementwise : public QObject {
    Q_OBJECT

    CpuBackends backends_;

    CpuBackend& backend(int threads, SimdLevel level) { return backends_.get(threads, level); }

    // rope_data's row as RopeParams; its frequency factors (random) are kept in ff.
    static RopeParams fetch_rope(std::mt19937& rng, std::vector<float>& ff) {
        QFETCH(bool, neox);
        QFETCH(int, n_rot);
        QFETCH(float, freq_scale);
        QFETCH(bool, factors);
        QFETCH(float, attn_factor);
        ff = random_floats(rng, static_cast<std::size_t>(n_rot / 2), 1.0f, 8.0f);
        RopeParams p;
        p.n_rot = n_rot;
        p.neox = neox;
        p.freq_base = 500000.0f;
        p.freq_scale = freq_scale;
        p.freq_factors = factors ? ff.data() : nullptr;
        p.attn_factor = attn_factor;
        return p;
    }
    static std::vector<SimdLevel> levels() { return CpuBackends::levels(); }

  private slots:
    void fmaExactRoundsOnce() {
        using hearth::kernels::cpu::fma_exact;
        std::mt19937 rng(kSeed + 7);
        auto bits = [](float f) { return std::bit_cast<uint32_t>(f); };
        auto check = [&](float a, float b, float c) {
            const float want = std::fma(a, b, c), got = fma_exact(a, b, c);
            if (bits(got) == bits(want) || (std::isnan(got) && std::isnan(want))) return true;
            char line[160];  // hexadecimal floats: QString's formatting has no %a
            std::snprintf(line, sizeof line, "fma_exact(%a, %a, %a) = %a, fmaf: %a",
                          static_cast<double>(a), static_cast<double>(b), static_cast<double>(c),
                          static_cast<double>(got), static_cast<double>(want));
            qWarning("%s", line);
            return false;
        };
        // Any float bits at all (subnormals, infinities, NaNs, overflow).
        std::uniform_int_distribution<uint32_t> any;
        for (int i = 0; i < 300000; ++i)
            QVERIFY(check(std::bit_cast<float>(any(rng)), std::bit_cast<float>(any(rng)),
                          std::bit_cast<float>(any(rng))));
        // Operands of nearby magnitude, where rounding the double sum can land on a float
        // halfway point, and cancellation (c near −a·b).
        std::uniform_int_distribution<uint32_t> mantissa(0, (1u << 23) - 1);
        std::uniform_int_distribution<int> exponent(-4, 4), shift(20, 60), sign(0, 1);
        auto near_one = [&](int e) {
            return std::ldexp(1.0f + static_cast<float>(mantissa(rng)) * 0x1p-23f, e) *
                   (sign(rng) ? -1.0f : 1.0f);
        };
        for (int i = 0; i < 300000; ++i) {
            const float a = near_one(exponent(rng)), b = near_one(exponent(rng));
            const float c = i % 2 ? -a * b : near_one(exponent(rng) - shift(rng));
            QVERIFY(check(a, b, c));
            QVERIFY(check(a, b, std::ldexp(c, -24)));
        }
        // Results in the subnormal range (softmax's e^x of far-below-max scores).
        std::uniform_int_distribution<int> tiny(-150, -120);
        for (int i = 0; i < 300000; ++i) {
            const float a = near_one(tiny(rng) / 2), b = near_one(tiny(rng) / 2);
            QVERIFY(check(a, b, near_one(tiny(rng))));
        }
        // a·b exactly halfway between two floats (i·j odd in (1 + i·2^-12)(1 + j·2^-12)),
        // and c too small for a double sum to keep: rounding that sum again to float ties
        // to even, where the exact a·b + c decides by c's sign (double rounding).
        for (int i = 1; i < 40; i += 2) {
            for (int j = 1; j < 40; j += 2) {
                for (int e : {54, 60, 80, 120}) {
                    for (float scale : {1.0f, -1.0f, 0x1p-100f, -0x1p90f}) {
                        const float a = (1.0f + static_cast<float>(i) * 0x1p-12f) * scale;
                        const float b = 1.0f + static_cast<float>(j) * 0x1p-12f;
                        QVERIFY(check(a, b, std::ldexp(scale, -e)));
                        QVERIFY(check(a, b, -std::ldexp(scale, -e)));
                    }
                }
            }
        }
    }

    void rms_norm() {
        std::mt19937 rng(kSeed + 100);
        for (int rows : {1, 3, 130}) {
            for (int n : {1, 7, 64, 576, 1000}) {
                const std::vector<float> x =
                    random_floats(rng, static_cast<std::size_t>(rows * n), -4.0f, 4.0f);
                const std::vector<float> w =
                    random_floats(rng, static_cast<std::size_t>(n), 0.5f, 2.0f);
                std::vector<float> want(x.size());
                ref::rms_norm(x.data(), w.data(), rows, n, 1e-5f, want.data());
                for (SimdLevel level : levels()) {
                    for (int threads : {1, 3}) {
                        std::vector<float> out(x.size());
                        backend(threads, level)
                            .rms_norm(x.data(), w.data(), rows, n, 1e-5f, out.data());
                        for (std::size_t i = 0; i < out.size(); ++i)
                            HEARTH_CHECK(
                                std::fabs(out[i] - want[i]) <= 1e-5 * std::fabs(want[i]) + 1e-7,
                                (QString("rows %1 n %2 i %3: %4 vs %5")
                                     .arg(rows)
                                     .arg(n)
                                     .arg(i)
                                     .arg(out[i])
                                     .arg(want[i])));
                        // In place.
                        std::vector<float> inplace = x;
                        backend(threads, level)
                            .rms_norm(inplace.data(), w.data(), rows, n, 1e-5f, inplace.data());
                        QVERIFY(inplace == out);
                    }
                }
            }
        }
    }

    void rope_data() {
        QTest::addColumn<bool>("neox");
        QTest::addColumn<int>("n_rot");
        QTest::addColumn<float>("freq_scale");
        QTest::addColumn<bool>("factors");
        QTest::addColumn<float>("attn_factor");
        QTest::newRow("normal") << false << 64 << 1.0f << false << 1.0f;
        QTest::newRow("neox") << true << 64 << 1.0f << false << 1.0f;
        QTest::newRow("partial rotation") << false << 32 << 1.0f << false << 1.0f;
        QTest::newRow("neox partial") << true << 16 << 1.0f << false << 1.0f;
        QTest::newRow("linear scaling") << false << 64 << 0.25f << false << 1.0f;
        QTest::newRow("llama3 factors") << false << 64 << 1.0f << true << 1.0f;
        QTest::newRow("neox factors scaled") << true << 64 << 0.5f << true << 1.0f;
        QTest::newRow("longrope (neox, factors, attention factor)")
            << true << 64 << 1.0f << true << 1.19f;
    }

    void rope() {
        std::mt19937 rng(kSeed + 200);
        const int head_dim = 64, n_heads = 3;
        std::vector<float> ff;
        const RopeParams p = fetch_rope(rng, ff);
        const int n_rot = p.n_rot;
        for (int n_tokens : {1, 7, 130}) {
            std::vector<int32_t> pos(static_cast<std::size_t>(n_tokens));
            std::uniform_int_distribution<int32_t> pd(0, 8191);
            for (int32_t& v : pos) v = pd(rng);
            const std::vector<float> x =
                random_floats(rng, static_cast<std::size_t>(n_tokens * n_heads * head_dim));
            std::vector<float> want = x;
            ref::rope(want.data(), pos.data(), n_tokens, n_heads, head_dim, p);
            for (SimdLevel level : levels()) {
                for (int threads : {1, 2}) {
                    CpuBackend& b = backend(threads, level);
                    for (int round = 0; round < 3; ++round) {
                        // Round 1 hits the backend's cos/sin cache; round 2 changes one
                        // position and one factor, which must not reuse it.
                        if (round == 2) {
                            pos[0] += 17;
                            ff[0] *= 1.5f;
                            want = x;
                            ref::rope(want.data(), pos.data(), n_tokens, n_heads, head_dim, p);
                        }
                        std::vector<float> out = x;
                        b.rope(out.data(), pos.data(), n_tokens, n_heads, head_dim, p);
                        const double tol = 2e-5 + 4e-7 * *std::max_element(pos.begin(), pos.end());
                        HEARTH_CHECK(max_abs_diff(out.data(), want.data(), out.size()) <= tol,
                                     (QString("tokens %1 round %2: max error %3 (bound %4)")
                                          .arg(n_tokens)
                                          .arg(round)
                                          .arg(max_abs_diff(out.data(), want.data(), out.size()))
                                          .arg(tol)));
                        for (int t = 0; t < n_tokens * n_heads;
                             ++t)  // dims past n_rot are untouched
                            for (int d = n_rot; d < head_dim; ++d)
                                QCOMPARE(out[static_cast<std::size_t>(t * head_dim + d)],
                                         x[static_cast<std::size_t>(t * head_dim + d)]);
                    }
                    pos[0] -= 17;
                    ff[0] /= 1.5f;
                    want = x;
                    ref::rope(want.data(), pos.data(), n_tokens, n_heads, head_dim, p);
                }
            }
        }
    }

    // GeGLU as ggml's CPU path: gelu(fp16(g)) rounded to fp16 (its table), times up; 0 at
    // g ≤ −10, g · up at g ≥ 10. Against the double reference without the table: rounding
    // the result to fp16 costs 2^-11 relative, rounding g costs |g| · 2^-11 · gelu' ≤ 1.13
    // (5.6e-4 · |g|) absolute, and fp16's spacing near 0 (2^-24) 3e-8. Scale: one product
    // per element.
    void geglu_scale() {
        std::mt19937 rng(kSeed + 301);
        for (int64_t n : {int64_t{1}, int64_t{13}, int64_t{100003}}) {
            std::vector<float> g = random_floats(rng, static_cast<std::size_t>(n), -12.0f, 12.0f);
            if (n > 4) {
                g[0] = -10.0f;
                g[1] = 10.0f;
                g[2] = 0.0f;
                g[3] = 1e-30f;
            }
            const std::vector<float> u =
                random_floats(rng, static_cast<std::size_t>(n), -2.0f, 2.0f);
            std::vector<float> want(g.size()), first;
            ref::geglu(g.data(), u.data(), n, want.data());
            for (SimdLevel level : levels()) {
                for (int threads : {1, 3}) {
                    CpuBackend& b = backend(threads, level);
                    std::vector<float> out(g.size());
                    b.geglu(g.data(), u.data(), n, out.data());
                    for (std::size_t i = 0; i < out.size(); ++i) {
                        const float exact = g[i] <= -10.0f  ? 0.0f
                                            : g[i] >= 10.0f ? g[i] * u[i]
                                                            : std::nanf("");
                        HEARTH_CHECK(std::isnan(exact) ? std::fabs(out[i] - want[i]) <=
                                                             2e-3 * std::fabs(want[i]) +
                                                                 (5.6e-4 * std::fabs(g[i]) + 3e-8) *
                                                                     std::fabs(u[i])
                                                       : out[i] == exact,
                                     (QString("n %1 i %2: gelu(%3)·%4 = %5 vs %6")
                                          .arg(n)
                                          .arg(i)
                                          .arg(g[i])
                                          .arg(u[i])
                                          .arg(out[i])
                                          .arg(want[i])));
                    }
                    std::vector<float> inplace = g;
                    b.geglu(inplace.data(), u.data(), n, inplace.data());
                    QVERIFY(inplace == out);
                    if (first.empty()) first = out;
                    QVERIFY2(std::memcmp(first.data(), out.data(), out.size() * 4) == 0,
                             "GeGLU differs between SIMD levels or thread counts");
                    std::vector<float> x = g, scaled = g;
                    b.scale(x.data(), n, 0.37f);
                    ref::scale(scaled.data(), n, 0.37f);
                    QVERIFY(x == scaled);
                    // Soft-cap: tanh(x / cap) · cap, tanhf within a few ulps of double.
                    std::vector<float> capped = g, want_capped = g;
                    b.softcap(capped.data(), n, 3.0f);
                    ref::softcap(want_capped.data(), n, 3.0f);
                    for (std::size_t i = 0; i < capped.size(); ++i)
                        HEARTH_CHECK(std::fabs(capped[i] - want_capped[i]) <=
                                         1e-6 * std::fabs(want_capped[i]) + 1e-30,
                                     (QString("soft-cap of %1: %2 vs %3")
                                          .arg(g[i])
                                          .arg(capped[i])
                                          .arg(want_capped[i])));
                }
            }
        }
    }

    void swiglu_add_gather() {
        std::mt19937 rng(kSeed + 300);
        for (int64_t n : {int64_t{1}, int64_t{13}, int64_t{1536}, int64_t{100003}}) {
            std::vector<float> g = random_floats(rng, static_cast<std::size_t>(n), -12.0f, 12.0f);
            if (n > 4) {
                g[0] = -100.0f;  // e^100 overflows float: silu → −0
                g[1] = 90.0f;
                g[2] = 0.0f;
            }
            const std::vector<float> u =
                random_floats(rng, static_cast<std::size_t>(n), -2.0f, 2.0f);
            std::vector<float> want(g.size()), sum = g;
            ref::swiglu(g.data(), u.data(), n, want.data());
            ref::add(sum.data(), u.data(), n);
            for (SimdLevel level : levels()) {
                for (int threads : {1, 3}) {
                    CpuBackend& b = backend(threads, level);
                    std::vector<float> out(g.size());
                    b.swiglu(g.data(), u.data(), n, out.data());
                    for (std::size_t i = 0; i < out.size(); ++i)
                        HEARTH_CHECK(
                            std::fabs(out[i] - want[i]) <= 1e-5 * std::fabs(want[i]) + 1e-30,
                            (QString("n %1 i %2: silu(%3)·%4 = %5 vs %6")
                                 .arg(n)
                                 .arg(i)
                                 .arg(g[i])
                                 .arg(u[i])
                                 .arg(out[i])
                                 .arg(want[i])));
                    std::vector<float> inplace = g;
                    b.swiglu(inplace.data(), u.data(), n, inplace.data());
                    QVERIFY(inplace == out);
                    std::vector<float> x = g;
                    b.add(x.data(), u.data(), n);
                    QVERIFY(x == sum);
                }
            }
        }
        const int n = 37;
        const std::vector<float> x = random_floats(rng, 11 * n);
        const std::vector<int32_t> rows = {10, 0, 5, 5};
        std::vector<float> want(rows.size() * n), out(rows.size() * n);
        ref::gather_rows(x.data(), rows.data(), 4, n, want.data());
        backend(2, levels().back()).gather_rows(x.data(), rows.data(), 4, n, out.data());
        QVERIFY(out == want);
    }

    // The k best of each row against sorting the row: ties (many equal values, as in a
    // quantised model's logits), -inf masks, rows with fewer finite values than k, and the
    // first NaN or +inf reported.
    // kv_shift (a context shift): each moved K row equals the K that RoPE at the new
    // position gives (the reference's, rounded to fp16 as the cache stores it), within
    //   2^-10 · r + 4e-7 · |delta| · r   per element, r the norm of its rotated pair:
    // two fp16 roundings (the stored K, the moved one) and the backend's float angles for
    // the delta (as rope's bound). V and the dims past n_rot are copied bit for bit; the
    // attention factor the stored K carries is not applied again; every SIMD level and
    // thread count gives the same bits, and the reference's double angles agree within
    // the same bound. Rows of source blocks are not touched.
    void kvShift_data() { rope_data(); }
    void kvShift() {
        std::mt19937 rng(kSeed + 300);
        const int head_dim = 64, n_kv_heads = 3, block_size = 7, n_blocks = 40;
        const std::size_t row = static_cast<std::size_t>(n_kv_heads * head_dim);
        std::vector<float> ff;
        const RopeParams p = fetch_rope(rng, ff);
        const int n_rot = p.n_rot;
        const bool neox = p.neox;
        // Moves from source rows (blocks 0-19) to destination rows (blocks 20-39), with
        // positions as a chat's: a kept history thousands of tokens behind its old place.
        const int32_t n = 100;
        std::vector<int32_t> src(static_cast<std::size_t>(n)), dst(src.size()), delta(src.size()),
            pos(src.size()), moved(src.size());
        for (int32_t i = 0; i < n; ++i) {
            const auto k = static_cast<std::size_t>(i);
            src[k] = i * 7 % (20 * block_size);
            dst[k] = 20 * block_size + i;
            pos[k] = 3000 + 37 * i;
            delta[k] = i % 5 == 0 ? 0 : -static_cast<int32_t>(1 + rng() % 6000);
            moved[k] = pos[k] + delta[k];
        }
        std::sort(src.begin(), src.end());
        src.erase(std::unique(src.begin(), src.end()), src.end());
        const auto m = static_cast<int32_t>(src.size());
        // K as the model stores it (RoPE at pos, attention factor included, fp16), and
        // the K RoPE at the moved position would give.
        const std::vector<float> k_raw = random_floats(rng, static_cast<std::size_t>(m) * row);
        std::vector<float> k_at = k_raw, k_want = k_raw;
        ref::rope(k_at.data(), pos.data(), m, n_kv_heads, head_dim, p);
        ref::rope(k_want.data(), moved.data(), m, n_kv_heads, head_dim, p);
        const std::vector<float> v = random_floats(rng, static_cast<std::size_t>(m) * row);
        const std::size_t n_slots = static_cast<std::size_t>(n_blocks * block_size);
        std::vector<uint16_t> k0(n_slots * row, 0x7e00),
            v0(n_slots * row, 0x7e00);  // NaN: unwritten
        hearth::kernels::PagedKvLayer c0{k0.data(),  v0.data(),  n_blocks,
                                         block_size, n_kv_heads, head_dim};
        ref::kv_append(c0, k_at.data(), v.data(), src.data(), m);
        std::vector<uint16_t> want_k(static_cast<std::size_t>(m) * row);
        for (std::size_t i = 0; i < want_k.size(); ++i)
            want_k[i] = hearth::quant::f32_to_fp16(k_want[i]);

        const auto check = [&](const std::vector<uint16_t>& kc, const std::vector<uint16_t>& vc,
                               const QString& what) {
            using hearth::quant::fp16_to_f32;
            for (int32_t i = 0; i < m; ++i) {
                const auto mi = static_cast<std::size_t>(i);
                const uint16_t* got = kc.data() + static_cast<std::size_t>(dst[mi]) * row;
                const uint16_t* want = want_k.data() + mi * row;
                HEARTH_CHECK(
                    std::memcmp(vc.data() + static_cast<std::size_t>(dst[mi]) * row,
                                v0.data() + static_cast<std::size_t>(src[mi]) * row, row * 2) == 0,
                    what + ": V moved");
                for (int h = 0; h < n_kv_heads; ++h) {
                    for (int d = 0; d < head_dim; ++d) {
                        const std::size_t e = static_cast<std::size_t>(h * head_dim + d);
                        if (d >= n_rot) {  // copied
                            HEARTH_CHECK(got[e] == k0[static_cast<std::size_t>(src[mi]) * row + e],
                                         what + ": dims past n_rot");
                            continue;
                        }
                        const int half = n_rot / 2;
                        const int pair = neox ? (d < half ? d + half : d - half) : d ^ 1;
                        const double a = k_want[mi * row + e];
                        const double b =
                            k_want[mi * row + static_cast<std::size_t>(h * head_dim + pair)];
                        const double r = std::sqrt(a * a + b * b);
                        const double bound = (0x1p-10 + 4e-7 * std::abs(delta[mi])) * r + 1e-7;
                        const double err = std::abs(fp16_to_f32(got[e]) - fp16_to_f32(want[e]));
                        HEARTH_CHECK(err <= bound, (what + ": move %1 head %2 dim %3: %4 vs %5")
                                                       .arg(i)
                                                       .arg(h)
                                                       .arg(d)
                                                       .arg(fp16_to_f32(got[e]))
                                                       .arg(fp16_to_f32(want[e])));
                    }
                }
            }
            // Source rows are as they were.
            for (int32_t i = 0; i < m; ++i) {
                const std::size_t at =
                    static_cast<std::size_t>(src[static_cast<std::size_t>(i)]) * row;
                HEARTH_CHECK(std::memcmp(kc.data() + at, k0.data() + at, row * 2) == 0,
                             what + ": a source row changed");
            }
        };

        std::vector<uint16_t> rk = k0, rv = v0;
        ref::kv_shift({rk.data(), rv.data(), n_blocks, block_size, n_kv_heads, head_dim},
                      src.data(), dst.data(), delta.data(), m, p);
        check(rk, rv, "reference");
        std::vector<uint16_t> first;
        for (SimdLevel level : levels()) {
            for (int threads : {1, 3}) {
                std::vector<uint16_t> kc = k0, vc = v0;
                backend(threads, level)
                    .kv_shift({kc.data(), vc.data(), n_blocks, block_size, n_kv_heads, head_dim},
                              src.data(), dst.data(), delta.data(), m, p);
                const QString what = QString("%1 threads %2")
                                         .arg(QString::fromStdString(std::string(
                                             hearth::kernels::cpu::simd_level_name(level))))
                                         .arg(threads);
                check(kc, vc, what);
                if (first.empty()) first = kc;
                HEARTH_CHECK(kc == first, what + ": other bits than the first backend's");
            }
        }
    }

    void topK() {
        std::mt19937 rng(kSeed + 400);
        for (int32_t n : {1, 7, 64, 1000, 49152}) {
            for (int32_t k : {1, 5, 40, 64}) {
                if (k > n) continue;
                const int32_t rows = 3;
                std::vector<float> x = random_floats(rng, static_cast<std::size_t>(rows) * n);
                for (std::size_t i = 0; i < x.size(); ++i)
                    if (i % 3 == 0) x[i] = std::round(x[i] * 4.0f) / 4.0f;  // ties
                x[static_cast<std::size_t>(n) - 1] = -INFINITY;             // row 0: a mask
                for (int32_t i = 0; i < n; ++i)                             // row 1: few finite
                    if (i % 16 != 0) x[static_cast<std::size_t>(n + i)] = -INFINITY;
                if (n > 3) {
                    x[2 * static_cast<std::size_t>(n) + 3] = NAN;  // row 2: broken
                    x[2 * static_cast<std::size_t>(n) + 1] = INFINITY;
                }
                const auto count = static_cast<std::size_t>(rows * k);
                std::vector<int32_t> want_ids(count), ids(count), want_bad(rows), bad(rows);
                std::vector<float> want_values(count), values(count);
                ref::top_k(x.data(), rows, n, k, want_ids.data(), want_values.data(),
                           want_bad.data());
                backend(1, levels().back())
                    .top_k(x.data(), rows, n, k, ids.data(), values.data(), bad.data());
                const QString where = QString("n %1 k %2").arg(n).arg(k);
                QVERIFY2(ids == want_ids, qPrintable(where));
                QVERIFY2(values == want_values, qPrintable(where));
                QVERIFY2(bad == want_bad, qPrintable(where));
                if (n > 3) QCOMPARE(bad[2], 1);
                QCOMPARE(bad[0], -1);
            }
        }
    }

    void embed_data() {
        QTest::addColumn<int>("type_id");
        for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_1,
                             TensorType::Q5_0, TensorType::Q8_0, TensorType::Q6_K})
            QTest::newRow(qPrintable(type_name(t))) << static_cast<int>(t);
    }

    void embed() {
        QFETCH(int, type_id);
        const auto type = static_cast<TensorType>(type_id);
        std::mt19937 rng(kSeed + 400);
        const int64_t vocab = 300, cols = 2 * (is_float_type(type) ? 32 : block_of(type));
        const std::vector<uint8_t> table = random_weights(rng, type, vocab, cols);
        for (int n : {1, 5, 600}) {
            std::vector<int32_t> ids(static_cast<std::size_t>(n));
            std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(vocab - 1));
            for (int32_t& v : ids) v = id(rng);
            ids[0] = static_cast<int32_t>(vocab - 1);
            std::vector<float> want(static_cast<std::size_t>(n * cols));
            ref::embed(ref::WeightRef{type, vocab, cols, table.data()}, ids.data(), n, want.data());
            for (SimdLevel level : levels()) {
                CpuBackend& b = backend(2, level);
                auto w = b.load_weight(WeightSource{"emb", type, vocab, cols, table.data()});
                std::vector<float> out(want.size());
                b.embed(*w, ids.data(), n, out.data());
                QVERIFY(out == want);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestCpuElementwise)
#include "tst_cpu_elementwise.moc"
