// The CUDA backend: every op of backend.h on one NVIDIA GPU, issued in order on one
// non-blocking stream. Weights are copied to the device once, in their file format (the
// matrix products decode them in registers); buffers are device memory.
//
// Errors: a failed allocation, copy or launch throws kernels::BackendError with the CUDA
// error and what was being done (an out-of-memory names the bytes asked for and the
// bytes free). Like the CPU backend, one thread at a time issues ops; the device is made
// current on the calling thread by create() and by every op (the engine creates the
// backend on one thread and runs it on its own).
#pragma once

#include <memory>
#include <string>

#include "backend.h"

namespace hearth::kernels {

class CudaBackend final : public Backend {
  public:
    // The backend on CUDA device `device`, or null with *error saying why (no driver, no
    // such device, no kernel image for it, a context that cannot be created).
    static std::unique_ptr<CudaBackend> create(int device, std::string* error);
    ~CudaBackend() override;

    std::string name() const override;  // "cuda:0 (NVIDIA H200, sm_90)"
    // "cuda NVIDIA H200 sm_90 132 SMs, runtime 13.0, SASS sm_90" (gpu::cuda_numerics): no
    // device index, and the driver when it JIT-compiles the kernels.
    std::string numerics() const override;
    int device() const;
    // Bytes of device memory this backend holds (weights, buffers), and the device's free
    // memory now: for the Model page's VRAM figures.
    std::size_t bytes_allocated() const;
    std::size_t weight_bytes() const;
    std::size_t free_device_bytes() const;

    // Multiprocessors: the matrix products' K splits depend on it (gpu::matmul_plan).
    int sm_count() const;
    // Allocates the matrix products' and the attention's workspaces now, at these sizes (the
    // VRAM plan's worst case), so that no step allocates: a step needing more still grows
    // them. Throws BackendError when the device refuses.
    void reserve_workspaces(std::size_t matmul_bytes, std::size_t attention_bytes);

    // The matrix products' numerics: batch invariant (default, the tensor-core kernel for
    // every step) or fastest (the matrix-vector kernel for steps of up to 8 tokens; a
    // token's result then depends on the size of its step). See kernels/cuda/matmul.h.
    void set_batch_invariant(bool on);

    std::unique_ptr<Buffer> alloc(std::size_t bytes) override;
    void upload(Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) override;
    void download(void* dst, const Buffer& src, std::size_t offset, std::size_t bytes) override;
    std::unique_ptr<Weight> load_weight(const WeightSource& source) override;
    void synchronize() override;
    // The stream runs on after the calls return; a step's results come back through pinned
    // memory with one asynchronous copy, waited for by synchronize().
    bool asynchronous() const override { return true; }
    const void* read_back(const Buffer& src, std::size_t offset, std::size_t bytes) override;

    // Step graphs: CUDA stream capture (relaxed) into instantiated graphs, replayed on the
    // backend's stream. Uploads, downloads and synchronize() throw while capturing.
    bool supports_graphs() const override;
    void begin_capture() override;
    int32_t end_capture() override;
    void replay(int32_t graph) override;
    void drop_graphs() override;

    void embed(const Weight& table, const int32_t* ids, int32_t n, float* out) override;
    void rms_norm(const float* x, const float* weight, int32_t rows, int32_t n, float eps,
                  float* out) override;
    void matmul(const Weight& w, const float* x, int32_t n_tokens, float* out,
                const float* bias = nullptr) override;
    void rope(float* x, const int32_t* positions, int32_t n_tokens, int32_t n_heads,
              int32_t head_dim, const RopeParams& params) override;
    void kv_append(const PagedKvLayer& cache, const float* k, const float* v, const int32_t* slots,
                   int32_t n_tokens) override;
    void kv_shift(const PagedKvLayer& cache, const int32_t* src_slots, const int32_t* dst_slots,
                  const int32_t* deltas, int32_t n, const RopeParams& rope) override;
    void attention(const float* q, const PagedKvLayer& cache, const AttentionBatch& batch,
                   int32_t n_heads, float scale, float* out) override;
    void swiglu(const float* gate, const float* up, int64_t n, float* out) override;
    void add(float* x, const float* y, int64_t n) override;
    void geglu(const float* gate, const float* up, int64_t n, float* out) override;
    void scale(float* x, int64_t n, float s) override;
    void softcap(float* x, int64_t n, float cap) override;
    void gather_rows(const float* x, const int32_t* rows, int32_t count, int32_t n,
                     float* out) override;
    void top_k(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids, float* values,
               int32_t* invalid) override;

  private:
    struct Impl;
    explicit CudaBackend(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::kernels
