// A forward step allocates nothing on the host once its shapes have been seen (issue 12:
// per-step metadata lives in kept scratch and is uploaded in one copy). Every operator
// new of this binary is counted; the second of two identical steps, on the CPU backend
// with its worker threads, must count zero, for a prefill chunk and for a batch of
// decode tokens, with whole logit rows and with top-k candidates, and through the step's
// two halves (launch, collect).
#include <QTest>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "cpu/cpu_backend.h"
#include "gguf/gguf_file.h"
#include "kv/kv_storage.h"
#include "model/llama_model.h"
#include "model/synthetic_model.h"

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    return ::operator new(n);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}

using namespace hearth;

class TestForwardAllocations : public QObject {
    Q_OBJECT

  private slots:
    void secondIdenticalStepAllocatesNothing() {
        SyntheticModelSpec spec;
        spec.weight_type = quant::TensorType::Q8_0;
        spec.seed = 3;
        auto file = gguf::GgufFile::parse(*make_synthetic_model(spec));
        QVERIFY(file);
        kernels::CpuBackend backend(2);
        auto model = LlamaModel::load(**file, backend);
        QVERIFY(model);
        const ModelConfig& c = (*model)->config();
        const int32_t bs = 16;
        auto kv =
            KvStorage::create(backend,
                              {static_cast<int32_t>(c.n_layer), static_cast<int32_t>(c.n_head_kv),
                               static_cast<int32_t>(c.head_dim), bs},
                              32);
        QVERIFY(kv);
        (*model)->set_batch_invariant(true);

        const std::vector<int32_t> prompt = {1,  5,  9,  2,  7,  3,  11, 4,  8,  6,
                                             10, 12, 13, 14, 15, 16, 17, 18, 19, 20};
        const std::vector<int32_t> table_a = {0, 1}, table_b = {2, 3};
        const std::vector<int32_t> next_a = {21}, next_b = {22};
        std::vector<float> logits;
        const auto run = [&](const std::vector<SequenceStep>& steps) {
            const long before = g_allocations.load();
            auto r = (*model)->forward(steps, **kv, logits);
            const long count = g_allocations.load() - before;
            if (!r) qFatal("forward: %s", r.message().c_str());
            return count;
        };
        // A prefill chunk of two sequences, twice.
        const std::vector<SequenceStep> prefill = {{prompt, 0, table_a, true, {}},
                                                   {prompt, 0, table_b, true, {}}};
        run(prefill);
        QCOMPARE(run(prefill), 0L);
        // A decode step of both, twice (the same positions: the KV slot is rewritten).
        const std::vector<SequenceStep> decode = {{next_a, 20, table_a, true, {}},
                                                  {next_b, 20, table_b, true, {}}};
        run(decode);
        QCOMPARE(run(decode), 0L);
        QCOMPARE(logits.size(), 2 * static_cast<size_t>(c.n_vocab));

        // The same decode step returning top-k candidates and picked logits (the
        // scheduler's sampling path).
        StepLogits top;
        top.top_k = 40;
        const std::vector<int32_t> pick_a = {5, 9, 21}, pick_b = {22};
        const std::vector<SequenceStep> decode_top = {{next_a, 20, table_a, true, pick_a},
                                                      {next_b, 20, table_b, true, pick_b}};
        const auto run_top = [&] {
            const long before = g_allocations.load();
            auto r = (*model)->forward(decode_top, **kv, top);
            const long count = g_allocations.load() - before;
            if (!r) qFatal("forward: %s", r.message().c_str());
            return count;
        };
        run_top();
        QCOMPARE(run_top(), 0L);
        QCOMPARE(top.top_ids.size(), std::size_t{80});
        QCOMPARE(top.picked.size(), std::size_t{4});

        // The step in two halves (what overlapped scheduler steps call): the same results,
        // nothing allocated either; one step in flight at a time.
        StepLogits halves;
        const auto run_halves = [&] {
            const long before = g_allocations.load();
            auto launched = (*model)->launch(decode_top, **kv, 40);
            if (!launched) qFatal("launch: %s", launched.message().c_str());
            const bool flying = (*model)->in_flight();
            auto collected = (*model)->collect(halves);
            const long count = g_allocations.load() - before;
            if (!collected || !flying || (*model)->in_flight()) qFatal("collect failed");
            return count;
        };
        run_halves();
        QCOMPARE(run_halves(), 0L);
        QCOMPARE(halves.top_k, 40);
        QCOMPARE(halves.top_ids, top.top_ids);
        QCOMPARE(halves.invalid, top.invalid);
        QCOMPARE(std::memcmp(halves.top_values.data(), top.top_values.data(),
                             top.top_values.size() * sizeof(float)),
                 0);
        QCOMPARE(std::memcmp(halves.picked.data(), top.picked.data(), 4 * sizeof(float)), 0);
        auto nothing = (*model)->collect(halves);
        QVERIFY(!nothing);
        QVERIFY2(nothing.message().find("no step in flight") != std::string::npos,
                 nothing.message().c_str());
        QVERIFY((*model)->launch(decode_top, **kv, 40));
        auto twice = (*model)->launch(decode_top, **kv, 40);
        QVERIFY(!twice);
        QVERIFY2(twice.message().find("already in flight") != std::string::npos,
                 twice.message().c_str());
        QVERIFY((*model)->collect(halves));
        QCOMPARE(halves.top_ids, top.top_ids);
    }
};

QTEST_GUILESS_MAIN(TestForwardAllocations)
#include "tst_forward_allocations.moc"
