// The GPU benchmark (issue 12): the engine on a CUDA device, on the default model when it is
// installed and on models shaped like Llama 3.2 1B and Llama 3.1 8B with random weights in
// Q4_0, Q4_K and F16, made on the spot (nothing is downloaded). Measured in one run:
//   - the device's copy bandwidth (a device-to-device copy), the yardstick of decode;
//   - prefill tokens/s (one 2,048-token prompt, prefix caching off), with the tensor-core
//     fraction against the device's nominal dense fp16 peak;
//   - decode tokens/s at batch 1, 8 and 32 (that many conversations decoding together),
//     and batch-1 decode as a fraction of bandwidth (weight bytes per token / time per
//     token / copy bandwidth);
//   - 8 and 32 conversations sharing a 1,000-token persona, prefix caching on (the persona
//     warm, as the app keeps it) vs off: output tokens/s of the whole batch.
// Qt-free: `hearth-cli bench gpu` and the GPU machine's `hearth-gpu-bench` both call it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/result.h"

namespace hearth {

struct GpuBenchOptions {
    // "cuda:N"; "cpu" runs the same measurements on the CPU backend (a dry run of the
    // benchmark itself on a machine without a GPU: no bandwidth or peak fractions).
    std::string device = "cuda:0";
    std::string default_model;  // path of the default model; empty: not measured
    // Model shapes: "llama-1b", "llama-8b" (each in every type of `types`); "tiny" is a
    // small shape for checking the benchmark itself on a slow machine.
    std::vector<std::string> shapes = {"llama-1b", "llama-8b"};
    std::vector<std::string> types = {"Q4_0", "Q4_K", "F16"};
    std::string work_dir = "/tmp";  // where generated models are written (and removed)
    int prefill_tokens = 2048;
    int decode_tokens = 64;  // generated per conversation in the decode runs
    bool shared_persona = true;
    std::function<void(const std::string&)> progress;  // one line per finished measurement
};

// The whole benchmark as one JSON object (see docs/benchmarks.md for its fields).
Result<std::string> run_gpu_bench(const GpuBenchOptions& options);

}  // namespace hearth
