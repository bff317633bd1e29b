// Which turns of a long chat the model sees, over the chat's whole life.
//
// A chat that outgrows the context must leave its oldest turns out. Leaving out the fewest
// that make each turn fit changes the text after the persona on every turn, so the cached
// prefix ends at the persona and every turn computes the whole kept history again (for a
// CPU and a 3B model, a minute a turn). Instead the window drops in steps: when a turn no
// longer fits, enough of the oldest turns leave to bring the prompt down to a share of the
// room (`keep`), and the next many turns only append to it (hysteresis). The persona (the
// system message) always stays: it is the conversation's shared, pinned prefix.
//
// The window has no state of its own: plan_window replays the chat's history, deciding at
// each earlier turn (each user message that has a reply) as that turn was decided, then at
// the prompt being planned. Appending messages never changes an earlier decision, so
// every caller (the app, the CLI, a restart) gets the same window for the same history and
// settings; changed settings (context, reply length, keep) may move it once.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "chat/prompt_builder.h"
#include "common/result.h"

namespace hearth::chat {

// A step: at the turn ending with messages[turn] (a user message; for the prompt being
// planned, its last message), the first message kept after the system message moved from
// messages[from] to messages[to] (to > from).
struct WindowStep {
    std::size_t turn = 0;
    std::size_t from = 0;
    std::size_t to = 0;
    friend bool operator==(const WindowStep&, const WindowStep&) = default;
};

struct WindowPlan {
    std::size_t first_kept = 0;     // of the prompt being planned
    std::vector<WindowStep> steps;  // every step of the chat's life, oldest first
    bool dropped_now = false;       // the last step is the planned prompt's own
};

// `budget`: the most tokens a prompt may take (the context less the reply's room);
// `keep`: after a step the prompt takes at most this share of the budget where one turn
// allows (clamped to [0.1, 1]). An error when even the last turn does not fit the budget.
Result<WindowPlan> plan_window(const PromptSizes& sizes, std::span<const Message> messages,
                               std::size_t budget, double keep);

}  // namespace hearth::chat
