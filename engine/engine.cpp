// The engine facade: creating the engine (model, tokenizer, KV cache sized to the
// budget, the thread) and the thread-safe public members, which post commands to the
// engine thread or read its published snapshot.
#include "engine.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "common/file_lock.h"
#include "common/log.h"
#include "cpu/cpu_backend.h"
#include "cpu/thread_pool.h"
#include "engine_impl.h"
#include "fit_estimate.h"
#include "vram_plan.h"
#if defined(HEARTH_WITH_CUDA)
#include "cuda/attention.h"
#include "cuda/cuda_backend.h"
#include "cuda/matmul.h"
#endif

namespace hearth {

using sched::RequestId;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

#if defined(HEARTH_WITH_CUDA)
constexpr bool kCudaInference = true;
#else
constexpr bool kCudaInference = false;
#endif

// Whether `auto` may choose CUDA. The CUDA backend is complete, but no GPU has run it
// yet (tests/gpu/run.sh, issue 12): until it has passed there, a user gets it by choosing
// "cuda" explicitly, and auto keeps the proven CPU path and says so.
constexpr bool kCudaVerifiedOnGpu = false;
constexpr const char* kUnverifiedReason =
    "the CUDA backend has not yet been verified on a GPU; choose the device \"cuda\" to try it";

// The device for `config`. The driver is asked only when CUDA may be chosen (listing
// creates a context, and its memory, on every GPU); otherwise choose_device() answers
// from the policy alone.
Result<DeviceChoice> choose_engine_device(const EngineConfig& config, const gguf::GgufFile& file) {
    auto request = parse_device(config.device);
    if (!request) return request.error();
    const CudaSupport cuda = engine_cuda_support();
    const bool may_use_cuda =
        cuda.inference && (request->automatic ? cuda.automatic : request->kind == DeviceKind::Cuda);
    GpuInventory gpus;
    std::uint64_t needed = 0;
    if (may_use_cuda) {
        auto mc = ModelConfig::from_gguf(file);
        if (!mc) return make_error(config.model_path + ": " + mc.message());
        needed = vram_bytes_needed(vram_needs(config, *mc, file.file_size()));
        gpus = list_gpus();
    }
    auto choice = choose_device(*request, gpus, needed, cuda);
    if (choice && !choice->cpu_reason.empty())
        log::get("engine")->info("device: the CPU ({})", choice->cpu_reason);
    return choice;
}

// The backend for `device`; for CUDA also the KV blocks that fit beside the model.
Result<std::unique_ptr<kernels::Backend>> make_backend(const EngineConfig& config,
                                                       const DeviceChoice& device) {
    if (device.kind == DeviceKind::Cpu)
        return std::unique_ptr<kernels::Backend>(std::make_unique<kernels::CpuBackend>(
            config.n_threads, kernels::cpu::SimdLevel::Auto, config.background_priority));
#if defined(HEARTH_WITH_CUDA)
    std::string why;
    auto cuda = kernels::CudaBackend::create(device.index, &why);
    if (!cuda) return make_error(device.description + ": " + why);
    cuda->set_batch_invariant(config.batch_invariant);
    return std::unique_ptr<kernels::Backend>(std::move(cuda));
#else
    return make_error(device.description + ": this build has no CUDA backend");
#endif
}

#if defined(HEARTH_WITH_CUDA)
// The plan counts the workspaces for a device of this many SMs, more than any GPU has: the
// matrix products' K splits (and so their partial sums) grow with the SM count.
constexpr int kPlanSmBound = 256;

// The CUDA kernels' workspaces at their worst: the largest step (max_batch_tokens tokens),
// max_running sequences, each seeing at most `context` positions.
struct CudaWorkspaces {
    std::size_t matmul = 0, attention = 0;
};
CudaWorkspaces cuda_workspaces(const EngineConfig& config, const ModelConfig& mc, int64_t context,
                               int sm_count) {
    const int64_t q = mc.n_head * mc.head_dim, kv = mc.n_head_kv * mc.head_dim;
    // Every product a forward pass runs, fused layouts included (QKV, gate-up).
    const gpu::MatmulShape shapes[] = {{q, mc.n_embd},          {kv, mc.n_embd},
                                       {q + 2 * kv, mc.n_embd}, {mc.n_embd, q},
                                       {mc.n_ff, mc.n_embd},    {2 * mc.n_ff, mc.n_embd},
                                       {mc.n_embd, mc.n_ff},    {mc.n_vocab, mc.n_embd}};
    const int32_t step = std::max(config.scheduler.max_batch_tokens, 1);
    CudaWorkspaces w;
    w.matmul = gpu::matmul_workspace_bound(shapes, std::size(shapes), step, sm_count);
    w.attention = gpu::attention_workspace_bound(
        step, std::max(config.scheduler.max_running, 1),
        static_cast<int32_t>(std::min<int64_t>(context, INT32_MAX)),
        static_cast<int32_t>(mc.n_head), static_cast<int32_t>(mc.head_dim));
    return w;
}
#endif

int64_t served_context(const EngineConfig& config, const ModelConfig& mc) {
    return config.context_length > 0 ? std::min(config.context_length, mc.context_length)
                                     : mc.context_length;
}

// KV blocks for a CUDA device: what plan_vram() leaves after the model (or the user's
// budget), measured on the device's free memory before the weights are uploaded. The
// kernels' workspaces, which the plan counts, are allocated here, once.
Result<std::size_t> cuda_kv_blocks(const EngineConfig& config, const gguf::GgufFile& file,
                                   [[maybe_unused]] kernels::Backend& backend) {
#if defined(HEARTH_WITH_CUDA)
    auto mc = ModelConfig::from_gguf(file);
    if (!mc) return mc.error();
    auto& cuda = static_cast<kernels::CudaBackend&>(backend);
    const auto free_b = cuda.free_device_bytes();
    auto plan = plan_vram(free_b, vram_needs(config, *mc, file.file_size()));
    if (!plan) return plan.error();
    const CudaWorkspaces w =
        cuda_workspaces(config, *mc, served_context(config, *mc), cuda.sm_count());
    try {
        cuda.reserve_workspaces(w.matmul, w.attention);
    } catch (const kernels::BackendError& e) {
        return make_error(e.what());
    }
    return static_cast<std::size_t>(plan->kv_blocks);
#else
    (void)config;
    (void)file;
    return make_error("this build has no CUDA backend");
#endif
}

}  // namespace

