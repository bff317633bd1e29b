#include "gguf/truncation_guard.h"

#ifdef _WIN32

namespace hearth::gguf::truncation_guard {
int watch(const void*, std::size_t) {
    return -1;
}
void unwatch(int) {}
bool faulted(int) {
    return false;
}
}  // namespace hearth::gguf::truncation_guard

#else

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>

namespace hearth::gguf::truncation_guard {

namespace {

// A fixed table, read by the signal handler without locks: begin is published last on
// watch and cleared first on unwatch, so the handler never sees a half-written range.
struct Slot {
    std::atomic<bool> taken{false};
    std::atomic<std::uintptr_t> begin{0};
    std::atomic<std::uintptr_t> end{0};  // page-rounded
    std::atomic<bool> faulted{false};
};
constexpr int kSlots = 64;
Slot g_slots[kSlots];
std::uintptr_t g_page = 4096;
struct sigaction g_previous {};
std::once_flag g_installed;

void pass_on(int sig, siginfo_t* info, void* context) {
    if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) {
        g_previous.sa_sigaction(sig, info, context);
        return;
    }
    if (!(g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_handler != SIG_DFL &&
        g_previous.sa_handler != SIG_IGN) {
        g_previous.sa_handler(sig);
        return;
    }
    // The default action: on return the access faults again and ends the process.
    signal(sig, SIG_DFL);
}

void on_sigbus(int sig, siginfo_t* info, void* context) {
    const auto addr = reinterpret_cast<std::uintptr_t>(info ? info->si_addr : nullptr);
    for (Slot& s : g_slots) {
        const std::uintptr_t begin = s.begin.load(std::memory_order_acquire);
        if (begin == 0 || addr < begin) continue;
        const std::uintptr_t end = s.end.load(std::memory_order_acquire);
        if (addr >= end) continue;
        // Every page from this one on lies past the file's end (SIGBUS is raised only for
        // those): zeros from here to the end of the mapping, in one call.
        const std::uintptr_t page = addr & ~(g_page - 1);
        void* p = mmap(reinterpret_cast<void*>(page), end - page, PROT_READ,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (p != MAP_FAILED) {
            s.faulted.store(true, std::memory_order_relaxed);
            return;
        }
        break;
    }
    pass_on(sig, info, context);
}

void install() {
    const long page = sysconf(_SC_PAGESIZE);
    if (page > 0) g_page = static_cast<std::uintptr_t>(page);
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &g_previous);
}

}  // namespace

int watch(const void* data, std::size_t bytes) {
    if (!data || bytes == 0) return -1;
    std::call_once(g_installed, install);
    const auto begin = reinterpret_cast<std::uintptr_t>(data);
    const std::uintptr_t end = (begin + bytes + g_page - 1) & ~(g_page - 1);
    for (int i = 0; i < kSlots; ++i) {
        Slot& s = g_slots[i];
        bool expected = false;
        if (!s.taken.compare_exchange_strong(expected, true)) continue;
        s.faulted.store(false, std::memory_order_relaxed);
        s.end.store(end, std::memory_order_release);
        s.begin.store(begin, std::memory_order_release);
        return i;
    }
    return -1;
}

void unwatch(int slot) {
    if (slot < 0 || slot >= kSlots) return;
    Slot& s = g_slots[slot];
    s.begin.store(0, std::memory_order_release);
    s.end.store(0, std::memory_order_release);
    s.taken.store(false, std::memory_order_release);
}

bool faulted(int slot) {
    return slot >= 0 && slot < kSlots && g_slots[slot].faulted.load(std::memory_order_relaxed);
}

}  // namespace hearth::gguf::truncation_guard

#endif
