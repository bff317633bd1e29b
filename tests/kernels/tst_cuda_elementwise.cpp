// The element-wise CUDA kernels (kernels/cuda/elementwise.h): their code run on the host
// against the reference ops (everywhere, CI included), and on a device against that host
// run (skipped without one): bit for bit where the kernel has only IEEE operations in a
// fixed order (RMSNorm, add, gather, the fp16 KV append), within float rounding for
// SwiGLU (the device's expf is not the host's).
#include <QTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "cpu/cpu_backend.h"
#include "cuda/cuda_buffer.h"
#include "cuda/elementwise.h"
#include "gpu/gpu_test.h"
#include "quant/fp16.h"
#include "reference/reference_ops.h"

namespace g = hearth::gpu;
namespace ref = hearth::kernels::reference;
using hearth::kernels::PagedKvLayer;

namespace {

std::vector<float> random_floats(std::mt19937& rng, size_t n, float lo = -3.0f, float hi = 3.0f) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (float& f : v) f = d(rng);
    return v;
}

using hearth::test::on_device;
using hearth::test::to_host;

// RoPE's parameter sets the host twins are checked on: normal and neox, whole and partial
// rotation, with and without frequency factors (filled into `factors`) and linear scaling,
// and LongRoPE's attention factor.
std::vector<std::pair<hearth::kernels::RopeParams, QString>> rope_variants(
    std::vector<float>& factors) {
    factors.resize(32);
    for (size_t i = 0; i < factors.size(); ++i)
        factors[i] = 1.0f + 0.25f * static_cast<float>(i % 5);
    std::vector<std::pair<hearth::kernels::RopeParams, QString>> out;
    for (bool neox : {false, true}) {
        for (int n_rot : {64, 32}) {
            for (bool with_factors : {false, true}) {
                hearth::kernels::RopeParams p;
                p.n_rot = n_rot;
                p.neox = neox;
                p.freq_base = 500000.0f;
                p.freq_scale = with_factors ? 0.25f : 1.0f;
                p.freq_factors = with_factors ? factors.data() : nullptr;
                p.attn_factor = with_factors && neox ? 1.19f : 1.0f;  // LongRoPE
                out.emplace_back(
                    p,
                    QString("neox %1 n_rot %2 factors %3").arg(neox).arg(n_rot).arg(with_factors));
            }
        }
    }
    return out;
}

}  // namespace

class TstCudaElementwise : public QObject {
    Q_OBJECT

