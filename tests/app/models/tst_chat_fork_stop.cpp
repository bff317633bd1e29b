// Two chat actions beyond sending, through the app's models on the synthetic model:
// "fork from here" (a new chat holding the thread up to a message, marked as a fork, that
// starts from the original's KV: its first turn computes only its own message) and stop
// strings in a chat's reply settings (the reply ends where one appears, without it; an
// empty list set on the chat turns the persona's off).
#include <QSignalSpy>
#include <QTest>

#include "app_fixture.h"
#include "core/sampling_settings_map.h"

class TestChatForkStop : public QObject {
    Q_OBJECT
    AppFixture fixture_;

  private slots:
    void forkStartsFromTheOriginalsCache() {
        App app;
        START(fixture_, app, QStringLiteral("fork.sqlite3"));
        app.chat.setMaxReplyTokens(40);
        const qint64 original = create_conversation(app, -1);
        QVERIFY(original > 0);
        app.chat.setConversationId(original);
        QTRY_VERIFY(app.chat.canSend());
        QCOMPARE(send_and_wait(app, QStringLiteral("Tell me about the lighthouse keeper")), 1);
        const int cached1 = role(app.chat, 1, "promptTokensCached").toInt();
        const int computed1 = role(app.chat, 1, "promptTokensComputed").toInt();
        QCOMPARE(send_and_wait(app, QStringLiteral("And the storm?")), 3);
        const qint64 fork_at = role(app.chat, 1, "messageId").toLongLong();
        const QString reply = role(app.chat, 1, "text").toString();

        QSignalSpy created(&app.conversations, &ConversationListModel::conversationCreated);
        app.conversations.forkConversation(fork_at);
        QVERIFY(created.wait(10000));
        const qint64 fork = created.at(0).at(0).toLongLong();
        QVERIFY(fork != original);
        QTRY_VERIFY(app.conversations.rowOf(fork) >= 0);
        const int list_row = app.conversations.rowOf(fork);
        QVERIFY(role(app.conversations, list_row, "forked").toBool());
        QCOMPARE(role(app.conversations, list_row, "title").toString(),
                 QStringLiteral("Tell me about the lighthouse keeper (fork)"));
        QVERIFY(!role(app.conversations, app.conversations.rowOf(original), "forked").toBool());

        // The fork holds the thread up to the reply, and says where it came from.
        app.chat.setConversationId(fork);
        QTRY_COMPARE(app.chat.count(), 2);
        QCOMPARE(role(app.chat, 1, "text").toString(), reply);
        const QVariantMap origin = app.chat.forkOrigin();
        QCOMPARE(origin.value(QStringLiteral("conversationId")).toLongLong(), original);
        QCOMPARE(origin.value(QStringLiteral("messageId")).toLongLong(), fork_at);

        // Its first turn reuses the original's first turn (prompt and reply) from the cache,
        // give or take the reply's last block.
        QTRY_VERIFY(app.chat.canSend());
        QCOMPARE(send_and_wait(app, QStringLiteral("What about the cat?")), 3);
        const int cached = role(app.chat, 3, "promptTokensCached").toInt();
        const int block = app.bridge.kvBlockSize();
        QVERIFY2(cached >= cached1 + computed1 + 40 - block,
                 qPrintable(QStringLiteral("cached %1 of a first turn of %2")
                                .arg(cached)
                                .arg(cached1 + computed1 + 40)));
        // The original is as it was.
        app.chat.setConversationId(original);
        QTRY_COMPARE(app.chat.count(), 4);
        QVERIFY(app.chat.forkOrigin().isEmpty());
    }

