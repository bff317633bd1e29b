// Reasoning blocks (engine/chat/reasoning.h): what a template does with them, found in its
// text; the split of a reply into reasoning and answer; and the prompts Qwen3's template
// writes: earlier replies without their reasoning, thinking turned off by an empty block
// after the generation prompt. The expected texts are Qwen3's Jinja template's output for
// the same conversations (llama.cpp's models/templates/Qwen-Qwen3-0.6B.jinja).
#include <QTest>

#include <algorithm>

#include "chat/chat_template.h"
#include "chat/prompt_builder.h"
#include "chat/reasoning.h"
#include "test_tokenizer.h"

using namespace hearth::chat;

namespace {

// The parts of Qwen3's template the detection reads (the whole template is longer).
const char* const kQwen3Excerpt =
    "{%- if '</think>' in message.content %}{%- set content = "
    "message.content.split('</think>')[-1].lstrip('\\n') %}{%- set reasoning_content = "
    "message.content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}"
    "{%- endif %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- if "
    "enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' "
    "}}{%- endif %}{%- endif %}<|im_start|>";

// DeepSeek-R1-Distill-Qwen's: every reply written without its reasoning; no switch.
const char* const kR1Excerpt =
    "{% if '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif %}"
    "{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}";

ChatTemplate qwen3(bool thinking) {
    ChatTemplate t = ChatTemplate::from_template_text(std::string_view(kQwen3Excerpt));
    t.set_thinking(thinking);
    return t;
}

std::string render(const ChatTemplate& t, const std::vector<Message>& m, bool gen) {
    auto r = t.render_text(m, gen);
    if (!r) qFatal("render_text: %s", r.message().c_str());
    return *r;
}

}  // namespace

class TestReasoning : public QObject {
    Q_OBJECT

  private slots:
    void detection() {
        const ReasoningFormat q = detect_reasoning(kQwen3Excerpt);
        QVERIFY(q.present && q.switchable && q.dropped_from_history);
        const ReasoningFormat r1 = detect_reasoning(kR1Excerpt);
        QVERIFY(r1.present && !r1.switchable && r1.dropped_from_history);
        const ReasoningFormat none = detect_reasoning(
            "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
            "message['content'] + '<|im_end|>\\n'}}{% endfor %}");
        QVERIFY(!none.present && !none.switchable && !none.dropped_from_history);
        QCOMPARE(ChatTemplate::from_template_text(std::string_view(kQwen3Excerpt)).family(),
                 TemplateFamily::ChatML);
    }

