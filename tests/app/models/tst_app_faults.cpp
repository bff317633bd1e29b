// Faults as the user meets them (issue 18, docs/reliability.md): the engine failing in the
// middle of a reply, and the model file truncated while the app has it loaded. Each must
// reach the chat as a message, keep what the user sent and what had been streamed, and
// leave a chat that goes on working.
#include <QTest>

#include <filesystem>
#include <optional>

#include "app_fixture.h"
#include "common/failpoint.h"

class TestAppFaults : public QObject {
    Q_OBJECT

    AppFixture fixture_;

  private slots:
    void engineErrorMidReply() {
        App app;
        START(fixture_, app, QStringLiteral("engine-error.sqlite3"));
        app.chat.setMaxReplyTokens(40);
        const qint64 c = create_conversation(app, -1);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());

        hearth::arm_failpoint("forward", 12);  // a prefill step or two, then some tokens
        const int row = send_and_wait(app, QStringLiteral("Tell me about the harbour"));
        hearth::arm_failpoint("forward", 0);
        QVERIFY(row > 0);
        QCOMPARE(role(app.chat, row, "state").toString(), QStringLiteral("error"));
        QVERIFY2(app.chat.errorString().contains(QStringLiteral("injected fault")),
                 qPrintable(app.chat.errorString()));
        const QString partial = role(app.chat, row, "text").toString();
        QVERIFY(!partial.isEmpty());  // the tokens streamed before the failure stay

        // The store has the user's message and the partial reply, marked as failed.
        QVERIFY(settle(app));
        app.chat.reload();
        QVERIFY(settle(app));
        QCOMPARE(role(app.chat, row - 1, "text").toString(),
                 QStringLiteral("Tell me about the harbour"));
        QCOMPARE(role(app.chat, row, "text").toString(), partial);
        QCOMPARE(role(app.chat, row, "state").toString(), QStringLiteral("error"));
        // The reason is stored with the reply, for the next time the app opens the chat.
        const qint64 reply = role(app.chat, row, "messageId").toLongLong();
        std::optional<QString> stored;
        bool read = false;
        app.store.run<hearth::store::Message>(
            [reply](hearth::store::Store& s) { return s.message(reply); },
            [&](hearth::Result<hearth::store::Message> m) {
                if (m) stored = m->stats.error;
                read = true;
            });
        QTRY_VERIFY(read);
        QVERIFY(stored && stored->contains(QStringLiteral("injected fault")));

        // The chat goes on.
        const int next = send_and_wait(app, QStringLiteral("And about the lighthouse"));
        QVERIFY(next > row);
        QCOMPARE(role(app.chat, next, "state").toString(), QStringLiteral("done"));
        QCOMPARE(role(app.chat, next, "generatedTokens").toInt(), 40);
    }

    void modelFileTruncatedWhileLoaded() {
        const std::filesystem::path copy =
            fixture_.path(QStringLiteral("doomed.gguf")).toStdString();
        std::filesystem::copy_file(fixture_.model_path().toStdString(), copy,
                                   std::filesystem::copy_options::overwrite_existing);
        App app;
        START(fixture_, app, QStringLiteral("truncated.sqlite3"), true,
              QString::fromStdString(copy.string()));
        const qint64 c = create_conversation(app, -1);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());
        QVERIFY(send_and_wait(app, QStringLiteral("First question")) > 0);

        std::filesystem::resize_file(copy, std::filesystem::file_size(copy) / 3);
        const int row = send_and_wait(app, QStringLiteral("Second question"));
        QVERIFY(row > 0);
        QCOMPARE(role(app.chat, row, "state").toString(), QStringLiteral("error"));
        QVERIFY2(app.chat.errorString().contains(QStringLiteral("was truncated")),
                 qPrintable(app.chat.errorString()));
        QVERIFY(settle(app));
        app.chat.reload();
        QVERIFY(settle(app));
        QCOMPARE(role(app.chat, row - 1, "text").toString(), QStringLiteral("Second question"));

        // Loading the intact model again gives a working chat, history and all.
        app.bridge.load(fixture_.model_path());
        QTRY_VERIFY_WITH_TIMEOUT(app.bridge.modelPath() == fixture_.model_path() &&
                                     app.bridge.loaded() && app.chat.canSend(),
                                 kLoadTimeoutMs);
        const int next = send_and_wait(app, QStringLiteral("Third question"));
        QVERIFY(next > row);
        QCOMPARE(role(app.chat, next, "state").toString(), QStringLiteral("done"));
    }
};

QTEST_GUILESS_MAIN(TestAppFaults)
#include "tst_app_faults.moc"
