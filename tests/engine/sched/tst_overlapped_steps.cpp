// Overlapped scheduler steps (SchedulerConfig::overlap: the next step launched before
// step() returns, collected by the next call) give every request the tokens and logits of
// plain steps, bit for bit: on the CPU backend, on a backend that defers its ops as a
// GPU stream does (deferred_backend.h), and, as the CTest entry tst_overlap_cuda (label
// gpu, tests/gpu/run.sh), on the CUDA backend. The workload has requests submitted while a
// step is in flight, random sampling with a penalty, recorded logits, a prefill-only
// request, replies of different lengths, a cancellation mid-flight and a cache small
// enough to preempt; a cancelled request hears nothing more.
#include <QTest>

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>

#include "deferred_backend.h"
#include "sched_rig.h"
#if defined(HEARTH_WITH_CUDA)
#include "cuda/cuda_backend.h"
#endif

using namespace hearth;
using namespace hearth::test;
using Overlap = sched::SchedulerConfig::Overlap;

namespace {

constexpr uint32_t kSeed = 20261208;
constexpr int kRequests = 10;
constexpr int kCancelled = 8;  // cancelled once its third token is out
constexpr int kRecorded = 2;   // records its logits
constexpr sched::RequestId kFirstId = 300;

struct Outcome {
    std::map<sched::RequestId, std::vector<int32_t>> tokens;
    std::map<sched::RequestId, std::vector<std::vector<float>>> logits;
    std::map<sched::RequestId, int> last_events;
    std::map<sched::RequestId, StopReason> stop;
    bool late_event = false;  // an event after a request's last one, or a broken pool
    bool overlapped = false;
    int in_flight_returns = 0;  // step() calls that returned with a step in flight
    int64_t preemptions = 0;
    int64_t host_hits = 0;
    long deferred_ops = 0;  // on a DeferredBackend: ops run later than issued
    std::size_t deepest_queue = 0;
    std::string error;
};

sched::Request request(const Workload& w, int c) {
    std::vector<int32_t> p = w.personas[static_cast<std::size_t>(w.persona_of[c])];
    p.insert(p.end(), w.user[c][0].begin(), w.user[c][0].end());
    sched::Request r = greedy(c, p, 4 + 5 * c);
    if (c % 3 == 1) {
        r.sampling.temperature = 0.9f;
        r.sampling.seed = static_cast<uint64_t>(c);
        r.sampling.repeat_penalty = 1.1f;
    }
    if (c == kRecorded) r.record_logits = true;
    if (c == 5) r.max_tokens = 0;  // prefill only
    return r;
}

// The workload on a rig made from `o` (its cache and batch set here): half the requests
// first, the rest while the fifth step is in flight.
Outcome run(const Workload& w, RigOptions o, Overlap overlap) {
    o.n_blocks = 12;  // 10 conversations of 40-90 tokens in 16-token blocks: preemption
    o.scheduler.max_batch_tokens = 48;
    o.scheduler.overlap = overlap;
    // A token a step, so that the cancellation lands after three tokens either way
    // (tst_speculation compares overlapped steps with drafts).
    o.scheduler.speculation.mode = sched::SpeculationConfig::Mode::Off;
    auto rig = Rig::make(o);
    Outcome out;
    std::vector<sched::Event> ev;
    const auto take = [&] {
        for (const sched::Event& e : ev) {
            if (out.last_events[e.request] > 0) out.late_event = true;
            if (e.kind == sched::EventKind::Token && e.token >= 0) {
                out.tokens[e.request].push_back(e.token);
                if (!e.logits.empty()) out.logits[e.request].push_back(e.logits);
            }
            if (e.kind == sched::EventKind::Error) out.error = e.error;
            if (e.kind == sched::EventKind::Finished) out.stop[e.request] = e.stop;
            if (e.kind == sched::EventKind::Finished || e.kind == sched::EventKind::Error)
                ++out.last_events[e.request];
        }
        ev.clear();
    };
    const auto submit = [&](int c) {
        if (auto r = rig->scheduler->submit(kFirstId + c, request(w, c)); !r)
            out.error = r.message();
    };
    for (int c = 0; c < kRequests / 2; ++c) submit(c);
    bool cancelled = false;
    for (int i = 0; rig->scheduler->has_work() && i < 100000 && out.error.empty(); ++i) {
        if (i == 4)
            for (int c = kRequests / 2; c < kRequests; ++c) submit(c);
        // Overlapped, its next step is in flight now: what that step computes for it is
        // dropped.
        if (!cancelled && out.tokens[kFirstId + kCancelled].size() >= 3) {
            rig->scheduler->cancel(kFirstId + kCancelled, ev);
            cancelled = true;
        }
        if (auto r = rig->scheduler->step(ev); !r) out.error = r.message();
        if (rig->scheduler->in_flight()) ++out.in_flight_returns;
        take();
    }
    take();
    if (!rig->cache->pool().check_consistency()) out.late_event = true;
    out.overlapped = rig->scheduler->overlapped();
    out.preemptions = rig->scheduler->stats().preemptions;
    if (rig->host) out.host_hits = rig->host->stats().hits;
    if (const auto* d = dynamic_cast<const DeferredBackend*>(rig->backend.get())) {
        out.deferred_ops = d->deferred_ops();
        out.deepest_queue = d->deepest_queue();
    }
    qInfo(
        "%s, overlap %s: %lld steps, %lld preemptions, %d returns with a step in flight, "
        "%lld blocks from the host tier, %ld ops run late (at most %zu waiting)",
        rig->backend->name().c_str(), out.overlapped ? "on" : "off",
        static_cast<long long>(rig->scheduler->stats().steps),
        static_cast<long long>(out.preemptions), out.in_flight_returns,
        static_cast<long long>(out.host_hits), out.deferred_ops, out.deepest_queue);
    return out;
}

// Empty when `got` is `want` request for request: the same last event, stop reason,
// tokens and recorded logits (bit for bit); else the first difference.
QString compare(const Outcome& got, const Outcome& want) {
    if (!got.error.empty()) return QString::fromStdString("an error: " + got.error);
    if (got.late_event) return "an event after a request's last one, or a broken block pool";
    for (int c = 0; c < kRequests; ++c) {
        const sched::RequestId id = kFirstId + c;
        const auto at = [id](const auto& map) {
            const auto it = map.find(id);
            return it == map.end() ? typename std::decay_t<decltype(map)>::mapped_type{}
                                   : it->second;
        };
        if (at(got.last_events) != 1) return QString("request %1: not one last event").arg(c);
        if (at(got.stop) != at(want.stop)) return QString("request %1: another stop").arg(c);
        if (at(got.tokens) != at(want.tokens)) return QString("request %1: other tokens").arg(c);
        const auto a = at(got.logits), b = at(want.logits);
        if (a.size() != b.size()) return QString("request %1: other logit rows").arg(c);
        for (std::size_t i = 0; i < a.size(); ++i)
            if (const std::string d = first_difference(a[i], b[i]); !d.empty())
                return QString("request %1 token %2: %3").arg(c).arg(i).arg(d.c_str());
    }
    return {};
}

// The reference's own expectations: what the workload is for happened.
QString check_reference(const Outcome& plain) {
    if (!plain.error.empty()) return QString::fromStdString("an error: " + plain.error);
    if (plain.in_flight_returns != 0) return "plain steps left a step in flight";
    if (plain.preemptions == 0) return "no preemption";
    if (plain.stop.at(kFirstId + kCancelled) != StopReason::Cancelled ||
        plain.tokens.at(kFirstId + kCancelled).size() != 3)
        return "the cancellation did not land after three tokens";
    if (plain.tokens.at(kFirstId + 9).size() != 49) return "request 9 is not 49 tokens long";
    if (plain.logits.at(kFirstId + kRecorded).size() != 14) return "not 14 recorded rows";
    return {};
}

}  // namespace

