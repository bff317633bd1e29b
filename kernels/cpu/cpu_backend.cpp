#include "cpu/cpu_backend.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "cpu/aligned_buffer.h"
#include "cpu/attention.h"
#include "cpu/elementwise.h"
#include "cpu/kernel_tuner.h"
#include "cpu/matmul.h"
#include "cpu/thread_pool.h"
#include "quant/dequant_rows.h"

namespace hearth::kernels {

namespace {

class CpuBuffer final : public Buffer {
  public:
    // `bytes` usable; `capacity` (≥ bytes) allocated with the given alignment.
    explicit CpuBuffer(std::size_t bytes, std::size_t capacity = 0,
                       std::size_t alignment = cpu::kAlignment)
        : data_(::operator new (std::max({bytes, capacity, std::size_t{1}}),
                                std::align_val_t{alignment})),
          bytes_(bytes),
          alignment_(alignment) {}
    ~CpuBuffer() override { ::operator delete (data_, std::align_val_t{alignment_}); }
    CpuBuffer(const CpuBuffer&) = delete;
    CpuBuffer& operator=(const CpuBuffer&) = delete;
    void* data() override { return data_; }
    std::size_t bytes() const override { return bytes_; }
    const void* cdata() const { return data_; }

  private:
    void* data_;
    std::size_t bytes_;
    std::size_t alignment_;
};

// Transparent huge pages for scratch: the first 512-token prefill of a 1B-shaped model
// spent 7-14 % of its time first-touching ~50 MB of activations 4 KiB page by page (perf,
// clear_page_erms under page faults, in a VM); a 2 MiB page takes one fault. Not for the
// KV cache, whose blocks are touched a few KiB at a time: huge pages there made the same
// prefill zero whole 2 MiB pages it did not use (26 %).
constexpr std::size_t kHugePage = std::size_t{2} << 20;

// A weight read in place from the mapped model file, with the copy repacked for the
// matmul kernel where it wants one (weight_pack.h).
// The whole pages inside [data, data + bytes) of a read-only file mapping, dropped from
// the process (Linux; elsewhere nothing is done).
void release_file_pages([[maybe_unused]] const uint8_t* data, [[maybe_unused]] std::size_t bytes) {
#if defined(__linux__)
    const auto page = static_cast<std::uintptr_t>(4096);
    const auto lo = (reinterpret_cast<std::uintptr_t>(data) + page - 1) & ~(page - 1);
    const auto hi = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(page - 1);
    if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);  // advice only
#endif
}

// With a packed copy, the file's pages of the weight are dropped from the process where
// the file backs them (WeightSource::file_backed): the products read only the copy, so
// the pages would otherwise stay resident beside it (a 1B-shaped IQ4_NL model: 1.28 GB
// resident where its file is 0.64 GB). The embedding look-up and the model's checks read
// a few of them back from the page cache.
class CpuWeight final : public Weight {
  public:
    CpuWeight(const cpu::WeightView& v, cpu::SimdLevel level, bool file_backed)
        : Weight(v.type, v.rows, v.cols), view_(v) {
        if (const std::size_t bytes = cpu::matmul_packed_bytes(level, view_); bytes > 0) {
            cpu::matmul_pack(level, view_, packed_.get_as<uint8_t>(bytes));
            if (file_backed)
                release_file_pages(v.data, static_cast<std::size_t>(v.rows) * v.row_bytes);
        }
    }
    const cpu::WeightView& view() const { return view_; }

  private:
    cpu::WeightView view_;
    cpu::AlignedBuffer packed_;
};

const cpu::WeightView& view_of(const Weight& w) {
    return static_cast<const CpuWeight&>(w).view();
}

}  // namespace

struct CpuBackend::Impl {
    Impl(int n_threads, cpu::SimdLevel simd, bool background)
        : level(simd), fns(cpu::elementwise_fns(simd)), pool(n_threads, background), plan(simd) {
        if (const char* env = std::getenv("HEARTH_CPU_KERNELS"))
            kernel_problems = plan.apply_forced(env);
    }
    cpu::SimdLevel level;
    const cpu::ElementwiseFns& fns;
    cpu::ThreadPool pool;
    cpu::KernelPlan plan;                      // the matmul kernel of each type and shape class
    std::vector<std::string> kernel_problems;  // HEARTH_CPU_KERNELS items not applied
    cpu::AlignedBuffer act_scratch;            // quantised activations of the current matmul
    // Two tables: models whose sliding-window layers rotate with another base (Gemma 3)
    // alternate between two parameter sets within a step.
    cpu::RopeTable rope_tables[2];
    int rope_last = 0;
    cpu::RopeTable shift_table;  // kv_shift's angles (its positions are deltas)
    std::vector<float> shift_rows;
    cpu::Attention attention;
};

