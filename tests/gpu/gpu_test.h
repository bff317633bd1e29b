// Shared by the GPU test suites (CTest label `gpu`, run on the GPU machine by
// tests/gpu/run.sh). Without a CUDA device a GPU test skips with the reason; with
// HEARTH_REQUIRE_GPU=1 (run.sh sets it) a missing device fails instead, so a broken
// driver on the GPU machine cannot pass as a row of skips.
//
// A suite of device and host functions runs twice (hearth_add_gpu_qtest in
// tests/CMakeLists.txt): for the device, with HEARTH_DEVICE_ONLY=1 (functions marked
// HEARTH_HOST_FUNCTION() skip, saving device time), and for its host functions, with
// HEARTH_HOST_ONLY=1 (every HEARTH_REQUIRE_CUDA_DEVICE() function skips, device or not).
#pragma once

#include <QString>
#include <QtTest>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/cuda_buffer.h"
#include "cuda/cuda_device.h"

namespace hearth::test {

inline bool env_flag(const char* name) {
    const char* v = std::getenv(name);
    return v && *v && std::strcmp(v, "0") != 0;
}
inline bool gpu_required() {
    return env_flag("HEARTH_REQUIRE_GPU");
}

// Multiprocessors of device 0 (1 when it cannot be read): the matrix products' K splits.
inline int device_sm_count() {
    int n = 0;
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess || n < 1)
        return 1;
    return n;
}

// A copy of `host` in device memory (at least one element, so that empty inputs still
// get a valid pointer); aborts the test binary if the device refuses.
template <typename T>
gpu::DeviceBuffer<T> on_device(const std::vector<T>& host) {
    gpu::DeviceBuffer<T> d;
    if (d.allocate(std::max<size_t>(host.size(), 1)) != cudaSuccess ||
        (!host.empty() && cudaMemcpy(d.data(), host.data(), host.size() * sizeof(T),
                                     cudaMemcpyHostToDevice) != cudaSuccess))
        qFatal("device copy failed");
    return d;
}

// The first n elements of a device buffer on the host.
template <typename T>
std::vector<T> to_host(const gpu::DeviceBuffer<T>& d, size_t n) {
    std::vector<T> host(n);
    if (n > 0 &&
        cudaMemcpy(host.data(), d.data(), n * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess)
        qFatal("host copy failed");
    return host;
}

}  // namespace hearth::test

// Use at the top of a test function that needs a device.
#define HEARTH_REQUIRE_CUDA_DEVICE()                                                         \
    do {                                                                                     \
        if (::hearth::test::env_flag("HEARTH_HOST_ONLY"))                                    \
            QSKIP("a device test (HEARTH_HOST_ONLY: this is the suite's host run)");         \
        std::string hearth_why_;                                                             \
        if (!::hearth::gpu::cuda_device_available(&hearth_why_)) {                           \
            const QString hearth_msg_ = QString::fromStdString(hearth_why_);                 \
            if (::hearth::test::gpu_required())                                              \
                QFAIL(qPrintable("HEARTH_REQUIRE_GPU is set but there is no CUDA device: " + \
                                 hearth_msg_));                                              \
            QSKIP(qPrintable("no CUDA device: " + hearth_msg_));                             \
        }                                                                                    \
    } while (false)

// Use at the top of a slow host-only test function of a suite that also has device tests:
// the suite's device run (HEARTH_DEVICE_ONLY=1) leaves it to the host run.
#define HEARTH_HOST_FUNCTION()                                                 \
    do {                                                                       \
        if (::hearth::test::env_flag("HEARTH_DEVICE_ONLY"))                    \
            QSKIP("a host test (HEARTH_DEVICE_ONLY: this is the device run)"); \
    } while (false)
