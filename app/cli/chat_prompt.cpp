#include "cli/chat_prompt.h"

#include "chat/prompt_builder.h"
#include "chat/turn_planner.h"

namespace hearth::cli {

Result<std::vector<int32_t>> chat_prompt(const gguf::GgufFile& file, const Tokenizer& tokenizer,
                                         const std::string& system, const std::string& user,
                                         int32_t context_length, bool thinking) {
    chat::ChatTemplate chat_template = chat::ChatTemplate::from_gguf(file);
    chat_template.set_thinking(thinking);
    chat::PromptBuilder builder(tokenizer, std::move(chat_template));
    std::vector<chat::Message> messages;
    if (!system.empty()) messages.push_back({chat::Role::System, system, std::nullopt});
    messages.push_back({chat::Role::User, user, std::nullopt});
    chat::TurnInput turn;
    turn.messages = std::move(messages);
    turn.policy = chat::ContextPolicy::Fail;
    auto planned = chat::plan_turn(builder, context_length, turn);
    if (!planned) return planned.error();
    return std::move(planned->prompt);
}

}  // namespace hearth::cli
