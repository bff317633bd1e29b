// The whole forward pass on the CUDA backend against the CPU backend (label gpu: skipped
// without a device, failed with HEARTH_REQUIRE_GPU=1). Models: the default model when it
// is installed (the GPU machine has no network and the file is larger than what travels
// to it, so there it is skipped) and synthetic models made on the spot with its width and
// heads (576 wide, 9 heads / 3 KV heads) in Q4_1, Q4_0 and Q8_0, and with a K-quant
// friendly shape (512 wide, GQA 4) in Q4_K, Q6_K and F16.
//
//  - logits: the default model against the CPU backend, relative L2 distance < 1e-2 at
//    every step of a prefill and 24 decode steps; the synthetic models against the
//    reference backend, < 2e-3; and the same greedy token wherever the baseline's choice
//    is not a near tie (both are fed the baseline's token, so one near tie does not end
//    the comparison);
//  - batch invariance on the GPU, bit for bit: a prompt in one step vs in three chunks,
//    a decode token alone vs in company;
//  - step graphs (CUDA graphs of decode steps) give the bits of the same steps op by op,
//    under stress too, and a capture that fails part-way leaves the model running op by
//    op (host twins);
// Device detection, the driver floor and the disk tier's key: tst_cuda_device; Gemma 3
// 270M's activations and the model through the twins: tst_cuda_gemma3.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "cpu/cpu_backend.h"
#include "cuda/cuda_backend.h"
#include "cuda/host_twin_backend.h"
#include "cuda_model_compare.h"
#include "gguf/gguf_file.h"
#include "gpu/gpu_test.h"
#include "graph_recording_backend.h"
#include "kv/kv_storage.h"
#include "model/llama_model.h"
#include "model/synthetic_model.h"
#include "reference/reference_backend.h"
#include "support/test_model.h"

using namespace hearth;
using namespace hearth::test;

