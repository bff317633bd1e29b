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
//      A chat (it goes on for ever: the app, the CLI): the reply gets min(max_tokens,
//        context / 2); the prompt gets the rest, its budget. When the history outgrows the
//        budget, the oldest whole turns leave in steps (context_window.h: down to `keep`
//        of the budget, then the next turns only append), so that a long chat computes
//        little more than each new message. What happens to the kept history's KV:
//          DropInSteps: computed again once per step, exactly as a fresh prompt.
//          Shift: moved to its new positions (context_shift.h, kv/lineage.h), nothing
//            computed again; not bit-identical to computing it (docs/benchmarks.md).
//          Ask: the turn that would take a step fails with code "context_full" instead,
//            for the user to choose (earlier steps of the chat replay as DropInSteps).
//        An error when even the last turn does not fit.
//      Fail (a stateless API request: every message was sent on purpose): nothing is left
//        out; a prompt that leaves no room for one token is an error with code
//        "context_length_exceeded", and max_tokens is cut to the room that is left.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/prompt_builder.h"
#include "common/result.h"
#include "kv/lineage.h"

namespace hearth::chat {

enum class ContextPolicy : uint8_t { DropInSteps, Shift, Ask, Fail };
// "drop", "shift", "ask", "fail"; parse_context_policy: nullopt for another name.
const char* context_policy_name(ContextPolicy policy);
std::optional<ContextPolicy> parse_context_policy(std::string_view name);

// The share of the budget a chat's prompt is brought down to when its oldest turns leave.
inline constexpr double kDefaultKeep = 0.5;

struct TurnInput {
    std::vector<Message> messages;             // the thread, oldest first
    std::optional<std::string> system_prompt;  // a persona's, when the thread has none
    std::optional<bool> thinking;              // nullopt: the template's setting
    int32_t max_tokens = 512;                  // the longest reply wanted (≥ 1)
    // The last message is an assistant reply to take up again (PromptEnd::ContinueReply);
    // it must carry its sampled ids.
    bool continue_reply = false;
    ContextPolicy policy = ContextPolicy::DropInSteps;
    double keep = kDefaultKeep;  // chat policies: context_window.h
};

struct PlannedTurn {
    std::vector<TokenId> prompt;
    int32_t max_tokens = 0;  // the reply's budget: what the engine is asked for
    size_t dropped = 0;      // thread messages left out (chat policies)
    size_t dropped_now = 0;  // of those, the ones this turn's own step left out
    // prompt[0, persona_prefix): BOS and the system segment, shared by every conversation
    // with this system prompt.
    size_t persona_prefix = 0;
    // Shift: the chain the prompt's KV is keyed in, and on the turn of a step the move of
    // the kept history's KV (sched::Request's lineage and shift).
    kv::Lineage lineage;
    std::optional<kv::KvShift> shift;
};

inline constexpr const char* kContextLengthExceeded = "context_length_exceeded";
inline constexpr const char* kContextFull = "context_full";

Result<PlannedTurn> plan_turn(const PromptBuilder& builder, int32_t context_length,
                              const TurnInput& turn);

// The messages the turn sends: the thread, after the system prompt from outside it where
// the rules above put one. (plan_turn's own first step; a remote backend sends these.)
std::vector<Message> turn_messages(const TurnInput& turn);

// The most a chat's reply may take of a context (chat policies): min(wanted, half), ≥ 1.
int32_t chat_reply_room(int32_t wanted, int32_t context_length);

// A plain-text completion's prompt (no chat template), as a stateless API request plans it
// (ContextPolicy::Fail): the text tokenized (control-token text parsed when asked), BOS
// first when the vocabulary asks for it; max_tokens cut to the room left, and the
// "context_length_exceeded" error when there is none.
Result<PlannedTurn> plan_text(const Tokenizer& tokenizer, int32_t context_length,
                              std::string_view text, bool parse_special, int32_t max_tokens);

}  // namespace hearth::chat
