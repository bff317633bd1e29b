// How each chat family writes a conversation, as text pieces (no tokenizer involved).
//
// A message is written as   open · lead+content · end_of_turn · close   where open,
// end_of_turn and close are the template's glue (role headers, turn markers, which the
// tokenizer may turn into control tokens) and content is what a person or the model
// wrote. PromptBuilder tokenizes glue with special-token parsing on and content with it
// off, one message at a time, so the tokens of a message never depend on what follows it
// and a conversation's tokens only ever grow at the end.
//
// The layouts follow llama.cpp's built-in templates (llama-chat.cpp) with two kinds of
// deliberate difference, both for the sake of stable token prefixes:
//  * The space some formats put before the content ("[INST] hi") is a property of the
//    family and role only ("lead"), never of the position, so a message's content tokens
//    are the same wherever it sits. llama.cpp writes the first user message after a
//    Llama 2 / Mistral v1-v3 system block without it ("<</SYS>>\n\nhi"); we write
//    "<</SYS>>\n\n hi". SentencePiece vocabularies that add a space prefix (the ones these
//    formats use) tokenize both the same way, see PromptBuilder.
//  * Formats that merge the system prompt into the first user turn (Gemma, Llama 2,
//    Mistral v1-v3) write the system text so that it is a prefix of every conversation
//    with that system prompt: the user turn it opened is continued by the next user
//    message, or closed when an assistant message comes first (llama.cpp would move the
//    system text to the first user message, wherever that is).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chat/reasoning.h"
#include "chat/template_family.h"
#include "common/result.h"
#include "tokenizer/tokenizer.h"

namespace hearth::gguf {
class GgufFile;
}

namespace hearth::chat {

enum class Role : uint8_t { System, User, Assistant };
std::string_view role_name(Role role);  // "system", "user", "assistant"

struct Message {
    Role role = Role::User;
    std::string text;
    // The content's token ids, used verbatim instead of tokenizing text (empty is a
    // value: a reply cancelled before its first token). For an assistant reply: exactly
    // the ids that were sampled, including the end-of-turn token when the model produced
    // one; re-tokenizing generated text can give other ids and would miss the KV cache.
    // For other roles: what PromptBuilder::encode_content() returned for text.
    std::optional<std::vector<TokenId>> ids;
};

// Where the messages written so far left the format.
struct LayoutState {
    bool first = true;        // nothing written yet
    bool block_open = false;  // a system block opened a user turn that is still open
};

// How one message is written, given the state before it.
struct MessageLayout {
    std::string open;          // glue before the content
    std::string lead;          // written before content text (not before stored ids)
    bool trim = false;         // the format trims content text (as llama.cpp does)
    std::string end_of_turn;   // marker ending the turn; the model samples it for replies
    std::string close;         // glue after end_of_turn
    bool opens_block = false;  // leaves the user turn open for the next user message

    LayoutState after() const { return {false, opens_block}; }
};

// One message of a conversation as the format writes it.
struct PlannedMessage {
    // Index into the conversation, or -1 for the template's default system prompt.
    int64_t index = -1;
    Role role = Role::User;
    MessageLayout layout;
    // A reply the template writes without its reasoning (ReasoningFormat::
    // dropped_from_history): only the answer of its text (split_reasoning), not its ids.
    bool answer_only = false;
};

struct Plan {
    std::vector<PlannedMessage> messages;
    // Layout of the reply to generate next: its `open` is the generation prompt, and a
    // stored reply is written with this same layout, so prompt + sampled ids is a prefix
    // of the next turn's prompt. (Not where the template drops earlier replies'
    // reasoning: PlannedMessage::answer_only.)
    MessageLayout reply;
};

class ChatTemplate {
  public:
    explicit ChatTemplate(TemplateFamily family, std::string default_system_prompt = {});
    // The family detected from a template text (without one, vocabulary_guess if given;
    // ChatML with a warning when missing or unknown) and the literal default system
    // prompt written in it, if any.
    static ChatTemplate from_template_text(
        std::optional<std::string_view> text,
        std::optional<TemplateFamily> vocabulary_guess = std::nullopt);
    // Same, from the model's tokenizer.chat_template, or, when it has none, from the turn
    // markers in its vocabulary (family_from_vocabulary).
    static ChatTemplate from_gguf(const gguf::GgufFile& file);

    TemplateFamily family() const { return family_; }
    // Written as the system message of conversations that have none; empty: no default.
    const std::string& default_system_prompt() const { return default_system_; }

    // What the template does with reasoning blocks (reasoning.h); none by default.
    const ReasoningFormat& reasoning() const { return reasoning_; }
    void set_reasoning(ReasoningFormat format) { reasoning_ = format; }
    // Thinking on (the default) or off. Off, where the template can switch it
    // (ReasoningFormat::switchable), the reply opens with an empty reasoning block
    // (kThinkingOffPrefix), as the template writes it for enable_thinking = false.
    bool thinking() const { return thinking_; }
    void set_thinking(bool on) { thinking_ = on; }

    MessageLayout layout(Role role, LayoutState state) const;
    // The marker the format ends an assistant turn with ("<|im_end|>", "</s>", ...).
    std::string_view end_of_turn() const;
    // The family's reference prompts begin with the vocabulary's BOS token.
    bool wants_bos() const;

    // Layouts of the messages to write. The system message, if any, must come first; a
    // first system message that is empty (no text, no ids) means "no system prompt" and
    // also suppresses the default. `drop` leaves out that many messages after the system
    // message (PromptBuilder::fit_to_context).
    Result<Plan> plan(std::span<const Message> messages, size_t drop = 0) const;

    // The prompt as text (content from Message::text), for logs, the CLI and tests.
    Result<std::string> render_text(std::span<const Message> messages,
                                    bool add_generation_prompt) const;

  private:
    TemplateFamily family_;
    std::string default_system_;
    ReasoningFormat reasoning_;
    bool thinking_ = true;
};

// Trims ASCII whitespace at both ends, as llama.cpp's templates do.
std::string_view trim_text(std::string_view text);

}  // namespace hearth::chat
