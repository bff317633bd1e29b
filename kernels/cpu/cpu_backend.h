// The CPU backend: every op of backend.h on the host, vectorised (AVX2/FMA/F16C chosen
// at run time, portable scalar code otherwise) and threaded over a persistent pool.
//
// Weights are not copied: load_weight keeps a pointer to the GGUF bytes (the memory-mapped
// file), which must outlive the Weight (see WeightSource). Ops run synchronously on the
// calling thread (which also works in the pool), so results are visible as soon as an op
// returns; one thread at a time may issue ops.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backend.h"
#include "cpu/cpu_features.h"
#include "cpu/kernel_choice.h"

namespace hearth::kernels {

class CpuBackend final : public Backend {
  public:
    // n_threads: 0 = one per hardware thread. simd: Auto = the best the CPU supports
    // (HEARTH_CPU_SIMD=scalar forces the fallback); Scalar forces it (tests).
    // background: the pool's workers are background threads (the caller's thread keeps
    // its own class; see cpu::mark_current_thread_background).
    explicit CpuBackend(int n_threads = 0, cpu::SimdLevel simd = cpu::SimdLevel::Auto,
                        bool background = false);
    ~CpuBackend() override;

    std::string name() const override;  // "cpu (AVX2, 2 threads)"
    // "cpu AVX2": the SIMD level picks the kernels; the thread count splits rows, never a
    // row's sums.
    std::string numerics() const override;
    cpu::SimdLevel simd_level() const;
    int n_threads() const;
    // The matmul kernels chosen (cpu/kernel_choice.h): each type's default, then what
    // choose_kernels measured or read, then HEARTH_CPU_KERNELS.
    const cpu::KernelPlan& kernel_plan() const;
    // Forces kernels as HEARTH_CPU_KERNELS would (tests); returns the items not applied.
    std::vector<std::string> force_kernels(std::string_view spec);
    // Times the candidate kernels on these weights or reads the choice from the file
    // (cpu/kernel_tuner.h); returns one line per choice for the log.
    std::string choose_kernels(const std::vector<const Weight*>& weights,
                               const std::string& choice_file) override;

    std::unique_ptr<Buffer> alloc(std::size_t bytes) override;  // 64-byte aligned, uninitialised
    // 2 MiB and more: 2 MiB aligned and, on Linux, madvise(MADV_HUGEPAGE); every page
    // written once before it returns (the first touch happens here, not in a step).
    void populate(Buffer& buffer) override;
    bool host_memory() const override { return true; }
    std::unique_ptr<Buffer> alloc_scratch(std::size_t bytes) override;
    void upload(Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) override;
    void download(void* dst, const Buffer& src, std::size_t offset, std::size_t bytes) override;
    // The buffer's own memory: the ops have finished when their calls return.
    const void* read_back(const Buffer& src, std::size_t offset, std::size_t bytes) override;
    // Throws std::invalid_argument for a type the backend cannot multiply with or a
    // column count that is not a multiple of the type's block size.
    std::unique_ptr<Weight> load_weight(const WeightSource& source) override;
    void synchronize() override {}

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
    void geglu(const float* gate, const float* up, int64_t n, float* out) override;
    void scale(float* x, int64_t n, float s) override;
    void softcap(float* x, int64_t n, float cap) override;
    void add(float* x, const float* y, int64_t n) override;
    void gather_rows(const float* x, const int32_t* rows, int32_t count, int32_t n,
                     float* out) override;
    void top_k(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids, float* values,
               int32_t* invalid) override;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::kernels
