// Finding out whether the CUDA backend can run here, without ever crashing: a machine
// with no driver, no GPU, or a GPU our kernels were not compiled for just says no.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

#include "gpu_device.h"

namespace hearth::gpu {

// True when device 0 exists and can run this build's kernels. On false, *why (when not
// null) says why, e.g. "cudaGetDeviceCount: cudaErrorInsufficientDriver (CUDA driver
// version is insufficient for CUDA runtime version)". On true, *why describes the
// device: "NVIDIA H200, sm_90, 139.8 GiB". Makes device 0 current on the calling thread
// (creating its context) when there is one.
bool cuda_device_available(std::string* why);

// Every device the driver reports, with its free memory (each is made current once, which
// creates its context). False, with *problem, when the driver cannot be asked at all (no
// driver, a driver older than the runtime) or reports no device. Leaves device 0 current.
bool list_cuda_devices(std::vector<GpuDevice>* devices, std::string* problem);

// The device's memory bandwidth as a device-to-device copy sees it: bytes read plus bytes
// written per second, the best of `reps` copies of `bytes` (after one warm-up), timed with
// CUDA events. 0 with *error when it cannot run. For benchmarks (decode as a fraction of
// bandwidth).
double measure_copy_bandwidth(int device, std::size_t bytes, int reps, std::string* error);

// Why the driver cannot run this build, in plain words, from the CUDA versions the driver
// and the runtime report (cudaDriverGetVersion, CUDART_VERSION: 1000 · major + 10 · minor):
// "no NVIDIA driver is installed" for 0, else "the NVIDIA driver supports CUDA 12.4 (R550)
// and is older than this build needs (CUDA 13.0: R580 or newer)".
std::string driver_too_old_text(int driver_version, int runtime_version);

// The oldest driver branch that runs CUDA `version` (R580 for 13.0, R525 for 12.x: the
// minor-version compatibility of CUDA 11+), 0 when unknown.
int minimum_driver_branch(int version);

// Which code a device runs from a build for `archs` (CMake's list, "90-real;75-virtual"):
// "SASS sm_86" when a cubin of the same major and an equal or lower minor is there (CUDA
// loads it), else "PTX-JIT compute_75" from the newest PTX at or below the device (the
// driver compiles it, so its version decides the bits), "" when nothing can run. With
// force_jit (CUDA_FORCE_PTX_JIT=1) the PTX is taken even where a cubin is there.
std::string cuda_code_path(const std::string& archs, int cc_major, int cc_minor, bool force_jit);

// What decides the CUDA backend's bits, for the KV disk tier's key (Backend::numerics):
// the device's name, architecture and SM count (the matrix products' K splits), the
// runtime's version, and the code path; with PTX-JIT also the driver that compiles it. Not
// the device's index: two identical GPUs share stored KV.
std::string cuda_numerics(const std::string& device_name, int cc_major, int cc_minor, int sm_count,
                          int runtime_version, const std::string& code_path,
                          const std::string& driver);

// This process's view: the build's architectures, CUDA_FORCE_PTX_JIT, the driver's
// version (/proc/driver/nvidia/version where there is one, else the CUDA version the
// driver reports).
std::string cuda_numerics_here(const std::string& device_name, int cc_major, int cc_minor,
                               int sm_count);

// Makes `device` current on the calling thread unless the runtime says it is already
// (get, set: cudaGetDevice and cudaSetDevice, or a test's fakes).
template <typename Get, typename Set>
cudaError_t bind_device(int device, Get&& get, Set&& set) {
    int now = -1;
    if (get(&now) == cudaSuccess && now == device) return cudaSuccess;
    return set(device);
}
inline cudaError_t bind_device(int device) {
    return bind_device(device, cudaGetDevice, cudaSetDevice);
}

// "cudaErrorInvalidValue (invalid argument)"; for messages.
std::string cuda_error_text(cudaError_t err);

}  // namespace hearth::gpu
