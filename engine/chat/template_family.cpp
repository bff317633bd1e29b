#include "chat/template_family.h"

#include "common/log.h"

namespace hearth::chat {

namespace {

struct NamedFamily {
    std::string_view name;
    TemplateFamily family;
};

constexpr std::array<NamedFamily, kAllFamilies.size()> kNames = {{
    {"chatml", TemplateFamily::ChatML},
    {"phi4", TemplateFamily::Phi4},
    {"llama2", TemplateFamily::Llama2},
    {"llama2-sys", TemplateFamily::Llama2Sys},
    {"llama2-sys-bos", TemplateFamily::Llama2SysBos},
    {"llama2-sys-strip", TemplateFamily::Llama2SysStrip},
    {"mistral-v1", TemplateFamily::MistralV1},
    {"mistral-v3", TemplateFamily::MistralV3},
    {"mistral-v3-tekken", TemplateFamily::MistralV3Tekken},
    {"mistral-v7", TemplateFamily::MistralV7},
    {"mistral-v7-tekken", TemplateFamily::MistralV7Tekken},
    {"phi3", TemplateFamily::Phi3},
    {"zephyr", TemplateFamily::Zephyr},
    {"gemma", TemplateFamily::Gemma},
    {"llama3", TemplateFamily::Llama3},
}};

// llama.cpp names of formats Hearth does not render, accepted as exact template names so
// that the warning can name them instead of calling them unknown.
constexpr std::array<std::string_view, 13> kUnrenderedNames = {
    "smolvlm",  "chatglm3", "chatglm4",    "glmedge",  "falcon3",   "monarch",    "orion",
    "openchat", "vicuna",   "vicuna-orca", "deepseek", "command-r", "exaone-moe",
};

Detection found(TemplateFamily family) {
    return {family, family_name(family)};
}
Detection unrendered(std::string_view name) {
    return {std::nullopt, name};
}

}  // namespace

std::string_view family_name(TemplateFamily family) {
    for (const auto& n : kNames)
        if (n.family == family) return n.name;
    return "chatml";  // unreachable: kNames lists every enumerator
}

std::optional<TemplateFamily> family_from_name(std::string_view name) {
    for (const auto& n : kNames)
        if (n.name == name) return n.family;
    return std::nullopt;
}

Detection detect_template(std::string_view tmpl) {
    if (auto named = family_from_name(tmpl)) return found(*named);
    for (std::string_view name : kUnrenderedNames)
        if (tmpl == name) return unrendered(name);

    const auto has = [tmpl](std::string_view needle) {
        return tmpl.find(needle) != std::string_view::npos;
    };

    if (has("<|im_start|>")) {
        if (has("<|im_sep|>")) return found(TemplateFamily::Phi4);
        // SmolVLM uses <|im_start|> as its BOS but is not ChatML.
        if (has("<end_of_utterance>")) return unrendered("smolvlm");
        return found(TemplateFamily::ChatML);
    }
    if (tmpl.starts_with("mistral") || has("[INST]")) {
        if (has("[SYSTEM_PROMPT]")) return found(TemplateFamily::MistralV7);
        // Mistral's official v1 / v3 / v3-tekken templates.
        if (has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]")) {
            if (has(" [INST]")) return found(TemplateFamily::MistralV1);
            if (has("\"[INST]\"")) return found(TemplateFamily::MistralV3Tekken);
            return found(TemplateFamily::MistralV3);
        }
        if (has("content.strip()")) return found(TemplateFamily::Llama2SysStrip);
        if (has("bos_token + '[INST]")) return found(TemplateFamily::Llama2SysBos);
        if (has("<<SYS>>")) return found(TemplateFamily::Llama2Sys);
        return found(TemplateFamily::Llama2);
    }
    if (has("<|assistant|>") && has("<|end|>")) return found(TemplateFamily::Phi3);
    if (has("[gMASK]<sop>")) return unrendered("chatglm4");
    if (has("<|assistant|>") && has("<|user|>")) {
        if (has("<|tool_declare|>")) return unrendered("exaone-moe");
        return unrendered(has("</s>") ? "falcon3" : "glmedge");
    }
    if (has("<|{{ item['role'] }}|>") && has("<|begin_of_image|>")) return unrendered("glmedge");
    if (has("<|user|>") && has("<|endoftext|>")) return found(TemplateFamily::Zephyr);
    if (has("bos_token + message['role']")) return unrendered("monarch");
    if (has("<start_of_turn>")) return found(TemplateFamily::Gemma);
    // The checks below see the template's source text, where a newline in a Jinja string
    // literal is the two characters backslash and n.
    if (has("'\\n\\nAssistant: ' + eos_token")) return unrendered("orion");
    if (has("GPT4 Correct ")) return unrendered("openchat");
    if (has("USER: ") && has("ASSISTANT: "))
        return unrendered(has("SYSTEM: ") ? "vicuna-orca" : "vicuna");
    if (has("### Instruction:") && has("<|EOT|>")) return unrendered("deepseek");
    if (has("<|START_OF_TURN_TOKEN|>") && has("<|USER_TOKEN|>")) return unrendered("command-r");
    if (has("<|start_header_id|>") && has("<|end_header_id|>"))
        return found(TemplateFamily::Llama3);
    if (has("[gMASK]sop")) return unrendered("chatglm3");
    return {std::nullopt, {}};
}

