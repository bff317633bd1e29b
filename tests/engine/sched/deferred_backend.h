// An asynchronous backend on the host, for tests: it wraps another backend (the CPU's)
// and behaves as a device stream does. Ops and uploads are queued when issued and run, in
// order, only when the host waits (synchronize, download, or a read-back collected
// through synchronize); a read-back's memory holds garbage until then, so a caller that
// reads results before waiting for them reads garbage. Its buffers are not host memory,
// so the KV tiers go through uploads and downloads, as on a GPU. The attention's host
// arrays are read when the op is issued, as the CUDA backend plans its launch then.
// Overlapped scheduler steps run on it exactly as they would on CUDA, here and in CI.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend.h"

namespace hearth::test {

class DeferredBackend final : public kernels::Backend {
  public:
    explicit DeferredBackend(std::unique_ptr<kernels::Backend> inner) : inner_(std::move(inner)) {}
    ~DeferredBackend() override { flush(); }

    // Set from any thread: downloads throw from then on, as a device that failed does.
    std::atomic<bool> fail_downloads{false};

    std::string name() const override { return inner_->name() + " (deferred)"; }
    std::string numerics() const override { return inner_->numerics(); }
    std::unique_ptr<kernels::Buffer> alloc(std::size_t bytes) override {
        return inner_->alloc(bytes);
    }
    std::unique_ptr<kernels::Buffer> alloc_scratch(std::size_t bytes) override {
        return inner_->alloc_scratch(bytes);
    }
    bool host_memory() const override { return false; }
    void populate(kernels::Buffer& b) override {
        flush();
        inner_->populate(b);
    }
    void upload(kernels::Buffer& dst, std::size_t offset, const void* src,
                std::size_t bytes) override {
        // The source may be reused as soon as the call returns (pageable memory is staged).
        auto copy = std::make_shared<std::vector<unsigned char>>(
            static_cast<const unsigned char*>(src), static_cast<const unsigned char*>(src) + bytes);
        queue([this, &dst, offset, copy] {
            inner_->upload(dst, offset, copy->data(), copy->size());
        });
    }
    void download(void* dst, const kernels::Buffer& src, std::size_t offset,
                  std::size_t bytes) override {
        flush();
        if (fail_downloads) throw kernels::BackendError("deferred: the device is gone (injected)");
        inner_->download(dst, src, offset, bytes);
    }
    const void* read_back(const kernels::Buffer& src, std::size_t offset,
                          std::size_t bytes) override {
        results_.assign(bytes, 0xff);  // NaN floats and -1 ids until the copy has run
        queue(
            [this, &src, offset, bytes] { inner_->download(results_.data(), src, offset, bytes); });
        return results_.data();
    }
    std::unique_ptr<kernels::Weight> load_weight(const kernels::WeightSource& source) override {
        return inner_->load_weight(source);
    }
    void synchronize() override { flush(); }
    bool asynchronous() const override { return true; }

    // Ops run later than issued, and the largest number that waited at once.
    long deferred_ops() const { return deferred_; }
    std::size_t deepest_queue() const { return deepest_; }

    void embed(const kernels::Weight& table, const int32_t* ids, int32_t n, float* out) override {
        queue([=, this, &table] { inner_->embed(table, ids, n, out); });
    }
    void rms_norm(const float* x, const float* weight, int32_t rows, int32_t n, float eps,
                  float* out) override {
        queue([=, this] { inner_->rms_norm(x, weight, rows, n, eps, out); });
    }
    void matmul(const kernels::Weight& w, const float* x, int32_t n_tokens, float* out,
                const float* bias) override {
        queue([=, this, &w] { inner_->matmul(w, x, n_tokens, out, bias); });
    }
    void rope(float* x, const int32_t* positions, int32_t n_tokens, int32_t n_heads,
              int32_t head_dim, const kernels::RopeParams& params) override {
        queue([=, this] { inner_->rope(x, positions, n_tokens, n_heads, head_dim, params); });
    }
    void kv_append(const kernels::PagedKvLayer& cache, const float* k, const float* v,
                   const int32_t* slot_ids, int32_t n_tokens) override {
        queue([=, this] { inner_->kv_append(cache, k, v, slot_ids, n_tokens); });
    }
    void kv_shift(const kernels::PagedKvLayer& cache, const int32_t* src, const int32_t* dst,
                  const int32_t* deltas, int32_t n, const kernels::RopeParams& rope) override {
        queue([=, this] { inner_->kv_shift(cache, src, dst, deltas, n, rope); });
    }
    void attention(const float* q, const kernels::PagedKvLayer& cache,
                   const kernels::AttentionBatch& batch, int32_t n_heads, float scale,
                   float* out) override {
        // The host arrays as they are now, when a device backend plans the launch.
        const auto n = static_cast<std::size_t>(batch.n_seqs);
        auto host = std::make_shared<std::vector<int32_t>>();
        for (const int32_t* a : {batch.host_q_start, batch.host_q_len, batch.host_kv_len})
            host->insert(host->end(), a, a + n);
        queue([=, this] {
            kernels::AttentionBatch b = batch;
            b.host_q_start = host->data();
            b.host_q_len = host->data() + n;
            b.host_kv_len = host->data() + 2 * n;
            inner_->attention(q, cache, b, n_heads, scale, out);
        });
    }
    void swiglu(const float* gate, const float* up, int64_t n, float* out) override {
        queue([=, this] { inner_->swiglu(gate, up, n, out); });
    }
    void geglu(const float* gate, const float* up, int64_t n, float* out) override {
        queue([=, this] { inner_->geglu(gate, up, n, out); });
    }
    void add(float* x, const float* y, int64_t n) override {
        queue([=, this] { inner_->add(x, y, n); });
    }
    void scale(float* x, int64_t n, float s) override {
        queue([=, this] { inner_->scale(x, n, s); });
    }
    void softcap(float* x, int64_t n, float cap) override {
        queue([=, this] { inner_->softcap(x, n, cap); });
    }
    void gather_rows(const float* x, const int32_t* rows, int32_t count, int32_t n,
                     float* out) override {
        queue([=, this] { inner_->gather_rows(x, rows, count, n, out); });
    }
    void top_k(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids, float* values,
               int32_t* invalid) override {
        queue([=, this] { inner_->top_k(logits, rows, n, k, ids, values, invalid); });
    }

  private:
    void queue(std::function<void()> op) {
        pending_.push_back(std::move(op));
        deepest_ = std::max(deepest_, pending_.size());
    }
    void flush() {
        // (An op may not queue others: they are all the inner backend's.)
        for (auto& op : pending_) op();
        deferred_ += static_cast<long>(pending_.size());
        pending_.clear();
    }

    std::unique_ptr<kernels::Backend> inner_;
    std::vector<std::function<void()>> pending_;
    std::vector<unsigned char> results_;
    long deferred_ = 0;
    std::size_t deepest_ = 0;
};

}  // namespace hearth::test
