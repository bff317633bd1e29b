#include "device.h"

#include <charconv>
#include <cstdio>

#if defined(HEARTH_WITH_CUDA)
#include "cuda/cuda_device.h"
#endif

namespace hearth {

namespace {

std::string gpu_label(const GpuDevice& gpu) {
    return "cuda:" + std::to_string(gpu.index) + " (" + gpu.name + ", " + describe_gpu(gpu) + ")";
}

// Why `gpu` cannot hold the engine (empty when it can).
std::string unusable(const GpuDevice& gpu, std::uint64_t bytes_needed) {
    if (!gpu.problem.empty()) return gpu.problem;
    if (!gpu.runs_our_kernels) return "this build has no kernels for its architecture";
    if (gpu.free_bytes < bytes_needed)
        return "not enough free memory: " + gib_text(gpu.free_bytes) + " free, " +
               gib_text(bytes_needed) + " needed";
    return {};
}

}  // namespace

std::string gib_text(std::uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GiB",
                  static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

Result<DeviceRequest> parse_device(std::string_view text) {
    DeviceRequest r;
    if (text == "auto") return r;
    r.automatic = false;
    if (text == "cpu") return r;
    r.kind = DeviceKind::Cuda;
    if (text == "cuda") return r;
    constexpr std::string_view kPrefix = "cuda:";
    if (text.substr(0, kPrefix.size()) == kPrefix && text.size() > kPrefix.size()) {
        const std::string_view digits = text.substr(kPrefix.size());
        int index = -1;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
        if (ec == std::errc() && end == digits.data() + digits.size() && index >= 0 &&
            index < 1024) {
            r.index = index;
            return r;
        }
    }
    return make_error("unknown device '" + std::string(text) +
                      "': expected auto, cpu, cuda or cuda:N");
}

std::string device_request_name(const DeviceRequest& request) {
    if (request.automatic) return "auto";
    if (request.kind == DeviceKind::Cpu) return "cpu";
    return request.index < 0 ? "cuda" : "cuda:" + std::to_string(request.index);
}

std::string describe_gpu(const GpuDevice& gpu) {
    return "sm_" + std::to_string(gpu.cc_major) + std::to_string(gpu.cc_minor) + ", " +
           gib_text(gpu.total_bytes) + " (" + gib_text(gpu.free_bytes) + " free)";
}

GpuInventory list_gpus() {
    GpuInventory inv;
#if defined(HEARTH_WITH_CUDA)
    inv.cuda_built = true;
    gpu::list_cuda_devices(&inv.devices, &inv.problem);
#else
    inv.problem = "this build has no CUDA support";
#endif
    return inv;
}

Result<DeviceChoice> choose_device(const DeviceRequest& request, const GpuInventory& gpus,
                                   std::uint64_t bytes_needed, const CudaSupport& cuda) {
    DeviceChoice cpu;
    cpu.description = "cpu";
    if (!request.automatic && request.kind == DeviceKind::Cpu) return cpu;
    if (request.automatic && !cuda.automatic) {
        cpu.cpu_reason = cuda.auto_reason;
        return cpu;
    }

    // Why no device (the driver's answer, or none listed).
    std::string none = gpus.problem;
    if (none.empty() && gpus.devices.empty()) none = "no CUDA device";

    if (!request.automatic) {  // cuda or cuda:N: an error when it cannot be met
        const std::string asked = device_request_name(request);
        if (!cuda.inference) return make_error(asked + ": this build cannot run inference on CUDA");
        if (!none.empty()) return make_error(asked + ": " + none);
        const GpuDevice* gpu = nullptr;
        if (request.index >= 0) {
            for (const GpuDevice& g : gpus.devices)
                if (g.index == request.index) gpu = &g;
            if (!gpu)
                return make_error(asked + ": no such device (" +
                                  std::to_string(gpus.devices.size()) + " found)");
        } else {
            for (const GpuDevice& g : gpus.devices)
                if (unusable(g, bytes_needed).empty()) {
                    gpu = &g;
                    break;
                }
            if (!gpu) gpu = &gpus.devices.front();  // its reason is the error
        }
        if (const std::string why = unusable(*gpu, bytes_needed); !why.empty())
            return make_error(gpu_label(*gpu) + ": " + why);
        return DeviceChoice{DeviceKind::Cuda, gpu->index, gpu_label(*gpu), {}};
    }

    // auto: the first device that can hold the engine, else the CPU and why.
    if (!none.empty()) {
        cpu.cpu_reason = none;
        return cpu;
    }
    std::string reasons;
    for (const GpuDevice& g : gpus.devices) {
        const std::string why = unusable(g, bytes_needed);
        if (why.empty()) return DeviceChoice{DeviceKind::Cuda, g.index, gpu_label(g), {}};
        if (!reasons.empty()) reasons += "; ";
        reasons += gpu_label(g) + ": " + why;
    }
    cpu.cpu_reason = reasons;
    return cpu;
}

}  // namespace hearth
