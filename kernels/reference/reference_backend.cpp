#include "reference/reference_backend.h"

#include <cstring>

#include "host_memory.h"
#include "reference/reference_ops.h"

namespace hearth::kernels {
namespace {

reference::WeightRef ref(const Weight& w) {
    return {w.type(), w.rows(), w.cols(), HostWeight::of(w).data()};
}

class ReferenceBackend final : public Backend {
  public:
    std::string name() const override { return "reference"; }
    std::unique_ptr<Buffer> alloc(std::size_t bytes) override {
        return std::make_unique<HostBuffer>(bytes);
    }
    void upload(Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) override {
        std::memcpy(static_cast<char*>(dst.data()) + offset, src, bytes);
    }
    void download(void* dst, const Buffer& src, std::size_t offset, std::size_t bytes) override {
        std::memcpy(dst,
                    static_cast<const char*>(static_cast<const HostBuffer&>(src).cdata()) + offset,
                    bytes);
    }
    std::unique_ptr<Weight> load_weight(const WeightSource& source) override {
        return std::make_unique<HostWeight>(source);
    }
    void synchronize() override {}
    void embed(const Weight& t, const int32_t* ids, int32_t n, float* out) override {
        reference::embed(ref(t), ids, n, out);
    }
    void rms_norm(const float* x, const float* w, int32_t rows, int32_t n, float eps,
                  float* out) override {
        reference::rms_norm(x, w, rows, n, eps, out);
    }
    void matmul(const Weight& w, const float* x, int32_t n_tokens, float* out,
                const float* bias) override {
        reference::matmul(ref(w), x, n_tokens, out, bias);
    }
    void rope(float* x, const int32_t* pos, int32_t n_tokens, int32_t n_heads, int32_t head_dim,
              const RopeParams& p) override {
        reference::rope(x, pos, n_tokens, n_heads, head_dim, p);
    }
    void kv_append(const PagedKvLayer& c, const float* k, const float* v, const int32_t* slots,
                   int32_t n_tokens) override {
        reference::kv_append(c, k, v, slots, n_tokens);
    }
    void kv_shift(const PagedKvLayer& c, const int32_t* src, const int32_t* dst,
                  const int32_t* deltas, int32_t n, const RopeParams& rope) override {
        reference::kv_shift(c, src, dst, deltas, n, rope);
    }
    void attention(const float* q, const PagedKvLayer& c, const AttentionBatch& b, int32_t n_heads,
                   float scale, float* out) override {
        reference::attention(q, c, b, n_heads, scale, out);
    }
    void swiglu(const float* g, const float* u, int64_t n, float* out) override {
        reference::swiglu(g, u, n, out);
    }
    void add(float* x, const float* y, int64_t n) override { reference::add(x, y, n); }
    void geglu(const float* g, const float* u, int64_t n, float* out) override {
        reference::geglu(g, u, n, out);
    }
    void scale(float* x, int64_t n, float s) override { reference::scale(x, n, s); }
    void softcap(float* x, int64_t n, float cap) override { reference::softcap(x, n, cap); }
    void gather_rows(const float* x, const int32_t* rows, int32_t count, int32_t n,
                     float* out) override {
        reference::gather_rows(x, rows, count, n, out);
    }
    void top_k(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids, float* values,
               int32_t* invalid) override {
        reference::top_k(logits, rows, n, k, ids, values, invalid);
    }
};

}  // namespace

std::unique_ptr<Backend> make_reference_backend() {
    return std::make_unique<ReferenceBackend>();
}

}  // namespace hearth::kernels