    void split_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("reasoning");
        QTest::addColumn<QString>("answer");
        QTest::addColumn<bool>("has");
        QTest::addColumn<bool>("open");
        QTest::newRow("closed") << "<think>\nWeigh it.\n</think>\n\nParis."
                                << "Weigh it."
                                << "Paris." << true << false;
        QTest::newRow("still thinking") << "<think>\nHmm, the cap"
                                        << "Hmm, the cap"
                                        << "" << true << true;
        QTest::newRow("just opened") << "<think>"
                                     << ""
                                     << "" << true << true;
        QTest::newRow("none") << "Paris."
                              << ""
                              << "Paris." << false << false;
        QTest::newRow("leading whitespace") << "\n <think>a</think>b"
                                            << "a"
                                            << "b" << true << false;
        QTest::newRow("opened by the prompt (R1)") << "a\nb\n</think>\n\nc"
                                                   << "a\nb"
                                                   << "c" << true << false;
        QTest::newRow("empty block (thinking off)") << "<think>\n\n</think>\n\nOK"
                                                    << ""
                                                    << "OK" << true << false;
        QTest::newRow("tag in the answer only") << "Use <think> tags."
                                                << ""
                                                << "Use <think> tags." << false << false;
        QTest::newRow("answer keeps inner newlines") << "<think>x</think>\n\nA\n\nB\n"
                                                     << "x"
                                                     << "A\n\nB\n"
                                                     << true << false;
    }
    void split() {
        QFETCH(QString, text);
        QFETCH(QString, reasoning);
        QFETCH(QString, answer);
        QFETCH(bool, has);
        QFETCH(bool, open);
        const std::string t = text.toStdString();
        const ReasoningSplit s = split_reasoning(t);
        QCOMPARE(QString::fromStdString(std::string(s.reasoning)), reasoning);
        QCOMPARE(QString::fromStdString(std::string(s.answer)), answer);
        QCOMPARE(s.has_reasoning, has);
        QCOMPARE(s.open, open);
    }

    // Qwen3: replies before the last user message lose their reasoning; the generation
    // prompt gets the empty block when thinking is off.
    void qwen3History() {
        const std::vector<Message> m = {{Role::System, "S", {}},
                                        {Role::User, "U1", {}},
                                        {Role::Assistant, "<think>\nR1\n</think>\n\nA1", {}},
                                        {Role::User, "U2", {}}};
        const std::string head =
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU1<|im_end|>\n"
            "<|im_start|>assistant\nA1<|im_end|>\n<|im_start|>user\nU2<|im_end|>\n"
            "<|im_start|>assistant\n";
        QCOMPARE(render(qwen3(true), m, true), head);
        QCOMPARE(render(qwen3(false), m, true), head + "<think>\n\n</think>\n\n");
        // Without the reasoning format (SmolLM2's ChatML) the reply is written whole.
        QCOMPARE(render(ChatTemplate(TemplateFamily::ChatML), m, true),
                 "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU1<|im_end|>\n"
                 "<|im_start|>assistant\n<think>\nR1\n</think>\n\nA1<|im_end|>\n"
                 "<|im_start|>user\nU2<|im_end|>\n<|im_start|>assistant\n");
    }

    // The reply after the last user message (being continued) keeps its reasoning, and
    // with thinking off it was opened by the empty block.
    void qwen3LastReply() {
        const std::vector<Message> thought = {{Role::User, "U", {}},
                                              {Role::Assistant, "<think>\nR\n</think>\n\nA", {}}};
        QCOMPARE(render(qwen3(true), thought, false),
                 "<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n<think>\nR\n</think>\n\n"
                 "A<|im_end|>\n");
        const std::vector<Message> plain = {{Role::User, "U", {}}, {Role::Assistant, "A", {}}};
        QCOMPARE(render(qwen3(false), plain, false),
                 "<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
                 "A<|im_end|>\n");
    }

    // Token ids: an earlier reply with reasoning is written from its answer text (its
    // stored ids hold the reasoning); one without reasoning keeps its stored ids.
    void builderWritesTheAnswerOfEarlierReplies() {
        hearth::test::TestTokenizer::Options o;
        o.control = hearth::test::TestTokenizer::all_family_controls();
        hearth::test::TestTokenizer tok(o);
        PromptBuilder b(tok, qwen3(true));
        const std::string thought = "<think>\nR1\n</think>\n\nA1";
        const std::vector<hearth::TokenId> stored = tok.encode(thought + "<|im_end|>", true);
        std::vector<Message> m = {
            {Role::User, "U1", {}}, {Role::Assistant, thought, stored}, {Role::User, "U2", {}}};
        auto p = b.build(m);
        QVERIFY(p);
        std::vector<Message> plain = m;
        plain[1] = {Role::Assistant, "A1", std::nullopt};
        auto q = b.build(plain);
        QVERIFY(q);
        QCOMPARE(p->ids, q->ids);
        // A reply without reasoning: its stored ids, verbatim (here on purpose not the
        // text's, to tell them apart).
        const std::vector<hearth::TokenId> odd = tok.encode("B2", false);
        m[1] = {Role::Assistant, "A1", odd};
        auto r = b.build(m);
        QVERIFY(r);
        QVERIFY(std::search(r->ids.begin(), r->ids.end(), odd.begin(), odd.end()) != r->ids.end());
        QVERIFY(r->ids != q->ids);
    }
};

QTEST_GUILESS_MAIN(TestReasoning)
#include "tst_reasoning.moc"
