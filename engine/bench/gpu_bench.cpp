#include "bench/gpu_bench.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <random>

#include "cuda/cuda_buffer.h"
#include "cuda/cuda_device.h"
#include "cuda/top_k.h"
#include "device.h"
#include "engine.h"
#include "model/model_config.h"
#include "model/synthetic_model.h"

namespace hearth {
namespace {

using Clock = std::chrono::steady_clock;

struct Shape {
    std::string name;
    int32_t n_embd, n_layer, n_head, n_head_kv, n_ff, vocab;
    bool tied;
};

Result<Shape> shape_named(const std::string& name) {
    if (name == "llama-1b") return Shape{name, 2048, 16, 32, 8, 8192, 128256, true};
    if (name == "llama-8b") return Shape{name, 4096, 32, 32, 8, 14336, 128256, false};
    if (name == "tiny") return Shape{name, 256, 2, 4, 2, 512, 2048, true};
    return make_error("unknown model shape " + name + " (llama-1b, llama-8b, tiny)");
}

Result<quant::TensorType> type_named(const std::string& name) {
    using T = quant::TensorType;
    for (T t : {T::F16, T::Q4_0, T::Q4_1, T::Q5_0, T::Q5_1, T::Q8_0, T::Q2_K, T::Q3_K, T::Q4_K,
                T::Q5_K, T::Q6_K, T::IQ4_NL, T::IQ4_XS})
        if (quant::traits(t)->name == name) return t;
    return make_error("no random weights of type " + name);
}

// Weights a token multiplies through (the matrix products; the output layer once).
double matmul_params(const ModelConfig& c) {
    const double E = static_cast<double>(c.n_embd), Q = static_cast<double>(c.n_head * c.head_dim),
                 KV = static_cast<double>(c.n_head_kv * c.head_dim);
    return E * static_cast<double>(c.n_vocab) +
           static_cast<double>(c.n_layer) *
               (2 * E * Q + 2 * E * KV + 3 * E * static_cast<double>(c.n_ff));
}

// Nominal dense fp16 tensor-core peak (fp32 accumulation) by compute capability; 0 unknown.
double nominal_tensor_peak(int cc_major, int cc_minor, const std::string& name) {
    if (cc_major == 9 && cc_minor == 0) return 989.4e12;  // H100 / H200 SXM
    if (cc_major == 8 && cc_minor == 0 && name.find("A100") != std::string::npos) return 312e12;
    return 0;
}

std::string num(double v, int digits = 1) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", digits, v);
    return b;
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

class TokenStream {
  public:
    TokenStream(int32_t vocab, uint64_t seed) : vocab_(vocab), rng_(seed) {}
    std::vector<int32_t> take(int n) {
        std::uniform_int_distribution<int32_t> d(3, vocab_ - 1);  // past the control tokens
        std::vector<int32_t> v(static_cast<size_t>(n));
        for (int32_t& t : v) t = d(rng_);
        return v;
    }

  private:
    int32_t vocab_;
    std::mt19937_64 rng_;
};

// Submits all requests at once and waits for all; returns their stats and the wall time.
struct BatchResult {
    std::vector<sched::RequestStats> stats;
    double wall_s = 0;
    std::string error;
};

BatchResult run_batch(Engine& engine, std::vector<std::vector<int32_t>> prompts,
                      int32_t max_tokens) {
    std::mutex mu;
    std::condition_variable cv;
    BatchResult out;
    std::size_t done = 0;
    static kv::SeqId next_conversation = 1;
    const auto t0 = Clock::now();
    for (auto& p : prompts) {
        sched::Request r;
        r.conversation = next_conversation++;
        r.prompt = std::move(p);
        r.max_tokens = max_tokens;
        r.stop_at_end_of_generation = false;
        r.park_at_end = false;
        engine.submit(std::move(r), [&](const sched::Event& e) {
            if (e.kind != sched::EventKind::Finished && e.kind != sched::EventKind::Error) return;
            std::lock_guard lk(mu);
            if (e.kind == sched::EventKind::Error && out.error.empty()) out.error = e.error;
            out.stats.push_back(e.stats);
            ++done;
            cv.notify_all();
        });
    }
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return done == prompts.size(); });
    out.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
    return out;
}

EngineConfig engine_config(const GpuBenchOptions& o, const std::string& path, bool caching,
                           bool invariant, bool graphs = true, bool overlap = true) {
    EngineConfig c;
    c.step_graphs = graphs;
    c.scheduler.overlap =
        overlap ? sched::SchedulerConfig::Overlap::Auto : sched::SchedulerConfig::Overlap::Off;
    c.model_path = path;
    c.device = o.device;
    c.kv_mb = 8192;
    c.prefix_caching = caching;
    c.batch_invariant = invariant;
    c.scheduler.max_batch_tokens = 2048;
    c.scheduler.max_running = 64;
    // The kernels' speed, one token a step as llama-bench's: a random-weight model's text
    // repeats, and drafts from it would measure the drafter instead.
    c.scheduler.speculation.mode = sched::SpeculationConfig::Mode::Off;
    return c;
}

