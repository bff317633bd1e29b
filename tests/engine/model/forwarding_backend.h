// A Backend that forwards every call to another one: the base of the tests' backends that
// watch or reorder what a model asks of its backend (graph_recording_backend.h,
// range_recording_backend.h), which override only what they change.
#pragma once

#include <memory>
#include <string>

#include "backend.h"

namespace hearth::test {

class ForwardingBackend : public kernels::Backend {
  public:
    explicit ForwardingBackend(kernels::Backend& inner) : inner_(inner) {}

    std::string name() const override { return inner_.name(); }
    std::string numerics() const override { return inner_.numerics(); }
    std::unique_ptr<kernels::Buffer> alloc(std::size_t bytes) override {
        return inner_.alloc(bytes);
    }
    std::unique_ptr<kernels::Buffer> alloc_scratch(std::size_t bytes) override {
        return inner_.alloc_scratch(bytes);
    }
    bool host_memory() const override { return inner_.host_memory(); }
    void populate(kernels::Buffer& b) override { inner_.populate(b); }
    void upload(kernels::Buffer& dst, std::size_t offset, const void* src,
                std::size_t bytes) override {
        inner_.upload(dst, offset, src, bytes);
    }
    void download(void* dst, const kernels::Buffer& src, std::size_t offset,
                  std::size_t bytes) override {
        inner_.download(dst, src, offset, bytes);
    }
    std::unique_ptr<kernels::Weight> load_weight(const kernels::WeightSource& source) override {
        return inner_.load_weight(source);
    }
    void synchronize() override { inner_.synchronize(); }
    bool asynchronous() const override { return inner_.asynchronous(); }
    const void* read_back(const kernels::Buffer& src, std::size_t offset,
                          std::size_t bytes) override {
        return inner_.read_back(src, offset, bytes);
    }

    void embed(const kernels::Weight& t, const int32_t* ids, int32_t n, float* out) override {
        inner_.embed(t, ids, n, out);
    }
    void rms_norm(const float* x, const float* w, int32_t rows, int32_t n, float eps,
                  float* out) override {
        inner_.rms_norm(x, w, rows, n, eps, out);
    }
    void matmul(const kernels::Weight& w, const float* x, int32_t n_tokens, float* out,
                const float* bias) override {
        inner_.matmul(w, x, n_tokens, out, bias);
    }
    void rope(float* x, const int32_t* pos, int32_t n_tokens, int32_t n_heads, int32_t head_dim,
              const kernels::RopeParams& p) override {
        inner_.rope(x, pos, n_tokens, n_heads, head_dim, p);
    }
    void kv_append(const kernels::PagedKvLayer& c, const float* k, const float* v,
                   const int32_t* where, int32_t n_tokens) override {
        inner_.kv_append(c, k, v, where, n_tokens);
    }
    void kv_shift(const kernels::PagedKvLayer& c, const int32_t* src, const int32_t* dst,
                  const int32_t* deltas, int32_t n, const kernels::RopeParams& rope) override {
        inner_.kv_shift(c, src, dst, deltas, n, rope);
    }
    void attention(const float* q, const kernels::PagedKvLayer& c, const kernels::AttentionBatch& b,
                   int32_t n_heads, float scale, float* out) override {
        inner_.attention(q, c, b, n_heads, scale, out);
    }
    void swiglu(const float* g, const float* u, int64_t n, float* out) override {
        inner_.swiglu(g, u, n, out);
    }
    void geglu(const float* g, const float* u, int64_t n, float* out) override {
        inner_.geglu(g, u, n, out);
    }
    void add(float* x, const float* y, int64_t n) override { inner_.add(x, y, n); }
    void scale(float* x, int64_t n, float s) override { inner_.scale(x, n, s); }
    void softcap(float* x, int64_t n, float cap) override { inner_.softcap(x, n, cap); }
    void gather_rows(const float* x, const int32_t* rows, int32_t count, int32_t n,
                     float* out) override {
        inner_.gather_rows(x, rows, count, n, out);
    }
    void top_k(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids, float* values,
               int32_t* invalid) override {
        inner_.top_k(logits, rows, n, k, ids, values, invalid);
    }

  protected:
    kernels::Backend& inner_;
};

}  // namespace hearth::test