CudaSupport engine_cuda_support() {
    CudaSupport s;
    s.inference = kCudaInference;
    s.automatic = kCudaInference && kCudaVerifiedOnGpu;
    if (!s.automatic)
        s.auto_reason = kCudaInference ? kUnverifiedReason : "this build has no CUDA backend";
    return s;
}

VramNeeds vram_needs(const EngineConfig& config, const ModelConfig& mc,
                     std::uint64_t weight_bytes) {
    const int32_t bs = std::clamp(config.block_size, 1, 1024);
    const KvShape shape{static_cast<int32_t>(mc.n_layer), static_cast<int32_t>(mc.n_head_kv),
                        static_cast<int32_t>(mc.head_dim), bs};
    VramNeeds needs;
    needs.weight_bytes = weight_bytes;  // quantised weights stay quantised
    needs.kv_bytes_per_block = KvStorage::bytes_per_block(shape);
    const int64_t context = served_context(config, mc);
    needs.context_blocks = (context + bs - 1) / bs;
    needs.kv_budget_bytes = config.kv_mb * kMiB;
    // The largest step: max_batch_tokens tokens, as many sequences and logit rows at
    // most, each sequence's block table at most a full context.
    const int32_t step = std::max(config.scheduler.max_batch_tokens, 1);
    const auto tables = static_cast<int32_t>(
        std::min<int64_t>(int64_t{step} * needs.context_blocks, int64_t{1} << 30));
    needs.activation_bytes = LlamaModel::scratch_bytes(mc, step, step, step, tables);
#if defined(HEARTH_WITH_CUDA)
    const CudaWorkspaces w = cuda_workspaces(config, mc, context, kPlanSmBound);
    needs.workspace_bytes = w.matmul + w.attention;
#endif
    return needs;
}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Engine::~Engine() {
    {
        std::lock_guard lk(impl_->mu);
        impl_->stop = true;
    }
    impl_->work_cv.notify_one();
    if (impl_->thread.joinable()) impl_->thread.join();
    impl_->disk.reset();  // writes down what the last turns queued (bounded), then stops
}

