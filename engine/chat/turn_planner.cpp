#include "chat/turn_planner.h"

#include "chat/context_shift.h"
#include "chat/context_window.h"

#include <algorithm>
#include <cctype>

namespace hearth::chat {

namespace {

bool blank(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c) != 0; });
}

// The room after a prompt of n tokens under the Fail policy, or the overflow error
// (`what`: "the messages take", "the prompt takes").
Result<int32_t> room_after(int64_t n, int32_t context_length, int32_t wanted, const char* what) {
    if (n >= context_length)
        return Error{"This model's maximum context length is " + std::to_string(context_length) +
                         " tokens; " + what + " " + std::to_string(n) +
                         " tokens, which leaves no room for a reply.",
                     kContextLengthExceeded};
    return static_cast<int32_t>(
        std::min<int64_t>(std::max<int32_t>(1, wanted), context_length - n));
}

}  // namespace

const char* context_policy_name(ContextPolicy policy) {
    switch (policy) {
        case ContextPolicy::DropInSteps:
            return "drop";
        case ContextPolicy::Shift:
            return "shift";
        case ContextPolicy::Ask:
            return "ask";
        case ContextPolicy::Fail:
            return "fail";
    }
    return "drop";
}

std::optional<ContextPolicy> parse_context_policy(std::string_view name) {
    for (ContextPolicy p : {ContextPolicy::DropInSteps, ContextPolicy::Shift, ContextPolicy::Ask,
                            ContextPolicy::Fail})
        if (name == context_policy_name(p)) return p;
    return std::nullopt;
}

std::vector<Message> turn_messages(const TurnInput& turn) {
    std::vector<Message> out;
    const bool own_system = !turn.messages.empty() && turn.messages.front().role == Role::System;
    if (turn.system_prompt && !blank(*turn.system_prompt) && !own_system) {
        out.reserve(turn.messages.size() + 1);
        out.push_back({Role::System, *turn.system_prompt, std::nullopt});
    }
    out.insert(out.end(), turn.messages.begin(), turn.messages.end());
    return out;
}

int32_t chat_reply_room(int32_t wanted, int32_t context_length) {
    return std::max<int32_t>(1, std::min(wanted, context_length / 2));
}

Result<PlannedTurn> plan_text(const Tokenizer& tokenizer, int32_t context_length,
                              std::string_view text, bool parse_special, int32_t max_tokens) {
    PlannedTurn out;
    out.prompt = tokenizer.encode(text, parse_special);
    const TokenId bos = tokenizer.bos();
    if (tokenizer.add_bos() && bos >= 0 && (out.prompt.empty() || out.prompt.front() != bos))
        out.prompt.insert(out.prompt.begin(), bos);
    auto room = room_after(static_cast<int64_t>(out.prompt.size()), context_length, max_tokens,
                           "the prompt takes");
    if (!room) return room.error();
    out.max_tokens = *room;
    return out;
}

Result<PlannedTurn> plan_turn(const PromptBuilder& builder, int32_t context_length,
                              const TurnInput& turn) {
    if (context_length < 2) return make_error("the model's context is too short for a reply");
    if (turn.messages.empty()) return make_error("there is no message to reply to");
    if (turn.continue_reply &&
        (turn.messages.back().role != Role::Assistant || !turn.messages.back().ids))
        return make_error("only a reply with its sampled ids can be continued");

    const std::vector<Message> messages = turn_messages(turn);
    const PromptBuilder switched =
        builder.with_thinking(turn.thinking.value_or(builder.chat_template().thinking()));
    const PromptEnd end =
        turn.continue_reply ? PromptEnd::ContinueReply : PromptEnd::GenerationPrompt;
    const int32_t wanted = std::max<int32_t>(1, turn.max_tokens);

    PlannedTurn out;
    if (turn.policy != ContextPolicy::Fail) {
        const int32_t room = chat_reply_room(wanted, context_length);
        const auto budget = static_cast<size_t>(context_length - room);
        auto sizes = switched.measure(messages, end);
        if (!sizes) return sizes.error();
        auto window = plan_window(*sizes, messages, budget, turn.keep);
        if (!window) return window.error();
        if (turn.policy == ContextPolicy::Ask && window->dropped_now)
            return Error{
                "This chat no longer fits the model's context (" +
                    std::to_string(sizes->size(window->steps.back().from, messages.size() - 1)) +
                    " tokens for " + std::to_string(budget) +
                    "): choose whether its oldest turns leave the model's view.",
                kContextFull};
        Prompt prompt;
        if (window->first_kept == sizes->first_turn) {
            prompt = std::move(sizes->full);
        } else {
            auto built = switched.build_from(messages, window->first_kept, end);
            if (!built) return built.error();
            prompt = std::move(*built);
        }
        if (turn.policy == ContextPolicy::Shift) {
            auto shift = plan_shift(switched, messages, *window, prompt);
            if (!shift) return shift.error();
            out.lineage = shift->lineage;
            out.shift = std::move(shift->shift);
        }
        out.dropped = window->first_kept - sizes->first_turn;
        if (window->dropped_now)
            out.dropped_now = window->steps.back().to - window->steps.back().from;
        out.prompt = std::move(prompt.ids);
        out.persona_prefix = prompt.persona_prefix;
        out.max_tokens = room;
        return out;
    }
    auto prompt = switched.build(messages, end);
    if (!prompt) return prompt.error();
    auto room = room_after(static_cast<int64_t>(prompt->ids.size()), context_length, wanted,
                           "the messages take");
    if (!room) return room.error();
    out.max_tokens = *room;
    out.prompt = std::move(prompt->ids);
    out.persona_prefix = prompt->persona_prefix;
    return out;
}

}  // namespace hearth::chat