CpuBackend::CpuBackend(int n_threads, cpu::SimdLevel simd, bool background) {
    if (n_threads <= 0) n_threads = static_cast<int>(std::thread::hardware_concurrency());
    if (n_threads <= 0) n_threads = 1;
    impl_ = std::make_unique<Impl>(n_threads, cpu::resolve_simd_level(simd), background);
}

CpuBackend::~CpuBackend() = default;

std::string CpuBackend::name() const {
    const int n = impl_->pool.size();
    return "cpu (" + std::string(cpu::simd_level_name(impl_->level)) + ", " + std::to_string(n) +
           (n == 1 ? " thread)" : " threads)");
}

std::string CpuBackend::numerics() const {
    return "cpu " + std::string(cpu::simd_level_name(impl_->level));
}

cpu::SimdLevel CpuBackend::simd_level() const {
    return impl_->level;
}
int CpuBackend::n_threads() const {
    return impl_->pool.size();
}

const cpu::KernelPlan& CpuBackend::kernel_plan() const {
    return impl_->plan;
}

std::vector<std::string> CpuBackend::force_kernels(std::string_view spec) {
    return impl_->plan.apply_forced(spec);
}

std::string CpuBackend::choose_kernels(const std::vector<const Weight*>& weights,
                                       const std::string& choice_file) {
    std::vector<cpu::WeightView> views;
    views.reserve(weights.size());
    for (const Weight* w : weights)
        if (w) views.push_back(view_of(*w));
    const cpu::TuneSummary s =
        cpu::tune_kernels(impl_->pool, impl_->act_scratch, impl_->plan, views, choice_file);
    std::string report;
    for (const std::string& p : impl_->kernel_problems) report += "HEARTH_CPU_KERNELS: " + p + "\n";
    report += s.report;
    if (s.measured > 0 && !choice_file.empty() && !s.saved)
        report += "could not write " + choice_file + "\n";
    return report;
}

std::unique_ptr<Buffer> CpuBackend::alloc(std::size_t bytes) {
    return std::make_unique<CpuBuffer>(bytes);
}

std::unique_ptr<Buffer> CpuBackend::alloc_scratch(std::size_t bytes) {
    if (bytes < kHugePage) return alloc(bytes);
    // Whole huge pages, so that the advice covers only this buffer.
    const std::size_t size = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    auto buf = std::make_unique<CpuBuffer>(bytes, size, kHugePage);
#if defined(__linux__)
    madvise(buf->data(), size, MADV_HUGEPAGE);  // advice only: a refusal leaves 4 KiB pages
#endif
    // Fault the pages in now: the engine reserves its largest step's activations at model
    // load, and the first prompt then runs on memory that is already there.
    auto* bytes_at = static_cast<volatile unsigned char*>(buf->data());
    for (std::size_t i = 0; i < size; i += 4096) bytes_at[i] = 0;
    return buf;
}

void CpuBackend::populate(Buffer& buffer) {
    auto* begin = static_cast<unsigned char*>(buffer.data());
    const std::size_t size = buffer.bytes();
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    // The whole pages inside the buffer, faulted in writable without writing them.
    const auto page = static_cast<std::uintptr_t>(4096);
    const auto lo = (reinterpret_cast<std::uintptr_t>(begin) + page - 1) & ~(page - 1);
    const auto hi = (reinterpret_cast<std::uintptr_t>(begin) + size) & ~(page - 1);
    if (hi > lo && madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE) == 0) return;
#endif
    auto* bytes_at = static_cast<volatile unsigned char*>(begin);
    for (std::size_t i = 0; i < size; i += 4096) bytes_at[i] = bytes_at[i];
}

void CpuBackend::upload(Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) {
    std::memcpy(static_cast<char*>(dst.data()) + offset, src, bytes);
}

void CpuBackend::download(void* dst, const Buffer& src, std::size_t offset, std::size_t bytes) {
    std::memcpy(dst, static_cast<const char*>(static_cast<const CpuBuffer&>(src).cdata()) + offset,
                bytes);
}

const void* CpuBackend::read_back(const Buffer& src, std::size_t offset, std::size_t bytes) {
    (void)bytes;
    return static_cast<const char*>(static_cast<const CpuBuffer&>(src).cdata()) + offset;
}

std::unique_ptr<Weight> CpuBackend::load_weight(const WeightSource& source) {
    const auto tr = quant::traits(source.type);
    if (!tr || !cpu::matmul_supports(source.type, source.cols) || source.rows <= 0 || !source.data)
        throw std::invalid_argument(
            "cpu backend: cannot use weight " + source.name + " (" +
            std::string(quant::type_name(static_cast<uint32_t>(source.type))) + ", " +
            std::to_string(source.rows) + " x " + std::to_string(source.cols) + ")");
    cpu::WeightView v;
    v.type = source.type;
    v.rows = source.rows;
    v.cols = source.cols;
    v.data = static_cast<const uint8_t*>(source.data);
    v.row_bytes = static_cast<std::size_t>(source.cols / tr->block_elems * tr->block_bytes);
    return std::make_unique<CpuWeight>(v, impl_->level, source.file_backed);
}

