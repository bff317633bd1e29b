// A chat past its context through the app's models (issue 33), on the synthetic model
// served with a 512-token context: its oldest messages leave in steps and the turns
// between steps compute only their message; the reply of a step says so (messages
// dropped, tokens moved under shift); the chat shows which messages the model no longer
// sees, also after a restart before anything is sent, and goes on from the disk tier;
// and under "ask" the reply waits for the user's choice, which can be remembered.
#include <QSignalSpy>
#include <QTest>

#include "app_fixture.h"
#include "core/app_settings.h"
#include "engine.h"

// What a turn computes when it only appends: its message with the format's glue and the
// generation prompt (51-52 tokens of the synthetic vocabulary, mostly single bytes), and
// the end of the reply before it that the cache never computed; the history is several
// hundred.
constexpr int kOwnMessage = 60;

class TestLongChat : public QObject {
    Q_OBJECT
    AppFixture fixture_;

    bool open(App& app, AppSettings& settings, const QString& db) {
        fixture_.start(app, db, false);
        if (QTest::currentTestFailed()) return false;
        app.bridge.setSettings(&settings);
        app.chat.setSettings(&settings);
        app.bridge.setThreads(2);
        app.bridge.setKvMegabytes(16);
        app.bridge.load(fixture_.model_path());
        return QTest::qWaitFor([&] { return app.bridge.loaded(); }, kLoadTimeoutMs);
    }

    // The model's settings: a 512-token context and the policy.
    void configure(AppSettings& settings, const QString& policy) {
        settings.setLastModelPath(fixture_.model_path());
        settings.setContextLength(512);
        settings.setContextOverflow(policy);
    }

    // Each test's own words: the suite's KV disk tier is shared, and the plain chain's KV
    // (exact) is preferred wherever it holds a prompt.
    static QString message(const QString& test, int i) {
        return QStringLiteral("%1 %2: harbors and lanterns, please.").arg(test).arg(i);
    }

    static int intRole(const App& app, int row, const char* name) {
        return role(app.chat, row, name).toInt();
    }

  private slots:
    void chatGoesOnPastItsContext_data() {
        QTest::addColumn<QString>("policy");
        QTest::newRow("drop") << QStringLiteral("drop");
        QTest::newRow("shift") << QStringLiteral("shift");
    }
    void chatGoesOnPastItsContext() {
        QFETCH(QString, policy);
        AppSettings settings(fixture_.path(QStringLiteral("settings-%1.ini").arg(policy)));
        configure(settings, policy);
        const QString db = QStringLiteral("long-%1.db").arg(policy);
        qint64 conversation = -1;
        int dropped = 0;
        {
            App app;
            QVERIFY(open(app, settings, db));
            QCOMPARE(app.bridge.contextLength(), 512);
            QCOMPARE(app.bridge.trainedContextLength(), 1024);
            app.chat.setMaxReplyTokens(8);
            conversation = create_conversation(app, -1);
            app.chat.setConversationId(conversation);
            QTRY_VERIFY(app.chat.canSend());
            int steps = 0, shifted = 0, small_turns = 0;
            for (int i = 0; i < 24; ++i) {
                const int row = send_and_wait(app, message(policy, i));
                QVERIFY2(row >= 0, qPrintable(app.chat.errorString()));
                QCOMPARE(role(app.chat, row, "state").toString(), QStringLiteral("done"));
                if (intRole(app, row, "messagesDropped") > 0) {
                    ++steps;
                    shifted += intRole(app, row, "promptTokensShifted");
                    // A step: the kept history computed again (drop), or moved (shift).
                    const int computed = intRole(app, row, "promptTokensComputed");
                    if (policy == QLatin1String("shift"))
                        QVERIFY2(computed <= kOwnMessage + 16,
                                 qPrintable(QString::number(computed)));
                    else
                        QVERIFY2(computed > 2 * kOwnMessage, qPrintable(QString::number(computed)));
                } else if (i > 0) {
                    // Between steps: the new message, not the history.
                    QVERIFY2(
                        intRole(app, row, "promptTokensComputed") <= kOwnMessage,
                        qPrintable(QString::number(intRole(app, row, "promptTokensComputed"))));
                    ++small_turns;
                }
            }
            QVERIFY2(steps >= 2, qPrintable(QString::number(steps)));
            QVERIFY(small_turns >= 12);
            if (policy == QLatin1String("shift"))
                QVERIFY(shifted > 0);
            else
                QCOMPARE(shifted, 0);
            dropped = app.chat.droppedMessages();
            QVERIFY(dropped > 0);
            // The first messages are out of the model's view, the last ones in it.
            QVERIFY(!role(app.chat, 0, "inContext").toBool());
            QVERIFY(role(app.chat, app.chat.count() - 1, "inContext").toBool());
            app.bridge.engine()->wait_idle();
        }  // the app closes; its KV is written down
        App again;
        QVERIFY(open(again, settings, db));
        again.chat.setMaxReplyTokens(8);
        again.chat.setConversationId(conversation);
        QTRY_VERIFY(again.chat.canSend());
        // Known before anything is sent: the window is replayed from the history.
        QTRY_COMPARE(again.chat.droppedMessages(), dropped);
        QVERIFY(!role(again.chat, 0, "inContext").toBool());
        again.bridge.engine()->wait_idle();  // the prefetch from disk
        const int row = send_and_wait(again, message(policy, 99));
        QVERIFY(row >= 0);
        QCOMPARE(role(again.chat, row, "state").toString(), QStringLiteral("done"));
        if (intRole(again, row, "messagesDropped") == 0)
            QVERIFY2(intRole(again, row, "promptTokensComputed") <= kOwnMessage,
                     qPrintable(QString::number(intRole(again, row, "promptTokensComputed"))));
    }

