#include "chat/turn_planner.h"

#include <algorithm>
#include <cctype>
#include <span>

namespace hearth::chat {

namespace {

bool blank(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c) != 0; });
}

}  // namespace

Result<PlannedTurn> plan_turn(const PromptBuilder& builder, int32_t context_length,
                              const TurnInput& turn) {
    if (context_length < 2) return make_error("the model's context is too short for a reply");
    if (turn.messages.empty()) return make_error("there is no message to reply to");
    if (turn.continue_reply &&
        (turn.messages.back().role != Role::Assistant || !turn.messages.back().ids))
        return make_error("only a reply with its sampled ids can be continued");

    std::vector<Message> with_system;
    std::span<const Message> messages = turn.messages;
    if (turn.system_prompt && !blank(*turn.system_prompt) &&
        turn.messages.front().role != Role::System) {
        with_system.reserve(turn.messages.size() + 1);
        with_system.push_back({Role::System, *turn.system_prompt, std::nullopt});
        with_system.insert(with_system.end(), turn.messages.begin(), turn.messages.end());
        messages = with_system;
    }
    const PromptBuilder switched =
        builder.with_thinking(turn.thinking.value_or(builder.chat_template().thinking()));
    const PromptEnd end =
        turn.continue_reply ? PromptEnd::ContinueReply : PromptEnd::GenerationPrompt;
    const int32_t wanted = std::max<int32_t>(1, turn.max_tokens);

    PlannedTurn out;
    if (turn.policy == ContextPolicy::DropOldestTurns) {
        const int32_t room = std::max<int32_t>(1, std::min(wanted, context_length / 2));
        auto prompt =
            switched.fit_to_context(messages, static_cast<size_t>(context_length - room), end);
        if (!prompt) return prompt.error();
        out.prompt = std::move(prompt->ids);
        out.dropped = prompt->dropped;
        out.persona_prefix = prompt->persona_prefix;
        out.max_tokens = room;
        return out;
    }
    auto prompt = switched.build(messages, end);
    if (!prompt) return prompt.error();
    const auto n = static_cast<int64_t>(prompt->ids.size());
    if (n >= context_length)
        return Error{"This model's maximum context length is " + std::to_string(context_length) +
                         " tokens; the messages take " + std::to_string(n) +
                         " tokens, which leaves no room for a reply.",
                     kContextLengthExceeded};
    out.max_tokens = static_cast<int32_t>(std::min<int64_t>(wanted, context_length - n));
    out.prompt = std::move(prompt->ids);
    out.persona_prefix = prompt->persona_prefix;
    return out;
}

}  // namespace hearth::chat