void CpuBackend::embed(const Weight& table, const int32_t* ids, int32_t n, float* out) {
    cpu::embed(impl_->pool, view_of(table), ids, n, out);
}

void CpuBackend::rms_norm(const float* x, const float* weight, int32_t rows, int32_t n, float eps,
                          float* out) {
    cpu::rms_norm(impl_->pool, impl_->fns, x, weight, rows, n, eps, out);
}

void CpuBackend::matmul(const Weight& w, const float* x, int32_t n_tokens, float* out,
                        const float* bias) {
    cpu::matmul(impl_->pool, impl_->plan, impl_->act_scratch, view_of(w), x, n_tokens, out, bias);
}

void CpuBackend::rope(float* x, const int32_t* positions, int32_t n_tokens, int32_t n_heads,
                      int32_t head_dim, const RopeParams& params) {
    Impl& im = *impl_;
    // Not the last table's parameters: the other table's (then it is a hit, else the
    // other, less recently used, is rebuilt).
    if (!im.rope_tables[im.rope_last].built_for(params)) im.rope_last = 1 - im.rope_last;
    cpu::rope(im.pool, im.rope_tables[im.rope_last], x, positions, n_tokens, n_heads, head_dim,
              params);
}

void CpuBackend::kv_append(const PagedKvLayer& cache, const float* k, const float* v,
                           const int32_t* slots, int32_t n_tokens) {
    cpu::kv_append(impl_->fns, cache, k, v, slots, n_tokens);
}

void CpuBackend::kv_shift(const PagedKvLayer& cache, const int32_t* src_slots,
                          const int32_t* dst_slots, const int32_t* deltas, int32_t n,
                          const RopeParams& rope) {
    // K rows to fp32, RoPE by the deltas (the model's own rope code and angles; cos and sin
    // unscaled), back to fp16: in pieces, so the fp32 copy stays small.
    Impl& im = *impl_;
    const auto row =
        static_cast<std::size_t>(cache.n_kv_heads) * static_cast<std::size_t>(cache.head_dim);
    RopeParams turn = rope;
    turn.attn_factor = 1.0f;
    constexpr int32_t kPiece = 256;
    im.shift_rows.resize(static_cast<std::size_t>(kPiece) * row);
    float* rows = im.shift_rows.data();
    for (int32_t at = 0; at < n; at += kPiece) {
        const int32_t m = std::min(kPiece, n - at);
        for (int32_t i = 0; i < m; ++i) {
            const auto src = static_cast<std::size_t>(src_slots[at + i]) * row;
            quant::dequantize_row_f16(cache.k + src, rows + static_cast<std::size_t>(i) * row,
                                      static_cast<int64_t>(row));
        }
        cpu::rope(im.pool, im.shift_table, rows, deltas + at, m, cache.n_kv_heads, cache.head_dim,
                  turn);
        for (int32_t i = 0; i < m; ++i) {
            const auto src = static_cast<std::size_t>(src_slots[at + i]) * row;
            const auto dst = static_cast<std::size_t>(dst_slots[at + i]) * row;
            im.fns.to_fp16(rows + static_cast<std::size_t>(i) * row, static_cast<int64_t>(row),
                           cache.k + dst);
            std::memcpy(cache.v + dst, cache.v + src, row * sizeof(uint16_t));
        }
    }
}

void CpuBackend::attention(const float* q, const PagedKvLayer& cache, const AttentionBatch& batch,
                           int32_t n_heads, float scale, float* out) {
    impl_->attention.run(impl_->pool, impl_->level, q, cache, batch, n_heads, scale, out);
}

void CpuBackend::swiglu(const float* gate, const float* up, int64_t n, float* out) {
    cpu::swiglu(impl_->pool, impl_->fns, gate, up, n, out);
}

void CpuBackend::geglu(const float* gate, const float* up, int64_t n, float* out) {
    cpu::geglu(impl_->pool, impl_->fns, gate, up, n, out);
}

void CpuBackend::scale(float* x, int64_t n, float s) {
    cpu::scale(impl_->pool, x, n, s);
}

void CpuBackend::softcap(float* x, int64_t n, float cap) {
    cpu::softcap(impl_->pool, x, n, cap);
}

void CpuBackend::add(float* x, const float* y, int64_t n) {
    cpu::add(impl_->pool, impl_->fns, x, y, n);
}

void CpuBackend::gather_rows(const float* x, const int32_t* rows, int32_t count, int32_t n,
                             float* out) {
    cpu::gather_rows(x, rows, count, n, out);
}

void CpuBackend::top_k(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids,
                       float* values, int32_t* invalid) {
    cpu::top_k_rows(logits, rows, n, k, ids, values, invalid);
}

}  // namespace hearth::kernels
