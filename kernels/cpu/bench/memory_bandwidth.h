// The machine's memory bandwidth, the yardstick of decode (which streams every weight once
// per token): a read-only sum over a buffer far larger than the last-level cache, and a
// STREAM-style triad (a = b + s·c), each split over n threads, best of `reps` runs.
#pragma once

#include <cstddef>

namespace hearth::kernels::bench {

struct Bandwidth {
    double read_gb_per_s = 0;   // bytes read / time
    double triad_gb_per_s = 0;  // 3 × array bytes / time (STREAM's count)
};

Bandwidth measure_memory_bandwidth(int threads, std::size_t bytes_per_array, int reps);

}  // namespace hearth::kernels::bench