    void stopStringsEndTheReply() {
        App app;
        START(fixture_, app, QStringLiteral("stop.sqlite3"));
        app.chat.setMaxReplyTokens(48);
        const qint64 conversation = create_conversation(app, -1);
        app.chat.setConversationId(conversation);
        QTRY_VERIFY(app.chat.canSend());
        QCOMPARE(send_and_wait(app, QStringLiteral("Say something")), 1);
        // The synthetic model's greedy reply here is one line break, 48 times.
        const QString full = role(app.chat, 1, "text").toString();
        QCOMPARE(full, QString(48, QLatin1Char('\n')));
        QCOMPARE(role(app.chat, 1, "generatedTokens").toInt(), 48);

        // Five line breaks in a row end the next reply after five tokens, without them.
        const QString stops =
            stop_strings_text({QStringLiteral("never appears"), QStringLiteral("\n\n\n\n\n")});
        QCOMPARE(stops, QStringLiteral("never appears\n\\n\\n\\n\\n\\n"));
        app.chat.setConversationSampling({{QStringLiteral("stop"), stops}});
        QTRY_COMPARE(app.chat.conversationSampling().value(QStringLiteral("stop")).toString(),
                     stops);
        QSignalSpy finished(&app.chat, &MessageListModel::replyFinished);
        QVERIFY(app.chat.regenerate());
        QVERIFY(finished.wait(kReplyTimeoutMs));
        QVERIFY(settle(app));
        QCOMPARE(role(app.chat, 1, "variantCount").toInt(), 2);
        QCOMPARE(role(app.chat, 1, "generatedTokens").toInt(), 5);
        QCOMPARE(role(app.chat, 1, "text").toString(), QString());
        QCOMPARE(role(app.chat, 1, "finishReason").toString(), QStringLiteral("stop"));

        // Set with an empty text: none here (over a persona's), and the reply runs on.
        app.chat.setConversationSampling({{QStringLiteral("stop"), QString()}});
        QTRY_VERIFY(app.chat.conversationSampling().contains(QStringLiteral("stop")));
        finished.clear();
        QVERIFY(app.chat.regenerate());
        QVERIFY(finished.wait(kReplyTimeoutMs));
        QVERIFY(settle(app));
        QCOMPARE(role(app.chat, 1, "generatedTokens").toInt(), 48);
        QCOMPARE(role(app.chat, 1, "text").toString(), full);
    }

    // The text the settings form edits: one per line, escapes for what a line cannot hold.
    void stopStringsAsText() {
        const std::vector<QString> stops{QStringLiteral("\nUser:"), QStringLiteral("a\\b"),
                                         QStringLiteral("tab\there"), QStringLiteral("###")};
        const QString text = stop_strings_text(stops);
        QCOMPARE(text, QStringLiteral("\\nUser:\na\\\\b\ntab\\there\n###"));
        QCOMPARE(stop_strings_from_text(text), stops);
        // Blank lines are skipped, Windows line ends too; at most 8 are kept.
        QCOMPARE(stop_strings_from_text(QStringLiteral("x\r\n\r\n\ny")),
                 (std::vector<QString>{QStringLiteral("x"), QStringLiteral("y")}));
        QCOMPARE(stop_strings_from_text(QStringLiteral("1\n2\n3\n4\n5\n6\n7\n8\n9\n10")).size(),
                 std::size_t{8});
        // A lone backslash, or one before another letter, stays as written.
        QCOMPARE(stop_strings_from_text(QStringLiteral("end\\")),
                 std::vector<QString>{QStringLiteral("end\\")});
        QCOMPARE(stop_strings_from_text(QStringLiteral("\\x")),
                 std::vector<QString>{QStringLiteral("\\x")});
        // Through the settings map: unset, empty (none), a list.
        QVERIFY(!sampling_settings_from({}).stop);
        const auto none = sampling_settings_from({{QStringLiteral("stop"), QString()}});
        QVERIFY(none.stop && none.stop->empty());
        QCOMPARE(sampling_settings_from({{QStringLiteral("stop"), text}}).stop,
                 std::optional(stops));
    }
};

QTEST_MAIN(TestChatForkStop)
#include "tst_chat_fork_stop.moc"
