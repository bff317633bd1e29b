// Ctrl+C cancels the running generation instead of killing the process, so partial
// output and statistics are still printed. A second Ctrl+C exits at once.
#pragma once

#include <atomic>

namespace hearth::cli {

// Installs the handler (once) and returns the flag it sets.
std::atomic<bool>& cancel_on_interrupt();

}  // namespace hearth::cli
