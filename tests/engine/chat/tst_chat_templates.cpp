// Template family detection and the text each family writes, without a tokenizer.
// The expected renderings are llama.cpp's (its tests/test-chat-template.cpp, "Hello" /
// "Hi there" conversation), with Hearth's documented differences applied explicitly.
#include <QTest>

#include <spdlog/sinks/ringbuffer_sink.h>

#include "chat/chat_template.h"
#include "chat/template_family.h"
#include "common/log.h"

using hearth::chat::ChatTemplate;
using hearth::chat::LayoutState;
using hearth::chat::Message;
using hearth::chat::Role;
using hearth::chat::TemplateFamily;

namespace {

// SmolLM2-135M-Instruct's template as its GGUF stores it (real newlines inside the
// Jinja string literals).
const char* const kSmolLM2 =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}";

// Qwen2.5's default system prompt branch, as Jinja source text (backslash-n escapes).
const char* const kQwen25 =
    "{%- if tools %}{{- '<|im_start|>system\\n' }}{%- if messages[0]['role'] == 'system' %}"
    "{{- messages[0]['content'] }}{%- else %}{{- 'You are Qwen, created by Alibaba Cloud. You "
    "are a helpful assistant.' }}{%- endif %}{%- else %}{%- if messages[0]['role'] == 'system' "
    "%}{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}{%- else %}"
    "{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
    "assistant.<|im_end|>\\n' }}{%- endif %}{%- endif %}";

std::vector<Message> hello_conversation() {
    return {{Role::System, "You are a helpful assistant", {}},
            {Role::User, "Hello", {}},
            {Role::Assistant, "Hi there", {}},
            {Role::User, "Who are you", {}},
            {Role::Assistant, "   I am an assistant   ", {}},
            {Role::User, "Another question", {}}};
}

QString render(TemplateFamily family, const std::vector<Message>& messages, bool generation) {
    auto text = ChatTemplate(family).render_text(messages, generation);
    if (!text) qFatal("render_text failed: %s", text.message().c_str());
    return QString::fromStdString(*text);
}

}  // namespace

class TestChatTemplates : public QObject {
    Q_OBJECT

