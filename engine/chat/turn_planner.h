// plan_turn: the one place where a chat turn becomes a prompt and a reply budget. The app
// (a conversation from its store), `hearth-cli chat` (a session in memory) and the
// OpenAI-compatible server (one HTTP request) all describe the turn as a TurnInput and get
// the same prompt ids, so a reply is rendered identically whoever asks for it, and a
// conversation continued through any of them hits the same KV blocks.
//
// Rules:
//  * A system prompt from outside the thread (a persona's) goes first, unless the thread
//    starts with a system message of its own; blank ones are ignored.
//  * Thinking (templates with a switch, Qwen3): the input's choice, else the template's.
//  * Context: the prompt and the reply share the model's context.
//      DropOldestTurns (a chat that goes on for ever: the app, the CLI): the reply gets
//        min(max_tokens, context / 2) and the oldest whole turns leave the prompt until it
//        fits the rest (PromptBuilder::fit_to_context); an error only when even the last
//        turn does not fit.
//      Fail (a stateless API request: every message was sent on purpose): nothing is left
//        out; a prompt that leaves no room for one token is an error with code
//        "context_length_exceeded", and max_tokens is cut to the room that is left.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chat/prompt_builder.h"
#include "common/result.h"

namespace hearth::chat {

enum class ContextPolicy : uint8_t { DropOldestTurns, Fail };

struct TurnInput {
    std::vector<Message> messages;             // the thread, oldest first
    std::optional<std::string> system_prompt;  // a persona's, when the thread has none
    std::optional<bool> thinking;              // nullopt: the template's setting
    int32_t max_tokens = 512;                  // the longest reply wanted (≥ 1)
    // The last message is an assistant reply to take up again (PromptEnd::ContinueReply);
    // it must carry its sampled ids.
    bool continue_reply = false;
    ContextPolicy policy = ContextPolicy::DropOldestTurns;
};

struct PlannedTurn {
    std::vector<TokenId> prompt;
    int32_t max_tokens = 0;  // the reply's budget: what the engine is asked for
    size_t dropped = 0;      // thread messages left out (DropOldestTurns only)
    // prompt[0, persona_prefix): BOS and the system segment, shared by every conversation
    // with this system prompt.
    size_t persona_prefix = 0;
};

inline constexpr const char* kContextLengthExceeded = "context_length_exceeded";

Result<PlannedTurn> plan_turn(const PromptBuilder& builder, int32_t context_length,
                              const TurnInput& turn);

// The messages the turn sends: the thread, after the system prompt from outside it where
// the rules above put one. (plan_turn's own first step; a remote backend sends these.)
std::vector<Message> turn_messages(const TurnInput& turn);

// The most a chat's reply may take of a context (DropOldestTurns): min(wanted, half), ≥ 1.
int32_t chat_reply_room(int32_t wanted, int32_t context_length);

// A plain-text completion's prompt (no chat template), as a stateless API request plans it
// (ContextPolicy::Fail): the text tokenized (control-token text parsed when asked), BOS
// first when the vocabulary asks for it; max_tokens cut to the room left, and the
// "context_length_exceeded" error when there is none.
Result<PlannedTurn> plan_text(const Tokenizer& tokenizer, int32_t context_length,
                              std::string_view text, bool parse_special, int32_t max_tokens);

}  // namespace hearth::chat
