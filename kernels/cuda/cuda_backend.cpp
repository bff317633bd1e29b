#include "cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/attention.h"
#include "cuda/cuda_buffer.h"
#include "cuda/cuda_device.h"
#include "cuda/dequant.h"
#include "cuda/elementwise.h"
#include "cuda/matmul.h"
#include "cuda/top_k.h"
#include "quant/quant_types.h"

namespace hearth::kernels {

namespace {

// Device bytes held by a backend's buffers and weights; shared with them so that a buffer
// released after its backend (never done, but harmless) does not write freed memory.
struct Usage {
    std::atomic<std::size_t> total{0};
    std::atomic<std::size_t> weights{0};
};

std::string mib(std::size_t bytes) {
    return std::to_string((bytes + (std::size_t{1} << 19)) >> 20) + " MiB";
}

[[noreturn]] void fail(const std::string& what, cudaError_t err) {
    // Clears the runtime's last error: the kernel wrappers report cudaGetLastError() after
    // each launch, so a non-sticky error left there would fail the next healthy op too.
    // (A sticky one, a fault, stays: every later call reports it.)
    cudaGetLastError();
    throw BackendError("cuda: " + what + ": " + gpu::cuda_error_text(err));
}

void check(cudaError_t err, const char* what) {
    if (err != cudaSuccess) fail(what, err);
}

// cudaMalloc, or BackendError naming the size and the free memory.
void* device_alloc(std::size_t bytes, const std::string& what) {
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, bytes == 0 ? 1 : bytes);
    if (err == cudaSuccess) return p;
    cudaGetLastError();  // an allocation failure is not sticky; clear it
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    throw BackendError("cuda: cannot allocate " + mib(bytes) + " for " + what + " (" + mib(free_b) +
                       " of " + mib(total_b) + " free): " + gpu::cuda_error_text(err));
}

class CudaBuffer final : public Buffer {
  public:
    CudaBuffer(void* p, std::size_t bytes, std::shared_ptr<Usage> usage)
        : p_(p), bytes_(bytes), usage_(std::move(usage)) {
        usage_->total += bytes_;
    }
    ~CudaBuffer() override {
        cudaFree(p_);
        usage_->total -= bytes_;
    }
    void* data() override { return p_; }
    const void* cdata() const { return p_; }
    std::size_t bytes() const override { return bytes_; }

  private:
    void* p_;
    std::size_t bytes_;
    std::shared_ptr<Usage> usage_;
};

// A weight in its file format, with its launch plan and, for F32/BF16, its rows' scales
// (gpu::matmul_row_scales) in a second allocation.
class CudaWeight final : public Weight {
  public:
    CudaWeight(quant::TensorType type, int64_t rows, int64_t cols, void* p, std::size_t bytes,
               void* scales, gpu::MatmulPlan plan, std::shared_ptr<Usage> usage)
        : Weight(type, rows, cols),
          p_(p),
          scales_(scales),
          bytes_(bytes + (scales ? static_cast<std::size_t>(rows) * 4 : 0)),
          plan_(plan),
          usage_(std::move(usage)) {
        usage_->total += bytes_;
        usage_->weights += bytes_;
    }
    ~CudaWeight() override {
        cudaFree(p_);
        if (scales_) cudaFree(scales_);
        usage_->total -= bytes_;
        usage_->weights -= bytes_;
    }
    gpu::MatmulWeight matmul() const {
        return {type(), p_, rows(), cols(), static_cast<const float*>(scales_), plan_};
    }
    const void* data() const { return p_; }

  private:
    void* p_;
    void* scales_;
    std::size_t bytes_;
    gpu::MatmulPlan plan_;
    std::shared_ptr<Usage> usage_;
};

const CudaWeight& cuda_weight(const Weight& w) {
    return static_cast<const CudaWeight&>(w);
}

}  // namespace

