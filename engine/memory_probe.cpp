#include "memory_probe.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#endif

namespace hearth {

Result<SystemMemory> system_memory() {
    SystemMemory m;
#if defined(_WIN32)
    MEMORYSTATUSEX status{};
    status.dwLength = sizeof(status);
    if (!GlobalMemoryStatusEx(&status)) return make_error("GlobalMemoryStatusEx failed");
    m.total = status.ullTotalPhys;
    m.available = status.ullAvailPhys;
#else
    std::ifstream in("/proc/meminfo");
    if (!in) return make_error("cannot read /proc/meminfo");
    std::string line;
    bool have_available = false;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string key;
        std::uint64_t kib = 0;
        fields >> key >> kib;
        if (key == "MemTotal:") m.total = kib << 10;
        if (key == "MemAvailable:") {
            m.available = kib << 10;
            have_available = true;
        }
    }
    if (m.total == 0 || !have_available)
        return make_error("/proc/meminfo has no MemTotal or MemAvailable");
#endif
    return m;
}

double measure_read_bandwidth(int n_threads, std::size_t bytes, int repeats) {
    n_threads = std::max(n_threads, 1);
    const std::size_t words = std::max<std::size_t>(bytes / sizeof(std::uint64_t),
                                                    64 * static_cast<std::size_t>(n_threads));
    std::unique_ptr<std::uint64_t[]> buffer(new std::uint64_t[words]);
    // Written first, so the pages exist (a read of untouched pages maps the zero page).
    for (std::size_t i = 0; i < words; ++i) buffer[i] = i * 0x9E3779B97F4A7C15ull;

    const std::size_t slice = words / static_cast<std::size_t>(n_threads);
    std::vector<std::uint64_t> sums(static_cast<std::size_t>(n_threads));
    const auto read_slice = [&](int t) {
        const std::uint64_t* p = buffer.get() + static_cast<std::size_t>(t) * slice;
        // Independent sums, so loads are not serialised behind one addition chain.
        std::uint64_t a[8] = {};
        std::size_t i = 0;
        for (; i + 8 <= slice; i += 8)
            for (int k = 0; k < 8; ++k) a[k] += p[i + static_cast<std::size_t>(k)];
        for (; i < slice; ++i) a[0] += p[i];
        std::uint64_t s = 0;
        for (std::uint64_t v : a) s += v;
        sums[static_cast<std::size_t>(t)] = s;
    };

    double best = 0;
    for (int r = 0; r < std::max(repeats, 1); ++r) {
        const auto start = std::chrono::steady_clock::now();
        std::vector<std::thread> threads;
        for (int t = 1; t < n_threads; ++t) threads.emplace_back(read_slice, t);
        read_slice(0);
        for (auto& th : threads) th.join();
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (s > 0)
            best = std::max(best, static_cast<double>(slice * static_cast<std::size_t>(n_threads) *
                                                      sizeof(std::uint64_t)) /
                                      s);
    }
    // The sums are used, so the reads are not optimised away.
    volatile std::uint64_t sink = 0;
    for (std::uint64_t s : sums) sink = sink + s;
    return best;
}

}  // namespace hearth
