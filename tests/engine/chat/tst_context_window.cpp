// The context window of a long chat (chat/context_window.h) and its shift plan
// (chat/context_shift.h), through chat::plan_turn as the app and the CLI call it, turn by
// turn: the sizes it decides from are the built prompts' own, for every family; the oldest
// turns leave in steps down to the keep share and the turns between steps only append
// (the persona always first); the replay of a history gives the decisions made turn by
// turn; a turn larger than the room is a clear error; Ask refuses the turn of a step; and
// under Shift the lineage changes exactly at steps and the move maps kept tokens onto the
// same tokens of the turn before.
#include <QTest>

#include "chat/context_window.h"
#include "chat/turn_planner.h"
#include "prompt_test_support.h"

using hearth::chat::ChatTemplate;
using hearth::chat::ContextPolicy;
using hearth::chat::Message;
using hearth::chat::PlannedTurn;
using hearth::chat::PromptBuilder;
using hearth::chat::PromptEnd;
using hearth::chat::Role;
using hearth::chat::TemplateFamily;
using hearth::chat::TurnInput;
using namespace hearth::test;

Q_DECLARE_METATYPE(hearth::chat::TemplateFamily)

namespace {

std::string words(std::mt19937& rng, int n) {
    static const char* const kWords[] = {"the", "cat",  "sat",     "on", "a",   "warm", "hearth",
                                         "and", "told", "stories", "of", "old", "ships"};
    std::string s;
    for (int i = 0; i < n; ++i) {
        if (i) s += ' ';
        s += kWords[rng() % std::size(kWords)];
    }
    return s;
}

// A reply a model could have sampled: words, then the end-of-turn marker.
Message reply_of(const TestTokenizer& tok, const PromptBuilder& b, std::mt19937& rng, int n) {
    Ids ids = tok.encode(words(rng, n), false);
    ids.insert(ids.end(), b.end_of_turn_ids().begin(), b.end_of_turn_ids().end());
    return {Role::Assistant, tok.decode(ids, false), ids};
}

Message user_of(const PromptBuilder& b, std::mt19937& rng, int n) {
    const std::string text = words(rng, n);
    return {Role::User, text, b.encode_content(Role::User, text)};
}

struct Recorded {
    std::vector<PlannedTurn> turns;  // turn i: the plan replying to user message i
    std::vector<Message> thread;     // the whole chat at the end
    std::vector<size_t> step_turns;  // turns that took a step
};

// A chat of n_turns turns planned turn by turn, as the app plans it.
Recorded run_chat(const PromptBuilder& b, const TestTokenizer& tok, TurnInput t, int n_turns,
                  int32_t context, uint32_t seed) {
    std::mt19937 rng(seed);
    Recorded r;
    for (int i = 0; i < n_turns; ++i) {
        t.messages.push_back(user_of(b, rng, 20 + static_cast<int>(rng() % 30)));
        auto p = hearth::chat::plan_turn(b, context, t);
        if (!p) qFatal("turn %d: %s", i, p.message().c_str());
        if (p->dropped_now > 0) r.step_turns.push_back(r.turns.size());
        r.turns.push_back(std::move(*p));
        t.messages.push_back(reply_of(tok, b, rng, 10 + static_cast<int>(rng() % 20)));
    }
    r.thread = t.messages;
    return r;
}

const char* kPersona = "You are a kind ship's cat who answers in short sentences.";

// A chat with the persona, replies of at most 40 tokens.
TurnInput persona_turn() {
    TurnInput t;
    t.system_prompt = kPersona;
    t.max_tokens = 40;
    return t;
}

}  // namespace

class TestContextWindow : public QObject {
    Q_OBJECT

  private slots:
    // PromptSizes::size is the size of the prompt build_from writes, for every first kept
    // user message and every turn of a random chat, in every family.
    void sizesAreTheBuiltPrompts_data() { add_family_rows(); }
    void sizesAreTheBuiltPrompts() {
        QFETCH(TemplateFamily, family);
        QFETCH(bool, space_prefix);
        const TestTokenizer tok = make_tokenizer(family, space_prefix);
        const PromptBuilder b(tok, ChatTemplate(family));
        std::mt19937 rng(seed());
        for (bool with_system : {false, true}) {
            std::vector<Message> m;
            if (with_system) m.push_back({Role::System, random_text(rng, false), std::nullopt});
            for (int i = 0; i < 6; ++i) {
                m.push_back({Role::User, random_text(rng), std::nullopt});
                m.push_back(make_reply(tok, b, rng, static_cast<ReplyEnd>(rng() % 4)));
            }
            m.push_back({Role::User, random_text(rng), std::nullopt});
            auto sizes = b.measure(m);
            QVERIFY2(sizes.ok(), sizes.ok() ? "" : sizes.message().c_str());
            for (size_t last = sizes->first_turn; last < m.size(); ++last) {
                if (m[last].role != Role::User) continue;
                const std::vector<Message> upto(m.begin(), m.begin() + static_cast<long>(last) + 1);
                for (size_t k = sizes->first_turn; k <= last; ++k) {
                    if (k != sizes->first_turn && m[k].role != Role::User) continue;
                    auto built = b.build_from(upto, k);
                    QVERIFY(built.ok());
                    QCOMPARE(sizes->size(k, last), built->ids.size());
                }
            }
        }
    }