// Prefill and decode figures of one model file.
Result<std::string> measure_model(const GpuBenchOptions& o, const std::string& path,
                                  const std::string& label, const std::string& type,
                                  double bandwidth, double peak) {
    std::string json = "{\"model\": " + json_string(label) + ", \"type\": " + json_string(type);
    const auto file_bytes = static_cast<double>(std::filesystem::file_size(path));
    json += ", \"weight_bytes\": " + num(file_bytes, 0);
    // Batch-invariant numerics with step graphs and overlapped steps (the default), the
    // fastest kernels, and invariant without graphs or without overlap (what each brings
    // to decode; batches 1 and 32 only).
    struct Mode {
        const char* name;
        bool invariant, graphs, overlap;
        std::vector<int> batches;
    };
    const std::vector<Mode> modes = {Mode{"invariant", true, true, true, {1, 8, 32}},
                                     Mode{"fastest", false, true, true, {1, 8, 32}},
                                     Mode{"invariant_no_graphs", true, false, true, {1, 32}},
                                     Mode{"invariant_no_overlap", true, true, false, {1, 32}}};
    for (const Mode& m : modes) {
        const bool invariant = m.invariant;
        auto engine = Engine::create(engine_config(o, path, true, invariant, m.graphs, m.overlap));
        if (!engine) return make_error(label + " " + type + ": " + engine.message());
        const auto vocab = static_cast<int32_t>((*engine)->model_config().n_vocab);
        const double params = matmul_params((*engine)->model_config());
        TokenStream tokens(vocab, 7);
        (void)run_batch(**engine, {tokens.take(64)}, 4);  // warm-up
        const std::string mode = m.name;
        json += ", " + json_string(mode) + ": {";
        if (invariant && m.graphs && m.overlap) {
            auto pre = run_batch(**engine, {tokens.take(o.prefill_tokens)}, 1);
            if (!pre.error.empty()) return make_error(label + ": " + pre.error);
            const double tps = o.prefill_tokens / (pre.stats.at(0).ttft_ms / 1000.0);
            json += "\"prefill_tokens_per_s\": " + num(tps);
            json += ", \"prefill_tflops\": " + num(2 * params * tps / 1e12, 2);
            if (peak > 0) json += ", \"prefill_peak_fraction\": " + num(2 * params * tps / peak, 3);
            json += ", ";
            if (o.progress)
                o.progress(label + " " + type + ": prefill " + num(tps, 0) + " tokens/s");
        }
        std::string rates, host, cpu;
        double b1 = 0;
        for (int b : m.batches) {
            std::vector<std::vector<int32_t>> prompts;
            for (int i = 0; i < b; ++i) prompts.push_back(tokens.take(32));
            const sched::SchedulerStats before = (*engine)->stats().scheduler;
            auto dec = run_batch(**engine, std::move(prompts), o.decode_tokens);
            if (!dec.error.empty()) return make_error(label + ": " + dec.error);
            (*engine)->wait_idle();
            const sched::SchedulerStats after = (*engine)->stats().scheduler;
            double tps = 0;  // the sum of the conversations' own rates
            for (const auto& s : dec.stats) tps += s.decode_tokens_per_s();
            if (b == 1) b1 = tps;
            rates += (b == 1 ? "" : ", ") + json_string(std::to_string(b)) + ": " + num(tps);
            // The scheduler's host time per step (planning, sampling, bookkeeping).
            const int64_t steps = after.steps - before.steps;
            const double host_us = steps > 0 ? static_cast<double>(after.host_ns - before.host_ns) /
                                                   1e3 / static_cast<double>(steps)
                                             : 0;
            host += (b == 1 ? "" : ", ") + json_string(std::to_string(b)) + ": " + num(host_us, 1);
            // The engine thread's CPU time over its wall time in steps: near 1 when it spins
            // while the device works, small when it sleeps (target: under 0.10).
            const int64_t step_ns = after.step_ns - before.step_ns;
            const double busy = step_ns > 0
                                    ? static_cast<double>(after.step_cpu_ns - before.step_cpu_ns) /
                                          static_cast<double>(step_ns)
                                    : 0;
            cpu += (b == 1 ? "" : ", ") + json_string(std::to_string(b)) + ": " + num(busy, 3);
            if (o.progress)
                o.progress(label + " " + type + " (" + mode + "): decode batch " +
                           std::to_string(b) + " " + num(tps, 0) + " tokens/s");
        }
        json += "\"decode_tokens_per_s\": {" + rates + "}";
        json += ", \"host_us_per_step\": {" + host + "}";
        json += ", \"engine_thread_cpu_fraction\": {" + cpu + "}";
        // Weight bytes read per token over the time per token, against the copy bandwidth.
        if (bandwidth > 0)
            json += ", \"decode_b1_bandwidth_fraction\": " + num(file_bytes * b1 / bandwidth, 3);
        json += "}";
    }
    return json + "}";
}

