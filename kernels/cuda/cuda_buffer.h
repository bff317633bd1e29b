// RAII owners for CUDA device memory, pinned host memory and streams. Plain C++
// (includable from .cpp files compiled by the host compiler); errors are returned as
// cudaError_t, never thrown, so callers decide how a failed allocation surfaces (an engine
// error, a skipped test).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace hearth::gpu {

// A device allocation of `size()` elements of T, freed on destruction. Move-only.
// Contents are uninitialised after allocate().
template <typename T>
class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    ~DeviceBuffer() { reset(); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& o) noexcept
        : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        if (this != &o) {
            reset();
            ptr_ = std::exchange(o.ptr_, nullptr);
            size_ = std::exchange(o.size_, 0);
        }
        return *this;
    }

    // Replaces the current allocation with one of `count` elements (count 0: empty).
    cudaError_t allocate(size_t count) {
        reset();
        if (count == 0) return cudaSuccess;
        void* p = nullptr;
        const cudaError_t err = cudaMalloc(&p, count * sizeof(T));
        if (err != cudaSuccess) return err;
        ptr_ = static_cast<T*>(p);
        size_ = count;
        return cudaSuccess;
    }

    void reset() {
        if (ptr_) cudaFree(ptr_);  // an error here (context already torn down) is moot
        ptr_ = nullptr;
        size_ = 0;
    }

    T* data() { return ptr_; }
    const T* data() const { return ptr_; }
    size_t size() const { return size_; }
    size_t bytes() const { return size_ * sizeof(T); }
    bool empty() const { return size_ == 0; }

    // Asynchronous copies of the first `count` elements on `stream`; the host memory must
    // stay valid until the stream has run them (pageable memory makes them synchronous).
    cudaError_t upload(const T* host, size_t count, cudaStream_t stream) {
        if (count > size_) return cudaErrorInvalidValue;
        if (count == 0) return cudaSuccess;
        return cudaMemcpyAsync(ptr_, host, count * sizeof(T), cudaMemcpyHostToDevice, stream);
    }
    cudaError_t download(T* host, size_t count, cudaStream_t stream) const {
        if (count > size_) return cudaErrorInvalidValue;
        if (count == 0) return cudaSuccess;
        return cudaMemcpyAsync(host, ptr_, count * sizeof(T), cudaMemcpyDeviceToHost, stream);
    }

  private:
    T* ptr_ = nullptr;
    size_t size_ = 0;
};

// Page-locked host memory (cudaMallocHost), freed on destruction. Move-only. A copy from
// the device into it is asynchronous: the host goes on until it needs the bytes.
class PinnedBuffer {
  public:
    PinnedBuffer() = default;
    ~PinnedBuffer() { reset(); }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    PinnedBuffer(PinnedBuffer&& o) noexcept
        : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
        if (this != &o) {
            reset();
            ptr_ = std::exchange(o.ptr_, nullptr);
            bytes_ = std::exchange(o.bytes_, 0);
        }
        return *this;
    }

    cudaError_t allocate(size_t bytes) {
        reset();
        if (cudaError_t err = cudaMallocHost(&ptr_, bytes == 0 ? 1 : bytes); err != cudaSuccess) {
            ptr_ = nullptr;
            return err;
        }
        bytes_ = bytes;
        return cudaSuccess;
    }
    void reset() {
        if (ptr_) cudaFreeHost(ptr_);
        ptr_ = nullptr;
        bytes_ = 0;
    }
    void* data() { return ptr_; }
    size_t bytes() const { return bytes_; }

  private:
    void* ptr_ = nullptr;
    size_t bytes_ = 0;
};

// A non-blocking CUDA stream (it does not synchronise with the legacy default stream),
// destroyed with the object. Empty until create(); get() is then usable as cudaStream_t.
// A non-blocking stream and the event its waits use. synchronize() records the event and
// waits on it with cudaEventBlockingSync: the calling thread sleeps until the GPU is done,
// where cudaStreamSynchronize spins a core at 100 % (the default schedule), which a
// desktop's GUI needs on a few-core machine.
class CudaStream {
  public:
    CudaStream() = default;
    ~CudaStream() { reset(); }
    CudaStream(const CudaStream&) = delete;
    CudaStream& operator=(const CudaStream&) = delete;
    CudaStream(CudaStream&& o) noexcept
        : stream_(std::exchange(o.stream_, nullptr)), done_(std::exchange(o.done_, nullptr)) {}
    CudaStream& operator=(CudaStream&& o) noexcept {
        if (this != &o) {
            reset();
            stream_ = std::exchange(o.stream_, nullptr);
            done_ = std::exchange(o.done_, nullptr);
        }
        return *this;
    }

    cudaError_t create() {
        reset();
        if (cudaError_t err = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
            err != cudaSuccess)
            return err;
        return cudaEventCreateWithFlags(&done_, cudaEventBlockingSync | cudaEventDisableTiming);
    }
    void reset() {
        if (done_) cudaEventDestroy(done_);
        if (stream_) cudaStreamDestroy(stream_);
        done_ = nullptr;
        stream_ = nullptr;
    }
    // Waits, asleep, until everything issued on the stream so far has run.
    cudaError_t synchronize() const {
        if (!done_) return cudaStreamSynchronize(stream_);
        if (cudaError_t err = cudaEventRecord(done_, stream_); err != cudaSuccess) return err;
        return cudaEventSynchronize(done_);
    }
    cudaStream_t get() const { return stream_; }

  private:
    cudaStream_t stream_ = nullptr;
    cudaEvent_t done_ = nullptr;
};

}  // namespace hearth::gpu
