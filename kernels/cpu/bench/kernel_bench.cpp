// hearth-kernel-bench: timings of the CPU backend's matmul and attention on the default
// model's shapes (SmolLM2-135M: hidden 576, FFN 1536, 9 heads / 3 KV heads of 64, 30
// layers, Q4_1 weights, Q8_0 tied output 49152 × 576).
//
//   hearth-kernel-bench [--threads N] [--scalar] [--quick]
//   hearth-kernel-bench --bandwidth [--threads N]   memory bandwidth (read and triad), GB/s,
//       and the int8 dot-product peak (int8_peak.h), GMAC/s
//   hearth-kernel-bench --llama-1b TYPE [--threads N] [--quick]
//       the matrices of a Llama 3.2 1B-shaped layer (hidden 2048, FFN 8192, 32 / 8 heads
//       of 64) in one weight type (Q4_0, Q4_K, Q5_K, Q6_K, Q8_0, ...): the per-op view of
//       scripts/bench/cpu-vs-llamacpp's shape models
//
// "hot": the same matrix every call (it stays in cache). "cold": rotating over enough
// copies to exceed the last-level cache, as decode streams all weights once per token.
// GB/s = weight bytes read per call / time. "decode matmuls" runs the 211 matvecs of one
// decode step (30 layers × 7 + output) over distinct weights: a lower bound on the time
// per token, all other ops excluded.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cpu/bench/int8_peak.h"
#include "cpu/bench/memory_bandwidth.h"
#include "cpu/cpu_backend.h"
#include "quant/fp16.h"

using hearth::kernels::CpuBackend;
using hearth::kernels::Weight;
using hearth::kernels::WeightSource;
using hearth::quant::TensorType;

namespace {

using Clock = std::chrono::steady_clock;

std::vector<uint8_t> random_weight(std::mt19937& rng, TensorType type, int64_t rows, int64_t cols) {
    const auto tr = *hearth::quant::traits(type);
    std::vector<uint8_t> w(static_cast<std::size_t>(rows * cols / tr.block_elems * tr.block_bytes));
    for (uint8_t& b : w) b = static_cast<uint8_t>(rng());
    const uint16_t d = hearth::quant::f32_to_fp16(0.01f);
    for (std::size_t off = 0; off < w.size(); off += static_cast<std::size_t>(tr.block_bytes)) {
        std::memcpy(&w[off], &d, 2);  // finite scales (d, and m for Q4_1)
        if (type == TensorType::Q4_1) std::memcpy(&w[off + 2], &d, 2);
    }
    return w;
}

struct Mat {
    std::string name;
    TensorType type;
    int64_t rows, cols;
};

// Fastest of `reps` timings of fn() in microseconds: on a shared machine the minimum is
// the run least disturbed by other processes.
template <typename F>
double time_us(int reps, F&& fn) {
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        const auto a = Clock::now();
        fn();
        t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
    }
    return *std::min_element(t.begin(), t.end());
}

}  // namespace