  private slots:
    void hostRunsMatchTheReference() {
        std::mt19937 rng(21);
        for (int32_t n : {1, 31, 576, 2048, 5000}) {
            const int32_t rows = 3;
            const auto x = random_floats(rng, static_cast<size_t>(rows) * n);
            const auto w = random_floats(rng, static_cast<size_t>(n), 0.5f, 1.5f);
            std::vector<float> want(x.size()), got(x.size());
            ref::rms_norm(x.data(), w.data(), rows, n, 1e-5f, want.data());
            QVERIFY(g::rms_norm_on_host(x.data(), w.data(), rows, n, 1e-5f, got.data()));
            for (size_t i = 0; i < got.size(); ++i)
                QVERIFY2(
                    std::fabs(got[i] - want[i]) <= 2e-6f * (1.0f + std::fabs(want[i])),
                    qPrintable(
                        QString("n %1 i %2: %3 vs %4").arg(n).arg(i).arg(got[i]).arg(want[i])));
            // A row's result does not depend on the rows beside it.
            std::vector<float> alone(static_cast<size_t>(n));
            QVERIFY(g::rms_norm_on_host(x.data() + n, w.data(), 1, n, 1e-5f, alone.data()));
            QVERIFY(std::memcmp(alone.data(), got.data() + n, alone.size() * 4) == 0);
        }
        const auto gate = random_floats(rng, 1000, -20.0f, 20.0f), up = random_floats(rng, 1000);
        std::vector<float> want(1000), got(1000);
        ref::swiglu(gate.data(), up.data(), 1000, want.data());
        QVERIFY(g::swiglu_on_host(gate.data(), up.data(), 1000, got.data()));
        for (size_t i = 0; i < got.size(); ++i)
            QVERIFY(std::fabs(got[i] - want[i]) <= 1e-5f * (1.0f + std::fabs(want[i])));
        // GeGLU computed (the device has no table) equals the CPU backend's table bit for
        // bit on the host; scale is one product.
        std::vector<float> gel(1000), cpu_gel(1000);
        QVERIFY(g::geglu_on_host(gate.data(), up.data(), 1000, gel.data()));
        hearth::kernels::CpuBackend(1).geglu(gate.data(), up.data(), 1000, cpu_gel.data());
        QVERIFY(std::memcmp(gel.data(), cpu_gel.data(), gel.size() * 4) == 0);
        std::vector<float> scaled = gate, want_scaled = gate;
        ref::scale(want_scaled.data(), 1000, -1.5f);
        QVERIFY(g::scale_on_host(scaled.data(), 1000, -1.5f));
        QVERIFY(scaled == want_scaled);
        std::vector<float> capped = gate, cpu_capped = gate;
        QVERIFY(g::softcap_on_host(capped.data(), 1000, 5.0f));
        hearth::kernels::CpuBackend(1).softcap(cpu_capped.data(), 1000, 5.0f);
        QVERIFY(capped == cpu_capped);
        QVERIFY(!g::softcap_on_host(capped.data(), 1000, 0.0f));
        std::vector<float> sum = gate, want_sum = gate;
        ref::add(want_sum.data(), up.data(), 1000);
        QVERIFY(g::add_on_host(sum.data(), up.data(), 1000));
        QVERIFY(sum == want_sum);
        const std::vector<int32_t> rows = {3, 0, 3, 7};
        std::vector<float> gathered(4 * 100), want_gathered(4 * 100);
        ref::gather_rows(gate.data(), rows.data(), 4, 100, want_gathered.data());
        QVERIFY(g::gather_rows_on_host(gate.data(), rows.data(), 4, 100, gathered.data()));
        QVERIFY(gathered == want_gathered);
    }

    // The KV append's fp16 rounding is quant::f32_to_fp16 bit for bit, specials included.
    void kvAppendRoundsAsTheCpu() {
        std::mt19937 rng(22);
        const int32_t heads = 2, dim = 64, n_tokens = 5, blocks = 4, bs = 4;
        auto k =
            random_floats(rng, static_cast<size_t>(n_tokens) * heads * dim, -70000.0f, 70000.0f);
        auto v = random_floats(rng, k.size(), -1e-6f, 1e-6f);  // subnormal halves
        const float specials[] = {0.0f,          -0.0f,         INFINITY,      -INFINITY,
                                  NAN,           65504.0f,      65520.0f,      5.9604645e-8f,
                                  2.9802322e-8f, 1.0009765625f, 1.00048828125f};
        for (size_t i = 0; i < std::size(specials); ++i) k[i] = v[i] = specials[i];
        const std::vector<int32_t> slot_ids = {13, 0, 7, 8, 2};
        const size_t cache_elems = static_cast<size_t>(blocks) * bs * heads * dim;
        std::vector<uint16_t> kc(cache_elems), vc(cache_elems), want_k(cache_elems),
            want_v(cache_elems);
        PagedKvLayer got{kc.data(), vc.data(), blocks, bs, heads, dim};
        PagedKvLayer want{want_k.data(), want_v.data(), blocks, bs, heads, dim};
        ref::kv_append(want, k.data(), v.data(), slot_ids.data(), n_tokens);
        QVERIFY(g::kv_append_on_host(got, k.data(), v.data(), slot_ids.data(), n_tokens));
        QVERIFY(kc == want_k);
        QVERIFY(vc == want_v);
    }