struct CudaBackend::Impl {
    int device = 0;
    int sm_count = 1;  // decides the matrix products' K splits (gpu::matmul_plan)
    // Shared memory per SM: decides the attention's tiles (gpu::plan_attention).
    int smem_per_sm = gpu::attention_detail::kSmemPerSmFloor;
    std::string name;
    std::string numerics;
    gpu::CudaStream stream;
    std::shared_ptr<Usage> usage = std::make_shared<Usage>();
    gpu::MatmulMode matmul_mode = gpu::MatmulMode::Invariant;
    gpu::DeviceBuffer<float> attention_workspace;
    gpu::DeviceBuffer<float> matmul_workspace;
    // Step graphs (Backend::begin_capture): instantiated graphs by id, and the attention
    // workspaces outgrown while graphs may still point into them (freed with the graphs).
    std::vector<cudaGraphExec_t> graphs;
    std::vector<gpu::DeviceBuffer<float>> retired_workspaces;
    bool capturing = false;
    gpu::PinnedBuffer read_back;  // where read_back() copies a step's results

    // Makes the device current on the calling thread (the engine creates the backend on
    // one thread and runs it on another; another backend or list_cuda_devices may have
    // bound another device since): every entry point that touches the device calls it.
    // It asks the runtime (cudaGetDevice, a thread-local read) rather than trusting a cache
    // of its own, which any other cudaSetDevice made stale: a cuda:1 backend then
    // allocated and launched on GPU 0.
    void current() const { check(gpu::bind_device(device), "selecting the device"); }
    cudaStream_t s() const { return stream.get(); }

    // `ws` grown to hold `need` bytes, to the largest step seen (cudaFree waits for the
    // kernels using the old one). Step graphs may point into the old one: it then lives as
    // long as they do (and no cudaFree, which synchronizes, may run while capturing; the
    // capture is relaxed, so cudaMalloc may).
    // A step's growth takes a quarter more (fewer regrowths); a reservation is exact.
    gpu::DeviceBuffer<float>& grow(gpu::DeviceBuffer<float>& ws, std::size_t need, const char* what,
                                   bool exact = false) {
        if (ws.bytes() >= need) return ws;
        const std::size_t floats = (need + sizeof(float) - 1) / sizeof(float);
        if (capturing || !graphs.empty()) retired_workspaces.push_back(std::move(ws));
        ws.reset();
        if (cudaError_t err = ws.allocate(exact ? floats : floats + floats / 4);
            err != cudaSuccess) {
            cudaGetLastError();
            fail("allocating " + mib(need) + " of " + what, err);
        }
        return ws;
    }
};

std::unique_ptr<CudaBackend> CudaBackend::create(int device, std::string* error) {
    const auto say = [&](std::string text) {
        if (error) *error = std::move(text);
        return nullptr;
    };
    std::vector<GpuDevice> devices;
    std::string problem;
    if (!gpu::list_cuda_devices(&devices, &problem)) return say(problem);
    if (device < 0 || device >= static_cast<int>(devices.size()))
        return say("there is no CUDA device " + std::to_string(device) + " (" +
                   std::to_string(devices.size()) + " found)");
    const GpuDevice& d = devices[static_cast<std::size_t>(device)];
    if (!d.problem.empty()) return say(d.problem);
    auto impl = std::make_unique<Impl>();
    impl->device = device;
    impl->name = "cuda:" + std::to_string(device) + " (" + d.name + ", sm_" +
                 std::to_string(d.cc_major) + std::to_string(d.cc_minor) + ")";
    if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess)
        return say("cudaSetDevice: " + gpu::cuda_error_text(err));
    if (cudaError_t err =
            cudaDeviceGetAttribute(&impl->sm_count, cudaDevAttrMultiProcessorCount, device);
        err != cudaSuccess)
        return say("reading the multiprocessor count: " + gpu::cuda_error_text(err));
    if (cudaError_t err = cudaDeviceGetAttribute(
            &impl->smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
        err != cudaSuccess)
        return say("reading the shared memory per SM: " + gpu::cuda_error_text(err));
    impl->numerics = gpu::cuda_numerics_here(d.name, d.cc_major, d.cc_minor, impl->sm_count);
    if (cudaError_t err = impl->stream.create(); err != cudaSuccess)
        return say("cudaStreamCreate: " + gpu::cuda_error_text(err));
    return std::unique_ptr<CudaBackend>(new CudaBackend(std::move(impl)));
}

CudaBackend::CudaBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaBackend::~CudaBackend() {
    gpu::bind_device(impl_->device);  // no throwing here; a failure shows in what follows
    if (impl_->stream.get()) impl_->stream.synchronize();
    try {
        drop_graphs();
    } catch (const BackendError&) {
    }
}