    // The same for a template that writes earlier replies without their reasoning (Qwen3):
    // the sizes count what the template writes.
    void sizesCountRepliesWithoutTheirReasoning() {
        const TestTokenizer tok = make_tokenizer(TemplateFamily::ChatML, false);
        ChatTemplate tmpl(TemplateFamily::ChatML);
        tmpl.set_reasoning({true, true, true});
        const PromptBuilder b(tok, tmpl);
        std::mt19937 rng(seed());
        std::vector<Message> m = {{Role::System, "Think first.", std::nullopt}};
        for (int i = 0; i < 5; ++i) {
            m.push_back(user_of(b, rng, 12));
            const std::string text =
                "<think>\n" + words(rng, 30) + "\n</think>\n\n" + words(rng, 8);
            Ids ids = tok.encode(text, false);
            ids.insert(ids.end(), b.end_of_turn_ids().begin(), b.end_of_turn_ids().end());
            m.push_back({Role::Assistant, text, ids});
        }
        m.push_back(user_of(b, rng, 12));
        auto sizes = b.measure(m);
        QVERIFY(sizes.ok());
        const std::vector<Message> upto(m.begin(), m.begin() + 6);  // the third turn
        for (size_t k : {size_t{1}, size_t{3}, size_t{5}}) {
            QCOMPARE(sizes->size(k, 5), b.build_from(upto, k)->ids.size());
            QCOMPARE(sizes->size(k, m.size() - 1), b.build_from(m, k)->ids.size());
        }
        // Without the reasoning: 30 words less per earlier reply than a template that keeps it.
        const PromptBuilder keeps(tok, ChatTemplate(TemplateFamily::ChatML));
        QVERIFY(sizes->size(1, m.size() - 1) + 5 * 30 < keeps.build(m)->ids.size());
    }

