// CUDA dequantisation against the CPU library (itself checked against the independent
// reference by tst_dequant): identical bits for every element, NaN payloads included,
// since both evaluate the same exact formulas. Argument validation and the buffer
// wrappers' host-side checks run everywhere; the rest skips without a device (fails
// with HEARTH_REQUIRE_GPU=1, see tests/gpu/gpu_test.h).
#include <QtTest>

#include <bit>
#include <cstring>
#include <random>

#include "cuda/cuda_buffer.h"
#include "cuda/cuda_device.h"
#include "cuda/dequant.h"
#include "gpu/gpu_test.h"
#include "quant/dequant.h"
#include "quant_reference.h"

using hearth::quant::TensorType;
namespace g = hearth::gpu;
namespace q = hearth::quant;
namespace t = hearth::test;

#define CUDA_VERIFY(expr)                                                                    \
    do {                                                                                     \
        const cudaError_t err_ = (expr);                                                     \
        QVERIFY2(err_ == cudaSuccess,                                                        \
                 qPrintable(QString::fromStdString(#expr ": " + g::cuda_error_text(err_)))); \
    } while (false)

namespace {

// A fake device address: validation must reject it before anything dereferences it.
const void* fake_ptr(uintptr_t addr) {
    return reinterpret_cast<const void*>(addr);
}

}  // namespace

class TstCudaDequant : public QObject {
    Q_OBJECT

  private:
    uint64_t seed_ = 0;

  private slots:
    void initTestCase() {
        seed_ = t::test_seed(0xc0da'0001ull);
        qInfo("random seed: 0x%llx (set HEARTH_TEST_SEED to change)",
              static_cast<unsigned long long>(seed_));
        std::string why;
        const bool ok = g::cuda_device_available(&why);
        qInfo("CUDA device: %s%s", ok ? "" : "none: ", why.c_str());
    }

    // Must answer (not crash) with or without a driver, and say why when it says no.
    void deviceDetection() {
        std::string why1, why2;
        const bool a = g::cuda_device_available(&why1);
        const bool b = g::cuda_device_available(&why2);
        QCOMPARE(a, b);
        QCOMPARE(g::cuda_device_available(nullptr), a);
        QVERIFY(!why1.empty());
        if (a) QVERIFY2(why1.find("sm_") != std::string::npos, why1.c_str());
        if (!a && t::gpu_required())
            QFAIL(qPrintable(QString::fromStdString("HEARTH_REQUIRE_GPU set: " + why1)));
    }

    // Validation happens on the host, before any CUDA call: runs without a device.
    void rejectsBadArguments() {
        float* dst = reinterpret_cast<float*>(0x10000);
        for (TensorType type : t::all_types()) {
            const int64_t be = q::traits(type)->block_elems;
            const char* name = q::traits(type)->name.data();
            QVERIFY2(g::dequantize_cuda(type, fake_ptr(0x20000), dst, 0, nullptr) == cudaSuccess,
                     name);
            QVERIFY2(g::dequantize_cuda(type, fake_ptr(0x20000), dst, -be, nullptr) ==
                         cudaErrorInvalidValue,
                     name);
            QVERIFY2(g::dequantize_cuda(type, nullptr, dst, be, nullptr) == cudaErrorInvalidValue,
                     name);
            QVERIFY2(g::dequantize_cuda(type, fake_ptr(0x20000), nullptr, be, nullptr) ==
                         cudaErrorInvalidValue,
                     name);
            QVERIFY2(g::dequantize_cuda(type, fake_ptr(0x20001), dst, be, nullptr) ==
                         cudaErrorInvalidValue,
                     name);
            if (be > 1) {  // (for be == 1 the call would be valid and launch on fake pointers)
                QVERIFY2(g::dequantize_cuda(type, fake_ptr(0x20000), dst, be + 1, nullptr) ==
                             cudaErrorInvalidValue,
                         name);
            }
            QVERIFY2(g::dequantize_cuda(type, fake_ptr(0x20000), reinterpret_cast<float*>(0x10002),
                                        be, nullptr) == cudaErrorInvalidValue,
                     name);
        }
        QVERIFY(g::dequantize_cuda(TensorType::F32, fake_ptr(0x20002), dst, 4, nullptr) ==
                cudaErrorInvalidValue);
        for (uint32_t id : {16u, 34u, 1000u}) {  // IQ2_XXS, TQ1_0: not read; junk
            QVERIFY(g::dequantize_cuda(static_cast<TensorType>(id), fake_ptr(0x20000), dst, 256,
                                       nullptr) == cudaErrorInvalidValue);
            QVERIFY(g::dequantize_cuda(static_cast<TensorType>(id), fake_ptr(0x20000), dst, 0,
                                       nullptr) == cudaErrorInvalidValue);
        }
    }

    void bufferWrappers() {
        g::DeviceBuffer<float> empty;
        QVERIFY(empty.empty() && empty.data() == nullptr);
        QCOMPARE(empty.allocate(0), cudaSuccess);  // no device call for an empty buffer
        float host[4] = {1, 2, 3, 4};
        QCOMPARE(empty.upload(host, 1, nullptr), cudaErrorInvalidValue);  // count > size
        QCOMPARE(empty.download(host, 1, nullptr), cudaErrorInvalidValue);

        HEARTH_REQUIRE_CUDA_DEVICE();
        g::CudaStream stream;
        CUDA_VERIFY(stream.create());
        g::DeviceBuffer<float> a;
        CUDA_VERIFY(a.allocate(4));
        QCOMPARE(a.size(), size_t{4});
        QCOMPARE(a.bytes(), 4 * sizeof(float));
        CUDA_VERIFY(a.upload(host, 4, stream.get()));
        g::DeviceBuffer<float> b = std::move(a);  // ownership moves, the allocation stays
        QVERIFY(a.empty() && a.data() == nullptr);
        float back[4] = {};
        CUDA_VERIFY(b.download(back, 4, stream.get()));
        CUDA_VERIFY(stream.synchronize());
        QVERIFY(std::memcmp(back, host, sizeof host) == 0);
        QCOMPARE(b.upload(host, 5, stream.get()), cudaErrorInvalidValue);
    }

    void hostEmulationMatchesCpu_data() {
        QTest::addColumn<uint32_t>("type_id");
        for (TensorType type : t::all_types())
            QTest::newRow(q::traits(type)->name.data()) << static_cast<uint32_t>(type);
    }

    // The kernels' own per-thread code (work-item split, indexing, grid-stride loop) run
    // on the host with several virtual grid sizes: checks them on machines without a GPU.
    void hostEmulationMatchesCpu() {
        QFETCH(uint32_t, type_id);
        const auto type = static_cast<TensorType>(type_id);
        const t::RefLayout lay = t::ref_layout(type);
        std::mt19937_64 rng(seed_ ^ (type_id << 8));
        const int64_t n_blocks = lay.elems == 1 ? 20000 : lay.elems == 32 ? 2000 : 300;
        const int64_t n = n_blocks * lay.elems;
        const std::vector<uint8_t> data = t::random_blocks(type, n_blocks, rng);
        std::vector<float> cpu(static_cast<size_t>(n));
        QVERIFY(q::dequantize(type, data.data(), cpu.data(), n));
        // One thread does everything; a grid that does not divide the items; exactly one
        // item per thread and more threads than items (some idle).
        for (const int64_t threads : {int64_t{1}, int64_t{773}, int64_t{256 * 3}, n * 4 + 5}) {
            std::vector<float> emu(static_cast<size_t>(n) + 16, std::bit_cast<float>(0xffffffffu));
            QVERIFY(g::dequantize_on_host(type, data.data(), emu.data(), n, threads));
            QVERIFY2(std::memcmp(emu.data(), cpu.data(), cpu.size() * sizeof(float)) == 0,
                     qPrintable(QStringLiteral("virtual threads %1").arg(threads)));
            for (size_t i = cpu.size(); i < emu.size(); ++i)
                QCOMPARE(std::bit_cast<uint32_t>(emu[i]), 0xffffffffu);
        }
        QVERIFY(!g::dequantize_on_host(type, data.data(), cpu.data(), n, 0));
    }

    void matchesCpu_data() {
        QTest::addColumn<uint32_t>("type_id");
        for (TensorType type : t::all_types())
            QTest::newRow(q::traits(type)->name.data()) << static_cast<uint32_t>(type);
    }

    // Random blocks: a whole tensor, sub-ranges at odd block offsets (2-byte aligned
    // sources), and one tensor big enough (2^26 + 2^16 elements) that every type needs
    // more work items than the grid has threads, so the grid-stride loop runs.
    void matchesCpu() {
        QFETCH(uint32_t, type_id);
        HEARTH_REQUIRE_CUDA_DEVICE();
        const auto type = static_cast<TensorType>(type_id);
        const t::RefLayout lay = t::ref_layout(type);
        std::mt19937_64 rng(seed_ ^ type_id);
        g::CudaStream stream;
        CUDA_VERIFY(stream.create());

        for (const int64_t elems : {int64_t{1} << 20, (int64_t{1} << 26) + (int64_t{1} << 16)}) {
            const int64_t n_blocks = elems / lay.elems;
            const std::vector<uint8_t> data = t::random_blocks(type, n_blocks, rng);
            g::DeviceBuffer<uint8_t> d_src;
            g::DeviceBuffer<float> d_dst;
            CUDA_VERIFY(d_src.allocate(data.size()));
            CUDA_VERIFY(d_dst.allocate(static_cast<size_t>(elems) + 64));
            CUDA_VERIFY(d_src.upload(data.data(), data.size(), stream.get()));

            // Sub-ranges start at a block offset ≥ 1 and end inside the tensor.
            const std::vector<int64_t> lengths =
                elems > (1 << 20) ? std::vector<int64_t>{n_blocks}
                                  : std::vector<int64_t>{n_blocks, 1, 3, 333, n_blocks / 2 + 1};
            for (const int64_t blocks : lengths) {
                const int64_t first =
                    blocks == n_blocks ? 0
                                       : 1 + static_cast<int64_t>(
                                                 rng() % static_cast<uint64_t>(n_blocks - blocks));
                QVERIFY(first + blocks <= n_blocks);
                const int64_t n = blocks * lay.elems;
                const uint8_t* h_src = data.data() + first * lay.bytes;
                CUDA_VERIFY(cudaMemsetAsync(d_dst.data(), 0xff, d_dst.bytes(), stream.get()));
                CUDA_VERIFY(g::dequantize_cuda(type, d_src.data() + first * lay.bytes, d_dst.data(),
                                               n, stream.get()));
                std::vector<float> gpu(static_cast<size_t>(n) + 64), cpu(static_cast<size_t>(n));
                CUDA_VERIFY(d_dst.download(gpu.data(), gpu.size(), stream.get()));
                CUDA_VERIFY(stream.synchronize());
                QVERIFY(q::dequantize(type, h_src, cpu.data(), n));

                for (size_t i = static_cast<size_t>(n); i < gpu.size(); ++i) {
                    QVERIFY2(std::bit_cast<uint32_t>(gpu[i]) == 0xffffffffu, "wrote past n");
                }
                if (std::memcmp(gpu.data(), cpu.data(), cpu.size() * sizeof(float)) != 0) {
                    int64_t bad = 0, first_bad = -1;
                    for (int64_t i = 0; i < n; ++i) {
                        const auto k = static_cast<size_t>(i);
                        if (std::bit_cast<uint32_t>(gpu[k]) != std::bit_cast<uint32_t>(cpu[k]) &&
                            bad++ == 0)
                            first_bad = i;
                    }
                    const auto k = static_cast<size_t>(first_bad);
                    QFAIL(qPrintable(
                        QStringLiteral(
                            "%1 of %2 elements differ; first: element %3: gpu %4, cpu %5")
                            .arg(bad)
                            .arg(n)
                            .arg(first_bad)
                            .arg(QString::fromStdString(t::describe_float(gpu[k])))
                            .arg(QString::fromStdString(t::describe_float(cpu[k])))));
                }
            }
        }
    }

    void embedding_data() {
        QTest::addColumn<uint32_t>("type_id");
        for (TensorType type : t::all_types())
            QTest::newRow(q::traits(type)->name.data()) << static_cast<uint32_t>(type);
    }

    // The embedding lookup: each output row is its table row dequantised (the CPU's
    // decoder), bit for bit; ids repeat and come in any order. On the host with several
    // virtual grids, then on a device.
    void embedding() {
        QFETCH(uint32_t, type_id);
        const auto type = static_cast<TensorType>(type_id);
        std::mt19937_64 rng(seed_ ^ (type_id << 16));
        const int64_t block = q::traits(type)->block_elems, bytes = q::traits(type)->block_bytes;
        const int64_t cols = 2 * std::max<int64_t>(block, 256), rows = 11;
        const int64_t row_bytes = cols / block * bytes;
        std::vector<uint8_t> table;
        if (type == TensorType::F32) {
            std::uniform_real_distribution<float> d(-4.0f, 4.0f);
            std::vector<float> f(static_cast<size_t>(rows * cols));
            for (float& x : f) x = d(rng);
            table.resize(f.size() * sizeof(float));
            std::memcpy(table.data(), f.data(), table.size());
        } else {
            table = t::random_blocks(type, rows * (cols / block), rng);
        }
        const std::vector<int32_t> ids = {3, 0, 10, 3, 7, 7, 1};
        const auto n_tokens = static_cast<int32_t>(ids.size());
        std::vector<float> want(static_cast<size_t>(n_tokens * cols));
        for (int32_t i = 0; i < n_tokens; ++i)
            QVERIFY(q::dequantize(type, table.data() + ids[static_cast<size_t>(i)] * row_bytes,
                                  want.data() + i * cols, cols));
        for (const int64_t threads : {int64_t{1}, int64_t{97}, int64_t{256 * 2}}) {
            std::vector<float> got(want.size());
            QVERIFY(g::embed_on_host(type, table.data(), cols, ids.data(), n_tokens, got.data(),
                                     threads));
            QVERIFY2(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0,
                     qPrintable(QStringLiteral("virtual threads %1").arg(threads)));
        }
        // A row length that is not whole blocks is refused before the device is touched.
        float dummy = 0;
        if (block > 1)
            QCOMPARE(
                g::embed_cuda(type, table.data(), cols + block / 2, ids.data(), 1, &dummy, nullptr),
                cudaErrorInvalidValue);
        QVERIFY(!g::embed_on_host(type, table.data(), cols, ids.data(), n_tokens, &dummy, 0));

        HEARTH_REQUIRE_CUDA_DEVICE();
        g::CudaStream stream;
        CUDA_VERIFY(stream.create());
        g::DeviceBuffer<uint8_t> d_table;
        g::DeviceBuffer<int32_t> d_ids;
        g::DeviceBuffer<float> d_out;
        CUDA_VERIFY(d_table.allocate(table.size()));
        CUDA_VERIFY(d_ids.allocate(ids.size()));
        CUDA_VERIFY(d_out.allocate(want.size()));
        CUDA_VERIFY(d_table.upload(table.data(), table.size(), stream.get()));
        CUDA_VERIFY(d_ids.upload(ids.data(), ids.size(), stream.get()));
        CUDA_VERIFY(g::embed_cuda(type, d_table.data(), cols, d_ids.data(), n_tokens, d_out.data(),
                                  stream.get()));
        std::vector<float> gpu(want.size());
        CUDA_VERIFY(d_out.download(gpu.data(), gpu.size(), stream.get()));
        CUDA_VERIFY(stream.synchronize());
        QVERIFY(std::memcmp(gpu.data(), want.data(), want.size() * sizeof(float)) == 0);
    }
};

QTEST_APPLESS_MAIN(TstCudaDequant)
#include "tst_cuda_dequant.moc"
