#include "cuda/cuda_device.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

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

namespace {

std::string cuda_version_text(int v) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// The driver branch that first supported each CUDA version (NVIDIA's release notes).
int driver_branch_of(int v) {
    struct Row {
        int cuda, branch;
    };
    constexpr Row kRows[] = {{11000, 450}, {11010, 455}, {11020, 460}, {11030, 465}, {11040, 470},
                             {11050, 495}, {11060, 510}, {11070, 515}, {11080, 520}, {12000, 525},
                             {12010, 530}, {12020, 535}, {12030, 545}, {12040, 550}, {12050, 555},
                             {12060, 560}, {12080, 570}, {12090, 575}, {13000, 580}};
    int branch = 0;
    for (const Row& r : kRows)
        if (v >= r.cuda) branch = r.branch;
    return branch;
}

// The insufficient-driver error in plain words (both versions read again here).
std::string insufficient_driver_text() {
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    return driver_too_old_text(driver, CUDART_VERSION);
}

}  // namespace

int minimum_driver_branch(int version) {
    // Within a major version a newer runtime runs on the major's first driver (minor-version
    // compatibility), PTX JIT aside; CUDA 13.0 starts a new floor.
    return driver_branch_of(version / 1000 * 1000);
}

std::string driver_too_old_text(int driver_version, int runtime_version) {
    const std::string needs =
        "CUDA " + cuda_version_text(runtime_version) +
        (minimum_driver_branch(runtime_version) > 0
             ? ": R" + std::to_string(minimum_driver_branch(runtime_version)) + " or newer"
             : "");
    if (driver_version <= 0)
        return "no NVIDIA driver is installed (this build needs " + needs + ")";
    const int branch = driver_branch_of(driver_version);
    return "the NVIDIA driver supports CUDA " + cuda_version_text(driver_version) +
           (branch > 0 ? " (R" + std::to_string(branch) + ")" : "") +
           " and is older than this build needs (" + needs + ")";
}

std::string cuda_code_path(const std::string& archs, int cc_major, int cc_minor, bool force_jit) {
    const int device = 10 * cc_major + cc_minor;
    int sass = -1, ptx = -1;
    std::size_t at = 0;
    while (at <= archs.size()) {
        std::size_t end = archs.find_first_of(";,", at);
        if (end == std::string::npos) end = archs.size();
        const std::string item = archs.substr(at, end - at);
        at = end + 1;
        if (item.empty()) continue;
        const std::size_t dash = item.find('-');
        const std::string num = item.substr(0, dash);
        const std::string kind = dash == std::string::npos ? "" : item.substr(dash + 1);
        if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos) continue;
        const int a = std::stoi(num);
        // "90" alone is both a cubin and PTX; "-real" a cubin; "-virtual" PTX.
        if (kind != "virtual" && a / 10 == cc_major && a <= device) sass = std::max(sass, a);
        if (kind != "real" && a <= device) ptx = std::max(ptx, a);
    }
    if (sass >= 0 && !(force_jit && ptx >= 0)) return "SASS sm_" + std::to_string(sass);
    if (ptx >= 0) return "PTX-JIT compute_" + std::to_string(ptx);
    return "";
}

std::string cuda_numerics(const std::string& device_name, int cc_major, int cc_minor, int sm_count,
                          int runtime_version, const std::string& code_path,
                          const std::string& driver) {
    std::string s = "cuda " + device_name + " sm_" + std::to_string(cc_major) +
                    std::to_string(cc_minor) + " " + std::to_string(sm_count) + " SMs, runtime " +
                    cuda_version_text(runtime_version) + ", " + code_path;
    if (code_path.rfind("PTX-JIT", 0) == 0) s += ", driver " + driver;
    return s;
}

std::string cuda_numerics_here(const std::string& device_name, int cc_major, int cc_minor,
                               int sm_count) {
    const char* jit = std::getenv("CUDA_FORCE_PTX_JIT");
    const bool force_jit = jit && *jit && std::string(jit) != "0";
    std::string driver;
    if (std::FILE* f = std::fopen("/proc/driver/nvidia/version", "r")) {
        char line[256] = {};
        if (std::fgets(line, sizeof line, f)) {
            // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ..."
            const std::string text(line);
            const std::size_t k = text.find("Kernel Module");
            if (k != std::string::npos) {
                std::size_t b = text.find_first_not_of(' ', k + 13);
                std::size_t e = text.find(' ', b);
                if (b != std::string::npos) driver = text.substr(b, e - b);
            }
        }
        std::fclose(f);
    }
    if (driver.empty()) {
        int v = 0;
        if (cudaDriverGetVersion(&v) == cudaSuccess) driver = "CUDA " + cuda_version_text(v);
    }
    return cuda_numerics(device_name, cc_major, cc_minor, sm_count, CUDART_VERSION,
                         cuda_code_path(HEARTH_CUDA_ARCHS, cc_major, cc_minor, force_jit), driver);
}

