// A persistent pool of worker threads for the CPU backend's ops. One op = one run():
// the caller publishes a job of n_tasks independent tasks, every participant (the
// calling thread included) claims tasks from a shared atomic counter until none are
// left, and run() returns when all tasks have finished. Workers spin briefly between
// jobs (ops follow each other within microseconds during a forward pass) and then
// block on a futex-style wait, so an idle model costs no CPU.
//
// Not re-entrant and not thread-safe: one thread issues run() calls (the backend's ops
// run in order on the thread that calls them).
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

namespace hearth::kernels::cpu {

// Marks the calling thread as CPU-bound background work (Linux: SCHED_BATCH at its normal
// nice value): it keeps its full share of the CPU, so that a busy UI thread of the same
// program cannot starve it, but it does not preempt other threads when it wakes, so the
// UI's threads get a core at once when they want one. Returns false where the platform
// has no such control (the thread then runs as any other).
bool mark_current_thread_background();

class ThreadPool {
  public:
    // n_threads participants in total: the calling thread plus n_threads - 1 workers.
    // background: the workers are background threads (mark_current_thread_background).
    explicit ThreadPool(int n_threads, bool background = false);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return n_threads_; }
    // Workers that stopped spinning and block until the next job (tests wait for this
    // to issue a job to sleeping workers).
    int sleeping() const { return sleepers_.load(std::memory_order_acquire); }

    // Calls fn(task, thread) once for every task in [0, n_tasks); `thread` in [0, size())
    // names the participant running it (0 = the caller), for per-thread scratch memory.
    // With n_tasks == 1 or a single thread everything runs inline on the caller.
    template <typename F>
    void run(int64_t n_tasks, F&& fn) {
        using Fn = std::remove_reference_t<F>;
        if (n_tasks <= 0) return;
        if (n_tasks == 1 || n_threads_ == 1) {
            for (int64_t t = 0; t < n_tasks; ++t) fn(t, 0);
            return;
        }
        run_job(
            n_tasks,
            [](void* ctx, int64_t task, int thread) { (*static_cast<Fn*>(ctx))(task, thread); },
            const_cast<void*>(static_cast<const void*>(&fn)));
    }

  private:
    using TaskFn = void (*)(void* ctx, int64_t task, int thread);

    void run_job(int64_t n_tasks, TaskFn fn, void* ctx);
    void worker_main(int thread);
    // Claims and runs tasks of job `job_id` (n_tasks of them) until none are left.
    void work_on(uint32_t job_id, uint32_t n_tasks, int thread);

    int n_threads_;
    std::vector<std::thread> workers_;

    // job_ = (job id << 32) | n_tasks, published with release after fn_/ctx_.
    // next_ = (job id << 32) | next unclaimed task. Claims are compare-and-swaps that
    // check the id, so a late worker can neither run a task of a job that is over nor
    // swallow one of the next job.
    alignas(64) std::atomic<uint64_t> job_{0};
    alignas(64) std::atomic<uint64_t> next_{0};
    alignas(64) std::atomic<uint32_t> done_{0};      // finished tasks of the current job
    alignas(64) std::atomic<uint32_t> wake_seq_{0};  // bumped per job; sleepers wait on it
    std::atomic<int> sleepers_{0};
    std::atomic<bool> stop_{false};
    TaskFn fn_ = nullptr;  // read by a worker only after it has claimed a live task
    void* ctx_ = nullptr;
    uint32_t job_id_ = 0;  // caller side
};

}  // namespace hearth::kernels::cpu
