#include "cpu/thread_pool.h"

#include <chrono>

#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#elif defined(__linux__)
#include <sched.h>
#endif

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
#include <immintrin.h>
#define HEARTH_PAUSE() _mm_pause()
#elif defined(__aarch64__)
#define HEARTH_PAUSE() __asm__ __volatile__("yield")
#else
#define HEARTH_PAUSE() ((void)0)
#endif

namespace hearth::kernels::cpu {

namespace {

// How long an idle worker polls for the next job before it blocks. Ops in a forward
// pass are microseconds apart; a blocked worker needs tens of microseconds to wake.
// After kPauseTime the poll also yields, so that on a machine with more runnable
// threads than cores (other programs, or more threads than cores) a polling worker
// gives its core to a thread with work, such as the caller.
constexpr auto kSpinTime = std::chrono::microseconds(1000);
constexpr auto kPauseTime = std::chrono::microseconds(50);

constexpr uint64_t kLowMask = 0xffffffffu;

}  // namespace

bool mark_current_thread_background() {
#if defined(__linux__)
    // SCHED_BATCH keeps the normal weight (nice 0): a busy GUI thread gets no more than its
    // fair share and cannot starve inference, as it could below a lower nice value (nice
    // 10 weighs a tenth of nice 0). What changes is wakeup: a batch thread never preempts
    // another thread when it wakes, while the GUI thread that wakes for a frame or an
    // event runs at once.
    sched_param param{};
    param.sched_priority = 0;
    return sched_setscheduler(0, SCHED_BATCH, &param) == 0;  // 0: this thread (Linux)
#else
    // Elsewhere (Windows: strict thread priorities) a lower priority would let any busy
    // thread of normal priority starve inference: the thread keeps its normal priority.
    return false;
#endif
}

ThreadPool::ThreadPool(int n_threads, bool background) : n_threads_(n_threads < 1 ? 1 : n_threads) {
    workers_.reserve(static_cast<size_t>(n_threads_ - 1));
    for (int t = 1; t < n_threads_; ++t)
        workers_.emplace_back([this, t, background] {
            if (background) mark_current_thread_background();
            worker_main(t);
        });
}

ThreadPool::~ThreadPool() {
    stop_.store(true, std::memory_order_seq_cst);
    // A new job id with no tasks wakes the spinners; the bump wakes the sleepers.
    job_.store(static_cast<uint64_t>(job_id_ + 1) << 32, std::memory_order_seq_cst);
    wake_seq_.fetch_add(1, std::memory_order_seq_cst);
    wake_seq_.notify_all();
    for (std::thread& w : workers_) w.join();
}

void ThreadPool::work_on(uint32_t job_id, uint32_t n_tasks, int thread) {
    uint64_t v = next_.load(std::memory_order_acquire);
    for (;;) {
        // Compare-and-swap rather than fetch_add: a stale claim must not consume a task
        // of the next job.
        if (static_cast<uint32_t>(v >> 32) != job_id) return;  // a newer job replaced it
        const auto task = static_cast<uint32_t>(v & kLowMask);
        if (task >= n_tasks) return;
        if (!next_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel,
                                         std::memory_order_acquire))
            continue;
        // The job cannot finish before this task does, so fn_/ctx_ are still its own.
        fn_(ctx_, task, thread);
        done_.fetch_add(1, std::memory_order_release);
        v = next_.load(std::memory_order_acquire);
    }
}

void ThreadPool::run_job(int64_t n_tasks, TaskFn fn, void* ctx) {
    const auto n = static_cast<uint32_t>(n_tasks);
    const uint32_t id = ++job_id_;
    fn_ = fn;
    ctx_ = ctx;
    done_.store(0, std::memory_order_relaxed);
    next_.store(static_cast<uint64_t>(id) << 32, std::memory_order_release);
    job_.store((static_cast<uint64_t>(id) << 32) | n, std::memory_order_seq_cst);
    wake_seq_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) wake_seq_.notify_all();

    work_on(id, n, 0);

    // Other participants may still be finishing their last task.
    int spins = 0;
    while (done_.load(std::memory_order_acquire) < n) {
        if (++spins < 4096) {
            HEARTH_PAUSE();
        } else {
            std::this_thread::yield();  // a worker was preempted; give it the core
        }
    }
}

void ThreadPool::worker_main(int thread) {
    uint32_t seen = 0;
    for (;;) {
        uint64_t job = job_.load(std::memory_order_acquire);
        if (static_cast<uint32_t>(job >> 32) == seen) {
            const auto start = std::chrono::steady_clock::now();
            bool yielding = false;
            for (int i = 1;; ++i) {
                if (yielding) {
                    std::this_thread::yield();
                } else {
                    HEARTH_PAUSE();
                }
                job = job_.load(std::memory_order_acquire);
                if (static_cast<uint32_t>(job >> 32) != seen) break;
                if ((i & 63) == 0) {
                    const auto waited = std::chrono::steady_clock::now() - start;
                    if (waited > kSpinTime) break;
                    yielding = waited > kPauseTime;
                }
            }
        }
        if (static_cast<uint32_t>(job >> 32) == seen) {
            // Block until the caller bumps wake_seq_. Registering as a sleeper before the
            // final check of job_ means the caller either sees us or we see its job.
            const uint32_t w = wake_seq_.load(std::memory_order_seq_cst);
            sleepers_.fetch_add(1, std::memory_order_seq_cst);
            job = job_.load(std::memory_order_seq_cst);
            if (static_cast<uint32_t>(job >> 32) == seen && !stop_.load()) wake_seq_.wait(w);
            sleepers_.fetch_sub(1, std::memory_order_seq_cst);
            continue;
        }
        if (stop_.load(std::memory_order_acquire)) return;
        seen = static_cast<uint32_t>(job >> 32);
        work_on(seen, static_cast<uint32_t>(job & kLowMask), thread);
    }
}

}  // namespace hearth::kernels::cpu