std::string cuda_error_text(cudaError_t err) {
    return std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")";
}

bool cuda_device_available(std::string* why) {
    // The runtime loads the driver library lazily; with no driver (or no GPU) this call
    // returns an error rather than crashing, which is the whole point of the function.
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaErrorInsufficientDriver)
        return fail(why, insufficient_driver_text() + " (" + cuda_error_text(err) + ")");
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

bool list_cuda_devices(std::vector<GpuDevice>* devices, std::string* problem) {
    devices->clear();
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaErrorInsufficientDriver)  // also what the runtime says with no driver at all
        return fail(problem, insufficient_driver_text());
    if (err == cudaErrorNoDevice)
        return fail(problem, "no CUDA device (" + cuda_error_text(err) + ")");
    if (err != cudaSuccess) return fail(problem, "cudaGetDeviceCount: " + cuda_error_text(err));
    if (count <= 0) return fail(problem, "the CUDA driver reports no devices");
    for (int i = 0; i < count; ++i) {
        GpuDevice d;
        d.index = i;
        cudaDeviceProp prop{};
        err = cudaGetDeviceProperties(&prop, i);
        if (err != cudaSuccess) {
            d.problem = "cudaGetDeviceProperties: " + cuda_error_text(err);
            cudaGetLastError();
            devices->push_back(std::move(d));
            continue;
        }
        d.name = prop.name;
        d.cc_major = prop.major;
        d.cc_minor = prop.minor;
        d.total_bytes = prop.totalGlobalMem;
        std::size_t free = 0, total = 0;
        err = cudaSetDevice(i);
        if (err == cudaSuccess) err = cudaMemGetInfo(&free, &total);
        if (err == cudaSuccess) {
            d.free_bytes = free;
            d.total_bytes = total;
        }
        if (err != cudaSuccess) {
            d.problem = "cannot use the device: " + cuda_error_text(err);
        } else if ((err = detail::probe_kernel_image()) != cudaSuccess) {
            d.problem = std::string("no usable kernel image (built for CUDA architectures ") +
                        HEARTH_CUDA_ARCHS + "): " + cuda_error_text(err);
        } else {
            d.runs_our_kernels = true;
        }
        cudaGetLastError();
        devices->push_back(std::move(d));
    }
    cudaSetDevice(0);
    cudaGetLastError();
    return true;
}

double measure_copy_bandwidth(int device, std::size_t bytes, int reps, std::string* error) {
    void *a = nullptr, *b = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    double best = 0;
    std::string why;
    const auto step = [&](cudaError_t err, const char* what) {
        if (err != cudaSuccess && why.empty())
            why = std::string(what) + ": " + cuda_error_text(err);
        return err == cudaSuccess;
    };
    if (step(cudaSetDevice(device), "cudaSetDevice") && step(cudaMalloc(&a, bytes), "cudaMalloc") &&
        step(cudaMalloc(&b, bytes), "cudaMalloc") && step(cudaEventCreate(&start), "event") &&
        step(cudaEventCreate(&stop), "event") &&
        step(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), "warm-up copy")) {
        for (int i = 0; i < reps; ++i) {
            float ms = 0;
            if (!step(cudaEventRecord(start), "record") ||
                !step(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice), "copy") ||
                !step(cudaEventRecord(stop), "record") ||
                !step(cudaEventSynchronize(stop), "sync") ||
                !step(cudaEventElapsedTime(&ms, start, stop), "elapsed"))
                break;
            if (ms > 0) best = std::max(best, 2.0 * static_cast<double>(bytes) / (ms * 1e-3));
        }
    }
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    cudaFree(a);
    cudaFree(b);
    if (!why.empty()) {
        fail(error, why);
        return 0;
    }
    return best;
}

}  // namespace hearth::gpu