    // "ask": the turn that would drop waits; the answer starts it and, remembered, is the
    // model's setting from then on.
    void askWaitsForTheUser() {
        AppSettings settings(fixture_.path(QStringLiteral("settings-ask.ini")));
        configure(settings, QStringLiteral("ask"));
        App app;
        QVERIFY(open(app, settings, QStringLiteral("ask.db")));
        app.chat.setMaxReplyTokens(8);
        const qint64 conversation = create_conversation(app, -1);
        app.chat.setConversationId(conversation);
        QTRY_VERIFY(app.chat.canSend());
        QSignalSpy asked(&app.chat, &MessageListModel::contextFullChanged);
        int i = 0;
        for (; i < 24 && !app.chat.contextFull(); ++i) {
            QSignalSpy finished(&app.chat, &MessageListModel::replyFinished);
            QVERIFY(app.chat.send(message(QStringLiteral("ask"), i)));
            QTRY_VERIFY_WITH_TIMEOUT(finished.count() > 0 || app.chat.contextFull(),
                                     kReplyTimeoutMs);
        }
        QVERIFY(app.chat.contextFull());
        QVERIFY(app.chat.contextFullText().contains(QStringLiteral("no longer fits")));
        QCOMPARE(app.chat.droppedMessages(), 0);
        QTRY_VERIFY(app.chat.canSend());  // nothing is generating meanwhile
        QSignalSpy finished(&app.chat, &MessageListModel::replyFinished);
        app.chat.resolveContextFull(QStringLiteral("shift"), true);
        QVERIFY(!app.chat.contextFull());
        QVERIFY(finished.wait(kReplyTimeoutMs));
        QVERIFY(settle(app));
        QCOMPARE(settings.contextOverflow(), QStringLiteral("shift"));
        QVERIFY(app.chat.droppedMessages() > 0);
        const int last = app.chat.count() - 1;
        QCOMPARE(role(app.chat, last, "role").toString(), QStringLiteral("assistant"));
        QVERIFY(intRole(app, last, "messagesDropped") > 0);
        QVERIFY(intRole(app, last, "promptTokensShifted") > 0);
    }
};

QTEST_MAIN(TestLongChat)
#include "tst_long_chat.moc"
