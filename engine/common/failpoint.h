// Failpoints: named places where the engine fails on purpose, for fault injection (tests,
// docs/reliability.md). A failpoint armed with n makes the nth pass through it from then
// fail, once. Armed by a test with arm_failpoint(), or for a whole run by the environment:
//   HEARTH_FAILPOINTS="forward=40,disk.write=3" hearth ...
// Unarmed, a pass costs call_once's check (the environment is read once) and one relaxed
// atomic load.
//
// The failpoints:
//   forward     Scheduler::step: the forward pass fails (an engine error mid-reply)
//   disk.write  DiskTier: writing a block file fails as on a full disk (ENOSPC)
#pragma once

#include <string_view>

namespace hearth {

// True when this pass through `name` is the one to fail.
bool failpoint(std::string_view name);
// Arms `name` so that its nth pass from now fails (n ≥ 1); 0 disarms it.
void arm_failpoint(std::string_view name, int n);

}  // namespace hearth
