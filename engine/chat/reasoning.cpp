#include "chat/reasoning.h"

namespace hearth::chat {

namespace {

std::string_view strip_newlines(std::string_view s) {
    while (!s.empty() && s.front() == '\n') s.remove_prefix(1);
    while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
    return s;
}

}  // namespace

ReasoningFormat detect_reasoning(std::string_view t) {
    ReasoningFormat f;
    f.present = t.find(kThinkOpen) != std::string_view::npos ||
                t.find(kThinkClose) != std::string_view::npos;
    if (!f.present) return f;
    f.switchable = t.find("enable_thinking") != std::string_view::npos;
    // Qwen3: "'</think>' in message.content" then "split('</think>')"; the R1 distills:
    // "content.split('</think>')[-1]".
    f.dropped_from_history = t.find("split('</think>')") != std::string_view::npos ||
                             t.find("split(\"</think>\")") != std::string_view::npos;
    return f;
}

ReasoningSplit split_reasoning(std::string_view text) {
    ReasoningSplit s;
    size_t start = 0;
    while (start < text.size() && (text[start] == ' ' || text[start] == '\n' ||
                                   text[start] == '\t' || text[start] == '\r'))
        ++start;
    const bool opened = text.substr(start).starts_with(kThinkOpen);
    const size_t body = opened ? start + kThinkOpen.size() : 0;
    const size_t close = text.find(kThinkClose, body);
    if (!opened && close == std::string_view::npos) {
        s.answer = text;
        return s;
    }
    s.has_reasoning = true;
    if (close == std::string_view::npos) {
        s.open = true;
        s.reasoning = strip_newlines(text.substr(body));
        return s;
    }
    s.reasoning = strip_newlines(text.substr(body, close - body));
    std::string_view answer = text.substr(close + kThinkClose.size());
    while (!answer.empty() && answer.front() == '\n') answer.remove_prefix(1);
    s.answer = answer;
    return s;
}

}  // namespace hearth::chat
