#include "cli/cancel_signal.h"

#include <csignal>
#include <cstdlib>

namespace hearth::cli {
namespace {

std::atomic<bool> g_cancel{false};

extern "C" void on_interrupt(int) {
    if (g_cancel.exchange(true)) std::_Exit(130);
}

}  // namespace

std::atomic<bool>& cancel_on_interrupt() {
    static const bool installed = [] {
        std::signal(SIGINT, on_interrupt);
        return true;
    }();
    (void)installed;
    return g_cancel;
}

}  // namespace hearth::cli
