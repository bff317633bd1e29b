// Conversation -> token ids, one segment per message, so that the KV prefix cache hits.
//
// Design (see also engine/chat/README.md):
//  * A prompt is BOS, then one segment per message, then the generation prompt. A
//    message's segment is its glue and content tokenized on their own: glue (role
//    headers, turn markers) with special-token parsing on, content with it off, so text
//    a person types ("<|im_start|>") is never a control token. A segment depends only on
//    the message and the format's state before it, never on what follows.
//  * Stored ids are used verbatim. An assistant reply is stored as exactly the ids that
//    were sampled (Message::ids), so turn k+1's prompt begins with turn k's prompt plus
//    the sampled ids: the reply's segment is the generation prompt, the sampled ids, and
//    the end-of-turn marker only if the reply does not already end with it (a cancelled
//    reply, or one that stopped on another end-of-generation token such as EOS, is
//    closed with it), then the format's glue after the turn.
//  * The system (persona) segment comes first and depends only on the system text, so
//    every conversation with a persona starts with persona_prefix(text), also in the
//    formats that merge the system text into the first user turn.
//  * BOS is prepended when the vocabulary asks for it (tokenizer.ggml.add_bos_token) or
//    the family's reference format starts with it (Llama 2/3, Mistral, Gemma), unless the
//    first segment already starts with the BOS token.
//  * SentencePiece vocabularies that prefix a space to every tokenized text (Llama 2,
//    Mistral) would double the space the format puts at a piece boundary ("[INST] hi"):
//    for them one leading space of each piece is left to the tokenizer. Where a piece
//    boundary has no space, such a vocabulary adds one of its own; that costs one token
//    of fidelity to the reference format and keeps every segment stable.
//
// Thread safety: const and immutable after construction; it may be shared if the
// tokenizer's const methods may be. The tokenizer must outlive the builder.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"
#include "common/result.h"
#include "tokenizer/tokenizer.h"

namespace hearth::chat {

// One message's tokens (or the BOS / generation prompt), e.g. for the app to store.
struct Segment {
    Role role = Role::User;
    std::vector<TokenId> ids;
};

enum class SegmentKind : uint8_t { Bos, Message, GenerationPrompt };

struct SegmentSpan {
    SegmentKind kind = SegmentKind::Message;
    Role role = Role::User;  // Assistant for the generation prompt, System for BOS
    // Index into the conversation; -1 for BOS, the generation prompt and the template's
    // default system prompt.
    int64_t message = -1;
    size_t begin = 0;  // into Prompt::ids
    size_t size = 0;
};

struct Prompt {
    std::vector<TokenId> ids;
    std::vector<SegmentSpan> segments;  // in order, covering ids exactly
    // ids[0, persona_prefix) are BOS and the system segment: the same for every
    // conversation with this system prompt.
    size_t persona_prefix = 0;
    // Messages fit_to_context() left out after the system message (the oldest turns).
    size_t dropped = 0;
};

// How the prompt ends.
enum class PromptEnd : uint8_t {
    GenerationPrompt,  // the opening of a new reply: sample the reply next
    ContinueReply,     // the last message, an unfinished reply, left open to sample more
    None,              // nothing after the last message
};

// What leaving out the oldest turns costs, measured from one full build (PromptBuilder::
// measure): every message after the first one kept has the same segment as in the full
// prompt (its layout depends only on the message before it), so a prompt's size follows
// from the segment sizes and the first kept message's own segment.
struct PromptSizes {
    Prompt full;                 // build(messages, end)
    std::size_t first_turn = 0;  // the first message after the system message
    // The size of the prompt that keeps the system message and messages [k, last], then
    // the generation prompt (last before the final message: the turn that replied to
    // messages[last]) or the prompt's own end (last, the final message). k is first_turn
    // (nothing left out) or a user message after it.
    std::size_t size(std::size_t k, std::size_t last) const;

    std::vector<std::size_t> prefix;  // prefix[i]: segment sizes of messages [0, i)
    std::vector<std::size_t> first;   // by message: its segment when it is the first kept
    std::vector<uint8_t> bos;         // by message: BOS added when it is the first kept
    std::size_t system = 0;           // BOS (when added) and the system segment
    std::size_t generation = 0;       // the generation prompt after a closed user message
    std::size_t tail = 0;             // the full prompt's generation prompt, if any
};

class PromptBuilder {
  public:
    PromptBuilder(const Tokenizer& tokenizer, ChatTemplate chat_template);

