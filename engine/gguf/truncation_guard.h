// Survives another program truncating a mapped model file in the middle of a forward pass.
//
// POSIX lets a mapped file be truncated; reading a page past the new end then raises
// SIGBUS, which ends the process. The engine checks the file before each step
// (FileMapping::changed), but a truncation during a step used to crash. A watched mapping
// instead has its pages from the faulting one to its end replaced by zero pages (an
// anonymous mapping over the same addresses) and the read goes on: the pass computes
// garbage, and the check after the pass (Scheduler::set_weights_check) fails it with the
// reason. A SIGBUS anywhere else goes to the handler that was there before (or ends the
// process, as it would have).
//
// POSIX only; on Windows a mapped file cannot be truncated (it is opened with read sharing
// only), and these are no-ops.
#pragma once

#include <cstddef>

namespace hearth::gguf::truncation_guard {

// Watches [data, data + bytes); installs the SIGBUS handler on first use. Returns a slot
// for unwatch(), or -1 when every slot is taken (that mapping then keeps the default).
int watch(const void* data, std::size_t bytes);
// Stops watching (before the range is unmapped). -1: no-op.
void unwatch(int slot);
// Whether a read past the file's end was turned into zeros in this slot's range.
bool faulted(int slot);

}  // namespace hearth::gguf::truncation_guard