// The disk tier, when the config asks for one. Failing to open it is not an error: the
// engine runs without it, and the stats say why.
void Engine::Impl::open_disk_tier(const KvShape& shape) {
    if (config.kv_disk_dir.empty() || config.kv_disk_mb == 0) return;
    if (!config.prefix_caching) {
        disk_error = "prefix caching is off";
        return;
    }
    disk_shape = shape;
    kv::TierKey::Parts parts;
    parts.model = file->content_fingerprint();
    parts.numerics =
        backend->numerics() + (config.batch_invariant ? " batch-invariant" : " per-step");
    parts.n_layers = shape.n_layers;
    parts.n_kv_heads = shape.n_kv_heads;
    parts.head_dim = shape.head_dim;
    parts.block_size = shape.block_size;
    kv::DiskTierConfig dc;
    dc.dir = config.kv_disk_dir;
    dc.budget_bytes = static_cast<std::uint64_t>(config.kv_disk_mb) * kMiB;
    auto tier = kv::DiskTier::open(dc, kv::TierKey::make(parts), KvStorage::bytes_per_block(shape));
    if (!tier) {
        const bool again = disk_lock_held;
        disk_lock_held = tier.error().code == FileLock::kHeld;
        disk_retry_at = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        if (!again)
            log::get("engine")->warn("running without the KV disk tier: {}", tier.message());
        std::lock_guard lk(snapshot_mu);
        disk_error = tier.message();
        return;
    }
    if (disk_lock_held) log::get("engine")->info("the KV disk tier is free now: using it");
    disk_lock_held = false;
    tier.value()->set_on_loaded([this] {
        {
            std::lock_guard lk(mu);
            loads_done = true;
        }
        work_cv.notify_one();
    });
    scheduler->set_disk_tier(tier.value().get());
    std::lock_guard lk(snapshot_mu);
    disk = std::move(tier).value();
    disk_error.clear();
}

void Engine::Impl::retry_disk_tier() {
    if (disk_lock_held && std::chrono::steady_clock::now() >= disk_retry_at)
        open_disk_tier(disk_shape);
}

// A function-try-block: a device call that throws (out of memory between the plan and an
// allocation, a driver error) is an error to return, not an exception out of a load.
Result<std::unique_ptr<Engine>> Engine::create(const EngineConfig& config) try {
    auto impl = std::make_unique<Impl>();
    impl->config = config;
    auto file = gguf::GgufFile::open(config.model_path);
    if (!file) return file.error();
    impl->file = std::move(file).value();

    auto device = choose_engine_device(config, *impl->file);
    if (!device) return device.error();
    impl->device = std::move(device).value();
    auto backend = make_backend(config, impl->device);
    if (!backend) return backend.error();
    impl->backend = std::move(backend).value();
    if (config.wrap_backend) impl->backend = config.wrap_backend(std::move(impl->backend));
    std::size_t cuda_blocks = 0;  // the KV blocks planned on the device's free memory
    if (impl->device.kind == DeviceKind::Cuda) {
        auto blocks = cuda_kv_blocks(config, *impl->file, *impl->backend);
        if (!blocks) return make_error(impl->device.description + ": " + blocks.message());
        cuda_blocks = *blocks;
    }
    impl->file->prefetch();
    auto model = LlamaModel::load(*impl->file, *impl->backend);
    if (!model) return make_error(config.model_path + ": " + model.message());
    impl->model = std::move(model).value();
    if (config.context_length > 0)
        if (auto served = impl->model->set_context_length(config.context_length); !served)
            return make_error(config.model_path + ": " + served.message());
    // The shared cache serves KV computed in other steps (decode or prefill chunks): it
    // must equal what recomputing it would give (docs/architecture.md, batch invariance).
    impl->model->set_batch_invariant(config.batch_invariant);
    impl->model->set_step_graphs(config.step_graphs);
    impl->model->reserve_activations(std::max(config.scheduler.max_batch_tokens, 1));
    if (!config.kernel_choice_file.empty()) {
        const auto t0 = std::chrono::steady_clock::now();
        const std::string report =
            impl->backend->choose_kernels(impl->model->matmul_weights(), config.kernel_choice_file);
        if (!report.empty())
            log::get("engine")->info(
                "kernels ({:.0f} ms):\n{}",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count(),
                report);
    }
    auto tokenizer = Tokenizer::from_gguf(*impl->file);
    if (!tokenizer) return make_error(config.model_path + ": " + tokenizer.message());
    impl->tokenizer = std::move(tokenizer).value();

    const ModelConfig& mc = impl->model->config();
    if (config.block_size < 1 || config.block_size > 1024)
        return make_error("the KV block size must be between 1 and 1024 tokens");
    const KvShape shape{static_cast<int32_t>(mc.n_layer), static_cast<int32_t>(mc.n_head_kv),
                        static_cast<int32_t>(mc.head_dim), config.block_size};
    // The fit estimate (fit_estimate.h) sizes it the same way, before a model is opened.
    const KvSizing sizing = kv_cache_sizing(shape, mc.context_length, config.kv_mb);
    const std::size_t per_block = sizing.per_block;
    const std::size_t n_blocks =
        cuda_blocks > 0 ? std::min<std::size_t>(cuda_blocks, 1u << 24) : sizing.n_blocks;
    if (n_blocks < 2)
        return make_error("a KV cache of " + std::to_string(config.kv_mb) +
                          " MB holds fewer than 2 blocks of " + std::to_string(config.block_size) +
                          " tokens for this model (" + std::to_string(per_block) +
                          " bytes each); give it more memory");
    auto storage = KvStorage::create(*impl->backend, shape, static_cast<int32_t>(n_blocks));
    if (!storage) return storage.error();
    impl->storage = std::move(storage).value();

    kv::KvCacheConfig kc;
    kc.n_blocks = static_cast<int32_t>(n_blocks);
    kc.block_size = config.block_size;
    kc.max_pinned_share = config.max_pinned_share;
    kc.prefix_caching = config.prefix_caching;
    kc.hash_keys.model_fingerprint = impl->file->fingerprint();
    impl->cache = std::make_unique<kv::KvCacheManager>(kc);
    impl->scheduler = std::make_unique<sched::Scheduler>(*impl->model, *impl->storage, *impl->cache,
                                                         *impl->tokenizer, config.scheduler);
    // A pass that read the weights' file while another program truncated it read zeros
    // (gguf/truncation_guard.h): its requests fail instead of sampling from them.
    impl->scheduler->set_weights_check([raw = impl.get()] { return raw->check_model_file(); });
    impl->open_disk_tier(shape);
    if (!impl->storage->host_visible() && config.prefix_caching && config.kv_host_mb > 0) {
        impl->host =
            std::make_unique<kv::HostTier>(static_cast<std::uint64_t>(config.kv_host_mb) * kMiB);
        impl->scheduler->set_host_tier(impl->host.get());
    }
    log::get("engine")->info(
        "engine ready: {} on {}, KV cache {} blocks of {} tokens ({} MiB), "
        "prefix caching {}",
        mc.name.empty() ? config.model_path : mc.name, impl->backend->name(), n_blocks,
        config.block_size, n_blocks * per_block / kMiB, config.prefix_caching ? "on" : "off");
    impl->update_stats();
    Impl* raw = impl.get();
    const bool background = config.background_priority;
    impl->thread = std::thread([raw, background] {
        if (background && !kernels::cpu::mark_current_thread_background())
            log::get("engine")->debug(
                "inference threads run as normal threads (no background class here)");
        raw->run();
    });
    return std::unique_ptr<Engine>(new Engine(std::move(impl)));
} catch (const kernels::BackendError& e) {
    return make_error(config.model_path + ": " + e.what());
}