class TestOverlappedSteps : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() { qInfo("workload seed %u", kSeed); }

    void overlappedStepsMatchPlainSteps() {
        const Workload w = Workload::random(kSeed, kRequests, 1, 3, synthetic_vocab_size());
        const Outcome plain = run(w, {}, Overlap::Off);
        QVERIFY2(check_reference(plain).isEmpty(), qPrintable(check_reference(plain)));

        const Outcome overlapped = run(w, {}, Overlap::On);
        QVERIFY(overlapped.overlapped);
        QVERIFY(overlapped.in_flight_returns > 20);
        QVERIFY2(compare(overlapped, plain).isEmpty(), qPrintable(compare(overlapped, plain)));

        // As on a GPU: ops run when the host waits, KV blocks go down to a host tier, and
        // Auto turns overlap on by itself.
        RigOptions deferred_rig;
        deferred_rig.backend = [] {
            return std::make_unique<DeferredBackend>(std::make_unique<kernels::CpuBackend>(2));
        };
        deferred_rig.host_budget_bytes = 64u << 20;
        const Outcome deferred = run(w, deferred_rig, Overlap::Auto);
        QVERIFY(deferred.overlapped);
        QVERIFY(deferred.in_flight_returns > 20);
        QVERIFY(deferred.deepest_queue > 30);  // a whole step's ops waited at once
        QVERIFY(deferred.deferred_ops > 1000);
        QVERIFY(deferred.host_hits > 0);  // preempted requests came back through the tier
        QVERIFY2(compare(deferred, plain).isEmpty(), qPrintable(compare(deferred, plain)));
    }

    // The same comparison on the CUDA backend (tst_overlap_cuda, label gpu): plain steps
    // against overlapped ones, whose results come back through pinned memory while the
    // host plans, both on the device.
    void overlappedStepsOnTheGpu() {
#if !defined(HEARTH_WITH_CUDA)
        QSKIP("a build without CUDA");
#else
        std::string error;
        if (!kernels::CudaBackend::create(0, &error)) {
            const QString why = QString::fromStdString("no CUDA device: " + error);
            if (std::getenv("HEARTH_REQUIRE_GPU")) QFAIL(qPrintable(why));
            QSKIP(qPrintable(why));
        }
        RigOptions cuda;
        cuda.backend = [] {
            std::string e;
            return std::unique_ptr<kernels::Backend>(kernels::CudaBackend::create(0, &e));
        };
        cuda.host_budget_bytes = 64u << 20;
        const Workload w = Workload::random(kSeed, kRequests, 1, 3, synthetic_vocab_size());
        const Outcome plain = run(w, cuda, Overlap::Off);
        QVERIFY2(check_reference(plain).isEmpty(), qPrintable(check_reference(plain)));
        const Outcome overlapped = run(w, cuda, Overlap::Auto);
        QVERIFY(overlapped.overlapped);
        QVERIFY(overlapped.in_flight_returns > 20);
        QVERIFY2(compare(overlapped, plain).isEmpty(), qPrintable(compare(overlapped, plain)));
#endif
    }

    // A model that can no longer be used fails every request, the one in a step in flight
    // too, and leaves nothing to do (the engine would otherwise spin on has_work()).
    void failAllDropsTheStepInFlight() {
        RigOptions o;
        o.scheduler.overlap = Overlap::On;
        o.prefix_caching = false;
        auto rig = Rig::make(o);
        const Workload w = Workload::random(kSeed + 1, 3, 1, 1, synthetic_vocab_size());
        for (int c = 0; c < 3; ++c) {
            std::vector<int32_t> p = w.personas[0];
            p.insert(p.end(), w.user[c][0].begin(), w.user[c][0].end());
            QVERIFY(rig->scheduler->submit(400 + c, greedy(c, p, 30)));
        }
        std::vector<sched::Event> ev;
        for (int i = 0; i < 3; ++i) QVERIFY(rig->scheduler->step(ev));
        QVERIFY(rig->scheduler->in_flight());
        ev.clear();
        rig->scheduler->fail_all("the model file changed", ev);
        QCOMPARE(ev.size(), std::size_t{3});
        for (const sched::Event& e : ev) QCOMPARE(e.kind, sched::EventKind::Error);
        QVERIFY(!rig->scheduler->in_flight());
        QVERIFY(!rig->scheduler->has_work());
        QCOMPARE(rig->cache->stats().blocks_used, 0);
        QVERIFY(rig->cache->pool().check_consistency());
    }
};

QTEST_GUILESS_MAIN(TestOverlappedSteps)
#include "tst_overlapped_steps.moc"