int main(int argc, char** argv) {
    int threads = 2;
    bool scalar = false, quick = false, attention_only = false, bandwidth = false;
    int only_ctx = 0, only_q_len = 0;  // --ctx / --q-len: one attention shape
    std::string llama_1b;              // --llama-1b TYPE
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--threads" && i + 1 < argc) {
            threads = std::atoi(argv[++i]);
        } else if (a == "--scalar") {
            scalar = true;
        } else if (a == "--quick") {
            quick = true;
        } else if (a == "--bandwidth") {
            bandwidth = true;
        } else if (a == "--llama-1b" && i + 1 < argc) {
            llama_1b = argv[++i];
        } else if (a == "--attention") {
            attention_only = true;
        } else if (a == "--ctx" && i + 1 < argc) {
            only_ctx = std::atoi(argv[++i]);
        } else if (a == "--q-len" && i + 1 < argc) {
            only_q_len = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr,
                         "usage: %s [--threads N] [--scalar] [--quick] [--attention [--ctx N] "
                         "[--q-len N]] [--bandwidth] [--llama-1b TYPE]\n",
                         argv[0]);
            return 2;
        }
    }
    if (bandwidth) {
        const auto bw = hearth::kernels::bench::measure_memory_bandwidth(threads, 512u << 20, 5);
        const auto level = hearth::kernels::cpu::resolve_simd_level(
            scalar ? hearth::kernels::cpu::SimdLevel::Scalar
                   : hearth::kernels::cpu::SimdLevel::Auto);
        const auto peak = hearth::kernels::bench::measure_int8_peak(level, threads, 5);
        const bool avx512 = level == hearth::kernels::cpu::SimdLevel::Avx512;
        const double tile_8x1 =
            avx512 ? hearth::kernels::bench::measure_int8_tile(8, 1, threads, 5) : 0.0;
        const double tile_4x3 =
            avx512 ? hearth::kernels::bench::measure_int8_tile(4, 3, threads, 5) : 0.0;
        std::printf(
            "{\"threads\": %d, \"read_gb_per_s\": %.2f, \"triad_gb_per_s\": %.2f, "
            "\"int8_gmac_per_s\": %.1f, \"int8_peak_instruction\": \"%s\", "
            "\"int8_tile_8x1_gmac_per_s\": %.1f, \"int8_tile_4x3_gmac_per_s\": %.1f}\n",
            threads, bw.read_gb_per_s, bw.triad_gb_per_s, peak.macs_per_s / 1e9, peak.instruction,
            tile_8x1 / 1e9, tile_4x3 / 1e9);
        return 0;
    }
    CpuBackend be(threads, scalar ? hearth::kernels::cpu::SimdLevel::Scalar
                                  : hearth::kernels::cpu::SimdLevel::Auto);
    std::printf("%s\n", be.name().c_str());
    std::mt19937 rng(1);
    const int reps = quick ? 5 : 21;

    std::vector<Mat> mats = {{"ffn_gate/up 1536x576 Q4_1", TensorType::Q4_1, 1536, 576},
                             {"ffn_down 576x1536 Q4_1", TensorType::Q4_1, 576, 1536},
                             {"attn_q/o 576x576 Q4_1", TensorType::Q4_1, 576, 576},
                             {"attn_k/v 192x576 Q4_1", TensorType::Q4_1, 192, 576},
                             {"output 49152x576 Q8_0", TensorType::Q8_0, 49152, 576}};
    if (!llama_1b.empty()) {
        std::optional<TensorType> type;
        for (uint32_t id = 0; id < 64 && !type; ++id)
            if (const auto tr = hearth::quant::traits(id); tr && tr->name == llama_1b)
                type = static_cast<TensorType>(id);
        if (!type) {
            std::fprintf(stderr, "unknown or unsupported type %s\n", llama_1b.c_str());
            return 2;
        }
        const std::string t = " " + llama_1b;
        mats = {{"ffn_gate/up 8192x2048" + t, *type, 8192, 2048},
                {"ffn_down 2048x8192" + t, *type, 2048, 8192},
                {"attn_q/o 2048x2048" + t, *type, 2048, 2048},
                {"attn_k/v 512x2048" + t, *type, 512, 2048}};
    }
    constexpr std::size_t kColdBytes = 96u << 20;  // > the 32 MiB L3 of the test machine

    std::printf("\n%-28s %10s %9s %10s %9s %12s %12s\n", "matvec (1 token)", "hot us", "hot GB/s",
                "cold us", "cold GB/s", "512 tok ms", "512 GMAC/s");
    for (const Mat& m : mats) {
        if (attention_only) break;
        const auto tr = *hearth::quant::traits(m.type);
        const auto bytes =
            static_cast<std::size_t>(m.rows * m.cols / tr.block_elems * tr.block_bytes);
        const std::size_t copies = std::max<std::size_t>(2, kColdBytes / bytes);
        std::vector<std::vector<uint8_t>> data;
        std::vector<std::unique_ptr<Weight>> w;
        for (std::size_t c = 0; c < copies; ++c) {
            data.push_back(random_weight(rng, m.type, m.rows, m.cols));
            w.push_back(
                be.load_weight(WeightSource{m.name, m.type, m.rows, m.cols, data.back().data()}));
        }
        std::vector<float> x(static_cast<std::size_t>(512 * m.cols)),
            out(static_cast<std::size_t>(512 * m.rows));
        for (float& v : x) v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
        const int inner = std::max<int>(1, static_cast<int>(2000000 / bytes));
        const double hot = time_us(reps,
                                   [&] {
                                       for (int i = 0; i < inner; ++i)
                                           be.matmul(*w[0], x.data(), 1, out.data());
                                   }) /
                           inner;
        std::size_t next = 0;
        const double cold = time_us(reps,
                                    [&] {
                                        for (std::size_t i = 0; i < copies; ++i)
                                            be.matmul(*w[next++ % copies], x.data(), 1, out.data());
                                    }) /
                            static_cast<double>(copies);
        const double pre =
            time_us(quick ? 3 : 7, [&] { be.matmul(*w[0], x.data(), 512, out.data()); });
        std::printf("%-28s %10.1f %9.1f %10.1f %9.1f %12.2f %12.1f\n", m.name.c_str(), hot,
                    static_cast<double>(bytes) / hot / 1e3, cold,
                    static_cast<double>(bytes) / cold / 1e3, pre / 1e3,
                    512.0 * static_cast<double>(m.rows * m.cols) / pre / 1e3);
    }

    // One decode step's matmuls over distinct weights (as the real model streams them).
    if (!attention_only && llama_1b.empty()) {
        const int L = 30;
        std::vector<std::vector<uint8_t>> data;
        std::vector<std::unique_ptr<Weight>> w;
        std::vector<const Mat*> order;
        for (int l = 0; l < L; ++l)
            for (int i : {2, 3, 3, 2, 0, 0, 1})
                order.push_back(&mats[static_cast<std::size_t>(i)]);  // q k v o gate up down
        order.push_back(&mats[4]);
        for (const Mat* m : order) {
            data.push_back(random_weight(rng, m->type, m->rows, m->cols));
            w.push_back(be.load_weight(
                WeightSource{m->name, m->type, m->rows, m->cols, data.back().data()}));
        }
        std::vector<float> x(1536, 0.5f), out(49152);
        const double step = time_us(reps, [&] {
            for (std::size_t i = 0; i < w.size(); ++i) be.matmul(*w[i], x.data(), 1, out.data());
        });
        std::size_t total = 0;
        for (const auto& d : data) total += d.size();
        std::printf(
            "\ndecode matmuls (211 matvecs, %.1f MB): %.2f ms = %.1f GB/s -> at most %.0f "
            "tokens/s\n",
            static_cast<double>(total) / 1e6, step / 1e3, static_cast<double>(total) / step / 1e3,
            1e6 / step);
    }

    if (!llama_1b.empty()) return 0;
    // Attention: decode at several context lengths, a 21-token resumed turn, and a
    // 512-token prefill chunk.
    {
        const int D = 64, n_kv = 3, n_heads = 9, bs = 16;
        for (int ctx : {128, 512, 1700, 2048}) {
            if (only_ctx > 0 && ctx != only_ctx) continue;
            const int n_blocks = (ctx + bs - 1) / bs;
            std::vector<uint16_t> k(static_cast<std::size_t>(n_blocks) * bs * n_kv * D, 0x3c00),
                v(k.size(), 0x3800);
            std::vector<int32_t> table(static_cast<std::size_t>(n_blocks));
            for (int i = 0; i < n_blocks; ++i)
                table[static_cast<std::size_t>(i)] = (i * 7) % n_blocks;
            hearth::kernels::PagedKvLayer cache{k.data(), v.data(), n_blocks, bs, n_kv, D};
            // q_len 1 twice: llama.cpp's one-token order (Generator) and the batched order
            // the engine runs every step in (AttentionBatch::batch_invariant).
            for (const auto& [q_len, invariant] : {std::pair{1, false}, std::pair{1, true},
                                                   std::pair{21, true}, std::pair{512, true}}) {
                if (q_len > ctx || (only_q_len > 0 && q_len != only_q_len)) continue;
                const int32_t q_start = 0, kv_len = ctx, bt = 0;
                hearth::kernels::AttentionBatch b{1,   &q_start,     &q_len, &kv_len,
                                                  &bt, table.data(), q_len,  ctx};
                b.batch_invariant = invariant;
                std::vector<float> q(static_cast<std::size_t>(q_len) * n_heads * D, 0.1f),
                    o(q.size());
                const double t = time_us(
                    reps, [&] { be.attention(q.data(), cache, b, n_heads, 0.125f, o.data()); });
                std::printf("attention ctx %4d q_len %3d%s: %8.1f us per layer (x30 = %.2f ms)\n",
                            ctx, q_len, q_len == 1 ? (invariant ? " batched" : " one-tok") : "", t,
                            30 * t / 1e3);
            }
        }
    }
    return 0;
}
