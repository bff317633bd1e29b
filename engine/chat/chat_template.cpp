#include "chat/chat_template.h"

#include "gguf/gguf_file.h"

namespace hearth::chat {

namespace {

using F = TemplateFamily;

bool is_llama2(F f) {
    return f == F::Llama2 || f == F::Llama2Sys || f == F::Llama2SysBos || f == F::Llama2SysStrip;
}
bool is_mistral_v1_v3(F f) {
    return f == F::MistralV1 || f == F::MistralV3 || f == F::MistralV3Tekken;
}
bool is_mistral_v7(F f) {
    return f == F::MistralV7 || f == F::MistralV7Tekken;
}

// Formats that write every message as its own turn under a role header.
MessageLayout header_layout(F family, Role role) {
    const std::string name(role_name(role));
    MessageLayout l;
    switch (family) {
        case F::Phi4:
            l.open = "<|im_start|>" + name + "<|im_sep|>";
            l.end_of_turn = "<|im_end|>";
            break;
        case F::Phi3:
        case F::Zephyr:
            l.open = "<|" + name + "|>\n";
            l.end_of_turn = family == F::Phi3 ? "<|end|>" : "<|endoftext|>";
            l.close = "\n";
            break;
        case F::Llama3:
            l.open = "<|start_header_id|>" + name + "<|end_header_id|>\n\n";
            l.trim = true;
            l.end_of_turn = "<|eot_id|>";
            break;
        default:  // ChatML
            l.open = "<|im_start|>" + name + "\n";
            l.end_of_turn = "<|im_end|>";
            l.close = "\n";
            break;
    }
    return l;
}

// Gemma has no system role: the system text opens the first user turn.
MessageLayout gemma_layout(Role role, LayoutState s) {
    MessageLayout l;
    l.trim = true;
    switch (role) {
        case Role::System:
            l.open = "<start_of_turn>user\n";
            l.opens_block = true;
            break;
        case Role::User:
            l.open = s.block_open ? "\n\n" : "<start_of_turn>user\n";
            l.end_of_turn = "<end_of_turn>";
            l.close = "\n";
            break;
        case Role::Assistant:
            l.open = std::string(s.block_open ? "<end_of_turn>\n" : "") + "<start_of_turn>model\n";
            l.end_of_turn = "<end_of_turn>";
            l.close = "\n";
            break;
    }
    return l;
}

// Llama 2 and its variants: [INST] user [/INST]assistant</s>; the system text opens the
// first [INST] block.
MessageLayout llama2_layout(F family, Role role, LayoutState s) {
    const bool sys_tags = family != F::Llama2;
    const bool bos_inside = family == F::Llama2SysBos;
    MessageLayout l;
    l.trim = family == F::Llama2SysStrip;
    switch (role) {
        case Role::System:
            l.opens_block = true;
            if (sys_tags) {
                l.open = "[INST] <<SYS>>\n";
                l.close = "\n<</SYS>>\n\n";
            } else {
                l.open = "[INST]";
                l.lead = " ";
                l.close = "\n";
            }
            break;
        case Role::User:
            if (!s.block_open) l.open = bos_inside && !s.first ? "<s>[INST]" : "[INST]";
            l.lead = " ";
            l.close = " [/INST]";
            break;
        case Role::Assistant:
            if (s.block_open) l.open = " [/INST]";
            l.end_of_turn = "</s>";
            break;
    }
    return l;
}

// Mistral's v1, v3 and v3-tekken: like Llama 2 with other spacing, system text first in
// the [INST] block.
MessageLayout mistral_v1_v3_layout(F family, Role role, LayoutState s) {
    const std::string leading = family == F::MistralV1 ? " " : "";
    const std::string trailing = family == F::MistralV3Tekken ? "" : " ";
    MessageLayout l;
    l.lead = trailing;
    switch (role) {
        case Role::System:
            l.open = leading + "[INST]";
            l.close = "\n\n";
            l.opens_block = true;
            break;
        case Role::User:
            if (!s.block_open) l.open = leading + "[INST]";
            l.close = leading + "[/INST]";
            break;
        case Role::Assistant:
            if (s.block_open) l.open = leading + "[/INST]";
            l.trim = family == F::MistralV3;
            l.end_of_turn = "</s>";
            break;
    }
    return l;
}

MessageLayout mistral_v7_layout(F family, Role role) {
    MessageLayout l;
    l.lead = family == F::MistralV7 ? " " : "";
    switch (role) {
        case Role::System:
            l.open = "[SYSTEM_PROMPT]";
            l.close = "[/SYSTEM_PROMPT]";
            break;
        case Role::User:
            l.open = "[INST]";
            l.close = "[/INST]";
            break;
        case Role::Assistant:
            l.end_of_turn = "</s>";
            break;
    }
    return l;
}

// A first system message that carries nothing: the user chose no system prompt.
bool is_empty_system(const Message& m) {
    if (m.ids) return m.ids->empty();
    return trim_text(m.text).empty();
}

}  // namespace

std::string_view role_name(Role role) {
    switch (role) {
        case Role::System:
            return "system";
        case Role::User:
            return "user";
        case Role::Assistant:
            return "assistant";
    }
    return "user";
}

std::string_view trim_text(std::string_view text) {
    constexpr std::string_view kSpace = " \t\n\r\f\v";
    const size_t begin = text.find_first_not_of(kSpace);
    if (begin == std::string_view::npos) return {};
    const size_t end = text.find_last_not_of(kSpace);
    return text.substr(begin, end - begin + 1);
}

ChatTemplate::ChatTemplate(TemplateFamily family, std::string default_system_prompt)
    : family_(family), default_system_(std::move(default_system_prompt)) {}

ChatTemplate ChatTemplate::from_template_text(std::optional<std::string_view> text,
                                              std::optional<TemplateFamily> vocabulary_guess) {
    const TemplateFamily family = choose_family(text, vocabulary_guess);
    ChatTemplate t(family, text ? literal_default_system_prompt(family, *text) : "");
    if (text) t.set_reasoning(detect_reasoning(*text));
    return t;
}

ChatTemplate ChatTemplate::from_gguf(const gguf::GgufFile& file) {
    const auto text = file.get_string("tokenizer.chat_template");
    std::optional<TemplateFamily> guess;
    if (!text || text->empty()) {
        if (const auto tokens = file.get_array("tokenizer.ggml.tokens"))
            if (const auto strings = tokens->strings()) guess = family_from_vocabulary(*strings);
    }
    return from_template_text(text, guess);
}

MessageLayout ChatTemplate::layout(Role role, LayoutState state) const {
    if (family_ == F::Gemma) return gemma_layout(role, state);
    if (is_llama2(family_)) return llama2_layout(family_, role, state);
    if (is_mistral_v1_v3(family_)) return mistral_v1_v3_layout(family_, role, state);
    if (is_mistral_v7(family_)) return mistral_v7_layout(family_, role);
    return header_layout(family_, role);
}

std::string_view ChatTemplate::end_of_turn() const {
    switch (family_) {
        case F::ChatML:
        case F::Phi4:
            return "<|im_end|>";
        case F::Phi3:
            return "<|end|>";
        case F::Zephyr:
            return "<|endoftext|>";
        case F::Gemma:
            return "<end_of_turn>";
        case F::Llama3:
            return "<|eot_id|>";
        default:  // the [INST] families end a reply with the EOS token
            return "</s>";
    }
}

bool ChatTemplate::wants_bos() const {
    return family_ == F::Gemma || family_ == F::Llama3 || is_llama2(family_) ||
           is_mistral_v1_v3(family_) || is_mistral_v7(family_);
}

Result<Plan> ChatTemplate::plan(std::span<const Message> messages, size_t drop) const {
    for (size_t i = 1; i < messages.size(); ++i) {
        if (messages[i].role == Role::System)
            return make_error("message " + std::to_string(i) +
                              " is a system message; only the first message may be one");
    }
    const bool has_system = !messages.empty() && messages[0].role == Role::System;
    const size_t first_turn = has_system ? 1 : 0;
    if (drop > messages.size() - first_turn)
        return make_error("cannot leave out " + std::to_string(drop) + " of " +
                          std::to_string(messages.size() - first_turn) + " messages");

    Plan plan;
    LayoutState state;
    const auto add = [&](int64_t index, Role role) {
        PlannedMessage m{index, role, layout(role, state)};
        state = m.layout.after();
        plan.messages.push_back(std::move(m));
    };
    if (has_system) {
        if (!is_empty_system(messages[0])) add(0, Role::System);
    } else if (!default_system_.empty()) {
        add(-1, Role::System);
    }
    // Qwen3 keeps the reasoning of the replies after the last user message (a reply being
    // continued); the R1 distills' templates drop it from every reply.
    size_t last_user = messages.size();
    for (size_t i = messages.size(); i-- > 0;)
        if (messages[i].role == Role::User) {
            last_user = i;
            break;
        }
    const bool keeps_last = reasoning_.switchable;
    for (size_t i = first_turn + drop; i < messages.size(); ++i) {
        add(static_cast<int64_t>(i), messages[i].role);
        if (reasoning_.dropped_from_history && messages[i].role == Role::Assistant &&
            !(keeps_last && last_user != messages.size() && i > last_user) &&
            split_reasoning(messages[i].text).has_reasoning)
            plan.messages.back().answer_only = true;
    }
    plan.reply = layout(Role::Assistant, state);
    if (reasoning_.switchable && !thinking_) {
        plan.reply.open += kThinkingOffPrefix;
        // A last reply after the last user message (one to continue) was opened so too.
        PlannedMessage* last = plan.messages.empty() ? nullptr : &plan.messages.back();
        if (last && last->role == Role::Assistant && last_user != messages.size() &&
            static_cast<size_t>(last->index) > last_user &&
            !split_reasoning(messages.back().text).has_reasoning)
            last->layout.open += kThinkingOffPrefix;
    }
    return plan;
}

Result<std::string> ChatTemplate::render_text(std::span<const Message> messages,
                                              bool add_generation_prompt) const {
    auto plan_result = plan(messages);
    if (!plan_result) return plan_result.error();
    const Plan& p = *plan_result;
    std::string out;
    for (const PlannedMessage& m : p.messages) {
        const std::string_view text =
            m.index < 0 ? std::string_view(default_system_)
                        : std::string_view(messages[static_cast<size_t>(m.index)].text);
        const std::string_view content = m.answer_only ? split_reasoning(text).answer : text;
        out += m.layout.open;
        out += m.layout.lead;
        out += m.layout.trim ? trim_text(content) : content;
        out += m.layout.end_of_turn;
        out += m.layout.close;
    }
    if (add_generation_prompt) out += p.reply.open;
    return out;
}

}  // namespace hearth::chat
