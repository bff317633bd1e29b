// CPU time of the calling thread, for telling a thread that waits from one that spins
// (the engine thread while a GPU runs a step: bench gpu reports it per step).
#pragma once

#include <cstdint>

namespace hearth {

// Nanoseconds of CPU the calling thread has used (user + system), or -1 where the system
// cannot say.
int64_t thread_cpu_ns();

}  // namespace hearth