namespace {

std::unique_ptr<gguf::GgufFile> synthetic(SyntheticModelSpec spec) {
    auto bytes = make_synthetic_model(spec);
    if (!bytes) qFatal("synthetic model: %s", bytes.message().c_str());
    auto file = gguf::GgufFile::parse(std::move(bytes).value());
    if (!file) qFatal("parse: %s", file.message().c_str());
    return std::move(file).value();
}

SyntheticModelSpec shape(int32_t embd, int32_t layers, int32_t heads, int32_t kv_heads, int32_t ff,
                         quant::TensorType type, uint32_t seed) {
    SyntheticModelSpec s;
    s.n_embd = embd;
    s.n_layer = layers;
    s.n_head = heads;
    s.n_head_kv = kv_heads;
    s.n_ff = ff;
    s.weight_type = type;
    s.seed = seed;
    return s;
}

// The default model's width and heads (it has 30 layers; the kernels see the widths).
SyntheticModelSpec smollm_shape(quant::TensorType type) {
    SyntheticModelSpec s = shape(576, 8, 9, 3, 1536, type, 7);
    s.embedding_type = type;
    return s;
}

// GQA 4, K-quant friendly widths.
SyntheticModelSpec kquant_shape(quant::TensorType type) {
    return shape(512, 4, 8, 2, 1536, type, 9);
}

// A prompt's logits in one step vs in three chunks (the last beside another sequence's
// prefill), and a decode token's alone vs in company: the same bits, or a description.
QString check_invariance(const gguf::GgufFile& file, kernels::Backend& backend, int n) {
    Loaded m = load(file, backend, 96);
    const int32_t vocab = static_cast<int32_t>(m.model->config().n_vocab);
    std::mt19937 rng(3);
    std::vector<int32_t> prompt(static_cast<size_t>(n));
    for (int32_t& t : prompt) t = static_cast<int32_t>(rng() % static_cast<uint32_t>(vocab));
    const auto ta = table(0, 32), tb = table(32, 32), tc = table(64, 32);
    std::vector<float> whole, chunked, scratch;
    const auto step = [&](std::vector<SequenceStep> steps, std::vector<float>& out) {
        auto r = m.model->forward(steps, *m.kv, out);
        if (!r) qFatal("forward: %s", r.message().c_str());
    };
    step({{prompt, 0, ta, true, {}}}, whole);
    // B: the same prompt in chunks of 128, 100 and the rest, the last beside C's prefill.
    const std::span<const int32_t> p(prompt);
    step({{p.subspan(0, 128), 0, tb, false, {}}}, scratch);
    step({{p.subspan(128, 100), 128, tb, false, {}}}, scratch);
    step({{p.subspan(0, 40), 0, tc, true, {}}, {p.subspan(228), 228, tb, true, {}}}, chunked);
    const size_t V = static_cast<size_t>(vocab);
    if (std::memcmp(whole.data(), chunked.data() + V, V * 4) != 0)
        return backend.name().c_str() +
               QString(": a prompt's logits differ between one step and three chunks");
    // Decode: A's next token alone, then B's identical token beside C's.
    const std::vector<int32_t> next = {greedy(whole).first}, c_next = {1};
    std::vector<float> alone, company;
    step({{next, n, ta, true, {}}}, alone);
    step({{c_next, 40, tc, true, {}}, {next, n, tb, true, {}}}, company);
    if (std::memcmp(alone.data(), company.data() + V, V * 4) != 0)
        return backend.name().c_str() + QString(": a decode token's logits depend on its company");
    return {};
}

// Synthetic Gemma 3, Gemma 2 and Phi-3 models (windows of 9 positions on every other
// layer, soft-caps, fused matrices) against the reference backend, and batch invariant: a
// description of the first failure, or empty.
QString check_other_architectures(kernels::Backend& backend) {
    for (const char* arch : {"gemma3", "gemma2", "phi3"}) {
        SyntheticModelSpec s = shape(128, 3, 4, 2, 256, quant::TensorType::Q8_0, 12);
        s.architecture = arch;
        s.head_dim = 64;
        s.sliding_window = std::string(arch) == "phi3" ? 0 : 9;
        s.swa_period = 2;
        s.embedding_std = 0.1f;
        if (std::string(arch) == "gemma2") {
            s.attn_softcap = 2.0f;
            s.final_softcap = 5.0f;
        }
        auto reference = kernels::make_reference_backend();
        QString failure =
            compare_backends(*synthetic(s), backend.name().c_str() + QString(" ") + arch,
                             *reference, backend, kSyntheticTolerance, 40, 6);
        if (failure.isEmpty()) failure = check_invariance(*synthetic(s), backend, 300);
        if (!failure.isEmpty()) return QString(arch) + ": " + failure;
    }
    return {};
}

// A step's results as bits: the candidates' values and ids, invalid indices, picked logits.
std::vector<std::uint32_t> step_bits(const StepLogits& out) {
    std::vector<std::uint32_t> bits(out.top_values.size());
    std::memcpy(bits.data(), out.top_values.data(), bits.size() * 4);
    bits.insert(bits.end(), out.top_ids.begin(), out.top_ids.end());
    bits.insert(bits.end(), out.invalid.begin(), out.invalid.end());
    const size_t at = bits.size();
    bits.resize(at + out.picked.size());
    std::memcpy(bits.data() + at, out.picked.data(), out.picked.size() * 4);
    return bits;
}

// The first step whose bits differ between op by op (results[0]) and graphs (results[1]).
QString first_difference(const std::vector<std::vector<std::uint32_t>> (&results)[2],
                         const kernels::Backend& backend, const char* what) {
    for (size_t s = 0; s < results[0].size(); ++s)
        if (results[0][s] != results[1][s])
            return backend.name().c_str() +
                   QString(": %1 %2's candidates differ with step graphs").arg(what).arg(s);
    return {};
}

// Decode steps through step graphs against the same steps op by op (model/step_graph.h):
// three sequences after a prefill, top-8 candidates at every step and the raw logits of
// the second sequence's last few tokens (as penalties pick them: 1 to 5, padded to 1, 2,
// 4 or 8), the third leaving after six steps. The first sequence's row sees 3 chunks of 256
// positions when its graphs are captured (a bound of 4) and 4 after position 768: a
// replay then needs the launch sized for the bound, not for the capture. The same ids and
// values bit for bit; `replays` counts the graph launches. A description of the first
// failure, or empty.
QString check_step_graphs(const gguf::GgufFile& file, kernels::Backend& backend, int64_t* replays) {
    constexpr int32_t kTop = 8, kSteps = 12;
    const std::vector<int32_t> lengths = {760, 30, 7};
    std::vector<std::vector<std::uint32_t>> results[2];  // per mode: each step's bits
    for (int mode = 0; mode < 2; ++mode) {
        Loaded m = load(file, backend, 150);
        m.model->set_step_graphs(mode == 1);
        const auto vocab = static_cast<uint32_t>(m.model->config().n_vocab);
        std::mt19937 rng(21);
        std::vector<std::vector<int32_t>> prompts, tables;
        std::vector<SequenceStep> steps;
        for (size_t i = 0; i < lengths.size(); ++i) {
            prompts.emplace_back(static_cast<size_t>(lengths[i]));
            for (int32_t& t : prompts.back()) t = static_cast<int32_t>(rng() % vocab);
            tables.push_back(table(static_cast<int32_t>(i) * 50, 50));
        }
        for (size_t i = 0; i < lengths.size(); ++i)
            steps.push_back({prompts[i], 0, tables[i], true, {}});
        StepLogits out;
        out.top_k = kTop;
        std::vector<std::vector<int32_t>> next(lengths.size());
        std::vector<int32_t> generated, picked;  // the second sequence's, its picks
        std::vector<int32_t> pos = lengths;
        for (int s = 0; s <= kSteps; ++s) {
            if (auto r = m.model->forward(steps, *m.kv, out); !r)
                return QString("step %1: %2").arg(s).arg(QString::fromStdString(r.message()));
            results[mode].push_back(step_bits(out));
            const size_t active = s < 6 ? lengths.size() : 2;
            steps.clear();
            for (size_t i = 0; i < active; ++i) {
                next[i] = {out.top_ids[i * kTop]};
                if (s > 0) ++pos[i];
                steps.push_back({next[i], pos[i], tables[i], true, {}});
            }
            generated.push_back(next[1][0]);
            const size_t n_picks = std::min<size_t>(generated.size(), 5);
            picked.assign(generated.end() - static_cast<std::ptrdiff_t>(n_picks), generated.end());
            steps[1].pick = picked;
        }
        if (mode == 1 && replays) *replays = m.model->graph_replays();
    }
    return first_difference(results, backend, "step");
}

// Graph stress: 12 conversations decode 140 steps, the shape changing every step (1 to 12
// of them, 1 to 64 candidates each: past the model's 64 kept shapes, so its graph cache
// starts over), and the KV storage reallocated before step 100 (every conversation
// prefilled again into the new one, whose layers sit elsewhere: graphs of the old one must
// not replay). Each step's top-k candidates with graphs equal those op by op, bit for bit.
QString check_graph_stress(const gguf::GgufFile& file, kernels::Backend& backend,
                           int64_t* replays) {
    constexpr int32_t kSeqs = 12, kSteps = 140, kMove = 100, kBlocks = 8;
    std::vector<std::vector<std::uint32_t>> results[2];
    for (int mode = 0; mode < 2; ++mode) {
        Loaded m = load(file, backend, kSeqs * kBlocks + 4);
        m.model->set_step_graphs(mode == 1);
        const auto vocab = static_cast<uint32_t>(m.model->config().n_vocab);
        std::mt19937 rng(33);
        std::vector<std::vector<int32_t>> history(kSeqs), tables(kSeqs);
        for (int32_t i = 0; i < kSeqs; ++i) {
            history[static_cast<size_t>(i)].resize(5 + rng() % 40);
            for (int32_t& t : history[static_cast<size_t>(i)])
                t = static_cast<int32_t>(rng() % vocab);
            tables[static_cast<size_t>(i)] = table(i * kBlocks, kBlocks);
        }
        StepLogits out;
        out.top_k = 1;
        const auto prefill_all = [&]() -> QString {
            for (int32_t i = 0; i < kSeqs; ++i) {
                const auto& h = history[static_cast<size_t>(i)];
                const std::vector<SequenceStep> one = {{std::span(h).first(h.size() - 1),
                                                        0,
                                                        tables[static_cast<size_t>(i)],
                                                        false,
                                                        {}}};
                if (auto r = m.model->forward(one, *m.kv, out); !r)
                    return QString("prefill %1: %2")
                        .arg(i)
                        .arg(QString::fromStdString(r.message()));
            }
            return {};
        };
        if (QString e = prefill_all(); !e.isEmpty()) return e;
        for (int s = 0; s < kSteps; ++s) {
            if (s == kMove) {  // the KV storage moves: prefill everyone again
                m.kv.reset();
                const ModelConfig& c = m.model->config();
                auto kv = KvStorage::create(
                    backend,
                    {static_cast<int32_t>(c.n_layer), static_cast<int32_t>(c.n_head_kv),
                     static_cast<int32_t>(c.head_dim), kBlock},
                    kSeqs * kBlocks + 4);
                if (!kv) return QString("kv: ") + kv.message().c_str();
                m.kv = std::move(kv).value();
                if (QString e = prefill_all(); !e.isEmpty()) return e;
            }
            const int32_t active = 1 + (s * 5) % kSeqs;
            out.top_k = 1 + (s * 11) % 64;
            std::vector<SequenceStep> steps;
            std::vector<std::vector<int32_t>> last(static_cast<size_t>(active));
            for (int32_t i = 0; i < active; ++i) {
                const auto& h = history[static_cast<size_t>(i)];
                last[static_cast<size_t>(i)] = {h.back()};
                steps.push_back({last[static_cast<size_t>(i)],
                                 static_cast<int32_t>(h.size()) - 1,
                                 tables[static_cast<size_t>(i)],
                                 true,
                                 {}});
            }
            if (auto r = m.model->forward(steps, *m.kv, out); !r)
                return QString("step %1: %2").arg(s).arg(QString::fromStdString(r.message()));
            results[mode].push_back(step_bits(out));
            for (int32_t i = 0; i < active; ++i) {
                auto& h = history[static_cast<size_t>(i)];
                if (static_cast<int32_t>(h.size()) < kBlocks * kBlock)  // room in its blocks
                    h.push_back(out.top_ids[static_cast<size_t>(i * out.top_k)]);
            }
        }
        if (mode == 1 && replays) *replays = m.model->graph_replays();
    }
    return first_difference(results, backend, "stress step");
}

// Small enough for the host twins.
SyntheticModelSpec small_shape(quant::TensorType type) {
    return shape(256, 2, 8, 2, 512, type, 13);
}

}  // namespace