const ModelConfig& Engine::model_config() const {
    return impl_->model->config();
}
const Tokenizer& Engine::tokenizer() const {
    return *impl_->tokenizer;
}
const gguf::GgufFile& Engine::file() const {
    return *impl_->file;
}
const DeviceChoice& Engine::device() const {
    return impl_->device;
}
Engine::DeviceMemory Engine::device_memory() const {
    DeviceMemory m;
#if defined(HEARTH_WITH_CUDA)
    if (impl_->device.kind == DeviceKind::Cuda) {
        const auto& cuda = static_cast<const kernels::CudaBackend&>(*impl_->backend);
        m.weight_bytes = cuda.weight_bytes();
        m.kv_bytes = impl_->storage->bytes();
        m.held_bytes = cuda.bytes_allocated();
        try {
            m.free_bytes = cuda.free_device_bytes();
        } catch (const kernels::BackendError&) {
            m.free_bytes = 0;  // the device did not answer: nothing to report as free
        }
    }
#endif
    return m;
}

std::string Engine::backend_name() const {
    return impl_->backend->name();
}
const EngineConfig& Engine::config() const {
    return impl_->config;
}
int32_t Engine::kv_blocks() const {
    return impl_->storage->n_blocks();
}
std::size_t Engine::kv_bytes() const {
    return impl_->storage->bytes();
}

std::shared_ptr<RequestHandle> Engine::submit(sched::Request request, EventCallback on_event) {
    const RequestId id = impl_->next_id++;
    std::shared_ptr<RequestHandle> handle(new RequestHandle(id));
    impl_->post(Impl::Submit{id, std::move(request), handle, std::move(on_event)});
    return handle;
}

void Engine::cancel(RequestId id) {
    impl_->post(Impl::Cancel{id});
}
void Engine::cancel_all() {
    impl_->post(Impl::CancelAll{});
}

