// chat::plan_turn, the one planner of the app, the CLI and the server: where a persona's
// system prompt goes, the reply's room and the oldest turns dropped (a chat), the
// context-overflow error and max_tokens cut (an API request), continuing a reply, and
// that its prompt is PromptBuilder's own.
#include <QTest>

#include "chat/turn_planner.h"
#include "prompt_test_support.h"

using hearth::chat::ChatTemplate;
using hearth::chat::ContextPolicy;
using hearth::chat::Message;
using hearth::chat::PromptBuilder;
using hearth::chat::PromptEnd;
using hearth::chat::Role;
using hearth::chat::TemplateFamily;
using hearth::chat::TurnInput;
using namespace hearth::test;

namespace {

std::vector<Message> thread_of(int turns) {
    std::vector<Message> m;
    for (int i = 0; i < turns; ++i) {
        m.push_back({Role::User, "hello there number " + std::to_string(i), std::nullopt});
        if (i + 1 < turns) m.push_back({Role::Assistant, "hi again", std::nullopt});
    }
    return m;
}

}  // namespace

class TestTurnPlanner : public QObject {
    Q_OBJECT

  private slots:
    void personaGoesFirstUnlessTheThreadHasASystemMessage() {
        const TestTokenizer tok = make_tokenizer(TemplateFamily::ChatML, false);
        const PromptBuilder b(tok, ChatTemplate(TemplateFamily::ChatML));
        TurnInput t;
        t.messages = thread_of(1);
        t.system_prompt = "You are a pirate.";
        auto p = plan_turn(b, 4096, t);
        QVERIFY(p.ok());
        std::vector<Message> expected = {{Role::System, "You are a pirate.", std::nullopt}};
        expected.insert(expected.end(), t.messages.begin(), t.messages.end());
        QCOMPARE(p->prompt, build_ok(b, expected).ids);
        QCOMPARE(p->persona_prefix, b.persona_prefix("You are a pirate.").size());
        QCOMPARE(hearth::chat::turn_messages(t).size(), expected.size());  // what is sent

        // The thread's own system message wins; a blank persona is no persona.
        t.messages.insert(t.messages.begin(), {Role::System, "Be brief.", std::nullopt});
        auto own = plan_turn(b, 4096, t);
        QVERIFY(own.ok());
        QCOMPARE(own->prompt, build_ok(b, t.messages).ids);
        t.messages.erase(t.messages.begin());
        t.system_prompt = " \n\t";
        auto blank = plan_turn(b, 4096, t);
        QVERIFY(blank.ok());
        QCOMPARE(blank->prompt, build_ok(b, t.messages).ids);
    }

    void chatLeavesRoomAndDropsOldestTurns() {
        const TestTokenizer tok = make_tokenizer(TemplateFamily::ChatML, false);
        const PromptBuilder b(tok, ChatTemplate(TemplateFamily::ChatML));
        TurnInput t;
        t.messages = thread_of(30);
        t.max_tokens = 10'000;  // more than half the context: half it is
        const auto whole = build_ok(b, t.messages).ids.size();
        const auto context = static_cast<int32_t>(whole);  // room for the reply is taken
        auto p = plan_turn(b, context, t);
        QVERIFY2(p.ok(), p.ok() ? "" : p.message().c_str());
        QCOMPARE(p->max_tokens, context / 2);
        QVERIFY(p->dropped > 0);
        QVERIFY(static_cast<int32_t>(p->prompt.size()) <= context - p->max_tokens);
        // The last user message is always kept: the prompt ends as the whole one does.
        const auto full = build_ok(b, t.messages).ids;
        QVERIFY(std::equal(p->prompt.end() - 8, p->prompt.end(), full.end() - 8));

        t.max_tokens = 7;
        auto small = plan_turn(b, 100'000, t);
        QVERIFY(small.ok());
        QCOMPARE(small->max_tokens, 7);
        QCOMPARE(small->dropped, size_t{0});
        QCOMPARE(small->prompt, full);
    }

    void apiRequestFailsOnOverflowAndCutsMaxTokens() {
        const TestTokenizer tok = make_tokenizer(TemplateFamily::ChatML, false);
        const PromptBuilder b(tok, ChatTemplate(TemplateFamily::ChatML));
        TurnInput t;
        t.messages = thread_of(30);
        t.policy = ContextPolicy::Fail;
        t.max_tokens = 1000;
        const auto n = static_cast<int32_t>(build_ok(b, t.messages).ids.size());
        auto over = plan_turn(b, n, t);
        QVERIFY(!over.ok());
        QCOMPARE(over.error().code, std::string(hearth::chat::kContextLengthExceeded));
        QVERIFY(over.message().find(std::to_string(n)) != std::string::npos);

        auto cut = plan_turn(b, n + 5, t);
        QVERIFY(cut.ok());
        QCOMPARE(cut->max_tokens, 5);
        QCOMPARE(cut->dropped, size_t{0});
        QCOMPARE(static_cast<int32_t>(cut->prompt.size()), n);
    }

    // A plain-text prompt: BOS where the vocabulary asks (once, even when the text starts
    // with its control text), the max_tokens cut, and the same overflow error.
    void plainTextPrompt() {
        const TestTokenizer tok = make_tokenizer(TemplateFamily::Llama3, false, true);
        QVERIFY(tok.add_bos() && tok.bos() >= 0);
        auto p = hearth::chat::plan_text(tok, 4096, "hello there", false, 10);
        QVERIFY(p.ok());
        QCOMPARE(p->prompt.front(), tok.bos());
        QCOMPARE(Ids(p->prompt.begin() + 1, p->prompt.end()), tok.encode("hello there", false));
        QCOMPARE(p->max_tokens, 10);
        const std::string bos_text = tok.token_to_piece(tok.bos(), true);
        auto twice = hearth::chat::plan_text(tok, 4096, bos_text + "hi", true, 10);
        QVERIFY(twice.ok());
        QCOMPARE(std::count(twice->prompt.begin(), twice->prompt.end(), tok.bos()), 1);

        const auto n = static_cast<int32_t>(p->prompt.size());
        auto cut = hearth::chat::plan_text(tok, n + 3, "hello there", false, 10);
        QVERIFY(cut.ok());
        QCOMPARE(cut->max_tokens, 3);
        auto over = hearth::chat::plan_text(tok, n, "hello there", false, 10);
        QVERIFY(!over.ok());
        QCOMPARE(over.error().code, std::string(hearth::chat::kContextLengthExceeded));
    }

    void continuingAReplyNeedsItsIds() {
        const TestTokenizer tok = make_tokenizer(TemplateFamily::ChatML, false);
        const PromptBuilder b(tok, ChatTemplate(TemplateFamily::ChatML));
        TurnInput t;
        t.messages = thread_of(1);
        t.messages.push_back({Role::Assistant, "partial", std::nullopt});
        t.continue_reply = true;
        QVERIFY(!plan_turn(b, 4096, t).ok());
        t.messages.back().ids = b.encode_content(Role::User, "partial");
        auto p = plan_turn(b, 4096, t);
        QVERIFY(p.ok());
        QCOMPARE(p->prompt, build_ok(b, t.messages, PromptEnd::ContinueReply).ids);

        TurnInput none;
        QVERIFY(!plan_turn(b, 4096, none).ok());  // nothing to reply to
    }
};

QTEST_APPLESS_MAIN(TestTurnPlanner)
#include "tst_turn_planner.moc"
