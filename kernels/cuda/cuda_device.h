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

// "cudaErrorInvalidValue (invalid argument)"; for messages.
std::string cuda_error_text(cudaError_t err);

}  // namespace hearth::gpu
