// Which chat format a model speaks, detected from the GGUF key `tokenizer.chat_template`.
//
// The template is a Jinja program written by the model's author and shipped inside an
// untrusted file. Hearth never evaluates it: like llama.cpp's built-in templates
// (llama-chat.cpp) we only search it for substrings, in llama.cpp's order, and render the
// matching family with our own code (chat_template.h).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::chat {

// The chat formats Hearth renders. Names follow llama.cpp's (`family_name`), so a user
// who knows `--chat-template llama2-sys` finds the same spelling here.
enum class TemplateFamily : uint8_t {
    ChatML,           // <|im_start|>role\n...<|im_end|>\n  (SmolLM2, Qwen, Hermes, ...)
    Phi4,             // ChatML with <|im_sep|> after the role
    Llama2,           // [INST] ... [/INST]; system text without <<SYS>>
    Llama2Sys,        // [INST] <<SYS>>\n...\n<</SYS>>\n\n ... [/INST]
    Llama2SysBos,     // as Llama2Sys, with <s> before every later [INST]
    Llama2SysStrip,   // as Llama2Sys, message text trimmed
    MistralV1,        //  [INST] ... [/INST] (leading spaces)
    MistralV3,        // [INST] ...[/INST] assistant</s>
    MistralV3Tekken,  // [INST]...[/INST]assistant</s>
    MistralV7,        // [SYSTEM_PROMPT] ...[/SYSTEM_PROMPT][INST] ...[/INST]
    MistralV7Tekken,  // as MistralV7 without the spaces
    Phi3,             // <|role|>\n...<|end|>\n
    Zephyr,           // <|role|>\n...<|endoftext|>\n
    Gemma,            // <start_of_turn>user|model\n...<end_of_turn>\n, no system role
    Llama3,           // <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|>
};

inline constexpr std::array<TemplateFamily, 15> kAllFamilies = {
    TemplateFamily::ChatML,          TemplateFamily::Phi4,
    TemplateFamily::Llama2,          TemplateFamily::Llama2Sys,
    TemplateFamily::Llama2SysBos,    TemplateFamily::Llama2SysStrip,
    TemplateFamily::MistralV1,       TemplateFamily::MistralV3,
    TemplateFamily::MistralV3Tekken, TemplateFamily::MistralV7,
    TemplateFamily::MistralV7Tekken, TemplateFamily::Phi3,
    TemplateFamily::Zephyr,          TemplateFamily::Gemma,
    TemplateFamily::Llama3,
};

// llama.cpp's name for the family ("chatml", "llama2-sys-bos", "llama3", ...).
std::string_view family_name(TemplateFamily family);
// The family with that llama.cpp name, for a user's explicit choice; nullopt otherwise.
std::optional<TemplateFamily> family_from_name(std::string_view name);

struct Detection {
    // The family to render, or nullopt when the template is one Hearth does not render
    // (or matched nothing).
    std::optional<TemplateFamily> family;
    // llama.cpp's name for what the checks matched, also for formats Hearth does not
    // render ("vicuna", "command-r"), so a warning can say what the model wanted;
    // empty when nothing matched.
    std::string_view matched;
};

// Substring detection in llama.cpp's order. A template that is exactly a llama.cpp
// name ("chatml") selects that format. Formats Hearth does not render are still checked
// where llama.cpp checks them, so that, say, a Vicuna template that happens to mention
// <|start_header_id|> is not mistaken for Llama 3.
Detection detect_template(std::string_view template_text);

// The format a model without a chat template most likely speaks, from the turn markers
// its vocabulary has as tokens (a base model's file, as Gemma 3 270M's, often has no
// template but the markers its instruction-tuned sibling uses): <start_of_turn> Gemma,
// <|start_header_id|> Llama 3, <|im_start|> ChatML (Phi-4 with <|im_sep|>), <|assistant|>
// with <|end|> Phi-3. nullopt when it has none of them.
std::optional<TemplateFamily> family_from_vocabulary(const std::vector<std::string_view>& tokens);

// The family to use for a model: the detected one; without a template, the vocabulary's
// guess (family_from_vocabulary) logged as such; otherwise ChatML, logged as a warning on
// the "chat" logger, when the template is missing, unknown or not rendered by Hearth.
TemplateFamily choose_family(std::optional<std::string_view> template_text,
                             std::optional<TemplateFamily> vocabulary_guess = std::nullopt);

// A default system prompt written literally in the template, as SmolLM2's and Qwen2.5's
// are: `'<|im_start|>system\nYou are ...<|im_end|>\n'` inside a Jinja string. Found by
// a plain search, ChatML only: the text between the system header and <|im_end|> must
// contain no quote, brace or backslash (anything else would mean it is built by the
// program, not written out). Empty when there is none.
std::string literal_default_system_prompt(TemplateFamily family, std::string_view template_text);

}  // namespace hearth::chat
