// What the CUDA runtime tells about one device, in plain C++ (no CUDA headers): filled by
// kernels/cuda (list_cuda_devices) and read by the engine's device choice (engine/device.h).
#pragma once

#include <cstdint>
#include <string>

namespace hearth {

struct GpuDevice {
    int index = 0;
    std::string name;
    int cc_major = 0;  // compute capability
    int cc_minor = 0;
    std::uint64_t total_bytes = 0;
    std::uint64_t free_bytes = 0;
    bool runs_our_kernels = false;  // this build has SASS for it, or PTX it can compile
    std::string problem;            // why it cannot be used (empty when it can)
};

}  // namespace hearth
