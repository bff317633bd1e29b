// Host memory for backends that run on the host without their own allocator: the
// reference backend and the CUDA kernels' host twins. A buffer of plain heap memory, and a
// weight read in place from the mapped model file.
#pragma once

#include <cstddef>
#include <vector>

#include "backend.h"

namespace hearth::kernels {

class HostBuffer final : public Buffer {
  public:
    explicit HostBuffer(std::size_t bytes) : data_(bytes / sizeof(double) + 1), bytes_(bytes) {}
    void* data() override { return data_.data(); }
    const void* cdata() const { return data_.data(); }
    std::size_t bytes() const override { return bytes_; }

  private:
    std::vector<double> data_;  // double: suitably aligned for every element type
    std::size_t bytes_;
};

class HostWeight final : public Weight {
  public:
    explicit HostWeight(const WeightSource& s) : Weight(s.type, s.rows, s.cols), data_(s.data) {}
    const void* data() const { return data_; }
    static const HostWeight& of(const Weight& w) { return static_cast<const HostWeight&>(w); }

  private:
    const void* data_;  // the mapped file
};

}  // namespace hearth::kernels
