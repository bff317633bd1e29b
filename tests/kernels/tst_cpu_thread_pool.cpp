// The CPU backend's thread pool: every task of every job runs exactly once, on a valid
// thread index, with the caller participating; back-to-back jobs of very different sizes
// (the case where a late worker could claim a task of the next job), and jobs issued
// after the workers have gone to sleep.
#include <QTest>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "cpu/thread_pool.h"
#if defined(__linux__)
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include "tst_cpu_helpers.h"

using hearth::kernels::cpu::ThreadPool;

namespace {

constexpr int kWaitMs = 10000;

// Holds a task until every participant has run one, so that no thread can finish the
// whole job before the others are awake; past the deadline it lets go (the test's check
// of who took part then fails instead of hanging).
void hold_until_all_took_part(const std::vector<std::atomic<int>>& seen,
                              std::chrono::steady_clock::time_point deadline) {
    const auto all = [&] {
        for (const auto& s : seen)
            if (s.load() == 0) return false;
        return true;
    };
    while (!all() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
}

}  // namespace

class TestCpuThreadPool : public QObject {
    Q_OBJECT

  private slots:
    void every_task_once_data() {
        QTest::addColumn<int>("threads");
        for (int t : {1, 2, 3, 5}) QTest::newRow(qPrintable(QString("%1 threads").arg(t))) << t;
    }

    void every_task_once() {
        QFETCH(int, threads);
        ThreadPool pool(threads);
        QCOMPARE(pool.size(), threads);
        std::mt19937 rng(7);
        std::vector<std::atomic<int>> hits(2000);
        std::vector<std::atomic<int>> by_thread(static_cast<std::size_t>(threads));
        std::atomic<int> bad_thread{0};
        for (int job = 0; job < 1000; ++job) {
            const int n =
                job % 7 == 0 ? static_cast<int>(rng() % 2000) + 1 : static_cast<int>(rng() % 9) + 1;
            for (int i = 0; i < n; ++i) hits[static_cast<std::size_t>(i)].store(0);
            pool.run(n, [&](int64_t task, int thread) {
                if (thread < 0 || thread >= threads) {
                    bad_thread.fetch_add(1);
                    return;
                }
                hits[static_cast<std::size_t>(task)].fetch_add(1);
                by_thread[static_cast<std::size_t>(thread)].fetch_add(1);
            });
            QCOMPARE(bad_thread.load(), 0);
            for (int i = 0; i < n; ++i)
                HEARTH_CHECK(hits[static_cast<std::size_t>(i)].load() == 1,
                             (QString("job %1 task %2 ran %3 times")
                                  .arg(job)
                                  .arg(i)
                                  .arg(hits[static_cast<std::size_t>(i)].load())));
        }
        QVERIFY(by_thread[0].load() > 0);  // the caller works too
    }

    // Jobs issued once the workers have stopped spinning and block: every one wakes up
    // and takes part.
    void wakes_after_sleep() {
        ThreadPool pool(3);
        for (int round = 0; round < 3; ++round) {
            QTRY_COMPARE_WITH_TIMEOUT(pool.sleeping(), 2, kWaitMs);
            std::atomic<int> sum{0};
            std::vector<std::atomic<int>> seen(3);
            const auto deadline =
                std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
            pool.run(300, [&](int64_t task, int thread) {
                sum.fetch_add(static_cast<int>(task));
                seen[static_cast<std::size_t>(thread)].store(1);
                hold_until_all_took_part(seen, deadline);
            });
            QCOMPARE(sum.load(), 300 * 299 / 2);
            QCOMPARE(seen[1].load() + seen[2].load(), 2);
        }
    }

    // A background pool's workers are SCHED_BATCH at the caller's nice value (their fair
    // share of the CPU: a busy GUI thread cannot starve them); the calling thread keeps its
    // class; a normal pool's workers are SCHED_OTHER.
    void background_workers_are_batch_threads() {
#if defined(__linux__)
        const auto nice_of_this_thread = [] {
            errno = 0;
            return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
        };
        const int caller = nice_of_this_thread();
        const int caller_policy = sched_getscheduler(0);
        for (const bool background : {false, true}) {
            ThreadPool pool(3, background);
            std::vector<std::atomic<int>> nice(3), policy(3);
            for (auto& n : nice) n.store(-100);
            std::vector<std::atomic<int>> seen(3);
            const auto deadline =
                std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
            pool.run(300, [&](int64_t, int thread) {
                nice[static_cast<std::size_t>(thread)].store(nice_of_this_thread());
                policy[static_cast<std::size_t>(thread)].store(sched_getscheduler(0));
                seen[static_cast<std::size_t>(thread)].store(1);
                hold_until_all_took_part(seen, deadline);
            });
            QCOMPARE(seen[1].load() + seen[2].load(), 2);
            for (std::size_t t : {std::size_t{1}, std::size_t { 2 }}) {
                QCOMPARE(nice[t].load(), caller);
                QCOMPARE(policy[t].load(), background ? SCHED_BATCH : caller_policy);
            }
            QCOMPARE(nice_of_this_thread(), caller);
            QCOMPARE(sched_getscheduler(0), caller_policy);
        }
#else
        QSKIP("thread priorities are checked on Linux");
#endif
    }
};

QTEST_GUILESS_MAIN(TestCpuThreadPool)
#include "tst_cpu_thread_pool.moc"
