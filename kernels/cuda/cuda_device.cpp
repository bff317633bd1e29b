#include "cuda/cuda_device.h"

#include <cstdio>

namespace hearth::gpu {

namespace detail {
// Defined in dequant.cu: whether the device has an image of our kernels (SASS for its
// architecture or PTX it can JIT), found by asking for one kernel's attributes.
cudaError_t probe_kernel_image();
}  // namespace detail

namespace {

bool fail(std::string* why, std::string message) {
    if (why) *why = std::move(message);
    cudaGetLastError();  // clear the (non-sticky) error so later calls start clean
    return false;
}

}  // namespace

std::string cuda_error_text(cudaError_t err) {
    return std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")";
}

bool cuda_device_available(std::string* why) {
    // The runtime loads the driver library lazily; with no driver (or no GPU) this call
    // returns an error rather than crashing, which is the whole point of the function.
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) return fail(why, "cudaGetDeviceCount: " + cuda_error_text(err));
    if (count <= 0) return fail(why, "the CUDA driver reports no devices");

    cudaDeviceProp prop{};
    err = cudaGetDeviceProperties(&prop, 0);
    if (err != cudaSuccess) return fail(why, "cudaGetDeviceProperties: " + cuda_error_text(err));
    char desc[320];
    std::snprintf(desc, sizeof desc, "%s, sm_%d%d, %.1f GiB", prop.name, prop.major, prop.minor,
                  static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));

    err = cudaSetDevice(0);
    if (err != cudaSuccess)
        return fail(why, std::string(desc) + ": cudaSetDevice: " + cuda_error_text(err));
    err = detail::probe_kernel_image();
    if (err != cudaSuccess) {
        return fail(why, std::string(desc) +
                             ": no usable kernel image (built for CUDA architectures " +
                             HEARTH_CUDA_ARCHS + "): " + cuda_error_text(err));
    }
    if (why) *why = desc;
    return true;
}

}  // namespace hearth::gpu