// N conversations sharing a 1,000-token persona, caching on (persona warm) vs off.
Result<std::string> measure_shared_persona(const GpuBenchOptions& o, const std::string& path,
                                           const std::string& label) {
    std::string json =
        "{\"model\": " + json_string(label) + ", \"persona_tokens\": 1000, \"runs\": [";
    const int out_tokens = 64;
    bool first = true;
    for (int n : {8, 32}) {
        double rate[2] = {0, 0};
        for (int caching = 1; caching >= 0; --caching) {
            auto engine = Engine::create(engine_config(o, path, caching == 1, true));
            if (!engine) return make_error(engine.message());
            const auto vocab = static_cast<int32_t>((*engine)->model_config().n_vocab);
            TokenStream tokens(vocab, 11);
            const std::vector<int32_t> persona = tokens.take(1000);
            const auto with_persona = [&](int unique) {
                std::vector<int32_t> p = persona;
                const auto u = tokens.take(unique);
                p.insert(p.end(), u.begin(), u.end());
                return p;
            };
            (void)run_batch(**engine, {with_persona(20)}, 1);  // the persona warm
            std::vector<std::vector<int32_t>> prompts;
            for (int i = 0; i < n; ++i) prompts.push_back(with_persona(20));
            auto r = run_batch(**engine, std::move(prompts), out_tokens);
            if (!r.error.empty()) return make_error(r.error);
            rate[caching] = n * out_tokens / r.wall_s;
        }
        json += std::string(first ? "" : ", ") + "{\"conversations\": " + std::to_string(n) +
                ", \"shared_tokens_per_s\": " + num(rate[1]) +
                ", \"unshared_tokens_per_s\": " + num(rate[0]) +
                ", \"ratio\": " + num(rate[0] > 0 ? rate[1] / rate[0] : 0, 2) + "}";
        first = false;
        if (o.progress)
            o.progress("shared persona, " + std::to_string(n) + " conversations: " +
                       num(rate[1], 0) + " vs " + num(rate[0], 0) + " tokens/s");
    }
    return json + "]}";
}

// The sampler's top-k on the device alone: k = 64 of Gemma's 262,144-entry vocabulary for
// a decode step's logit rows (1 and 32), the best of 20 runs timed with events, in
// microseconds per step. The floor (bench_table.py --floors): under 50 µs for 32 rows.
Result<std::string> measure_top_k() {
    constexpr int32_t kVocab = 262144, kK = 64;
    std::string json = "{\"vocab\": " + std::to_string(kVocab) + ", \"k\": " + std::to_string(kK) +
                       ", \"us_per_step\": {";
    for (int32_t rows : {1, 32}) {
        std::vector<float> host(static_cast<std::size_t>(rows) * kVocab);
        std::mt19937 rng(rows);
        std::normal_distribution<float> d(0.0f, 4.0f);
        for (float& v : host) v = d(rng);
        gpu::DeviceBuffer<float> x, values;
        gpu::DeviceBuffer<int32_t> ids, invalid;
        cudaEvent_t a = nullptr, b = nullptr;
        if (x.allocate(host.size()) != cudaSuccess ||
            values.allocate(static_cast<std::size_t>(rows) * kK) != cudaSuccess ||
            ids.allocate(static_cast<std::size_t>(rows) * kK) != cudaSuccess ||
            invalid.allocate(static_cast<std::size_t>(rows)) != cudaSuccess ||
            cudaMemcpy(x.data(), host.data(), host.size() * 4, cudaMemcpyHostToDevice) !=
                cudaSuccess ||
            cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess)
            return make_error("top-k benchmark: device memory");
        float best = 1e30f;
        for (int rep = 0; rep < 21; ++rep) {
            cudaEventRecord(a);
            gpu::top_k_cuda(x.data(), rows, kVocab, kK, ids.data(), values.data(), invalid.data(),
                            nullptr);
            cudaEventRecord(b);
            if (cudaEventSynchronize(b) != cudaSuccess) return make_error("top-k benchmark failed");
            float ms = 0;
            cudaEventElapsedTime(&ms, a, b);
            if (rep > 0) best = std::min(best, ms);  // the first run warms up
        }
        cudaEventDestroy(a);
        cudaEventDestroy(b);
        json += (rows == 1 ? "" : ", ") + json_string(std::to_string(rows)) + ": " +
                num(best * 1000.0, 1);
    }
    return json + "}}";
}

}  // namespace

