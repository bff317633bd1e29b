// The scheduler on synthetic models: prefix caching on gives the same tokens and logits
// as caching off (one sequence at a time, no sharing), for several block sizes and weight
// types, with many concurrent sequences and under memory pressure that forces eviction
// and preemption; a resumed conversation computes only its new tokens; cancellation
// frees everything; bad requests are errors.
#include <QTest>

#include <algorithm>

#include "cpu/kernel_choice.h"
#include "sched_rig.h"

using namespace hearth;
using namespace hearth::test;
using quant::TensorType;

Q_DECLARE_METATYPE(hearth::quant::TensorType)

namespace {

constexpr uint32_t kSeed = 20261202;

const sched::Event* find(const std::vector<sched::Event>& events, sched::RequestId id,
                         sched::EventKind kind) {
    for (const auto& e : events)
        if (e.request == id && e.kind == kind) return &e;
    return nullptr;
}

}  // namespace

class TestScheduler : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() { qInfo("workload seed %u", kSeed); }

    void cachingOnEqualsOff_data() {
        QTest::addColumn<TensorType>("type");
        QTest::addColumn<int>("blockSize");
        QTest::addColumn<int>("nBlocks");
        QTest::addColumn<int>("maxRunning");
        QTest::addColumn<bool>("pressure");
        QTest::addColumn<bool>("overlap");
        QTest::newRow("F32 bs16 roomy") << TensorType::F32 << 16 << 512 << 8 << false << false;
        QTest::newRow("F32 bs1 roomy") << TensorType::F32 << 1 << 4096 << 8 << false << false;
        QTest::newRow("Q8_0 bs7 roomy") << TensorType::Q8_0 << 7 << 512 << 8 << false << false;
        QTest::newRow("F32 bs3 pressure") << TensorType::F32 << 3 << 90 << 8 << true << false;
        QTest::newRow("Q4_1 bs32 pressure") << TensorType::Q4_1 << 32 << 7 << 8 << true << false;
        QTest::newRow("F16 bs16 pressure") << TensorType::F16 << 16 << 13 << 8 << true << false;
        // Overlapped steps (SchedulerConfig::overlap): the same bits.
        QTest::newRow("F32 bs16 roomy overlapped")
            << TensorType::F32 << 16 << 512 << 8 << false << true;
        QTest::newRow("F32 bs3 pressure overlapped")
            << TensorType::F32 << 3 << 90 << 8 << true << true;
    }
    void cachingOnEqualsOff() {
        QFETCH(TensorType, type);
        QFETCH(int, blockSize);
        QFETCH(int, nBlocks);
        QFETCH(int, maxRunning);
        QFETCH(bool, pressure);
        QFETCH(bool, overlap);
        const Workload w = Workload::random(kSeed, 8, 3, 2, synthetic_vocab_size());

        RigOptions off;
        off.weight_type = type;
        off.block_size = 16;
        off.n_blocks = 512;
        off.prefix_caching = false;
        off.scheduler.max_running = 1;
        auto ref = Rig::make(off);
        std::vector<std::vector<Turn>> expected, got;
        std::string error;
        QVERIFY2(run_workload(*ref, w, expected, error), error.c_str());

        RigOptions on = off;
        on.block_size = blockSize;
        on.n_blocks = nBlocks;
        on.prefix_caching = true;
        on.scheduler.max_running = maxRunning;
        on.scheduler.max_batch_tokens = 64;  // several prefill chunks per prompt
        if (overlap) on.scheduler.overlap = sched::SchedulerConfig::Overlap::On;
        auto rig = Rig::make(on);
        QVERIFY2(run_workload(*rig, w, got, error), error.c_str());

        // Batch-invariant kernels: the same floats, bit for bit, however the work was
        // batched, chunked or served from the cache.
        const std::string diff = first_turn_difference(got, expected, "caching on vs off");
        QVERIFY2(diff.empty(), diff.c_str());
        const kv::KvCacheStats st = rig->cache->stats();
        const sched::SchedulerStats ss = rig->scheduler->stats();
        qInfo("served from cache %lld of %lld prompt tokens; evictions %lld, preemptions %lld",
              static_cast<long long>(st.prompt_tokens_cached),
              static_cast<long long>(st.prompt_tokens_queried),
              static_cast<long long>(st.evictions), static_cast<long long>(ss.preemptions));
        QVERIFY(st.prompt_tokens_cached > 0);
        // The engine thread's time in steps: wall and its own CPU (the CPU backend computes
        // on it, so some; never more than the wall time, up to the clocks' granularity).
        QVERIFY(ss.step_ns > 0);
        QVERIFY(ss.step_cpu_ns > 0);
        QVERIFY2(
            ss.step_cpu_ns <= ss.step_ns + ss.step_ns / 20 + 1000000,
            qPrintable(
                QString("%1 ns of CPU in %2 ns of steps").arg(ss.step_cpu_ns).arg(ss.step_ns)));
        if (pressure) {
            QVERIFY2(st.evictions > 0, "the pressure case should evict cached blocks");
            QVERIFY2(ss.preemptions > 0, "the pressure case should preempt");
        } else {
            QCOMPARE(ss.preemptions, int64_t{0});
        }
        QVERIFY(rig->cache->pool().check_consistency());
    }

    // Caching on = off under every kernel the choice can make (kernels/cpu/kernel_choice.h)
    // for a K-quant model, whose decode kernels differ (prefetch distances; at the AVX-512
    // level also the AVX2 kernels): cached KV computed by one kernel equals what another
    // recomputes, and the replies and logits are the default kernels' bits.
    void cachingOnEqualsOffEveryKernel() {
        using kernels::cpu::ShapeClass;
        const kernels::cpu::SimdLevel level = kernels::CpuBackend(1).simd_level();
        const auto decode =
            kernels::cpu::kernel_variants(TensorType::Q4_K, ShapeClass::Decode, level);
        const auto prefill =
            kernels::cpu::kernel_variants(TensorType::Q4_K, ShapeClass::Prefill, level);
        const Workload w = Workload::random(kSeed + 7, 4, 2, 2, synthetic_vocab_size());
        RigOptions off;
        off.weight_type = TensorType::Q4_K;
        off.n_embd = 256;
        off.n_ff = 512;
        off.prefix_caching = false;
        off.scheduler.max_running = 1;
        std::vector<std::vector<Turn>> expected;
        std::string error;
        QVERIFY2(run_workload(*Rig::make(off), w, expected, error), error.c_str());
        for (std::size_t i = 0; i < std::max(decode.size(), prefill.size()); ++i) {
            const std::string spec = "Q4_K.decode=" + decode[i % decode.size()].name +
                                     ",Q4_K.prefill=" + prefill[i % prefill.size()].name;
            RigOptions on = off;
            on.prefix_caching = true;
            on.scheduler.max_running = 4;
            on.scheduler.max_batch_tokens = 64;
            on.backend = [spec] {
                auto b = std::make_unique<kernels::CpuBackend>(2);
                if (!b->force_kernels(spec).empty()) qFatal("cannot force %s", spec.c_str());
                return std::unique_ptr<kernels::Backend>(std::move(b));
            };
            std::vector<std::vector<Turn>> got;
            QVERIFY2(run_workload(*Rig::make(on), w, got, error), error.c_str());
            for (int c = 0; c < w.n_conversations(); ++c)
                for (int t = 0; t < w.n_turns(); ++t) {
                    QCOMPARE(got[c][t].reply, expected[c][t].reply);
                    QCOMPARE(got[c][t].logits.size(), expected[c][t].logits.size());
                    for (std::size_t k = 0; k < got[c][t].logits.size(); ++k) {
                        const std::string diff =
                            first_difference(got[c][t].logits[k], expected[c][t].logits[k]);
                        QVERIFY2(diff.empty(),
                                 qPrintable(QString::fromStdString(
                                     spec + ": " + diff + " (conversation " + std::to_string(c) +
                                     ", turn " + std::to_string(t) + ")")));
                    }
                }
        }
    }

    void resumeComputesOnlyTheNewTokens() {
        RigOptions o;
        o.n_blocks = 1024;
        auto rig = Rig::make(o);
        const Workload w = Workload::random(kSeed + 1, 7, 2, 2, synthetic_vocab_size());
        // Turn 1 of conversation 0, then turn 1 of six others, then turn 2 of 0.
        std::vector<int32_t> h = w.personas[0];
        h.insert(h.end(), w.user[0][0].begin(), w.user[0][0].end());
        std::vector<sched::Event> ev;
        QVERIFY(rig->scheduler->submit(1, greedy(0, h, 5)));
        QVERIFY(rig->drain(ev));
        const sched::Event* first = find(ev, 1, sched::EventKind::Finished);
        QVERIFY(first);
        h.insert(h.end(), first->tokens.begin(), first->tokens.end());
        for (int c = 1; c < 7; ++c) {
            std::vector<int32_t> p = w.personas[static_cast<std::size_t>(w.persona_of[c])];
            p.insert(p.end(), w.user[c][0].begin(), w.user[c][0].end());
            QVERIFY(rig->scheduler->submit(10 + c, greedy(c, p, 5)));
        }
        ev.clear();
        QVERIFY(rig->drain(ev));
        // Conversations with persona 0 found it in the cache.
        const int32_t bs = o.block_size;
        const auto persona_blocks = static_cast<int32_t>(w.personas[0].size()) / bs * bs;
        const sched::Event* c2 = find(ev, 12, sched::EventKind::Finished);
        QVERIFY(c2);
        QVERIFY2(c2->stats.prompt_tokens_cached >= persona_blocks,
                 qPrintable(QString("cached %1").arg(c2->stats.prompt_tokens_cached)));

        h.insert(h.end(), w.user[0][1].begin(), w.user[0][1].end());
        ev.clear();
        QVERIFY(rig->scheduler->submit(2, greedy(0, h, 5)));
        QVERIFY(rig->drain(ev));
        const sched::Event* resumed = find(ev, 2, sched::EventKind::Finished);
        QVERIFY(resumed);
        // The new message plus the previous reply's last token, whose KV was never
        // computed (the turn ended when it was sampled).
        QCOMPARE(resumed->stats.prompt_tokens_computed,
                 static_cast<int32_t>(w.user[0][1].size()) + 1);
        QCOMPARE(resumed->stats.prompt_tokens_cached,
                 static_cast<int32_t>(h.size() - w.user[0][1].size() - 1));
    }

    // Sampling from the top-k candidates the backend returns gives exactly the tokens of
    // sampling from whole rows, for greedy and random sampling, with and without
    // penalties, in batches; a request that needs whole rows (top-k off, recorded logits)
    // turns its steps back to whole rows without changing anyone's tokens.
    void topKSamplingMatchesWholeRows() {
        const Workload w = Workload::random(kSeed + 5, 8, 1, 2, synthetic_vocab_size());
        std::vector<SamplingParams> params(9);
        params[0] = SamplingParams::greedy();
        params[1] = SamplingParams::greedy();
        params[1].repeat_penalty = 1.3f;
        params[1].frequency_penalty = 0.2f;
        params[1].presence_penalty = 0.1f;
        params[2].seed = 1;  // the defaults: temperature 0.8, top-k 40, top-p, min-p
        params[3].temperature = 1.5f;
        params[3].top_k = 64;
        params[3].top_p = 1.0f;
        params[3].min_p = 0.0f;
        params[3].seed = 2;
        params[4].temperature = 0.7f;
        params[4].top_k = 5;
        params[4].repeat_penalty = 1.1f;
        params[4].penalty_last_n = 16;
        params[4].seed = 3;
        params[5].temperature = 1.2f;
        params[5].top_k = 3;
        params[5].presence_penalty = 0.5f;
        params[5].penalty_last_n = -1;  // the whole history: often more than 64 tokens
        params[5].seed = 4;
        params[6].top_k = 0;  // whole rows
        params[6].seed = 5;
        params[7].seed = 6;             // records its logits: whole rows
        params[8].temperature = 50.0f;  // nearly uniform over its 2 candidates
        params[8].top_k = 2;
        params[8].top_p = 1.0f;
        params[8].min_p = 0.0f;
        params[8].seed = 7;
        // (Step counts below assume a token a step: speculation off, except in a third run
        // whose replies must be the same, its drafts' rows top-k or whole.)
        const auto run = [&](bool top_k, const std::vector<int>& which,
                             sched::SchedulerStats& stats, bool speculate = false) {
            const int n_requests = static_cast<int>(which.size());
            RigOptions o;
            o.scheduler.top_k_sampling = top_k;
            if (!speculate) o.scheduler.speculation.mode = sched::SpeculationConfig::Mode::Off;
            o.scheduler.max_batch_tokens = 64;
            auto rig = Rig::make(o);
            for (int c = 0; c < n_requests; ++c) {
                std::vector<int32_t> p = w.personas[static_cast<std::size_t>(w.persona_of[c])];
                p.insert(p.end(), w.user[c][0].begin(), w.user[c][0].end());
                sched::Request r = greedy(c, p, 24);
                const int k = which[static_cast<std::size_t>(c)];
                r.sampling = params[static_cast<std::size_t>(k)];
                r.record_logits = k == 7;
                if (!rig->scheduler->submit(200 + c, std::move(r))) return std::vector<Turn>{};
            }
            std::vector<sched::Event> ev;
            if (!rig->drain(ev)) return std::vector<Turn>{};
            std::vector<Turn> out(static_cast<std::size_t>(n_requests));
            for (const sched::Event& e : ev) {
                if (e.kind == sched::EventKind::Error) qWarning("%s", e.error.c_str());
                if (e.kind == sched::EventKind::Finished)
                    out[static_cast<std::size_t>(e.request - 200)].reply = e.tokens;
            }
            stats = rig->scheduler->stats();
            return out;
        };
        const std::vector<std::vector<int>> phases = {
            {0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5, 6, 7}, {8}};
        for (const std::vector<int>& which : phases) {
            const int n = static_cast<int>(which.size());
            sched::SchedulerStats stats_on, stats_off;
            const std::vector<Turn> on = run(true, which, stats_on);
            const std::vector<Turn> off = run(false, which, stats_off);
            sched::SchedulerStats stats_spec;
            const std::vector<Turn> spec = run(true, which, stats_spec, true);
            QCOMPARE(on.size(), static_cast<std::size_t>(n));
            QCOMPARE(off.size(), static_cast<std::size_t>(n));
            QCOMPARE(spec.size(), static_cast<std::size_t>(n));
            for (int c = 0; c < n; ++c) {
                QCOMPARE(on[static_cast<std::size_t>(c)].reply.size(), std::size_t{24});
                QVERIFY2(
                    on[static_cast<std::size_t>(c)].reply == off[static_cast<std::size_t>(c)].reply,
                    qPrintable(QString("request %1 of %2").arg(c).arg(n)));
                QVERIFY2(on[static_cast<std::size_t>(c)].reply ==
                             spec[static_cast<std::size_t>(c)].reply,
                         qPrintable(QString("request %1 of %2, speculating").arg(c).arg(n)));
            }
            qInfo("speculating: %lld of %lld drafted tokens kept",
                  static_cast<long long>(stats_spec.tokens_accepted),
                  static_cast<long long>(stats_spec.tokens_drafted));
            QCOMPARE(stats_off.top_k_steps, int64_t{0});
            // Without requests 6 (top-k off) and 7 (recorded logits) every step that
            // samples does it from the top k; with them, the steps they sample in (at
            // least their 24) use whole rows.
            QVERIFY(stats_on.top_k_steps >= (n == 8 ? 1 : 24));
            if (n == 8) QVERIFY(stats_on.top_k_steps <= stats_on.steps - 24);
        }
    }

    void cancelFreesEverything() {
        RigOptions o;
        o.scheduler.max_batch_tokens = 16;
        auto rig = Rig::make(o);
        const Workload w = Workload::random(kSeed + 2, 5, 1, 2, synthetic_vocab_size());
        for (int c = 0; c < 5; ++c) {
            std::vector<int32_t> p = w.personas[static_cast<std::size_t>(w.persona_of[c])];
            p.insert(p.end(), w.user[c][0].begin(), w.user[c][0].end());
            QVERIFY(rig->scheduler->submit(100 + c, greedy(c, p, 50)));
        }
        std::vector<sched::Event> ev;
        for (int i = 0; i < 6; ++i) QVERIFY(rig->scheduler->step(ev));
        QVERIFY(rig->cache->stats().blocks_used > 0);
        for (int c = 0; c < 5; ++c) rig->scheduler->cancel(100 + c, ev);
        for (int c = 0; c < 5; ++c) {
            const sched::Event* f = find(ev, 100 + c, sched::EventKind::Finished);
            QVERIFY(f);
            QCOMPARE(f->stop, StopReason::Cancelled);
        }
        QVERIFY(!rig->scheduler->has_work());
        QCOMPARE(rig->cache->stats().blocks_used, 0);
        QVERIFY(rig->cache->pool().check_consistency());
        rig->scheduler->cancel(100, ev);  // again: a no-op
    }

    void badRequestsAreErrors() {
        RigOptions o;
        o.n_blocks = 8;
        o.block_size = 4;
        auto rig = Rig::make(o);
        const int32_t ctx = static_cast<int32_t>(rig->model->config().context_length);
        QVERIFY(!rig->scheduler->submit(1, greedy(0, {}, 4)));
        auto too_long = rig->scheduler->submit(2, greedy(0, std::vector<int32_t>(ctx, 5), 4));
        QVERIFY(!too_long);
        QVERIFY(too_long.message().find("context") != std::string::npos);
        QVERIFY(!rig->scheduler->submit(3, greedy(0, {5, 99999}, 4)));
        QVERIFY(rig->scheduler->submit(4, greedy(7, {5, 6, 7}, 4)));
        auto busy = rig->scheduler->submit(5, greedy(7, {5, 6, 7}, 4));
        QVERIFY(!busy);
        QVERIFY(busy.message().find("in progress") != std::string::npos);
        std::vector<sched::Event> ev;
        QVERIFY(rig->drain(ev));
        QVERIFY(find(ev, 4, sched::EventKind::Finished));

        // A prompt larger than the whole cache (8 blocks of 4 tokens) fails cleanly.
        QVERIFY(rig->scheduler->submit(6, greedy(8, std::vector<int32_t>(40, 9), 4)));
        ev.clear();
        QVERIFY(rig->drain(ev));
        const sched::Event* e = find(ev, 6, sched::EventKind::Error);
        QVERIFY(e);
        QVERIFY2(e->error.find("too small") != std::string::npos, e->error.c_str());
        // A reply that outgrows the cache is stopped with an error, blocks returned.
        QVERIFY(rig->scheduler->submit(7, greedy(9, std::vector<int32_t>(20, 9), 30)));
        ev.clear();
        QVERIFY(rig->drain(ev));
        const sched::Event* full = find(ev, 7, sched::EventKind::Error);
        QVERIFY(full);
        QVERIFY2(full->error.find("full") != std::string::npos, full->error.c_str());
        QVERIFY(rig->cache->pool().check_consistency());
    }

    void longestCachedPrefixFirstWithoutStarving() {
        RigOptions o;
        o.scheduler.max_running = 1;
        o.scheduler.starvation_steps = 4;
        auto rig = Rig::make(o);
        const Workload w = Workload::random(kSeed + 3, 1, 1, 2, synthetic_vocab_size());
        std::vector<sched::Event> ev;
        // Warm persona 0.
        QVERIFY(rig->scheduler->submit(1, greedy(100, w.personas[0], 1)));
        QVERIFY(rig->drain(ev));
        // A cold request first, then three with the cached persona.
        QVERIFY(rig->scheduler->submit(2, greedy(1, w.personas[1], 3)));
        for (int i = 0; i < 3; ++i) {
            std::vector<int32_t> p = w.personas[0];
            p.push_back(10 + i);
            QVERIFY(rig->scheduler->submit(3 + i, greedy(2 + i, p, 3)));
        }
        std::vector<sched::RequestId> order;
        ev.clear();
        while (rig->scheduler->has_work()) {
            QVERIFY(rig->scheduler->step(ev));
            for (const auto& e : ev)
                if (e.kind == sched::EventKind::Finished) order.push_back(e.request);
            ev.clear();
        }
        QCOMPARE(order.size(), std::size_t{4});
        QCOMPARE(order.front(), sched::RequestId{3});  // cached prefix first
        // The cold one waited at most starvation_steps steps, not behind all the others.
        QVERIFY2(order.back() != 2, "the cold request starved");
    }
};

QTEST_GUILESS_MAIN(TestScheduler)
#include "tst_scheduler.moc"