std::string CudaBackend::name() const {
    return impl_->name;
}
std::string CudaBackend::numerics() const {
    return impl_->numerics;
}
int CudaBackend::device() const {
    return impl_->device;
}
std::size_t CudaBackend::bytes_allocated() const {
    return impl_->usage->total;
}
std::size_t CudaBackend::weight_bytes() const {
    return impl_->usage->weights;
}
std::size_t CudaBackend::free_device_bytes() const {
    std::size_t free_b = 0, total_b = 0;
    impl_->current();
    check(cudaMemGetInfo(&free_b, &total_b), "reading free memory");
    return free_b;
}

int CudaBackend::sm_count() const {
    return impl_->sm_count;
}

void CudaBackend::reserve_workspaces(std::size_t matmul_bytes, std::size_t attention_bytes) {
    impl_->current();
    impl_->grow(impl_->matmul_workspace, matmul_bytes, "matmul workspace", true);
    impl_->grow(impl_->attention_workspace, attention_bytes, "attention workspace", true);
}

void CudaBackend::set_batch_invariant(bool on) {
    impl_->matmul_mode = on ? gpu::MatmulMode::Invariant : gpu::MatmulMode::Fastest;
}

std::unique_ptr<Buffer> CudaBackend::alloc(std::size_t bytes) {
    impl_->current();
    return std::make_unique<CudaBuffer>(device_alloc(bytes, "a buffer"), bytes, impl_->usage);
}

void CudaBackend::upload(Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) {
    impl_->current();
    if (offset + bytes > dst.bytes()) throw BackendError("cuda: upload past the end of a buffer");
    if (impl_->capturing) throw BackendError("cuda: an upload while capturing a step graph");
    if (bytes == 0) return;
    // From pageable memory the copy is staged before the call returns, so `src` may be
    // reused at once; it runs in stream order with the ops.
    check(cudaMemcpyAsync(static_cast<char*>(dst.data()) + offset, src, bytes,
                          cudaMemcpyHostToDevice, impl_->s()),
          "copying to the device");
}

void CudaBackend::download(void* dst, const Buffer& src, std::size_t offset, std::size_t bytes) {
    impl_->current();
    if (offset + bytes > src.bytes()) throw BackendError("cuda: download past the end of a buffer");
    if (impl_->capturing) throw BackendError("cuda: a download while capturing a step graph");
    if (bytes == 0) return synchronize();
    const auto* from = static_cast<const char*>(static_cast<const CudaBuffer&>(src).cdata());
    check(cudaMemcpyAsync(dst, from + offset, bytes, cudaMemcpyDeviceToHost, impl_->s()),
          "copying from the device");
    synchronize();
}

const void* CudaBackend::read_back(const Buffer& src, std::size_t offset, std::size_t bytes) {
    if (offset + bytes > src.bytes())
        throw BackendError("cuda: a read-back past the end of a buffer");
    if (impl_->capturing) throw BackendError("cuda: a read-back while capturing a step graph");
    impl_->current();
    gpu::PinnedBuffer& host = impl_->read_back;
    if (host.bytes() < bytes) {
        // The previous copy may still be on its way into the old memory.
        check(impl_->stream.synchronize(), "running the step");
        std::size_t grown = 4096;
        while (grown < bytes) grown *= 2;
        check(host.allocate(grown), "allocating pinned host memory for a step's results");
    }
    if (bytes == 0) return host.data();
    const auto* from = static_cast<const char*>(static_cast<const CudaBuffer&>(src).cdata());
    check(cudaMemcpyAsync(host.data(), from + offset, bytes, cudaMemcpyDeviceToHost, impl_->s()),
          "copying a step's results from the device");
    return host.data();
}