void Engine::pin(int64_t key, std::vector<int32_t> prefix) {
    {
        std::lock_guard lk(impl_->snapshot_mu);
        // Visible as Warming at once, before the engine thread takes the command.
        Impl::PinEntry& e = impl_->pin_entries[key];
        e.status = {key, PinState::Warming, static_cast<int32_t>(prefix.size()), 0, {}};
    }
    impl_->post(Impl::Pin{key, std::move(prefix)});
}

void Engine::unpin(int64_t key) {
    impl_->post(Impl::Unpin{key});
}

std::vector<PinStatus> Engine::pins() const {
    std::lock_guard lk(impl_->snapshot_mu);
    std::vector<PinStatus> out;
    for (const auto& [key, e] : impl_->pin_entries) out.push_back(e.status);
    return out;
}

EngineStats Engine::stats() const {
    EngineStats s;
    {
        std::lock_guard lk(impl_->snapshot_mu);
        s = impl_->stats;
    }
    // Asked here, not in the engine thread's per-step snapshot: the tier's worker goes on
    // writing after the engine thread has gone idle, and a step should not pay for it.
    kv::DiskTier* disk = nullptr;
    {
        std::lock_guard lk(impl_->snapshot_mu);
        disk = impl_->disk.get();
        if (!disk) s.disk.status = impl_->disk_error;
    }
    s.disk_on = disk != nullptr;
    if (disk) s.disk = disk->stats();  // the tier's own lock; it lives as long as the engine
    return s;
}

BlockMap Engine::block_map() const {
    bool post = false;
    BlockMap out;
    {
        std::lock_guard lk(impl_->snapshot_mu);
        out = impl_->block_map;
        if (!impl_->block_map_requested) post = impl_->block_map_requested = true;
    }
    if (post) impl_->post(Impl::SnapshotBlocks{});
    return out;
}

void Engine::prefetch(std::vector<int32_t> prompt, kv::Lineage lineage) {
    if (prompt.empty()) return;  // (no disk tier: the engine thread drops it)
    impl_->post(Impl::Prefetch{std::move(prompt), lineage});
}

void Engine::forget(std::vector<int32_t> prompt, kv::Lineage lineage) {
    if (prompt.empty()) return;
    impl_->post(Impl::Forget{std::move(prompt), lineage});
}

void Engine::Impl::forget_on_disk(const std::vector<int32_t>& prompt, const kv::Lineage& lineage) {
    if (!host && !disk) return;  // no tier keeps anything of it
    // Every full block of the chain, and at each block boundary every tail length that a
    // turn may have ended on (block_size - 1 hashes per boundary).
    const int32_t bs = cache->block_size();
    const std::span<const int32_t> tokens(prompt);
    const auto hashes = kv::hash_full_blocks_in(
        lineage, tokens, bs, tokens.size() / static_cast<std::size_t>(bs), cache->hash_keys());
    std::vector<kv::BlockHash> drop;
    const auto pinned = [&](const kv::BlockHash& h) {
        const kv::BlockId id = cache->pool().get_cached(h);
        return id != kv::kNoBlock && cache->pool().block(id).pin_count > 0;
    };
    for (std::size_t k = 0; k <= hashes.size(); ++k) {
        if (k < hashes.size() && !pinned(hashes[k])) drop.push_back(hashes[k]);
        std::optional<kv::BlockHash> parent;
        if (k > 0) parent = hashes[k - 1];
        const std::size_t at = k * static_cast<std::size_t>(bs);
        for (std::size_t len = 1; len < static_cast<std::size_t>(bs) && at + len <= tokens.size();
             ++len)
            drop.push_back(cache->block_hash(lineage, k, parent, tokens.subspan(at, len)));
    }
    if (host) host->erase(drop);
    if (!disk) return;
    const int64_t n = disk->erase(drop);
    log::get("engine")->info("forgot {} KV blocks on disk of a deleted {}-token history", n,
                             prompt.size());
}

void Engine::clear_disk_cache() {
    impl_->post(Impl::ClearDisk{});
}

void Engine::erase_disk_cache_of(std::string model_fingerprint) {
    impl_->post(Impl::EraseDiskModel{std::move(model_fingerprint)});
}

Result<void> Engine::audit() const {
    auto promise = std::make_shared<std::promise<std::string>>();
    auto answer = promise->get_future();
    impl_->post(Impl::Audit{std::move(promise)});
    std::string error = answer.get();
    if (!error.empty()) return make_error("KV audit: " + error);
    return {};
}

void Engine::wait_idle() const {
    std::unique_lock lk(impl_->mu);
    impl_->idle_cv.wait(lk, [&] { return impl_->idle; });
}

}  // namespace hearth
