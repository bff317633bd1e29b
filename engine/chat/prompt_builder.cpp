#include "chat/prompt_builder.h"

#include <algorithm>
#include <string>

#include "common/log.h"

namespace hearth::chat {

namespace {

void append(std::vector<TokenId>& out, std::span<const TokenId> ids) {
    out.insert(out.end(), ids.begin(), ids.end());
}

bool ends_with(std::span<const TokenId> ids, std::span<const TokenId> suffix) {
    return !suffix.empty() && ids.size() >= suffix.size() &&
           std::equal(suffix.begin(), suffix.end(),
                      ids.end() - static_cast<std::ptrdiff_t>(suffix.size()));
}

}  // namespace

PromptBuilder::PromptBuilder(const Tokenizer& tokenizer, ChatTemplate chat_template)
    : tokenizer_(tokenizer), template_(std::move(chat_template)) {
    add_bos_ = tokenizer_.bos() >= 0 && (tokenizer_.add_bos() || template_.wants_bos());
    // SentencePiece vocabularies with add_space_prefix put a space before every text
    // handed to encode() (see encode_piece).
    prefixes_space_ =
        tokenizer_.kind() == TokenizerKind::SentencePiece && tokenizer_.add_space_prefix();
    if (prefixes_space_) space_token_ = tokenizer_.find_token("\xE2\x96\x81");  // "▁"

    end_of_turn_ids_ = encode_glue(template_.end_of_turn());
    stop_tokens_ = tokenizer_.end_of_generation_tokens();
    if (end_of_turn_ids_.size() == 1) {
        stop_tokens_.push_back(end_of_turn_ids_.front());
    } else {
        log::get("chat")->warn(
            "the vocabulary has no single token for '{}', which the {} format ends a reply "
            "with; replies stop only at the end-of-generation tokens",
            template_.end_of_turn(), family_name(template_.family()));
    }
    std::sort(stop_tokens_.begin(), stop_tokens_.end());
    stop_tokens_.erase(std::unique(stop_tokens_.begin(), stop_tokens_.end()), stop_tokens_.end());

    // Which of the format's glue tokens take the whitespace after them: "<tok> x" encodes
    // as <tok> x without the space's token.
    std::vector<TokenId> glue_tokens;
    for (Role role : {Role::System, Role::User, Role::Assistant})
        for (bool first : {true, false}) {
            const MessageLayout l = template_.layout(role, LayoutState{first, false});
            for (std::string_view g : {std::string_view(l.open), std::string_view(l.end_of_turn),
                                       std::string_view(l.close)})
                for (TokenId id : encode_glue(g))
                    if (tokenizer_.token_attr(id) == TokenAttr::Control ||
                        tokenizer_.token_attr(id) == TokenAttr::UserDefined)
                        glue_tokens.push_back(id);
        }
    std::sort(glue_tokens.begin(), glue_tokens.end());
    glue_tokens.erase(std::unique(glue_tokens.begin(), glue_tokens.end()), glue_tokens.end());
    for (TokenId id : glue_tokens) {
        const std::string text = tokenizer_.token_to_piece(id, true);
        if (tokenizer_.encode(text + "\n", true) == tokenizer_.encode(text, true))
            swallowing_.push_back(id);
    }
}

bool PromptBuilder::swallows_after(const std::vector<TokenId>& out) const {
    return !out.empty() && std::binary_search(swallowing_.begin(), swallowing_.end(), out.back());
}

std::string_view PromptBuilder::after(const std::vector<TokenId>& out,
                                      std::string_view piece) const {
    if (!swallows_after(out)) return piece;
    while (!piece.empty() && (piece.front() == ' ' || piece.front() == '\n' ||
                              piece.front() == '\t' || piece.front() == '\r'))
        piece.remove_prefix(1);
    return piece;
}

std::vector<TokenId> PromptBuilder::encode_piece(std::string_view text, bool parse_special) const {
    if (!prefixes_space_ || !text.starts_with(' '))
        return text.empty() ? std::vector<TokenId>{} : tokenizer_.encode(text, parse_special);
    // The format's space at a piece boundary is the one such a tokenizer adds itself...
    text.remove_prefix(1);
    std::vector<TokenId> ids =
        text.empty() ? std::vector<TokenId>{} : tokenizer_.encode(text, parse_special);
    // ...except before a special token (" [/INST]" where [/INST] is one), where it adds
    // none: the space is then the vocabulary's lone space token.
    if (!ids.empty() && space_token_ >= 0) {
        const TokenAttr attr = tokenizer_.token_attr(ids.front());
        if (attr == TokenAttr::Control || attr == TokenAttr::UserDefined)
            ids.insert(ids.begin(), space_token_);
    }
    return ids;
}

std::vector<TokenId> PromptBuilder::encode_glue(std::string_view text) const {
    if (!prefixes_space_) return encode_piece(text, true);
    // A space inside glue can follow a special token ("[INST] <<SYS>>" where [INST] is
    // one), after which the tokenizer adds its own space too. Encoding the glue in parts
    // that each start at a word's space gives every space once; SentencePiece pieces
    // start at a space, so the split does not change them.
    std::vector<TokenId> ids;
    size_t begin = 0;
    for (size_t at = 1; at <= text.size(); ++at) {
        if (at < text.size() && !(text[at] == ' ' && text[at - 1] != ' ')) continue;
        append(ids, encode_piece(text.substr(begin, at - begin), true));
        begin = at;
    }
    return ids;
}

bool PromptBuilder::reply_is_closed(std::span<const TokenId> ids) const {
    return ends_with(ids, end_of_turn_ids_);
}

std::vector<TokenId> PromptBuilder::encode_content(Role role, std::string_view text) const {
    // lead and trim depend on the family and role only (chat_template.h), so any state
    // gives the content ids build() uses for this message wherever it sits.
    const MessageLayout l = template_.layout(role, LayoutState{});
    std::string t = l.lead;
    t += l.trim ? trim_text(text) : text;
    // Only a vocabulary whose glue swallows whitespace (Phi-3) needs the opening's ids.
    if (swallowing_.empty()) return encode_piece(t, false);
    return encode_piece(after(encode_glue(l.open), t), false);
}

void PromptBuilder::append_message(const Message* message, std::string_view text,
                                   const MessageLayout& layout, bool leave_open,
                                   std::vector<TokenId>& out) const {
    append(out, encode_glue(after(out, layout.open)));
    bool closed = false;
    if (message && message->ids) {
        append(out, *message->ids);
        // A reply that ended with its end-of-turn token is closed already; one that was
        // cancelled or stopped on another token (EOS) gets the marker now.
        closed = message->role == Role::Assistant &&
                 ends_with(*message->ids, encode_glue(layout.end_of_turn));
    } else {
        std::string t = layout.lead;
        t += layout.trim ? trim_text(text) : text;
        append(out, encode_piece(after(out, t), false));
    }
    if (leave_open) return;
    if (!closed) append(out, encode_glue(after(out, layout.end_of_turn)));
    append(out, encode_glue(after(out, layout.close)));
}

Result<Prompt> PromptBuilder::build_plan(std::span<const Message> messages, const Plan& plan,
                                         PromptEnd end) const {
    if (end == PromptEnd::ContinueReply) {
        const bool last_is_reply =
            !plan.messages.empty() &&
            plan.messages.back().index + 1 == static_cast<int64_t>(messages.size()) &&
            plan.messages.back().role == Role::Assistant;
        if (!last_is_reply)
            return make_error(
                "there is no reply to continue: the last message is not an assistant message");
        const Message& last = messages.back();
        if (last.ids && reply_is_closed(*last.ids))
            return make_error("the last reply is finished (it ends with its end-of-turn token)");
    }

    Prompt p;
    std::vector<TokenId>& ids = p.ids;
    const auto add_span = [&p](SegmentKind kind, Role role, int64_t message, size_t begin) {
        if (p.ids.size() > begin)
            p.segments.push_back({kind, role, message, begin, p.ids.size() - begin});
    };
    for (size_t i = 0; i < plan.messages.size(); ++i) {
        const PlannedMessage& m = plan.messages[i];
        const Message* msg = m.index >= 0 ? &messages[static_cast<size_t>(m.index)] : nullptr;
        const std::string_view text =
            msg ? std::string_view(msg->text) : std::string_view(template_.default_system_prompt());
        const bool leave_open = end == PromptEnd::ContinueReply && i + 1 == plan.messages.size();
        const size_t begin = ids.size();
        if (m.answer_only) {
            // Written as the template writes an earlier reply: its answer, from the text.
            append_message(nullptr, split_reasoning(text).answer, m.layout, leave_open, ids);
        } else {
            append_message(msg, text, m.layout, leave_open, ids);
        }
        p.segments.push_back({SegmentKind::Message, m.role, m.index, begin, ids.size() - begin});
        if (m.role == Role::System) p.persona_prefix = ids.size();
    }
    if (end == PromptEnd::GenerationPrompt) {
        const size_t begin = ids.size();
        append(ids, encode_glue(after(ids, plan.reply.open)));
        add_span(SegmentKind::GenerationPrompt, Role::Assistant, -1, begin);
    }

    // BOS goes first unless the first segment starts with it already (a vocabulary whose
    // BOS is the format's own opening token, as SmolLM2's <|im_start|> is).
    if (add_bos_ && (ids.empty() || ids.front() != tokenizer_.bos())) {
        ids.insert(ids.begin(), tokenizer_.bos());
        for (SegmentSpan& s : p.segments) ++s.begin;
        p.segments.insert(p.segments.begin(), {SegmentKind::Bos, Role::System, -1, 0, 1});
        ++p.persona_prefix;
    }
    return p;
}

Result<Prompt> PromptBuilder::build(std::span<const Message> messages, PromptEnd end) const {
    auto plan = template_.plan(messages);
    if (!plan) return plan.error();
    return build_plan(messages, *plan, end);
}

Result<PromptSizes> PromptBuilder::measure(std::span<const Message> messages, PromptEnd end) const {
    auto full_plan = template_.plan(messages);
    if (!full_plan) return full_plan.error();
    auto full = build_plan(messages, *full_plan, end);
    if (!full) return full.error();

    PromptSizes out;
    const std::size_t n = messages.size();
    out.first_turn = !messages.empty() && messages[0].role == Role::System ? 1 : 0;
    std::vector<std::size_t> segment(n, 0), segment_end(n, 0);
    bool added_bos = false;
    std::size_t system_size = 0;
    for (const SegmentSpan& s : full->segments) {
        if (s.kind == SegmentKind::Bos) added_bos = true;
        if (s.kind == SegmentKind::GenerationPrompt) out.tail = s.size;
        if (s.kind != SegmentKind::Message) continue;
        if (s.role == Role::System) {
            system_size = s.size;
        } else {
            segment[static_cast<std::size_t>(s.message)] = s.size;
            segment_end[static_cast<std::size_t>(s.message)] = s.begin + s.size;
        }
    }
    out.prefix.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) out.prefix[i + 1] = out.prefix[i] + segment[i];