    const ChatTemplate& chat_template() const { return template_; }
    // This builder with thinking on or off (ChatTemplate::set_thinking), for one request.
    PromptBuilder with_thinking(bool on) const {
        PromptBuilder b = *this;
        b.template_.set_thinking(on);
        return b;
    }
    bool adds_bos() const { return add_bos_; }
    // Whether the tokenizer puts a space before every text it tokenizes.
    bool tokenizer_prefixes_space() const { return prefixes_space_; }

    Result<Prompt> build(std::span<const Message> messages,
                         PromptEnd end = PromptEnd::GenerationPrompt) const;

    // build() for a context of max_tokens: when the prompt is longer, leaves out the
    // oldest whole turns (a user message and everything up to the next one), keeping the
    // system message and the last user message. Reserve room for the reply by passing
    // less than the context size. An error when even the last turn does not fit. `end` as
    // for build(): ContinueReply keeps the last (assistant) message open.
    Result<Prompt> fit_to_context(std::span<const Message> messages, size_t max_tokens,
                                  PromptEnd end = PromptEnd::GenerationPrompt) const;

    // The sizes fit_to_context and the context window (context_window.h) choose from.
    Result<PromptSizes> measure(std::span<const Message> messages,
                                PromptEnd end = PromptEnd::GenerationPrompt) const;
    // build() keeping the system message and the messages from `first_kept` on (first_kept
    // is a user message after the system message, or the first message after it).
    Result<Prompt> build_from(std::span<const Message> messages, std::size_t first_kept,
                              PromptEnd end = PromptEnd::GenerationPrompt) const;

    // messages[index]'s segment as build(messages) writes it.
    Result<Segment> render_segment(std::span<const Message> messages, size_t index) const;

    // The content ids of a message with this role and text, for Message::ids (so a long
    // history is not tokenized again every turn). Not for assistant replies: store the
    // sampled ids for those.
    std::vector<TokenId> encode_content(Role role, std::string_view text) const;

    // The ids every conversation whose first message is this system message starts with;
    // nullopt: a conversation without one (so the template's default system prompt, if
    // any). For warming the KV cache with a persona before the first message.
    std::vector<TokenId> persona_prefix(std::optional<std::string_view> system_text) const;

    // Tokens to stop sampling on: the format's end-of-turn token and the vocabulary's
    // end-of-generation tokens. Sorted.
    const std::vector<TokenId>& stop_tokens() const { return stop_tokens_; }
    // The end-of-turn marker's ids (one control token in every supported vocabulary).
    const std::vector<TokenId>& end_of_turn_ids() const { return end_of_turn_ids_; }
    // The reply ends with the end-of-turn marker, so the next turn adds none.
    bool reply_is_closed(std::span<const TokenId> ids) const;

  private:
    std::vector<TokenId> encode_piece(std::string_view text, bool parse_special) const;
    std::vector<TokenId> encode_glue(std::string_view text) const;
    // The format's glue tokens after which the tokenizer drops whitespace (Phi-3's special
    // tokens, tokenizer.h): text that a piece of its own starts after one of them loses its
    // leading whitespace, as it would in the whole prompt's text.
    bool swallows_after(const std::vector<TokenId>& out) const;
    std::string_view after(const std::vector<TokenId>& out, std::string_view piece) const;
    void append_message(const Message* message, std::string_view text, const MessageLayout& layout,
                        bool leave_open, std::vector<TokenId>& out) const;
    Result<Prompt> build_plan(std::span<const Message> messages, const Plan& plan,
                              PromptEnd end) const;

    const Tokenizer& tokenizer_;
    ChatTemplate template_;
    bool add_bos_ = false;
    bool prefixes_space_ = false;
    TokenId space_token_ = -1;  // SentencePiece's "▁", when prefixes_space_
    std::vector<TokenId> end_of_turn_ids_;
    std::vector<TokenId> stop_tokens_;
    std::vector<TokenId> swallowing_;  // sorted
};

}  // namespace hearth::chat