    // Turn by turn: every prompt fits and starts with the persona; a step brings it down
    // to the keep share; between steps each turn's prompt is the last one plus its reply
    // (so only the new message is computed); a step comes only when the history has grown
    // by what the last one freed (steps are few); and the replay of the finished chat
    // finds the same steps.
    void dropsInStepsThenAppends_data() {
        QTest::addColumn<TemplateFamily>("family");
        QTest::addColumn<double>("keep");
        QTest::newRow("ChatML half") << TemplateFamily::ChatML << 0.5;
        QTest::newRow("Llama3 half") << TemplateFamily::Llama3 << 0.5;
        QTest::newRow("Gemma third") << TemplateFamily::Gemma << 0.3;
        QTest::newRow("Mistral 0.7") << TemplateFamily::MistralV1 << 0.7;
    }
    void dropsInStepsThenAppends() {
        QFETCH(TemplateFamily, family);
        QFETCH(double, keep);
        const TestTokenizer tok = make_tokenizer(family, family == TemplateFamily::MistralV1);
        const PromptBuilder b(tok, ChatTemplate(family));
        TurnInput t = persona_turn();
        t.keep = keep;
        constexpr int32_t kContext = 1200;
        const Recorded r = run_chat(b, tok, t, 60, kContext, seed());
        const Ids persona = b.persona_prefix(kPersona);
        const size_t budget = kContext - 40;
        size_t appended = 0;
        for (size_t i = 0; i < r.turns.size(); ++i) {
            const PlannedTurn& p = r.turns[i];
            QVERIFY(p.prompt.size() <= budget);
            QVERIFY(starts_with(p.prompt, persona));
            QCOMPARE(p.persona_prefix, persona.size());
            if (p.dropped_now > 0) {
                QVERIFY2(
                    p.prompt.size() <= static_cast<size_t>(keep * budget),
                    qPrintable(
                        QString("turn %1: %2 tokens after a step").arg(i).arg(p.prompt.size())));
                continue;
            }
            if (i == 0) continue;
            // The last turn's prompt and its reply, then the new turn.
            const Ids reply = *r.thread[2 * i - 1].ids;
            QVERIFY2(starts_with(p.prompt, concat(r.turns[i - 1].prompt, reply)),
                     qPrintable(QString("turn %1 does not extend turn %2").arg(i).arg(i - 1)));
            ++appended;
        }
        QVERIFY(r.step_turns.size() >= 2);  // the chat outgrew its context several times
        QCOMPARE(appended + r.step_turns.size(), r.turns.size() - 1);
        // Between two steps the prompt grew from at most keep of the budget past the
        // budget: by at least (1 - keep) of it, less one turn (which a step may keep).
        size_t largest_turn = 0;
        for (size_t i = 1; i < r.turns.size(); ++i)
            if (r.turns[i].dropped_now == 0)
                largest_turn =
                    std::max(largest_turn, r.turns[i].prompt.size() - r.turns[i - 1].prompt.size());
        for (size_t j = 1; j < r.step_turns.size(); ++j) {
            const size_t a = r.step_turns[j - 1], b2 = r.step_turns[j];
            size_t grown = 0;
            for (size_t i = a + 1; i <= b2; ++i)
                grown +=
                    i < b2 ? r.turns[i].prompt.size() - r.turns[i - 1].prompt.size() : largest_turn;
            QVERIFY2(
                grown + largest_turn >= static_cast<size_t>((1 - keep) * budget),
                qPrintable(
                    QString("steps at turns %1 and %2: grown by %3").arg(a).arg(b2).arg(grown)));
        }

        // The finished chat's replay: the same steps, at the same turns.
        TurnInput whole;
        whole.messages = r.thread;
        whole.messages.pop_back();  // the last reply: the replay plans the turn it answered
        whole.system_prompt = kPersona;
        std::vector<Message> all = hearth::chat::turn_messages(whole);
        auto sizes = b.measure(all);
        QVERIFY(sizes.ok());
        auto window = hearth::chat::plan_window(*sizes, all, budget, keep);
        QVERIFY(window.ok());
        QCOMPARE(window->steps.size(), r.step_turns.size());
        for (size_t j = 0; j < r.step_turns.size(); ++j) {
            const size_t turn = r.step_turns[j];
            QCOMPARE(window->steps[j].turn, 1 + 2 * turn);  // messages: persona, then pairs
            QCOMPARE(window->steps[j].to - 1, r.turns[turn].dropped);
        }
    }

    // keep = 1 is the old rule (leave the fewest turns that fit): a step at every turn past
    // the context. The default takes far fewer.
    void keepShareSetsTheStep() {
        const TestTokenizer tok = make_tokenizer(TemplateFamily::ChatML, false);
        const PromptBuilder b(tok, ChatTemplate(TemplateFamily::ChatML));
        TurnInput t = persona_turn();
        t.keep = 1.0;
        const Recorded fewest = run_chat(b, tok, t, 60, 2400, seed());
        t.keep = hearth::chat::kDefaultKeep;
        const Recorded half = run_chat(b, tok, t, 60, 2400, seed());
        const size_t first = fewest.step_turns.front();
        // Nearly every turn from the first overflow (a drop of a long turn may leave room
        // for the next short one).
        QVERIFY2(
            fewest.step_turns.size() * 10 >= (60 - first) * 8,
            qPrintable(
                QString("%1 steps in %2 turns").arg(fewest.step_turns.size()).arg(60 - first)));
        QCOMPARE(half.step_turns.front(), first);
        QVERIFY(half.step_turns.size() * 3 < fewest.step_turns.size());
    }

    void turnLargerThanTheRoomIsAnError() {
        const TestTokenizer tok = make_tokenizer(TemplateFamily::ChatML, false);
        const PromptBuilder b(tok, ChatTemplate(TemplateFamily::ChatML));
        std::mt19937 rng(seed());
        TurnInput t;
        t.system_prompt = kPersona;
        t.max_tokens = 100;
        t.messages = {user_of(b, rng, 10), reply_of(tok, b, rng, 5), user_of(b, rng, 400)};
        for (ContextPolicy policy :
             {ContextPolicy::DropInSteps, ContextPolicy::Shift, ContextPolicy::Ask}) {
            t.policy = policy;
            auto p = hearth::chat::plan_turn(b, 300, t);
            QVERIFY(!p.ok());
            QVERIFY2(p.message().find("needs at least") != std::string::npos, p.message().c_str());
        }
    }