  private slots:
    void detect_data() {
        QTest::addColumn<QString>("tmpl");
        QTest::addColumn<QString>("family");   // "" when Hearth does not render it
        QTest::addColumn<QString>("matched");  // llama.cpp's name, "" for nothing

        QTest::newRow("smollm2") << kSmolLM2 << "chatml"
                                 << "chatml";
        QTest::newRow("qwen2.5") << kQwen25 << "chatml"
                                 << "chatml";
        QTest::newRow("phi4") << "{{'<|im_start|>' + message['role'] + '<|im_sep|>'}}"
                              << "phi4"
                              << "phi4";
        QTest::newRow("smolvlm") << "<|im_start|>{{ role }}<end_of_utterance>"
                                 << ""
                                 << "smolvlm";
        QTest::newRow("llama2") << "{{ bos_token }}{{ '[INST] ' + content + ' [/INST]' }}"
                                << "llama2"
                                << "llama2";
        QTest::newRow("llama2-sys") << "{{ '[INST] <<SYS>>\\n' + system + '\\n<</SYS>>' }}"
                                    << "llama2-sys"
                                    << "llama2-sys";
        QTest::newRow("llama2-sys-bos")
            << "{{- bos_token + '[INST] ' + c + ' [/INST]' -}}{{- '[INST] <<SYS>>\\n' -}}"
            << "llama2-sys-bos"
            << "llama2-sys-bos";
        QTest::newRow("llama2-sys-strip") << "{{ '[INST] ' + content.strip() + ' [/INST]' }}<<SYS>>"
                                          << "llama2-sys-strip"
                                          << "llama2-sys-strip";
        QTest::newRow("mistral-v1") << "{{- ' [INST] ' + system_message + '\\n\\n' }}"
                                    << "mistral-v1"
                                    << "mistral-v1";
        QTest::newRow("mistral-v3") << "{{- \"[AVAILABLE_TOOLS] [\" }}{{- \"[INST] \" + c }}"
                                    << "mistral-v3"
                                    << "mistral-v3";
        QTest::newRow("mistral-v3-tekken") << "{{- \"[AVAILABLE_TOOLS][\" }}{{- \"[INST]\" + c }}"
                                           << "mistral-v3-tekken"
                                           << "mistral-v3-tekken";
        QTest::newRow("mistral-v7") << "{{ '[SYSTEM_PROMPT] ' + c + '[/SYSTEM_PROMPT]' }}[INST]"
                                    << "mistral-v7"
                                    << "mistral-v7";
        QTest::newRow("mistral name prefix") << "mistral-ish"
                                             << "llama2"
                                             << "llama2";
        QTest::newRow("phi3") << "{{'<|user|>\n' + c + '<|end|>\n'}}{{ '<|assistant|>\n' }}"
                              << "phi3"
                              << "phi3";
        QTest::newRow("falcon3") << "{{'<|user|>\n'}}{{'<|assistant|>\n'}}</s>"
                                 << ""
                                 << "falcon3";
        QTest::newRow("zephyr") << "{{ '<|user|>\n' + c + '<|endoftext|>' }}"
                                << "zephyr"
                                << "zephyr";
        QTest::newRow("gemma") << "{{ '<start_of_turn>' + role + '\n' }}"
                               << "gemma"
                               << "gemma";
        QTest::newRow("llama3")
            << "{{ '<|start_header_id|>' + role + '<|end_header_id|>\n\n' + c + '<|eot_id|>' }}"
            << "llama3"
            << "llama3";
        QTest::newRow("vicuna") << "USER: {{ c }} ASSISTANT: "
                                << ""
                                << "vicuna";
        QTest::newRow("command-r") << "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>"
                                   << ""
                                   << "command-r";
        QTest::newRow("unknown") << "{{ messages }}"
                                 << ""
                                 << "";
        QTest::newRow("exact name") << "llama3"
                                    << "llama3"
                                    << "llama3";
        QTest::newRow("exact unrendered name") << "vicuna"
                                               << ""
                                               << "vicuna";
        // Order matters: the first check that matches wins, as in llama.cpp.
        QTest::newRow("im_start before gemma") << "<|im_start|><start_of_turn>"
                                               << "chatml"
                                               << "chatml";
        QTest::newRow("[INST] before phi3") << "[INST]<|assistant|><|end|>"
                                            << "llama2"
                                            << "llama2";
        QTest::newRow("vicuna before llama3")
            << "USER: ASSISTANT: <|start_header_id|><|end_header_id|>"
            << ""
            << "vicuna";
    }
    void detect() {
        QFETCH(QString, tmpl);
        QFETCH(QString, family);
        QFETCH(QString, matched);
        const std::string text = tmpl.toStdString();
        const auto d = hearth::chat::detect_template(text);
        QCOMPARE(QString::fromUtf8(d.matched.data(), static_cast<qsizetype>(d.matched.size())),
                 matched);
        QCOMPARE(
            d.family ? QString::fromUtf8(hearth::chat::family_name(*d.family).data()) : QString(""),
            family);
    }

    void namesRoundTrip() {
        for (TemplateFamily f : hearth::chat::kAllFamilies) {
            const auto back = hearth::chat::family_from_name(hearth::chat::family_name(f));
            QVERIFY(back.has_value());
            QCOMPARE(*back, f);
        }
        QVERIFY(!hearth::chat::family_from_name("no-such-format").has_value());
    }

    void fallbackWarns() {
        auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(8);
        auto logger = hearth::log::get("chat");
        logger->sinks().push_back(sink);
        const auto level = logger->level();
        logger->set_level(spdlog::level::info);

        QCOMPARE(hearth::chat::choose_family(std::nullopt), TemplateFamily::ChatML);
        QCOMPARE(hearth::chat::choose_family(std::string_view("{{ messages }}")),
                 TemplateFamily::ChatML);
        QCOMPARE(hearth::chat::choose_family(std::string_view("USER: x ASSISTANT: ")),
                 TemplateFamily::ChatML);
        QCOMPARE(hearth::chat::choose_family(std::string_view("<start_of_turn>")),
                 TemplateFamily::Gemma);
        const auto lines = sink->last_formatted();
        logger->sinks().pop_back();
        logger->set_level(level);

        QCOMPARE(lines.size(), size_t(3));  // the recognised Gemma template logs no warning
        QVERIFY(QString::fromStdString(lines[0]).contains("no tokenizer.chat_template"));
        QVERIFY(QString::fromStdString(lines[1]).contains("matches no format"));
        QVERIFY(QString::fromStdString(lines[2]).contains("'vicuna'"));
        for (const auto& l : lines) QVERIFY(QString::fromStdString(l).contains("ChatML"));
    }

