// This computer's memory, for the fit estimate (fit_estimate.h): how much there is, how
// much is free, and how fast the CPU reads it with the threads inference uses — decode
// reads every weight once per token, so this bounds its speed.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/result.h"

namespace hearth {

struct SystemMemory {
    std::uint64_t total = 0;
    std::uint64_t available = 0;  // usable without swapping: Linux's MemAvailable (page
                                  // cache counted as free), Windows' available physical
};
Result<SystemMemory> system_memory();

// Reads a buffer of `bytes` (larger than any cache) with n_threads threads, each its own
// slice, `repeats` times; the best pass's bytes per second. About 0.1 s per GiB read.
double measure_read_bandwidth(int n_threads, std::size_t bytes = std::size_t{256} << 20,
                              int repeats = 3);

}  // namespace hearth