class TstCudaModel : public QObject {
    Q_OBJECT

  private slots:
    void defaultModelMatchesTheCpu() {
        HEARTH_REQUIRE_CUDA_DEVICE();
        const QString path = test::default_model_path_if_present();
        if (path.isEmpty())
            QSKIP("default model not installed here (the synthetic models cover its shape)");
        auto file = gguf::GgufFile::open(path.toStdString());
        QVERIFY(file);
        auto backend = cuda_backend();
        kernels::CpuBackend cpu;
        const QString failure =
            compare_backends(**file, "default model", cpu, *backend, 1e-2, 100, 24);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

    void syntheticModelsMatchTheReference() {
        HEARTH_REQUIRE_CUDA_DEVICE();
        using quant::TensorType;
        struct Case {
            TensorType type;
            bool kquant_shape;
        };
        for (const Case c : {Case{TensorType::Q4_1, false}, Case{TensorType::Q4_0, false},
                             Case{TensorType::Q8_0, false}, Case{TensorType::Q4_K, true},
                             Case{TensorType::Q6_K, true}, Case{TensorType::F16, true}}) {
            auto backend = cuda_backend();
            auto reference = kernels::make_reference_backend();
            const QString label = QString("%1-wide %2")
                                      .arg(c.kquant_shape ? 512 : 576)
                                      .arg(quant::traits(c.type)->name.data());
            const QString failure = compare_backends(
                *synthetic(c.kquant_shape ? kquant_shape(c.type) : smollm_shape(c.type)), label,
                *reference, *backend, kSyntheticTolerance, 40, 12);
            QVERIFY2(failure.isEmpty(), qPrintable(failure));
        }
    }

    // A prompt's logits are the same bits in one step or in three chunks (with another
    // sequence in the step), and a decode token's alone or beside another sequence's.
    void batchInvarianceOnTheGpu() {
        HEARTH_REQUIRE_CUDA_DEVICE();
        auto backend = cuda_backend();
        const QString failure =
            check_invariance(*synthetic(smollm_shape(quant::TensorType::Q4_0)), *backend, 300);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

    // The same on the device (Gemma 3, Gemma 2, Phi-3 against the reference backend, and
    // batch invariant).
    void otherArchitecturesOnTheGpu() {
        HEARTH_REQUIRE_CUDA_DEVICE();
        auto backend = cuda_backend();
        const QString failure = check_other_architectures(*backend);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

    // Decode steps captured once and replayed give the bits of the same steps op by op.
    void stepGraphsOnTheGpu() {
        HEARTH_REQUIRE_CUDA_DEVICE();
        auto backend = cuda_backend();
        int64_t replays = 0;
        const QString failure = check_step_graphs(*synthetic(smollm_shape(quant::TensorType::Q4_1)),
                                                  *backend, &replays);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        QCOMPARE(replays, int64_t{12});
    }

    // Graph stress on the device (check_graph_stress): shapes changing every step past the
    // 64 kept, KV storage reallocated, workspaces growing inside captures.
    void graphStressOnTheGpu() {
        HEARTH_REQUIRE_CUDA_DEVICE();
        auto backend = cuda_backend();
        int64_t replays = 0;
        const QString failure = check_graph_stress(
            *synthetic(smollm_shape(quant::TensorType::Q4_1)), *backend, &replays);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        QVERIFY(replays > 0);
    }

    // --- the kernels' host twins (everywhere) --------------------------------------------

    // The same stress through the twins, graphs recorded and replayed on the host.
    void hostTwinsSurviveGraphStress() {
        HEARTH_HOST_FUNCTION();
        auto twins = kernels::make_cuda_host_twin_backend();
        test::GraphRecordingBackend recorder(*twins);
        int64_t replays = 0;
        const QString failure = check_graph_stress(*synthetic(small_shape(quant::TensorType::Q8_0)),
                                                   recorder, &replays);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        QVERIFY(replays > 0);
        QVERIFY2(recorder.captures() > 64,
                 qPrintable(QString("%1 captures: the shapes should pass the 64 kept")
                                .arg(recorder.captures())));
    }

    // The same through the twins, with graphs recorded and replayed on the host
    // (graph_recording_backend.h): what a graph freezes (pointers, sizes, the attention's
    // launch shape) from the capture, the contents from each replay.
    void hostTwinsReplayStepGraphs() {
        HEARTH_HOST_FUNCTION();
        auto twins = kernels::make_cuda_host_twin_backend();
        test::GraphRecordingBackend recorder(*twins);
        int64_t replays = 0;
        const QString failure =
            check_step_graphs(*synthetic(small_shape(quant::TensorType::Q8_0)), recorder, &replays);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        // Steps 1-6: three sequences with 1, 2, 4, 4, 8 and 8 picks (padded); 7-12: two,
        // 8 picks, the first crossing position 768: five shapes.
        QCOMPARE(recorder.captures(), 5);
        QCOMPARE(replays, int64_t{12});
    }

    // The same with Gemma 3's local layers (a window of 9 positions on every other layer):
    // their launches are sized for the window's chunks (2) while the global layers' bound
    // grows to 4 with the context, and the bits still equal op by op's.
    void hostTwinsReplayLocalLayersByTheirWindow() {
        HEARTH_HOST_FUNCTION();
        auto twins = kernels::make_cuda_host_twin_backend();
        test::GraphRecordingBackend recorder(*twins);
        SyntheticModelSpec s = shape(128, 3, 4, 2, 256, quant::TensorType::Q8_0, 12);
        s.architecture = "gemma3";
        s.head_dim = 64;
        s.sliding_window = 9;
        s.swa_period = 2;
        s.embedding_std = 0.1f;
        int64_t replays = 0;
        const QString failure = check_step_graphs(*synthetic(s), recorder, &replays);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        QCOMPARE(replays, int64_t{12});
        QCOMPARE(recorder.captured_bound(0), 4);
        QCOMPARE(recorder.captured_bound(9), kernels::window_chunk_bound(9));
        QCOMPARE(kernels::window_chunk_bound(9), 2);
    }

    // A step graph that fails turns graphs off, and the model runs op by op from then on
    // with the same bits. A capture failing part-way (the first, with no graph kept yet)
    // is ended: it used to stay open, so every later op was recorded into it and every
    // step failed. A replay failing half-way is not retried at every step of its shape.
    void aFailedGraphRunsOpByOp_data() {
        QTest::addColumn<bool>("capture");  // else a replay fails
        QTest::addColumn<int>("captures");
        QTest::addColumn<int>("replays");
        QTest::newRow("the first capture, at its 10th op") << true << 0 << 0;
        QTest::newRow("the 4th replay (step 4, a shape seen before)") << false << 3 << 3;
    }
    void aFailedGraphRunsOpByOp() {
        HEARTH_HOST_FUNCTION();
        QFETCH(bool, capture);
        QFETCH(int, captures);
        QFETCH(int, replays);
        auto twins = kernels::make_cuda_host_twin_backend();
        test::GraphRecordingBackend recorder(*twins);
        if (capture)
            recorder.fail_next_capture_at(10);
        else
            recorder.fail_replay(3);
        int64_t replayed = -1;
        const QString failure = check_step_graphs(*synthetic(small_shape(quant::TensorType::Q8_0)),
                                                  recorder, &replayed);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        QCOMPARE(recorder.captures(), captures);
        QCOMPARE(replayed, int64_t{replays});
    }

    // The CUDA backend's kernels, run by their host twins, through whole small models in
    // every family of weight type: the reference backend's logits within 2e-3 and its clear
    // greedy choices.
    void hostTwinsMatchTheReference() {
        HEARTH_HOST_FUNCTION();
        using quant::TensorType;
        auto twins = kernels::make_cuda_host_twin_backend();
        for (TensorType t : {TensorType::Q4_0, TensorType::Q4_K, TensorType::Q6_K, TensorType::F16,
                             TensorType::Q8_0}) {
            auto reference = kernels::make_reference_backend();
            const QString failure = compare_backends(
                *synthetic(small_shape(t)), QString("twins %1").arg(quant::traits(t)->name.data()),
                *reference, *twins, kSyntheticTolerance, 40, 6);
            QVERIFY2(failure.isEmpty(), qPrintable(failure));
        }
    }

    // The Gemma models' ops through the twins: embedding scale, q/k norms, query scale,
    // sliding windows (shorter than the test's prompts), soft-capped scores and logits,
    // GeGLU, post-norms; and Phi-3's fused matrices.
    void hostTwinsRunTheOtherArchitectures() {
        HEARTH_HOST_FUNCTION();
        auto twins = kernels::make_cuda_host_twin_backend();
        const QString failure = check_other_architectures(*twins);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

    void hostTwinsAreBatchInvariant() {
        HEARTH_HOST_FUNCTION();
        auto twins = kernels::make_cuda_host_twin_backend();
        const QString failure =
            check_invariance(*synthetic(small_shape(quant::TensorType::Q4_0)), *twins, 300);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }
};

QTEST_GUILESS_MAIN(TstCudaModel)
#include "tst_cuda_model.moc"
