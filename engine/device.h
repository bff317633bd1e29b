// Which device runs the engine. The user's choice is "auto", "cpu", "cuda" or "cuda:N";
// list_gpus() asks the CUDA driver what is there (nothing when this build has no CUDA, or
// when no driver answers: the program never needs one to start); choose_device() decides.
// "auto" takes the first CUDA device that can run this build's kernels and holds what the
// model needs, and otherwise the CPU with the reason, which the app and the CLI show. An
// explicit "cuda" or "cuda:N" that cannot be met is an error, not a silent CPU.
//
// choose_device() is a pure function of the inventory, so every fallback is tested on a
// machine without a GPU (tests/engine/tst_device.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "gpu_device.h"

namespace hearth {

enum class DeviceKind { Cpu, Cuda };

struct DeviceRequest {
    bool automatic = true;  // "auto"
    DeviceKind kind = DeviceKind::Cpu;
    int index = -1;  // "cuda:N"; -1 with Cuda: the first usable device
};

// "auto", "cpu", "cuda", "cuda:N" (N a decimal device index), case-sensitive.
Result<DeviceRequest> parse_device(std::string_view text);
// The text parse_device() reads back: "auto", "cpu", "cuda", "cuda:1".
std::string device_request_name(const DeviceRequest& request);

struct GpuInventory {
    bool cuda_built = false;  // this build has the CUDA code compiled in
    std::string problem;      // why no device is listed: no driver, no device, not built
    std::vector<GpuDevice> devices;
};

// Asks the driver (creates a context on each device to read its free memory).
GpuInventory list_gpus();

struct DeviceChoice {
    DeviceKind kind = DeviceKind::Cpu;
    int index = -1;
    std::string description;  // "cpu", "cuda:0 (NVIDIA H200, sm_90, 139.8 GiB)"
    std::string cpu_reason;   // auto chose the CPU: why (empty otherwise)
};

// What this build may do with CUDA: run inference on it at all, and let `auto` choose it
// (not until the CUDA backend has been verified on a GPU; an explicit "cuda" may); when
// auto may not, auto_reason says why (the engine's answer: engine_cuda_support()).
struct CudaSupport {
    bool inference = false;
    bool automatic = false;
    std::string auto_reason;
};

// bytes_needed: what the engine would place on the device (weights and KV cache).
// When auto may not choose CUDA, auto is the CPU with cuda.auto_reason and the inventory
// is not looked at (the engine then does not ask the driver at all).
Result<DeviceChoice> choose_device(const DeviceRequest& request, const GpuInventory& gpus,
                                   std::uint64_t bytes_needed, const CudaSupport& cuda);

// "4.5 GiB": bytes in GiB with one decimal, for messages.
std::string gib_text(std::uint64_t bytes);

// "sm_90, 139.8 GiB (120.2 GiB free)" and the like, for listings.
std::string describe_gpu(const GpuDevice& gpu);

}  // namespace hearth