    // A user message as the first kept one: written after the system message (or first of
    // all), and BOS added unless the prompt then starts with it.
    const bool has_system =
        !full_plan->messages.empty() && full_plan->messages.front().role == Role::System;
    const LayoutState after_system =
        has_system ? full_plan->messages.front().layout.after() : LayoutState{};
    const TokenId system_first = has_system ? full->ids[full->persona_prefix - system_size] : -1;
    out.system = system_size + (has_system && added_bos ? 1 : 0);
    out.first.assign(n, 0);
    out.bos.assign(n, 0);
    std::vector<TokenId> last_closed;  // a closed user segment's last token
    for (std::size_t k = out.first_turn; k < n; ++k) {
        if (messages[k].role != Role::User) continue;
        std::vector<TokenId> ids;
        append_message(&messages[k], messages[k].text, template_.layout(Role::User, after_system),
                       false, ids);
        out.first[k] = ids.size();
        const TokenId first_id = has_system ? system_first : ids.empty() ? -1 : ids.front();
        out.bos[k] = !has_system && add_bos_ && first_id != tokenizer_.bos() ? 1 : 0;
        if (segment[k] > 0 && (k + 1 < n || end != PromptEnd::ContinueReply))
            last_closed = {full->ids[segment_end[k] - 1]};
    }
    // The generation prompt that follows a closed user message (every earlier turn's).
    out.generation = encode_glue(after(last_closed, full_plan->reply.open)).size();
    out.full = std::move(*full);
    return out;
}