Result<std::string> run_gpu_bench(const GpuBenchOptions& o) {
    std::string name = "cpu", cc = "";
    double bandwidth = 0, peak = 0;
    if (o.device != "cpu") {
        auto request = parse_device(o.device);
        if (!request || request->kind != DeviceKind::Cuda || request->automatic)
            return make_error("the benchmark's device is cuda:N or cpu, not " + o.device);
        const int index = std::max(request->index, 0);
        std::vector<GpuDevice> devices;
        std::string problem;
        if (!gpu::list_cuda_devices(&devices, &problem)) return make_error(problem);
        if (index >= static_cast<int>(devices.size()))
            return make_error("no CUDA device " + std::to_string(index));
        const GpuDevice& d = devices[static_cast<size_t>(index)];
        std::string error;
        bandwidth = gpu::measure_copy_bandwidth(index, std::size_t{1} << 30, 10, &error);
        if (bandwidth <= 0) return make_error("bandwidth: " + error);
        peak = nominal_tensor_peak(d.cc_major, d.cc_minor, d.name);
        name = d.name;
        cc = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
        if (o.progress) o.progress("copy bandwidth " + num(bandwidth / 1e9, 0) + " GB/s");
    }
    std::string json = "{\"device\": {\"name\": " + json_string(name) +
                       ", \"compute_capability\": " + json_string(cc) +
                       ", \"copy_bandwidth_gb_per_s\": " + num(bandwidth / 1e9) +
                       ", \"nominal_fp16_tensor_tflops\": " + num(peak / 1e12) + "}";
    if (o.device != "cpu") {
        auto top_k = measure_top_k();
        if (!top_k) return top_k.error();
        json += ", \"top_k\": " + *top_k;
        if (o.progress) o.progress("top-k: " + *top_k);
    }
    json += ", \"models\": [";
    bool first = true;
    const auto add = [&](const std::string& item) {
        json += (first ? "" : ", ") + item;
        first = false;
    };
    if (!o.default_model.empty()) {
        auto r = measure_model(o, o.default_model, "default", "Q4_1", bandwidth, peak);
        if (!r) return r.error();
        add(*r);
    }
    std::string persona_model;
    for (const std::string& shape_name : o.shapes) {
        auto shape = shape_named(shape_name);
        if (!shape) return shape.error();
        for (const std::string& type_name : o.types) {
            auto type = type_named(type_name);
            if (!type) return type.error();
            SyntheticModelSpec spec;
            spec.n_embd = shape->n_embd;
            spec.n_layer = shape->n_layer;
            spec.n_head = shape->n_head;
            spec.n_head_kv = shape->n_head_kv;
            spec.n_ff = shape->n_ff;
            spec.context_length = 8192;
            spec.rope_freq_base = 500000.0f;
            spec.weight_type = *type;
            spec.embedding_type = *type;
            spec.tied_embeddings = shape->tied;
            spec.fast_random_blocks = true;
            spec.padded_vocab = shape->vocab;
            auto bytes = make_synthetic_model(spec);
            if (!bytes) return make_error(shape_name + " " + type_name + ": " + bytes.message());
            const std::string path =
                o.work_dir + "/hearth-bench-" + shape_name + "-" + type_name + ".gguf";
            {
                std::FILE* f = std::fopen(path.c_str(), "wb");
                if (!f || std::fwrite(bytes->data(), 1, bytes->size(), f) != bytes->size() ||
                    std::fclose(f) != 0)
                    return make_error("cannot write " + path);
            }
            bytes->clear();
            bytes->shrink_to_fit();
            auto r = measure_model(o, path, shape_name, type_name, bandwidth, peak);
            if (!r) {
                std::filesystem::remove(path);
                return r.error();
            }
            add(*r);
            if (o.shared_persona && persona_model.empty() && type_name == o.types.front()) {
                auto p = measure_shared_persona(o, path, shape_name + " " + type_name);
                if (!p) {
                    std::filesystem::remove(path);
                    return p.error();
                }
                persona_model = *p;
            }
            std::filesystem::remove(path);
        }
    }
    json += "]";
    if (!persona_model.empty()) json += ", \"shared_persona\": " + persona_model;
    return json + "}\n";
}

}  // namespace hearth