    // A file without a template: the turn markers its vocabulary has choose the format.
    void familyFromVocabulary() {
        using V = std::vector<std::string_view>;
        using hearth::chat::family_from_vocabulary;
        QCOMPARE(family_from_vocabulary(V{"<bos>", "<start_of_turn>", "<end_of_turn>", "a"}),
                 TemplateFamily::Gemma);
        QCOMPARE(family_from_vocabulary(V{"<|begin_of_text|>", "<|start_header_id|>", "x"}),
                 TemplateFamily::Llama3);
        QCOMPARE(family_from_vocabulary(V{"<|im_start|>", "<|im_end|>"}), TemplateFamily::ChatML);
        QCOMPARE(family_from_vocabulary(V{"<|im_start|>", "<|im_sep|>", "<|im_end|>"}),
                 TemplateFamily::Phi4);
        QCOMPARE(family_from_vocabulary(V{"<|user|>", "<|assistant|>", "<|end|>"}),
                 TemplateFamily::Phi3);
        QVERIFY(!family_from_vocabulary(V{"<|assistant|>", "<s>", "</s>", "start_of_turn", ""}));
        QVERIFY(!family_from_vocabulary(V{}));

        auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(8);
        auto logger = hearth::log::get("chat");
        logger->sinks().push_back(sink);
        const auto level = logger->level();
        logger->set_level(spdlog::level::info);
        QCOMPARE(hearth::chat::choose_family(std::nullopt, TemplateFamily::Gemma),
                 TemplateFamily::Gemma);
        // A template, even one Hearth does not know, wins over the vocabulary.
        QCOMPARE(
            hearth::chat::choose_family(std::string_view("<|im_start|>"), TemplateFamily::Gemma),
            TemplateFamily::ChatML);
        QCOMPARE(
            hearth::chat::ChatTemplate::from_template_text(std::nullopt, TemplateFamily::Llama3)
                .family(),
            TemplateFamily::Llama3);
        const auto lines = sink->last_formatted();
        logger->sinks().pop_back();
        logger->set_level(level);
        QCOMPARE(lines.size(), size_t(2));  // said once per choice made from the vocabulary
        QVERIFY(QString::fromStdString(lines[0]).contains("using gemma"));
        QVERIFY(!QString::fromStdString(lines[0]).contains("[warning]"));
    }

    void literalDefaultSystemPrompt_data() {
        QTest::addColumn<QString>("tmpl");
        QTest::addColumn<QString>("expected");
        QTest::newRow("smollm2") << kSmolLM2
                                 << "You are a helpful AI assistant named SmolLM, trained by "
                                    "Hugging Face";
        QTest::newRow("qwen2.5") << kQwen25
                                 << "You are Qwen, created by Alibaba Cloud. You are a helpful "
                                    "assistant.";
        QTest::newRow("built from the conversation")
            << "{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}"
            << "";
        QTest::newRow("no system header") << "{{'<|im_start|>' + role + '\\n'}}"
                                          << "";
        QTest::newRow("no end marker") << "'<|im_start|>system\\nYou are Qwen.' }}"
                                       << "";
    }
    void literalDefaultSystemPrompt() {
        QFETCH(QString, tmpl);
        QFETCH(QString, expected);
        const std::string t = tmpl.toStdString();
        QCOMPARE(QString::fromStdString(
                     hearth::chat::literal_default_system_prompt(TemplateFamily::ChatML, t)),
                 expected);
        // Only ChatML templates are searched.
        QVERIFY(hearth::chat::literal_default_system_prompt(TemplateFamily::Llama3, t).empty());
    }

