// Speculative decoding's draft sources. A drafter proposes the tokens it expects a
// sequence to continue with; the scheduler verifies them in the sequence's next step (one
// chunk: the token just sampled, then the drafts) and keeps those the model's own sampling
// reproduces (sched/scheduler.h). A draft costs a little compute and changes no output, so
// a drafter may be wrong as often as it likes: it only decides how fast a reply comes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace hearth::spec {

class Drafter {
  public:
    virtual ~Drafter() = default;
    // Up to max_tokens tokens that may follow `tokens` (the sequence so far: prompt and
    // generated), into `out` (cleared first; empty: no guess). Called once per step with
    // the sequence grown by what the last step accepted; `tokens` may also shrink or change
    // (a new turn of a conversation), which a drafter must handle.
    virtual void propose(std::span<const int32_t> tokens, int32_t max_tokens,
                         std::vector<int32_t>& out) = 0;
    // How the last proposal fared: `accepted` of its `drafted` tokens were kept.
    virtual void feedback(int32_t drafted, int32_t accepted) {
        (void)drafted;
        (void)accepted;
    }
};

}  // namespace hearth::spec
