#include "chat/context_window.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

namespace hearth::chat {

Result<WindowPlan> plan_window(const PromptSizes& sizes, std::span<const Message> messages,
                               std::size_t budget, double keep) {
    const std::size_t n = messages.size();
    if (n == 0) return make_error("there is no message to reply to");
    keep = std::clamp(keep, 0.1, 1.0);
    const auto target = static_cast<std::size_t>(std::floor(keep * static_cast<double>(budget)));

    // Where a turn that does not fit moves the window: the first user message after `from`
    // (up to the turn's own) that brings the prompt down to the target, else the first that
    // fits at all; none: the turn cannot fit.
    const auto step_to = [&](std::size_t from, std::size_t last) -> std::optional<std::size_t> {
        std::optional<std::size_t> fits;
        for (std::size_t k = from + 1; k <= last; ++k) {
            if (messages[k].role != Role::User) continue;
            const std::size_t size = sizes.size(k, last);
            if (size <= target) return k;
            if (size <= budget && !fits) fits = k;
        }
        return fits;
    };

    WindowPlan plan;
    std::size_t first = sizes.first_turn;
    // The earlier turns: each user message answered by the message after it.
    for (std::size_t u = sizes.first_turn; u + 1 < n; ++u) {
        if (messages[u].role != Role::User || messages[u + 1].role != Role::Assistant) continue;
        if (sizes.size(first, u) <= budget) continue;
        // A turn that cannot fit under today's settings (it was planned under others) keeps
        // only itself, as the nearest it could have come.
        const std::size_t to = step_to(first, u).value_or(u);
        if (to == first) continue;
        plan.steps.push_back({u, first, to});
        first = to;
    }
    // The prompt being planned.
    if (sizes.size(first, n - 1) > budget) {
        const auto to = step_to(first, n - 1);
        if (!to) {
            std::size_t smallest = sizes.size(first, n - 1);
            for (std::size_t k = first + 1; k < n; ++k)
                if (messages[k].role == Role::User)
                    smallest = std::min(smallest, sizes.size(k, n - 1));
            return make_error("the conversation needs at least " + std::to_string(smallest) +
                              " tokens (the system prompt and the last turn), more than the " +
                              std::to_string(budget) + " available");
        }
        plan.steps.push_back({n - 1, first, *to});
        plan.dropped_now = true;
        first = *to;
    }
    plan.first_kept = first;
    return plan;
}

}  // namespace hearth::chat
