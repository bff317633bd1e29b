#include "cuda/host_twin_backend.h"

#include <cstring>
#include <stdexcept>
#include <vector>

#include "cuda/attention.h"
#include "cuda/dequant.h"
#include "cuda/elementwise.h"
#include "cuda/matmul.h"
#include "cuda/top_k.h"
#include "host_memory.h"

namespace hearth::kernels {
namespace {

const void* data_of(const Weight& w) {
    return HostWeight::of(w).data();
}

void check(bool ok, const char* op) {
    if (!ok) throw BackendError(std::string("cuda host twin: ") + op + " refused its arguments");
}

constexpr int64_t kThreads = 1024;  // virtual threads of the grid-stride twins
constexpr int kTwinSmCount = 132;   // the matrix products' K splits as on an H100 SXM

class TwinBackend final : public Backend {
  public:
    std::string name() const override { return "cuda kernels on the host"; }
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
        check(gpu::embed_on_host(t.type(), data_of(t), t.cols(), ids, n, out, kThreads), "embed");
    }
    void rms_norm(const float* x, const float* w, int32_t rows, int32_t n, float eps,
                  float* out) override {
        check(gpu::rms_norm_on_host(x, w, rows, n, eps, out), "rms_norm");
    }
    void matmul(const Weight& w, const float* x, int32_t n_tokens, float* out,
                const float* bias) override {
        // The engine's numerics: batch invariant (split-K for decode steps, the tiled
        // tensor-core kernel beyond; the same bits), K split as on a 132-SM device.
        const auto kernel = gpu::matmul_kernel_for(gpu::MatmulMode::Invariant, n_tokens);
        gpu::MatmulWeight mw{w.type(), data_of(w),
                             w.rows(), w.cols(),
                             nullptr,  gpu::matmul_plan(w.rows(), w.cols(), kTwinSmCount)};
        std::vector<float> scales;
        if (gpu::matmul_needs_row_scales(w.type())) {
            scales.resize(static_cast<std::size_t>(w.rows()));
            gpu::matmul_row_scales(w.type(), mw.data, w.rows(), w.cols(), scales.data());
            mw.row_scales = scales.data();
        }
        check(gpu::matmul_on_host(mw, x, n_tokens, out, bias, kernel), "matmul");
    }
    void rope(float* x, const int32_t* pos, int32_t n_tokens, int32_t n_heads, int32_t head_dim,
              const RopeParams& p) override {
        check(gpu::rope_on_host(x, pos, n_tokens, n_heads, head_dim, p), "rope");
    }
    void kv_append(const PagedKvLayer& c, const float* k, const float* v, const int32_t* slots,
                   int32_t n_tokens) override {
        check(gpu::kv_append_on_host(c, k, v, slots, n_tokens), "kv_append");
    }
    void kv_shift(const PagedKvLayer& c, const int32_t* src, const int32_t* dst,
                  const int32_t* deltas, int32_t n, const RopeParams& rope) override {
        check(gpu::kv_shift_on_host(c, src, dst, deltas, n, rope), "kv_shift");
    }
    void attention(const float* q, const PagedKvLayer& c, const AttentionBatch& b, int32_t n_heads,
                   float scale, float* out) override {
        const std::size_t need = gpu::attention_workspace_bytes(b, n_heads, c.head_dim);
        if (workspace_.size() * sizeof(float) < need) workspace_.resize(need / sizeof(float) + 1);
        check(gpu::attention_on_host(q, c, b, n_heads, scale, out, workspace_.data(),
                                     workspace_.size() * sizeof(float)),
              "attention");
    }
    void swiglu(const float* g, const float* u, int64_t n, float* out) override {
        check(gpu::swiglu_on_host(g, u, n, out), "swiglu");
    }
    void add(float* x, const float* y, int64_t n) override {
        check(gpu::add_on_host(x, y, n), "add");
    }
    void geglu(const float* g, const float* u, int64_t n, float* out) override {
        check(gpu::geglu_on_host(g, u, n, out), "geglu");
    }
    void scale(float* x, int64_t n, float s) override {
        check(gpu::scale_on_host(x, n, s), "scale");
    }
    void softcap(float* x, int64_t n, float cap) override {
        check(gpu::softcap_on_host(x, n, cap), "softcap");
    }
    void gather_rows(const float* x, const int32_t* rows, int32_t count, int32_t n,
                     float* out) override {
        check(gpu::gather_rows_on_host(x, rows, count, n, out), "gather_rows");
    }
    void top_k(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids, float* values,
               int32_t* invalid) override {
        check(gpu::top_k_on_host(logits, rows, n, k, ids, values, invalid, gpu::kTopKWarps),
              "top_k");
    }

  private:
    std::vector<float> workspace_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_host_twin_backend() {
    return std::make_unique<TwinBackend>();
}

}  // namespace hearth::kernels
