// The engine soak (engine/bench/soak.h), short: two phases on the default model with a
// reload between them, the KV cache at a tenth of the working set, random cancellations,
// persona edits, pins and unpins, and once more with overlapped steps. Every block
// accounted for, every reply equal to the cache-off reference. The long run:
// `hearth-cli bench soak` (docs/reliability.md).
#include <QTest>

#include "bench/soak.h"
#include "support/test_model.h"

using namespace hearth;

class TestSoak : public QObject {
    Q_OBJECT

  private slots:
    void shortSoak() {
        HEARTH_REQUIRE_MODEL(model);
        SoakOptions o;
        o.model_path = model.toStdString();
        o.phases = 2;
        o.requests_per_phase = 30;
        o.conversations = 16;
        o.concurrency = 6;
        o.max_reply_tokens = 12;
        o.cancel_rate = 0.2;
        o.seed = 20261205;
        o.progress = [](const std::string& line) { qInfo("%s", line.c_str()); };
        auto report = run_soak(o);
        QVERIFY2(report.ok(), report.ok() ? "" : report.message().c_str());
        qInfo("%s", report->table().c_str());
        QVERIFY2(report->ok(), report->table().c_str());
        QCOMPARE(static_cast<int>(report->phases.size()), 2);
        int64_t preemptions = 0, evictions = 0, cancelled = 0;
        for (const SoakPhase& p : report->phases) {
            QCOMPARE(p.requests, 30);
            preemptions += p.preemptions;
            evictions += p.evictions;
            cancelled += p.cancelled;
        }
        // The pressure the soak is for actually happened.
        QVERIFY(report->kv_blocks * 5 < report->working_set_blocks);
        QVERIFY(evictions > 0);
        QVERIFY(cancelled > 0);
        qInfo("preemptions: %lld", static_cast<long long>(preemptions));
    }

    // The same soak with overlapped steps (the engine's default on a GPU) on the CPU: each
    // step launched before the last one's events are delivered, cancellations landing on
    // steps in flight. Every reply still equals the plain, cache-off reference.
    void shortSoakOverlapped() {
        HEARTH_REQUIRE_MODEL(model);
        SoakOptions o;
        o.model_path = model.toStdString();
        o.phases = 1;
        o.requests_per_phase = 40;
        o.conversations = 16;
        o.concurrency = 6;
        o.max_reply_tokens = 12;
        o.cancel_rate = 0.2;
        o.seed = 20261206;
        o.overlap = sched::SchedulerConfig::Overlap::On;
        auto report = run_soak(o);
        QVERIFY2(report.ok(), report.ok() ? "" : report.message().c_str());
        qInfo("%s", report->table().c_str());
        QVERIFY2(report->ok(), report->table().c_str());
        QCOMPARE(report->phases.at(0).requests, 40);
        QVERIFY(report->phases.at(0).evictions > 0);
        QVERIFY(report->phases.at(0).cancelled > 0);
    }
};

QTEST_GUILESS_MAIN(TestSoak)
#include "tst_soak.moc"
