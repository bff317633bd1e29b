// The CUDA device as the backend meets it, everywhere (no device needed): creating the
// backend without a device says why, an old driver is named in plain words, the disk
// tier's key carries what decides the bits (never the index), and binding asks the runtime.
#include <QtTest>

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "cuda/cuda_backend.h"
#include "cuda/cuda_device.h"

using namespace hearth;

class TstCudaDevice : public QObject {
    Q_OBJECT

  private slots:
    // Runs everywhere: no device means a reason, never a crash.
    void createWithoutDeviceSaysWhy() {
        std::string why;
        if (gpu::cuda_device_available(&why)) QSKIP("a CUDA device is present");
        std::string error;
        auto b = kernels::CudaBackend::create(0, &error);
        QVERIFY(!b);
        QVERIFY(!error.empty());
        qInfo("CudaBackend::create without a device: %s", error.c_str());
        // No driver, or one too old for this build's runtime, is said in plain words.
        if (why.find("cudaErrorInsufficientDriver") != std::string::npos)
            QVERIFY2(error.find("no NVIDIA driver is installed") != std::string::npos ||
                         error.find("is older than this build needs") != std::string::npos,
                     error.c_str());
    }

    // The disk tier's key for CUDA KV: what decides the bits (device model, SMs, runtime,
    // SASS or PTX-JIT and then the driver), never the device's index.
    void numericsKeyForTheDiskTier() {
        QCOMPARE(gpu::cuda_code_path("90-real;75-virtual", 9, 0, false), std::string("SASS sm_90"));
        QCOMPARE(gpu::cuda_code_path("90-real;75-virtual", 8, 6, false),
                 std::string("PTX-JIT compute_75"));
        QCOMPARE(gpu::cuda_code_path("90-real;75-virtual", 9, 0, true),
                 std::string("PTX-JIT compute_75"));
        QCOMPARE(gpu::cuda_code_path("75-real;80-real;86-real;89-real;90-real;120-real;120-virtual",
                                     8, 9, false),
                 std::string("SASS sm_89"));
        QCOMPARE(gpu::cuda_code_path("75-real;80-real;86-real;120-virtual", 8, 7, false),
                 std::string("SASS sm_86"));  // same major, lower minor
        // A B200 (sm_100): the packages' old list had nothing it could run (120's PTX does not
        // JIT for an older architecture); the list now has its machine code.
        QCOMPARE(gpu::cuda_code_path("75-real;80-real;86-real;89-real;90-real;120-real;120-virtual",
                                     10, 0, false),
                 std::string());
        QCOMPARE(gpu::cuda_code_path(
                     "75-real;80-real;86-real;89-real;90-real;100-real;120-real;120-virtual", 10, 0,
                     false),
                 std::string("SASS sm_100"));
        QCOMPARE(gpu::cuda_code_path("90-real", 8, 6, false), std::string());
        QCOMPARE(gpu::cuda_code_path("86", 8, 9, true), std::string("PTX-JIT compute_86"));
        const std::string sass =
            gpu::cuda_numerics("NVIDIA RTX 4090", 8, 9, 128, 13000, "SASS sm_89", "580.65.06");
        QCOMPARE(sass, std::string("cuda NVIDIA RTX 4090 sm_89 128 SMs, runtime 13.0, SASS sm_89"));
        QVERIFY(sass.find("cuda:") == std::string::npos);  // no index
        QCOMPARE(gpu::cuda_numerics("NVIDIA RTX 3080", 8, 6, 68, 13000, "PTX-JIT compute_75",
                                    "580.65.06"),
                 std::string("cuda NVIDIA RTX 3080 sm_86 68 SMs, runtime 13.0, PTX-JIT "
                             "compute_75, driver 580.65.06"));
    }

    // Binding asks the runtime which device is current, with no cache of its own: after
    // another cudaSetDevice (list_cuda_devices leaves device 0 current) a cuda:1 backend
    // binds device 1 again (a recording fake of the two runtime calls; no second GPU here).
    void bindingAsksTheRuntime() {
        int current = 1;
        std::vector<int> sets;
        const auto get = [&](int* d) {
            *d = current;
            return cudaSuccess;
        };
        const auto set = [&](int d) {
            sets.push_back(d);
            current = d;
            return cudaSuccess;
        };
        QCOMPARE(gpu::bind_device(1, get, set), cudaSuccess);
        QVERIFY(sets.empty());  // already current: no call
        current = 0;            // someone else bound device 0
        QCOMPARE(gpu::bind_device(1, get, set), cudaSuccess);
        QCOMPARE(sets, std::vector<int>{1});
        const auto failing = [](int*) { return cudaErrorNoDevice; };
        QCOMPARE(gpu::bind_device(1, failing, set), cudaSuccess);  // unknown: bind anyway
        QCOMPARE(sets.size(), std::size_t{2});
    }

    // The driver floor in plain words, from the versions the driver and runtime report.
    void driverFloorInPlainWords() {
        QCOMPARE(gpu::driver_too_old_text(12040, 13000),
                 std::string("the NVIDIA driver supports CUDA 12.4 (R550) and is older than this "
                             "build needs (CUDA 13.0: R580 or newer)"));
        QCOMPARE(gpu::driver_too_old_text(12090, 13000),
                 std::string("the NVIDIA driver supports CUDA 12.9 (R575) and is older than this "
                             "build needs (CUDA 13.0: R580 or newer)"));
        QCOMPARE(gpu::driver_too_old_text(0, 12060),
                 std::string("no NVIDIA driver is installed (this build needs CUDA 12.6: R525 or "
                             "newer)"));
        QCOMPARE(gpu::minimum_driver_branch(13000), 580);
        QCOMPARE(gpu::minimum_driver_branch(12080), 525);  // minor-version compatibility
        QCOMPARE(gpu::minimum_driver_branch(9000), 0);
    }
};

QTEST_GUILESS_MAIN(TstCudaDevice)
#include "tst_cuda_device.moc"