    void defaultSystemPromptUse() {
        const ChatTemplate t = ChatTemplate::from_template_text(std::string_view(kSmolLM2));
        QCOMPARE(t.family(), TemplateFamily::ChatML);
        const std::vector<Message> plain = {{Role::User, "Hi", {}}};
        QCOMPARE(QString::fromStdString(*t.render_text(plain, true)),
                 "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by "
                 "Hugging Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
        // An empty system message is the user's choice of no system prompt at all.
        const std::vector<Message> none = {{Role::System, "", {}}, {Role::User, "Hi", {}}};
        QCOMPARE(QString::fromStdString(*t.render_text(none, true)),
                 "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
        const std::vector<Message> own = {{Role::System, "Be brief.", {}}, {Role::User, "Hi", {}}};
        QCOMPARE(QString::fromStdString(*t.render_text(own, false)),
                 "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
    }

    void rendering_data() {
        QTest::addColumn<TemplateFamily>("family");
        QTest::addColumn<QString>("llama_cpp");  // llama.cpp's rendering
        QTest::addColumn<QString>("from");       // Hearth's documented difference: from -> to
        QTest::addColumn<QString>("to");

        QTest::newRow("chatml")
            << TemplateFamily::ChatML
            << "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello"
               "<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are "
               "you<|im_end|>\n<|im_start|>assistant\n   I am an assistant   "
               "<|im_end|>\n<|im_start|>"
               "user\nAnother question<|im_end|>\n<|im_start|>assistant\n"
            << ""
            << "";
        QTest::newRow("llama3")
            << TemplateFamily::Llama3
            << "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|>"
               "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>"
               "assistant<|end_header_id|>\n\nHi "
               "there<|eot_id|><|start_header_id|>user<|end_header_"
               "id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am "
               "an "
               "assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnother question"
               "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
            << ""
            << "";
        QTest::newRow("gemma")
            << TemplateFamily::Gemma
            << "<start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n<start_of_"
               "turn>model\nHi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n"
               "<start_of_turn>model\nI am an assistant<end_of_turn>\n<start_of_turn>user\nAnother "
               "question<end_of_turn>\n<start_of_turn>model\n"
            << ""
            << "";
        QTest::newRow("phi3") << TemplateFamily::Phi3
                              << "<|system|>\nYou are a helpful "
                                 "assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>"
                                 "\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n "
                                 "  I am an assistant"
                                 "   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"
                              << ""
                              << "";
        QTest::newRow("zephyr")
            << TemplateFamily::Zephyr
            << "<|system|>\nYou are a helpful "
               "assistant<|endoftext|>\n<|user|>\nHello<|endoftext|>\n"
               "<|assistant|>\nHi there<|endoftext|>\n<|user|>\nWho are "
               "you<|endoftext|>\n<|assistant"
               "|>\n   I am an assistant   <|endoftext|>\n<|user|>\nAnother question<|endoftext|>\n"
               "<|assistant|>\n"
            << ""
            << "";
        QTest::newRow("phi4")
            << TemplateFamily::Phi4
            << "<|im_start|>system<|im_sep|>You are a helpful "
               "assistant<|im_end|><|im_start|>user<|im_"
               "sep|>Hello<|im_end|><|im_start|>assistant<|im_sep|>Hi "
               "there<|im_end|><|im_start|>user"
               "<|im_sep|>Who are you<|im_end|><|im_start|>assistant<|im_sep|>   I am an assistant "
               "  "
               "<|im_end|><|im_start|>user<|im_sep|>Another question<|im_end|><|im_start|>assistant"
               "<|im_sep|>"
            << ""
            << "";
        // The [INST] families: the space before user text is written in every position
        // (chat_template.h), also right after the system block.
        QTest::newRow("llama2")
            << TemplateFamily::Llama2
            << "[INST] You are a helpful assistant\nHello [/INST]Hi there</s>[INST] Who are you "
               "[/INST]   I am an assistant   </s>[INST] Another question [/INST]"
            << "assistant\nHello"
            << "assistant\n Hello";
        QTest::newRow("llama2-sys-bos")
            << TemplateFamily::Llama2SysBos
            << "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>"
               "<s>[INST] Who are you [/INST]   I am an assistant   </s><s>[INST] Another question "
               "[/INST]"
            << "\n\nHello"
            << "\n\n Hello";
        QTest::newRow("llama2-sys-strip")
            << TemplateFamily::Llama2SysStrip
            << "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>"
               "[INST] Who are you [/INST]I am an assistant</s>[INST] Another question [/INST]"
            << "\n\nHello"
            << "\n\n Hello";
        QTest::newRow("mistral-v1")
            << TemplateFamily::MistralV1
            << " [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who are "
               "you [/INST]    I am an assistant   </s> [INST] Another question [/INST]"
            << "\n\nHello"
            << "\n\n Hello";
        QTest::newRow("mistral-v3")
            << TemplateFamily::MistralV3
            << "[INST] You are a helpful assistant\n\nHello[/INST] Hi there</s>[INST] Who are you"
               "[/INST] I am an assistant</s>[INST] Another question[/INST]"
            << "\n\nHello"
            << "\n\n Hello";
        QTest::newRow("mistral-v3-tekken")
            << TemplateFamily::MistralV3Tekken
            << "[INST]You are a helpful assistant\n\nHello[/INST]Hi there</s>[INST]Who are you"
               "[/INST]   I am an assistant   </s>[INST]Another question[/INST]"
            << ""
            << "";
        QTest::newRow("mistral-v7")
            << TemplateFamily::MistralV7
            << "[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT][INST] Hello[/INST] Hi "
               "there</s>[INST] Who are you[/INST]    I am an assistant   </s>[INST] Another "
               "question[/INST]"
            << ""
            << "";
    }
    void rendering() {
        QFETCH(TemplateFamily, family);
        QFETCH(QString, llama_cpp);
        QFETCH(QString, from);
        QFETCH(QString, to);
        QString expected = llama_cpp;
        if (!from.isEmpty()) {
            QCOMPARE(expected.count(from), 1);
            expected.replace(from, to);
        }
        QCOMPARE(render(family, hello_conversation(), true), expected);
    }

    // What the format writes for a system prompt is a prefix of every conversation that
    // has it, including a greeting from the assistant before the first user message.
    void systemTextIsAPrefix() {
        const std::vector<Message> persona = {{Role::System, "Be kind.", {}}};
        for (TemplateFamily f : hearth::chat::kAllFamilies) {
            const QString prefix = render(f, persona, false);
            QVERIFY(prefix.contains("Be kind."));
            auto greeting = persona;
            greeting.push_back({Role::Assistant, "Welcome!", {}});
            greeting.push_back({Role::User, "Thanks", {}});
            auto plain = persona;
            plain.push_back({Role::User, "Thanks", {}});
            QVERIFY2(render(f, greeting, true).startsWith(prefix),
                     hearth::chat::family_name(f).data());
            QVERIFY2(render(f, plain, true).startsWith(prefix),
                     hearth::chat::family_name(f).data());
        }
    }

    // A greeting before the first user message closes the turn the system text opened.
    void greetingClosesSystemBlock_data() {
        QTest::addColumn<TemplateFamily>("family");
        QTest::addColumn<QString>("expected");
        QTest::newRow("gemma")
            << TemplateFamily::Gemma
            << "<start_of_turn>user\nBe kind.<end_of_turn>\n<start_of_turn>model\n"
               "Welcome!<end_of_turn>\n<start_of_turn>user\nThanks<end_of_turn>\n"
               "<start_of_turn>model\n";
        QTest::newRow("llama2-sys") << TemplateFamily::Llama2Sys
                                    << "[INST] <<SYS>>\nBe kind.\n<</SYS>>\n\n [/INST]Welcome!</s>"
                                       "[INST] Thanks [/INST]";
        QTest::newRow("llama2") << TemplateFamily::Llama2
                                << "[INST] Be kind.\n [/INST]Welcome!</s>[INST] Thanks [/INST]";
        QTest::newRow("mistral-v3")
            << TemplateFamily::MistralV3
            << "[INST] Be kind.\n\n[/INST] Welcome!</s>[INST] Thanks[/INST]";
        QTest::newRow("mistral-v1")
            << TemplateFamily::MistralV1
            << " [INST] Be kind.\n\n [/INST] Welcome!</s> [INST] Thanks [/INST]";
    }
    void greetingClosesSystemBlock() {
        QFETCH(TemplateFamily, family);
        QFETCH(QString, expected);
        const std::vector<Message> m = {{Role::System, "Be kind.", {}},
                                        {Role::Assistant, "Welcome!", {}},
                                        {Role::User, "Thanks", {}}};
        QCOMPARE(render(family, m, true), expected);
    }

    // PromptBuilder::encode_content relies on this: the text before and around content
    // depends on the family and role, never on the position.
    void leadAndTrimIgnoreState() {
        const LayoutState states[] = {{true, false}, {false, false}, {false, true}};
        for (TemplateFamily f : hearth::chat::kAllFamilies) {
            const ChatTemplate t(f);
            for (Role r : {Role::System, Role::User, Role::Assistant}) {
                const auto base = t.layout(r, states[0]);
                for (const LayoutState& s : states) {
                    QCOMPARE(t.layout(r, s).lead, base.lead);
                    QCOMPARE(t.layout(r, s).trim, base.trim);
                }
            }
            for (const LayoutState& s : states)
                QCOMPARE(t.layout(Role::Assistant, s).end_of_turn, std::string(t.end_of_turn()));
        }
    }

    void planErrors() {
        const ChatTemplate t(TemplateFamily::ChatML);
        const std::vector<Message> late = {{Role::User, "a", {}}, {Role::System, "b", {}}};
        auto r = t.plan(late);
        QVERIFY(!r.ok());
        QVERIFY(QString::fromStdString(r.message()).contains("only the first message"));
        const std::vector<Message> two = {{Role::System, "s", {}}, {Role::User, "a", {}}};
        QVERIFY(t.plan(two, 1).ok());
        QVERIFY(!t.plan(two, 2).ok());
    }

    void trimText() {
        QCOMPARE(hearth::chat::trim_text(" \t\n x y \r\n"), std::string_view("x y"));
        QCOMPARE(hearth::chat::trim_text(" \n "), std::string_view());
        QCOMPARE(hearth::chat::trim_text("x"), std::string_view("x"));
    }
};

QTEST_GUILESS_MAIN(TestChatTemplates)
#include "tst_chat_templates.moc"