std::size_t PromptSizes::size(std::size_t k, std::size_t last) const {
    const std::size_t n = prefix.size() - 1;
    const std::size_t end = last + 1 == n ? tail : generation;
    if (k == first_turn)  // the full prompt without the messages after `last`
        return full.ids.size() - (prefix[n] - prefix[last + 1]) - tail + end;
    return bos[k] + system + first[k] + (prefix[last + 1] - prefix[k + 1]) + end;
}

Result<Prompt> PromptBuilder::build_from(std::span<const Message> messages, std::size_t first_kept,
                                         PromptEnd end) const {
    const std::size_t first_turn = !messages.empty() && messages[0].role == Role::System ? 1 : 0;
    if (first_kept < first_turn || first_kept > messages.size())
        return make_error("build_from: message " + std::to_string(first_kept) +
                          " cannot be the first one kept");
    auto plan = template_.plan(messages, first_kept - first_turn);
    if (!plan) return plan.error();
    auto p = build_plan(messages, *plan, end);
    if (p) p->dropped = first_kept - first_turn;
    return p;
}

Result<Prompt> PromptBuilder::fit_to_context(std::span<const Message> messages, size_t max_tokens,
                                             PromptEnd end) const {
    auto sizes = measure(messages, end);
    if (!sizes) return sizes.error();
    if (sizes->full.ids.size() <= max_tokens) return std::move(sizes->full);
    // The fewest oldest turns whose leaving makes it fit; only the chosen one is built.
    size_t smallest = sizes->full.ids.size();
    for (size_t k = sizes->first_turn + 1; k < messages.size(); ++k) {
        if (messages[k].role != Role::User) continue;
        const size_t size = sizes->size(k, messages.size() - 1);
        smallest = std::min(smallest, size);
        if (size > max_tokens) continue;
        auto p = build_from(messages, k, end);
        if (p && p->ids.size() <= max_tokens) return p;  // always, unless the sizes are wrong
    }
    return make_error("the conversation needs at least " + std::to_string(smallest) +
                      " tokens (the system prompt and the last turn), more than the " +
                      std::to_string(max_tokens) + " available");
}

Result<Segment> PromptBuilder::render_segment(std::span<const Message> messages,
                                              size_t index) const {
    if (index >= messages.size())
        return make_error("message " + std::to_string(index) + " is past the conversation's end");
    auto p = build(messages.first(index + 1), PromptEnd::None);
    if (!p) return p.error();
    Segment seg{messages[index].role, {}};
    for (const SegmentSpan& s : p->segments) {
        if (s.kind == SegmentKind::Message && s.message == static_cast<int64_t>(index))
            seg.ids.assign(p->ids.begin() + static_cast<std::ptrdiff_t>(s.begin),
                           p->ids.begin() + static_cast<std::ptrdiff_t>(s.begin + s.size));
    }
    return seg;  // empty for an empty system message, which is written as nothing
}

std::vector<TokenId> PromptBuilder::persona_prefix(
    std::optional<std::string_view> system_text) const {
    std::vector<Message> messages;
    if (system_text) messages.push_back({Role::System, std::string(*system_text), std::nullopt});
    auto p = build(messages, PromptEnd::None);
    // Cannot fail: a lone system message is always a valid conversation.
    return p ? std::move(p->ids) : std::vector<TokenId>{};
}

}  // namespace hearth::chat
