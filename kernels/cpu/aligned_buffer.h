// A grow-only, 64-byte aligned scratch allocation (activation quantisation, attention
// partial results). Contents are not preserved when it grows.
#pragma once

#include <cstddef>
#include <new>

namespace hearth::kernels::cpu {

inline constexpr std::size_t kAlignment = 64;  // cache line; also ≥ any SIMD register

class AlignedBuffer {
  public:
    AlignedBuffer() = default;
    ~AlignedBuffer() { release(); }
    AlignedBuffer(const AlignedBuffer&) = delete;
    AlignedBuffer& operator=(const AlignedBuffer&) = delete;

    // At least `bytes` bytes, 64-byte aligned.
    void* get(std::size_t bytes) {
        if (bytes > capacity_) {
            release();
            const std::size_t cap = (bytes + kAlignment - 1) & ~(kAlignment - 1);
            data_ = ::operator new (cap, std::align_val_t{kAlignment});
            capacity_ = cap;
        }
        return data_;
    }
    template <typename T>
    T* get_as(std::size_t count) {
        return static_cast<T*>(get(count * sizeof(T)));
    }

  private:
    void release() {
        if (data_) ::operator delete (data_, std::align_val_t{kAlignment});
        data_ = nullptr;
        capacity_ = 0;
    }
    void* data_ = nullptr;
    std::size_t capacity_ = 0;
};

}  // namespace hearth::kernels::cpu