    // RoPE's host run equals the CPU backend bit for bit (normal and neox, partial
    // rotation, frequency factors, linear scaling, long positions).
    void ropeHostEqualsTheCpuBackend() {
        std::mt19937 rng(24);
        hearth::kernels::CpuBackend cpu(1);
        std::vector<float> factors;
        for (const auto& [p, name] : rope_variants(factors)) {
            const int32_t tokens = 6, heads = 3, dim = 64;
            const std::vector<int32_t> pos = {0, 1, 17, 4095, 70000, 131071};
            auto x = random_floats(rng, static_cast<size_t>(tokens) * heads * dim);
            std::vector<float> want = x, got = x;
            cpu.rope(want.data(), pos.data(), tokens, heads, dim, p);
            QVERIFY(g::rope_on_host(got.data(), pos.data(), tokens, heads, dim, p));
            QVERIFY2(got == want, qPrintable(name));
        }
        float x = 0;
        int32_t pos = 0;
        hearth::kernels::RopeParams odd;
        odd.n_rot = 3;
        QVERIFY(!g::rope_on_host(&x, &pos, 1, 1, 4, odd));
        QCOMPARE(g::rope_cuda(&x, &pos, 1, 1, 4, odd, nullptr), cudaErrorInvalidValue);
    }

    // The context shift's move (Backend::kv_shift): the host run equals the CPU backend bit
    // for bit (normal and neox, partial rotation, factors and scaling, an attention factor
    // that must not be applied again); bad arguments are refused.
    void kvShiftHostEqualsTheCpuBackend() {
        std::mt19937 rng(25);
        hearth::kernels::CpuBackend cpu(1);
        std::vector<float> factors;
        const int32_t heads = 3, dim = 64, bs = 5, blocks = 12;
        const size_t elems = static_cast<size_t>(blocks) * bs * heads * dim;
        std::vector<uint16_t> k0(elems), v0(elems);
        for (size_t i = 0; i < elems; ++i) {
            k0[i] = hearth::quant::f32_to_fp16(std::uniform_real_distribution<float>(-4, 4)(rng));
            v0[i] = static_cast<uint16_t>(rng());
        }
        const std::vector<int32_t> src = {0, 1, 2, 3, 7, 11, 29},
                                   dst = {30, 31, 32, 33, 34, 59, 40},
                                   delta = {0, -1, -17, -4095, -70000, 131, -3};
        for (const auto& [p, name] : rope_variants(factors)) {
            std::vector<uint16_t> wk = k0, wv = v0, gk = k0, gv = v0;
            cpu.kv_shift({wk.data(), wv.data(), blocks, bs, heads, dim}, src.data(), dst.data(),
                         delta.data(), static_cast<int32_t>(src.size()), p);
            QVERIFY(g::kv_shift_on_host({gk.data(), gv.data(), blocks, bs, heads, dim}, src.data(),
                                        dst.data(), delta.data(), static_cast<int32_t>(src.size()),
                                        p));
            QVERIFY2(gk == wk && gv == wv, qPrintable(name));
        }
        hearth::kernels::RopeParams odd;
        odd.n_rot = 3;
        std::vector<uint16_t> k = k0, v = v0;
        QVERIFY(!g::kv_shift_on_host({k.data(), v.data(), blocks, bs, heads, dim}, src.data(),
                                     dst.data(), delta.data(), 1, odd));
        QCOMPARE(g::kv_shift_cuda({k.data(), v.data(), blocks, bs, heads, dim}, src.data(),
                                  dst.data(), delta.data(), -1, {}, nullptr),
                 cudaErrorInvalidValue);
        QCOMPARE(g::kv_shift_cuda(PagedKvLayer{}, nullptr, nullptr, nullptr, 1, {}, nullptr),
                 cudaErrorInvalidValue);
    }

