// The CUDA top-k (kernels/cuda/top_k.h) against the reference (sorting each row): the
// kernel's own per-thread code run on the host as virtual threads (everywhere, CI
// included), and the kernel on a device (skipped without one). Rows with ties, -inf
// masks, fewer finite values than k, NaN and +inf; vocabularies from 1 to Llama 3's.
#include <QTest>

#include <cmath>
#include <random>
#include <vector>

#include "cuda/cuda_buffer.h"
#include "cuda/top_k.h"
#include "gpu/gpu_test.h"
#include "reference/reference_ops.h"

namespace g = hearth::gpu;
namespace ref = hearth::kernels::reference;

namespace {

struct Rows {
    int32_t rows = 0, n = 0;
    std::vector<float> x;
};

Rows make_rows(std::mt19937& rng, int32_t rows, int32_t n) {
    Rows r{rows, n, std::vector<float>(static_cast<size_t>(rows) * static_cast<size_t>(n))};
    std::uniform_real_distribution<float> d(-10.0f, 10.0f);
    for (size_t i = 0; i < r.x.size(); ++i) {
        r.x[i] = d(rng);
        if (i % 5 == 0) r.x[i] = std::round(r.x[i]);  // ties
    }
    const auto at = [&](int32_t row, int32_t i) -> float& {
        return r.x[static_cast<size_t>(row) * static_cast<size_t>(n) + static_cast<size_t>(i)];
    };
    if (rows > 1)
        for (int32_t i = 0; i < n; ++i)
            if (i % 32 != 5) at(1, i) = -INFINITY;  // few finite values
    if (rows > 2 && n > 9) {
        at(2, 9) = NAN;
        at(2, n - 1) = INFINITY;
    }
    if (rows > 3)
        for (int32_t i = 0; i < n; ++i) at(3, i) = 1.5f;  // all equal
    return r;
}

struct Result {
    std::vector<int32_t> ids, invalid;
    std::vector<float> values;
    bool operator==(const Result& o) const {
        return ids == o.ids && invalid == o.invalid && values == o.values;
    }
};

Result reference_top_k(const Rows& r, int32_t k) {
    Result out{std::vector<int32_t>(static_cast<size_t>(r.rows * k)),
               std::vector<int32_t>(static_cast<size_t>(r.rows)),
               std::vector<float>(static_cast<size_t>(r.rows * k))};
    ref::top_k(r.x.data(), r.rows, r.n, k, out.ids.data(), out.values.data(), out.invalid.data());
    return out;
}

}  // namespace

class TstCudaTopK : public QObject {
    Q_OBJECT

  private slots:
    void hostEmulationMatchesTheReference() {
        std::mt19937 rng(11);
        for (int32_t n : {1, 5, 64, 333, 49152, 262144}) {
            for (int32_t k : {1, 3, 33, 40, 64}) {
                if (k > n) continue;
                const Rows r = make_rows(rng, 5, n);
                const Result want = reference_top_k(r, k);
                for (int32_t warps : {1, 3, g::kTopKWarps}) {
                    Result got{std::vector<int32_t>(want.ids.size()),
                               std::vector<int32_t>(want.invalid.size()),
                               std::vector<float>(want.values.size())};
                    QVERIFY(g::top_k_on_host(r.x.data(), r.rows, n, k, got.ids.data(),
                                             got.values.data(), got.invalid.data(), warps));
                    QVERIFY2(got == want,
                             qPrintable(QString("n %1 k %2 warps %3").arg(n).arg(k).arg(warps)));
                }
            }
        }
    }

    void invalidCallsAreRefused() {
        float x = 0;
        int32_t id = 0, bad = 0;
        QCOMPARE(g::top_k_cuda(&x, 1, 1, 0, &id, &x, &bad, nullptr), cudaErrorInvalidValue);
        QCOMPARE(g::top_k_cuda(&x, 1, 1, 2, &id, &x, &bad, nullptr), cudaErrorInvalidValue);
        QCOMPARE(g::top_k_cuda(&x, 1, 100, 65, &id, &x, &bad, nullptr), cudaErrorInvalidValue);
        QCOMPARE(g::top_k_cuda(nullptr, 1, 100, 5, &id, &x, &bad, nullptr), cudaErrorInvalidValue);
        QCOMPARE(g::top_k_cuda(nullptr, 0, 100, 5, nullptr, nullptr, nullptr, nullptr),
                 cudaSuccess);
        QVERIFY(!g::top_k_on_host(&x, 1, 1, 1, &id, &x, &bad, 0));
    }

    void deviceMatchesTheReference() {
        HEARTH_REQUIRE_CUDA_DEVICE();
        std::mt19937 rng(12);
        for (int32_t n : {1, 64, 333, 49152, 128256, 262144}) {
            for (int32_t k : {1, 33, 40, 64}) {
                if (k > n) continue;
                const Rows r = make_rows(rng, 6, n);
                const Result want = reference_top_k(r, k);
                g::DeviceBuffer<float> d_x, d_values;
                g::DeviceBuffer<int32_t> d_ids, d_invalid;
                QCOMPARE(d_x.allocate(r.x.size()), cudaSuccess);
                QCOMPARE(d_values.allocate(want.values.size()), cudaSuccess);
                QCOMPARE(d_ids.allocate(want.ids.size()), cudaSuccess);
                QCOMPARE(d_invalid.allocate(want.invalid.size()), cudaSuccess);
                QCOMPARE(cudaMemcpy(d_x.data(), r.x.data(), r.x.size() * sizeof(float),
                                    cudaMemcpyHostToDevice),
                         cudaSuccess);
                QCOMPARE(g::top_k_cuda(d_x.data(), r.rows, n, k, d_ids.data(), d_values.data(),
                                       d_invalid.data(), nullptr),
                         cudaSuccess);
                Result got{std::vector<int32_t>(want.ids.size()),
                           std::vector<int32_t>(want.invalid.size()),
                           std::vector<float>(want.values.size())};
                QCOMPARE(cudaMemcpy(got.ids.data(), d_ids.data(), got.ids.size() * 4,
                                    cudaMemcpyDeviceToHost),
                         cudaSuccess);
                QCOMPARE(cudaMemcpy(got.values.data(), d_values.data(), got.values.size() * 4,
                                    cudaMemcpyDeviceToHost),
                         cudaSuccess);
                QCOMPARE(cudaMemcpy(got.invalid.data(), d_invalid.data(), got.invalid.size() * 4,
                                    cudaMemcpyDeviceToHost),
                         cudaSuccess);
                QVERIFY2(got == want, qPrintable(QString("n %1 k %2").arg(n).arg(k)));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TstCudaTopK)
#include "tst_cuda_top_k.moc"
