// The CPU backends a kernel suite compares: one per (thread count, SIMD level), made on
// first use, and the SIMD levels this processor can run (scalar always).
#pragma once

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_features.h"

namespace hearth::test {

class CpuBackends {
  public:
    kernels::CpuBackend& get(int threads, kernels::cpu::SimdLevel level) {
        auto& b = backends_[{threads, level}];
        if (!b) b = std::make_unique<kernels::CpuBackend>(threads, level);
        return *b;
    }

    static std::vector<kernels::cpu::SimdLevel> levels() {
        using kernels::cpu::SimdLevel;
        if (kernels::cpu::cpu_has_avx512())
            return {SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512};
        if (kernels::cpu::cpu_has_avx2()) return {SimdLevel::Scalar, SimdLevel::Avx2};
        return {SimdLevel::Scalar};
    }

  private:
    std::map<std::pair<int, kernels::cpu::SimdLevel>, std::unique_ptr<kernels::CpuBackend>>
        backends_;
};

}  // namespace hearth::test