std::unique_ptr<Weight> CudaBackend::load_weight(const WeightSource& source) {
    const auto tr = quant::traits(source.type);
    if (!tr || source.rows <= 0 || source.cols <= 0 || source.cols % tr->block_elems != 0 ||
        !source.data)
        throw std::invalid_argument(
            "cuda backend: cannot use weight " + source.name + " (" +
            std::string(quant::type_name(static_cast<uint32_t>(source.type))) + ", " +
            std::to_string(source.rows) + " x " + std::to_string(source.cols) + ")");
    const auto bytes =
        static_cast<std::size_t>(source.rows * (source.cols / tr->block_elems) * tr->block_bytes);
    if (impl_->capturing) throw BackendError("cuda: a weight upload while capturing a step graph");
    impl_->current();
    std::vector<float> scales;
    if (gpu::matmul_needs_row_scales(source.type)) {
        scales.resize(static_cast<std::size_t>(source.rows));
        gpu::matmul_row_scales(source.type, source.data, source.rows, source.cols, scales.data());
    }
    void* p = device_alloc(bytes, "weight " + source.name);
    void* sp = nullptr;
    if (!scales.empty()) {
        try {
            sp = device_alloc(scales.size() * 4, "the row scales of weight " + source.name);
        } catch (...) {
            cudaFree(p);
            throw;
        }
    }
    auto w = std::make_unique<CudaWeight>(
        source.type, source.rows, source.cols, p, bytes, sp,
        gpu::matmul_plan(source.rows, source.cols, impl_->sm_count), impl_->usage);
    // Synchronous: the mapped file's pages are read once, now. On the backend's stream and
    // waited for there: a plain cudaMemcpy from pageable memory may return before its DMA
    // lands, on the legacy stream, which the non-blocking step stream does not wait for.
    check(cudaMemcpyAsync(p, source.data, bytes, cudaMemcpyHostToDevice, impl_->s()),
          "uploading a weight");
    if (sp)
        check(cudaMemcpyAsync(sp, scales.data(), scales.size() * 4, cudaMemcpyHostToDevice,
                              impl_->s()),
              "uploading a weight's row scales");
    check(impl_->stream.synchronize(), "uploading a weight");
    return w;
}

void CudaBackend::synchronize() {
    if (impl_->capturing) throw BackendError("cuda: synchronizing while capturing a step graph");
    impl_->current();
    check(impl_->stream.synchronize(), "running the step");
}

bool CudaBackend::supports_graphs() const {
    return true;
}

void CudaBackend::begin_capture() {
    if (impl_->capturing) throw BackendError("cuda: a step graph is being captured already");
    impl_->current();
    // Relaxed: the attention workspace may still grow (cudaMalloc) inside a capture.
    check(cudaStreamBeginCapture(impl_->s(), cudaStreamCaptureModeRelaxed),
          "starting a step graph capture");
    impl_->capturing = true;
}

int32_t CudaBackend::end_capture() {
    impl_->current();
    if (!impl_->capturing) throw BackendError("cuda: end_capture without begin_capture");
    impl_->capturing = false;
    cudaGraph_t graph = nullptr;
    check(cudaStreamEndCapture(impl_->s(), &graph), "ending a step graph capture");
    cudaGraphExec_t exec = nullptr;
    const cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    check(err, "instantiating a step graph");
    impl_->graphs.push_back(exec);
    return static_cast<int32_t>(impl_->graphs.size() - 1);
}

void CudaBackend::replay(int32_t graph) {
    if (graph < 0 || graph >= static_cast<int32_t>(impl_->graphs.size()))
        throw BackendError("cuda: no step graph " + std::to_string(graph));
    impl_->current();
    check(cudaGraphLaunch(impl_->graphs[static_cast<std::size_t>(graph)], impl_->s()),
          "replaying a step graph");
}

void CudaBackend::drop_graphs() {
    impl_->current();
    if (impl_->capturing) {  // a capture an error cut short: end it and throw its graph away
        impl_->capturing = false;
        cudaGraph_t graph = nullptr;
        if (cudaStreamEndCapture(impl_->s(), &graph) == cudaSuccess && graph)
            cudaGraphDestroy(graph);
        cudaGetLastError();
    }
    if (!impl_->graphs.empty()) impl_->stream.synchronize();
    for (cudaGraphExec_t g : impl_->graphs) cudaGraphExecDestroy(g);
    impl_->graphs.clear();
    impl_->retired_workspaces.clear();
}

void CudaBackend::embed(const Weight& table, const int32_t* ids, int32_t n, float* out) {
    impl_->current();  // the first op of a step
    check(gpu::embed_cuda(table.type(), cuda_weight(table).data(), table.cols(), ids, n, out,
                          impl_->s()),
          "embedding");
}