    // Ask: the turns before the first step are the same as under DropInSteps, the turn of a
    // step is refused with "context_full", and after the user chose (DropInSteps) the
    // chat goes on.
    void askRefusesTheTurnOfAStep() {
        const TestTokenizer tok = make_tokenizer(TemplateFamily::ChatML, false);
        const PromptBuilder b(tok, ChatTemplate(TemplateFamily::ChatML));
        TurnInput t = persona_turn();
        const Recorded drop = run_chat(b, tok, t, 30, 900, seed());
        const size_t first = drop.step_turns.front();
        std::vector<Message> upto(drop.thread.begin(),
                                  drop.thread.begin() + static_cast<long>(2 * first) + 1);
        t.messages = upto;
        t.policy = ContextPolicy::Ask;
        auto refused = hearth::chat::plan_turn(b, 900, t);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code, std::string(hearth::chat::kContextFull));
        t.messages.pop_back();
        t.messages.pop_back();
        auto before = hearth::chat::plan_turn(b, 900, t);  // the turn before it fits
        QVERIFY(before.ok());
        QCOMPARE(before->prompt, drop.turns[first - 1].prompt);
    }

    // Shift: the lineage is plain until the first step, changes at each step and only
    // then, begins at the persona's end; each step's move starts with the persona in place
    // and maps every position it covers onto the same token of its source, which is the
    // turn before plus its reply; it covers the whole kept history (all of it was in the
    // turn before), but for glue the first kept message gains after the persona (Gemma).
    void shiftMovesTheKeptHistory_data() {
        QTest::addColumn<TemplateFamily>("family");
        QTest::addColumn<bool>("space_prefix");
        QTest::newRow("ChatML") << TemplateFamily::ChatML << false;
        QTest::newRow("Llama3") << TemplateFamily::Llama3 << false;
        QTest::newRow("Gemma") << TemplateFamily::Gemma << false;
        QTest::newRow("Phi3") << TemplateFamily::Phi3 << false;
        QTest::newRow("Llama2") << TemplateFamily::Llama2 << true;
    }
    void shiftMovesTheKeptHistory() {
        QFETCH(TemplateFamily, family);
        QFETCH(bool, space_prefix);
        const TestTokenizer tok = make_tokenizer(family, space_prefix);
        const PromptBuilder b(tok, ChatTemplate(family));
        TurnInput t = persona_turn();
        t.policy = ContextPolicy::Shift;
        const Recorded r = run_chat(b, tok, t, 50, 1000, seed());
        QVERIFY(r.step_turns.size() >= 2);
        for (size_t i = 0; i < r.turns.size(); ++i) {
            const PlannedTurn& p = r.turns[i];
            if (r.step_turns.empty() || i < r.step_turns.front()) {
                QVERIFY(!p.lineage.salted());
                QVERIFY(!p.shift);
                continue;
            }
            QVERIFY(p.lineage.salted());
            QCOMPARE(static_cast<size_t>(p.lineage.begin), p.persona_prefix);
            if (p.dropped_now == 0) {
                QVERIFY(!p.shift);
                QVERIFY(p.lineage == r.turns[i - 1].lineage);
                continue;
            }
            QVERIFY(p.shift);
            QVERIFY(!(p.lineage == r.turns[i - 1].lineage));
            QVERIFY(p.shift->source_lineage == r.turns[i - 1].lineage);
            const Ids before = concat(r.turns[i - 1].prompt, *r.thread[2 * i - 1].ids);
            QVERIFY(starts_with(p.shift->source, before));
            // From 0, persona first, at most one gap (the first kept message's glue), every
            // covered token the source's.
            int32_t at = 0, gaps = 0;
            for (const auto& range : p.shift->ranges) {
                QVERIFY(range.dst >= at);
                if (range.dst > at) {
                    ++gaps;
                    QVERIFY2(range.dst - at <= 4, "a gap longer than glue");
                }
                for (int32_t k = 0; k < range.count; ++k)
                    QCOMPARE(p.shift->source[static_cast<size_t>(range.src + k)],
                             p.prompt[static_cast<size_t>(range.dst + k)]);
                at = range.dst + range.count;
            }
            QVERIFY(gaps <= 1);
            QCOMPARE(p.shift->ranges.front().src, 0);
            QVERIFY(p.shift->ranges.front().count >= static_cast<int32_t>(p.persona_prefix));
            // Everything before this turn's user message was in the turn before.
            TurnInput upto;
            upto.messages.assign(r.thread.begin(), r.thread.begin() + static_cast<long>(2 * i) + 1);
            upto.system_prompt = kPersona;
            auto built = b.build_from(hearth::chat::turn_messages(upto), p.dropped + 1);
            QVERIFY(built.ok());
            QCOMPARE(built->ids, p.prompt);
            const auto* user = span_of(*built, static_cast<int64_t>(2 * i + 1));
            QVERIFY(user);
            QCOMPARE(static_cast<size_t>(at), user->begin);
        }
    }
};

QTEST_GUILESS_MAIN(TestContextWindow)
#include "tst_context_window.moc"