    void invalidCallsAreRefused() {
        float x = 0;
        QCOMPARE(g::rms_norm_cuda(&x, &x, 1, 0, 1e-5f, &x, nullptr), cudaErrorInvalidValue);
        QCOMPARE(g::rms_norm_cuda(nullptr, &x, 1, 4, 1e-5f, &x, nullptr), cudaErrorInvalidValue);
        QCOMPARE(g::rms_norm_cuda(nullptr, nullptr, 0, 4, 1e-5f, nullptr, nullptr), cudaSuccess);
        QCOMPARE(g::swiglu_cuda(&x, &x, -1, &x, nullptr), cudaErrorInvalidValue);
        QCOMPARE(g::add_cuda(nullptr, &x, 3, nullptr), cudaErrorInvalidValue);
        QCOMPARE(g::gather_rows_cuda(&x, nullptr, 2, 4, &x, nullptr), cudaErrorInvalidValue);
        QCOMPARE(g::kv_append_cuda(PagedKvLayer{}, &x, &x, nullptr, 1, nullptr),
                 cudaErrorInvalidValue);
    }

    void deviceMatchesTheHostRuns() {
        HEARTH_REQUIRE_CUDA_DEVICE();
        std::mt19937 rng(23);
        for (int32_t n : {1, 576, 2048, 8192}) {
            const int32_t rows = 5;
            const auto x = random_floats(rng, static_cast<size_t>(rows) * n);
            const auto w = random_floats(rng, static_cast<size_t>(n), 0.5f, 1.5f);
            std::vector<float> want(x.size());
            QVERIFY(g::rms_norm_on_host(x.data(), w.data(), rows, n, 1e-6f, want.data()));
            auto dx = on_device(x), dw = on_device(w), dout = on_device(want);
            QCOMPARE(g::rms_norm_cuda(dx.data(), dw.data(), rows, n, 1e-6f, dout.data(), nullptr),
                     cudaSuccess);
            QVERIFY2(to_host(dout, want.size()) == want,
                     qPrintable(QString("rms_norm n %1").arg(n)));
        }
        const int64_t n = 300001;
        const auto gate = random_floats(rng, static_cast<size_t>(n), -20.0f, 20.0f);
        const auto up = random_floats(rng, static_cast<size_t>(n));
        std::vector<float> want(static_cast<size_t>(n)), sum = gate;
        QVERIFY(g::swiglu_on_host(gate.data(), up.data(), n, want.data()));
        QVERIFY(g::add_on_host(sum.data(), up.data(), n));
        auto dg = on_device(gate), du = on_device(up), dout = on_device(want);
        QCOMPARE(g::swiglu_cuda(dg.data(), du.data(), n, dout.data(), nullptr), cudaSuccess);
        const auto got = to_host(dout, want.size());
        for (size_t i = 0; i < got.size(); ++i)
            QVERIFY(std::fabs(got[i] - want[i]) <= 1e-5f * (1.0f + std::fabs(want[i])));
        QCOMPARE(g::add_cuda(dg.data(), du.data(), n, nullptr), cudaSuccess);
        QVERIFY(to_host(dg, sum.size()) == sum);

        {  // RoPE: the device's cosf / sinf against the host's
            hearth::kernels::RopeParams p;
            p.n_rot = 128;
            p.neox = true;
            p.freq_base = 500000.0f;
            const int32_t tokens = 40, heads = 4, dim = 128;
            std::vector<int32_t> pos(static_cast<size_t>(tokens));
            for (int32_t t = 0; t < tokens; ++t) pos[static_cast<size_t>(t)] = t * 997;
            const auto x = random_floats(rng, static_cast<size_t>(tokens) * heads * dim);
            std::vector<float> rope_want = x;
            QVERIFY(g::rope_on_host(rope_want.data(), pos.data(), tokens, heads, dim, p));
            auto dx = on_device(x);
            auto dpos = on_device(pos);
            QCOMPARE(g::rope_cuda(dx.data(), dpos.data(), tokens, heads, dim, p, nullptr),
                     cudaSuccess);
            const auto rope_got = to_host(dx, x.size());
            for (size_t i = 0; i < rope_got.size(); ++i)
                QVERIFY2(
                    std::fabs(rope_got[i] - rope_want[i]) <=
                        1e-5f * (1.0f + std::fabs(rope_want[i])),
                    qPrintable(
                        QString("rope %1: %2 vs %3").arg(i).arg(rope_got[i]).arg(rope_want[i])));
        }
        const int32_t heads = 8, dim = 128, tokens = 33, blocks = 16, bs = 16;
        const auto k = random_floats(rng, static_cast<size_t>(tokens) * heads * dim, -9e4f, 9e4f);
        const auto v = random_floats(rng, k.size(), -1e-5f, 1e-5f);
        std::vector<int32_t> slot_ids(static_cast<size_t>(tokens));
        for (int32_t t = 0; t < tokens; ++t)
            slot_ids[static_cast<size_t>(t)] = (t * 37) % (blocks * bs);
        const size_t elems = static_cast<size_t>(blocks) * bs * heads * dim;
        std::vector<uint16_t> want_k(elems), want_v(elems);
        QVERIFY(g::kv_append_on_host({want_k.data(), want_v.data(), blocks, bs, heads, dim},
                                     k.data(), v.data(), slot_ids.data(), tokens));
        auto dk = on_device(k), dv = on_device(v);
        auto dslot_ids = on_device(slot_ids);
        auto dkc = on_device(std::vector<uint16_t>(elems)),
             dvc = on_device(std::vector<uint16_t>(elems));
        QCOMPARE(g::kv_append_cuda({dkc.data(), dvc.data(), blocks, bs, heads, dim}, dk.data(),
                                   dv.data(), dslot_ids.data(), tokens, nullptr),
                 cudaSuccess);
        QVERIFY(to_host(dkc, elems) == want_k);
        QVERIFY(to_host(dvc, elems) == want_v);

        {  // The context shift's move: V bit for bit, K within the device's cosf / sinf
            hearth::kernels::RopeParams p;
            p.n_rot = 128;
            p.neox = true;
            p.freq_base = 1000000.0f;
            const std::vector<int32_t> src = {0, 5, 17, 18, 19, 100},
                                       dst = {200, 201, 202, 203, 204, 255},
                                       delta = {-3000, -3000, -1, 0, -12345, -7};
            const auto moves = static_cast<int32_t>(src.size());
            std::vector<uint16_t> hk(elems), hv = want_v;
            for (uint16_t& h : hk)
                h = hearth::quant::f32_to_fp16(std::uniform_real_distribution<float>(-4, 4)(rng));
            auto sk = on_device(hk), sv = on_device(hv);
            QVERIFY(g::kv_shift_on_host({hk.data(), hv.data(), blocks, bs, heads, dim}, src.data(),
                                        dst.data(), delta.data(), moves, p));
            auto ds = on_device(src), dd = on_device(dst), dl = on_device(delta);
            QCOMPARE(g::kv_shift_cuda({sk.data(), sv.data(), blocks, bs, heads, dim}, ds.data(),
                                      dd.data(), dl.data(), moves, p, nullptr),
                     cudaSuccess);
            const auto gk = to_host(sk, elems);
            QVERIFY(to_host(sv, elems) == hv);
            for (size_t i = 0; i < elems; ++i) {
                const float a = hearth::quant::fp16_to_f32(gk[i]);
                const float b = hearth::quant::fp16_to_f32(hk[i]);
                QVERIFY2(std::fabs(a - b) <= 2e-3f * (1.0f + std::fabs(b)),
                         qPrintable(QString("kv_shift %1: %2 vs %3").arg(i).arg(a).arg(b)));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TstCudaElementwise)
#include "tst_cuda_elementwise.moc"