std::optional<TemplateFamily> family_from_vocabulary(const std::vector<std::string_view>& tokens) {
    bool turn = false, header = false, im_start = false, im_sep = false, assistant = false,
         end = false;
    for (std::string_view t : tokens) {
        // Every marker starts with '<'; most tokens do not.
        if (t.empty() || t.front() != '<') continue;
        turn = turn || t == "<start_of_turn>";
        header = header || t == "<|start_header_id|>";
        im_start = im_start || t == "<|im_start|>";
        im_sep = im_sep || t == "<|im_sep|>";
        assistant = assistant || t == "<|assistant|>";
        end = end || t == "<|end|>";
    }
    if (turn) return TemplateFamily::Gemma;
    if (header) return TemplateFamily::Llama3;
    if (im_start) return im_sep ? TemplateFamily::Phi4 : TemplateFamily::ChatML;
    if (assistant && end) return TemplateFamily::Phi3;
    return std::nullopt;
}

TemplateFamily choose_family(std::optional<std::string_view> template_text,
                             std::optional<TemplateFamily> vocabulary_guess) {
    if ((!template_text || template_text->empty()) && vocabulary_guess) {
        log::get("chat")->info(
            "the model has no tokenizer.chat_template; using {}, whose turn markers its "
            "vocabulary has",
            family_name(*vocabulary_guess));
        return *vocabulary_guess;
    }
    if (!template_text || template_text->empty()) {
        log::get("chat")->warn(
            "the model has no tokenizer.chat_template; using ChatML, which may not be the "
            "format it was trained on");
        return TemplateFamily::ChatML;
    }
    const Detection d = detect_template(*template_text);
    if (d.family) {
        log::get("chat")->debug("chat template detected as {}", d.matched);
        return *d.family;
    }
    if (d.matched.empty()) {
        log::get("chat")->warn(
            "the model's chat template matches no format Hearth knows; using ChatML, which "
            "may not be the format it was trained on");
    } else {
        log::get("chat")->warn(
            "the model's chat template looks like '{}', which Hearth does not render; using "
            "ChatML, which may not be the format it was trained on",
            d.matched);
    }
    return TemplateFamily::ChatML;
}

std::string literal_default_system_prompt(TemplateFamily family, std::string_view tmpl) {
    if (family != TemplateFamily::ChatML) return {};
    constexpr std::string_view kHeader = "<|im_start|>system";
    constexpr std::string_view kEnd = "<|im_end|>";
    for (size_t at = tmpl.find(kHeader); at != std::string_view::npos;
         at = tmpl.find(kHeader, at + 1)) {
        std::string_view rest = tmpl.substr(at + kHeader.size());
        // The header's newline is a real one when the GGUF converter unescaped the Jinja
        // source, or backslash-n inside the Jinja string literal.
        if (rest.starts_with("\\n"))
            rest.remove_prefix(2);
        else if (rest.starts_with("\n"))
            rest.remove_prefix(1);
        else
            continue;
        const size_t end = rest.find(kEnd);
        if (end == std::string_view::npos) continue;
        const std::string_view text = rest.substr(0, end);
        if (text.empty() || text.find_first_of("'\"{}\\") != std::string_view::npos) continue;
        return std::string(text);
    }
    return {};
}

}  // namespace hearth::chat
