// MessageListModel's reasoning roles (a reply's <think> block: its text, state and time,
// and the answer without it) on replies stored as they end, and the thinking switch as a
// chat's reply setting; on a synthetic model and a store in a temporary folder.
#include <QTest>

#include "app_fixture.h"

using namespace hearth;

class TestMessageReasoning : public QObject {
    Q_OBJECT
    AppFixture fixture_;

  private slots:
    // A reply with a reasoning block: the block and its time in roles of their own, the
    // segments and `answer` without it; stored (reasoning_ms) and read back; a reply
    // without one has none.
    void reasoningRoles() {
        App app;
        START(fixture_, app, QStringLiteral("reasoning.sqlite3"));
        const qint64 c = create_conversation(app, -1);
        QVERIFY(c > 0);
        bool done = false;
        app.store.run<void>(
            [c](store::Store& s) -> Result<void> {
                auto u = s.append_message(
                    c, {store::Role::User, QStringLiteral("Capital?"), {}, {}, {}});
                if (!u) return u.error();
                auto r = s.begin_reply(c, u->id, QString());
                if (!r) return r.error();
                const QString text =
                    QStringLiteral("<think>\nFrance... Paris.\n</think>\n\nParis, **of course**.");
                if (auto w = s.update_reply(*r, text, std::vector<std::int32_t>{}); !w)
                    return w.error();
                store::GenerationStats stats;
                stats.reasoning_ms = 2500.0;
                if (auto f = s.finish_reply(*r, stats, store::MessageState::Complete); !f)
                    return f.error();
                auto u2 = s.append_message(
                    c, {store::Role::User, QStringLiteral("<think>hi"), {}, {}, {}});
                if (!u2) return u2.error();
                auto plain = s.append_message(
                    c, {store::Role::Assistant, QStringLiteral("Plain."), {}, {}, {}});
                if (!plain) return plain.error();
                return {};
            },
            [&](Result<void> r) {
                QVERIFY2(r, r ? "" : r.message().c_str());
                done = true;
            });
        QTRY_VERIFY(done);
        app.chat.setConversationId(c);
        QTRY_COMPARE(app.chat.count(), 4);
        QCOMPARE(role(app.chat, 1, "reasoningState").toString(), QStringLiteral("done"));
        QCOMPARE(role(app.chat, 1, "reasoning").toString(), QStringLiteral("France... Paris."));
        QCOMPARE(role(app.chat, 1, "answer").toString(), QStringLiteral("Paris, **of course**."));
        QCOMPARE(role(app.chat, 1, "reasoningSeconds").toDouble(), 2.5);
        QCOMPARE(role(app.chat, 1, "text").toString().left(7), QStringLiteral("<think>"));
        const QVariantList segs = role(app.chat, 1, "segments").toList();
        QCOMPARE(segs.size(), 1);
        QCOMPARE(segs.at(0).toMap().value(QStringLiteral("text")).toString(),
                 QStringLiteral("Paris, **of course**."));
        // A user's text is never split; a reply without a block has none.
        QCOMPARE(role(app.chat, 2, "reasoningState").toString(), QString());
        QCOMPARE(role(app.chat, 2, "answer").toString(), QStringLiteral("<think>hi"));
        QCOMPARE(role(app.chat, 3, "reasoningState").toString(), QString());
        QCOMPARE(role(app.chat, 3, "reasoningSeconds").toDouble(), -1.0);
        QCOMPARE(role(app.chat, 3, "answer").toString(), QStringLiteral("Plain."));
    }

    // The thinking switch is a reply setting, stored with the conversation.
    void thinkingSetting() {
        App app;
        START(fixture_, app, QStringLiteral("thinking.sqlite3"));
        const qint64 c = create_conversation(app, -1);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());
        QVERIFY(!app.bridge.thinkingSwitch());  // the synthetic model's template has none
        app.chat.setConversationSampling({{QStringLiteral("thinking"), false}});
        QVERIFY(settle(app));
        app.chat.setConversationId(-1);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());
        QCOMPARE(app.chat.conversationSampling().value(QStringLiteral("thinking")),
                 QVariant(false));
    }
};

QTEST_GUILESS_MAIN(TestMessageReasoning)
#include "tst_message_reasoning.moc"