void CudaBackend::rms_norm(const float* x, const float* weight, int32_t rows, int32_t n, float eps,
                           float* out) {
    impl_->current();
    check(gpu::rms_norm_cuda(x, weight, rows, n, eps, out, impl_->s()), "rms_norm");
}

void CudaBackend::matmul(const Weight& w, const float* x, int32_t n_tokens, float* out,
                         const float* bias) {
    impl_->current();
    const gpu::MatmulWeight mw = cuda_weight(w).matmul();
    const auto kernel = gpu::matmul_kernel_for(impl_->matmul_mode, n_tokens);
    const std::size_t need =
        gpu::matmul_workspace_bytes(kernel, mw.plan, mw.rows, mw.cols, n_tokens);
    gpu::DeviceBuffer<float>& ws = impl_->grow(impl_->matmul_workspace, need, "matmul workspace");
    check(gpu::matmul_cuda(mw, x, n_tokens, out, bias, impl_->matmul_mode, ws.data(), ws.bytes(),
                           impl_->s()),
          "matmul");
}

void CudaBackend::rope(float* x, const int32_t* positions, int32_t n_tokens, int32_t n_heads,
                       int32_t head_dim, const RopeParams& params) {
    impl_->current();
    check(gpu::rope_cuda(x, positions, n_tokens, n_heads, head_dim, params, impl_->s()), "rope");
}

void CudaBackend::kv_append(const PagedKvLayer& cache, const float* k, const float* v,
                            const int32_t* slots, int32_t n_tokens) {
    impl_->current();
    check(gpu::kv_append_cuda(cache, k, v, slots, n_tokens, impl_->s()), "kv_append");
}

void CudaBackend::kv_shift(const PagedKvLayer& cache, const int32_t* src_slots,
                           const int32_t* dst_slots, const int32_t* deltas, int32_t n,
                           const RopeParams& rope) {
    impl_->current();
    check(gpu::kv_shift_cuda(cache, src_slots, dst_slots, deltas, n, rope, impl_->s()), "kv_shift");
}

void CudaBackend::attention(const float* q, const PagedKvLayer& cache, const AttentionBatch& batch,
                            int32_t n_heads, float scale, float* out) {
    impl_->current();
    const std::size_t need = gpu::attention_workspace_bytes(batch, n_heads, cache.head_dim);
    gpu::DeviceBuffer<float>& ws =
        impl_->grow(impl_->attention_workspace, need, "attention workspace");
    check(gpu::attention_cuda(q, cache, batch, n_heads, scale, out, ws.data(), ws.bytes(),
                              impl_->s(), gpu::AttentionShape::Planned, impl_->smem_per_sm),
          "attention");
}

void CudaBackend::swiglu(const float* gate, const float* up, int64_t n, float* out) {
    impl_->current();
    check(gpu::swiglu_cuda(gate, up, n, out, impl_->s()), "swiglu");
}

void CudaBackend::add(float* x, const float* y, int64_t n) {
    impl_->current();
    check(gpu::add_cuda(x, y, n, impl_->s()), "add");
}

void CudaBackend::geglu(const float* gate, const float* up, int64_t n, float* out) {
    impl_->current();
    check(gpu::geglu_cuda(gate, up, n, out, impl_->s()), "geglu");
}

void CudaBackend::scale(float* x, int64_t n, float s) {
    impl_->current();
    check(gpu::scale_cuda(x, n, s, impl_->s()), "scale");
}

void CudaBackend::softcap(float* x, int64_t n, float cap) {
    impl_->current();
    check(gpu::softcap_cuda(x, n, cap, impl_->s()), "softcap");
}

void CudaBackend::gather_rows(const float* x, const int32_t* rows, int32_t count, int32_t n,
                              float* out) {
    impl_->current();
    check(gpu::gather_rows_cuda(x, rows, count, n, out, impl_->s()), "gather_rows");
}

void CudaBackend::top_k(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids,
                        float* values, int32_t* invalid) {
    impl_->current();
    check(gpu::top_k_cuda(logits, rows, n, k, ids, values, invalid, impl_->s()), "top_k");
}

}  // namespace hearth::kernels
