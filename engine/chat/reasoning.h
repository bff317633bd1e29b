// Reasoning blocks: "<think>…</think>" before a reply's answer (Qwen3, QwQ, DeepSeek-R1
// distills). What a model's template does with them, found by searching its text (never
// evaluated, as template_family.h), and the split of a reply's text into its reasoning and
// its answer, for the prompt history and for display.
#pragma once

#include <string>
#include <string_view>

namespace hearth::chat {

inline constexpr std::string_view kThinkOpen = "<think>";
inline constexpr std::string_view kThinkClose = "</think>";
// What Qwen3's template writes after the assistant header when thinking is turned off
// (enable_thinking = false): an empty reasoning block the model continues after.
inline constexpr std::string_view kThinkingOffPrefix = "<think>\n\n</think>\n\n";

struct ReasoningFormat {
    bool present = false;  // the template knows <think> blocks
    // It reads enable_thinking (Qwen3): thinking can be turned off per request, by
    // writing kThinkingOffPrefix after the generation prompt.
    bool switchable = false;
    // It writes earlier replies without their reasoning: Qwen3 (replies before the last
    // user message) and the DeepSeek-R1 distills (every reply) keep only the text after
    // </think>, with its leading newlines removed.
    bool dropped_from_history = false;
};

ReasoningFormat detect_reasoning(std::string_view template_text);

struct ReasoningSplit {
    std::string_view reasoning;  // without the tags and the newlines around it
    std::string_view answer;     // after </think>, leading newlines removed
    bool has_reasoning = false;  // the text has a reasoning block (maybe unfinished)
    bool open = false;           // ... and it is not closed yet (still thinking)
};

// The reasoning and the answer of a reply's text. A reply opens its block with <think>
// (after optional whitespace), or, where the generation prompt already opened it (the
// DeepSeek-R1 distills write "<think>\n" there), has only the closing </think>. A text
// with neither is all answer. The views point into `text`.
ReasoningSplit split_reasoning(std::string_view text);

}  // namespace hearth::chat
