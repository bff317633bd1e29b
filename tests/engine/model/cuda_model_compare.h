// What the CUDA model suites share (tst_cuda_model, tst_cuda_gemma3): a model and its KV
// storage on a backend, the distance between two logit rows, the greedy token, a block
// table, the CUDA backend of device 0, and a prompt then decode steps compared on two
// backends.
#pragma once

#include <QString>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "cuda/cuda_backend.h"
#include "gguf/gguf_file.h"
#include "kv/kv_storage.h"
#include "model/llama_model.h"

namespace hearth::test {

constexpr int32_t kBlock = 16;
// Against the reference backend (double sums, no activation rounding): the fp16 operands of
// the tensor cores give about 5e-4 on random weights. (The CPU backend's int8 activations
// are 20 times further from it, ~8e-3, on these models: the CPU is the baseline only for
// the default model, as the issue states it, at 1e-2.)
constexpr double kSyntheticTolerance = 2e-3;

struct Loaded {
    std::unique_ptr<LlamaModel> model;
    std::unique_ptr<KvStorage> kv;
};

inline Loaded load(const gguf::GgufFile& file, kernels::Backend& backend, int32_t blocks) {
    auto model = LlamaModel::load(file, backend);
    if (!model) qFatal("load: %s", model.message().c_str());
    (*model)->set_batch_invariant(true);
    const ModelConfig& c = (*model)->config();
    auto kv = KvStorage::create(backend,
                                {static_cast<int32_t>(c.n_layer), static_cast<int32_t>(c.n_head_kv),
                                 static_cast<int32_t>(c.head_dim), kBlock},
                                blocks);
    if (!kv) qFatal("kv: %s", kv.message().c_str());
    return {std::move(model).value(), std::move(kv).value()};
}

inline double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        const double d = double{a[i]} - b[i];
        num += d * d;
        den += double{b[i]} * b[i];
    }
    return std::sqrt(num / std::max(den, 1e-30));
}

// The greedy token and its margin over the runner-up.
inline std::pair<int32_t, float> greedy(const std::vector<float>& logits) {
    int32_t best = 0;
    for (size_t i = 1; i < logits.size(); ++i)
        if (logits[i] > logits[static_cast<size_t>(best)]) best = static_cast<int32_t>(i);
    float second = -INFINITY;
    for (size_t i = 0; i < logits.size(); ++i)
        if (static_cast<int32_t>(i) != best) second = std::max(second, logits[i]);
    return {best, logits[static_cast<size_t>(best)] - second};
}

inline std::unique_ptr<kernels::CudaBackend> cuda_backend() {
    std::string why;
    auto b = kernels::CudaBackend::create(0, &why);
    if (!b) qFatal("CudaBackend::create: %s", why.c_str());
    return b;
}

inline std::vector<int32_t> table(int32_t first, int32_t n) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) t[static_cast<size_t>(i)] = first + i;
    return t;
}

// Prefill of a prompt, then decode steps fed the baseline's greedy token, on `baseline` and
// on `other`: relative L2 distance below `tolerance` at every step, the same greedy token
// wherever the baseline's is not a near tie. A description of the first failure, or empty.
inline QString compare_backends(const gguf::GgufFile& file, const QString& label,
                                kernels::Backend& baseline, kernels::Backend& other,
                                double tolerance, int prompt_len, int steps) {
    Loaded cpu = load(file, baseline, 16), gpu = load(file, other, 16);
    const int32_t vocab = static_cast<int32_t>(cpu.model->config().n_vocab);
    std::mt19937 rng(5);
    std::vector<int32_t> prompt(static_cast<size_t>(prompt_len));
    for (int32_t& t : prompt) t = static_cast<int32_t>(rng() % static_cast<uint32_t>(vocab));
    const auto bt = table(0, 16);
    std::vector<float> lc, lg;
    std::vector<int32_t> step = prompt;
    int32_t pos = 0, clear = 0;
    for (int s = 0; s <= steps; ++s) {
        const std::vector<SequenceStep> one = {{step, pos, bt, true, {}}};
        if (auto r = cpu.model->forward(one, *cpu.kv, lc); !r)
            return baseline.name().c_str() + QString(" forward: ") +
                   QString::fromStdString(r.message());
        if (auto r = gpu.model->forward(one, *gpu.kv, lg); !r)
            return other.name().c_str() + QString(" forward: ") +
                   QString::fromStdString(r.message());
        const double d = rel_l2(lg, lc);
        if (!(d < tolerance)) return label + QString(": step %1: relative L2 %2").arg(s).arg(d);
        const auto [tc, margin] = greedy(lc);
        const auto [tg, unused] = greedy(lg);
        float scale = 0;
        for (float v : lc) scale = std::max(scale, std::fabs(v));
        if (margin > 1e-2f * scale) {
            ++clear;
            if (tg != tc)
                return label + QString(": step %1: greedy %2 on the GPU, %3 on the CPU (margin %4)")
                                   .arg(s)
                                   .arg(tg)
                                   .arg(tc)
                                   .arg(double{margin});
        }
        pos += static_cast<int32_t>(step.size());
        step = {tc};
    }
    qInfo("%s: logits within %g of %s, %d clear greedy choices equal", qPrintable(label), tolerance,
          baseline.name().c_str(), clear);
    return {};
}

}  // namespace hearth::test
