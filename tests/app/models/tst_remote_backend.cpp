// The chat with a remote model, for real: `hearth-cli serve` started by the test on the
// synthetic model, RemoteBackend pointed at it, and the chat view model driven as the
// window drives it. A streamed reply equals the one the local engine gives for the same
// turn (the server renders the prompt as the app does); the second turn reports the
// cached prompt tokens; regenerate and stop work; a server that is gone fails the reply
// with a message and keeps what the user wrote.
#include <QProcess>
#include <QRegularExpression>
#include <QTcpServer>

#ifdef Q_OS_LINUX
#include <sys/prctl.h>

#include <csignal>
#endif

#include "app_fixture.h"
#include "core/connection_settings.h"
#include "core/local_api_server.h"
#include "core/remote_backend.h"
#include "core/sampling_settings_map.h"

using namespace hearth;

namespace {

// Starts `hearth-cli serve` on a free port; its base URL, or empty on failure.
QString start_server(QProcess& p, const QString& model) {
    p.setProgram(QStringLiteral(HEARTH_CLI_PATH));
    p.setArguments({QStringLiteral("serve"), QStringLiteral("--model"), model,
                    QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--threads"),
                    QStringLiteral("2"), QStringLiteral("--kv-mb"), QStringLiteral("16"),
                    QStringLiteral("--kv-disk-mb"), QStringLiteral("0")});
    p.setProcessChannelMode(QProcess::SeparateChannels);
#ifdef Q_OS_LINUX
    // The server goes with the test, even when the test dies.
    p.setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGTERM); });
#endif
    p.start();
    QString seen;
    const QRegularExpression url(QStringLiteral("listening on (http://\\S+)"));
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 60'000 && p.state() != QProcess::NotRunning) {
        p.waitForReadyRead(200);
        seen += QString::fromUtf8(p.readAllStandardError());
        const auto m = url.match(seen);
        if (m.hasMatch()) return m.captured(1);
    }
    qWarning("hearth-cli serve did not start: %s", qPrintable(seen));
    return {};
}

}  // namespace

class TestRemoteBackend : public QObject {
    Q_OBJECT
    AppFixture fixture_;

  private slots:
    void chatThroughAServer() {
        QProcess server;
        const QString url = start_server(server, fixture_.model_path());
        QVERIFY(!url.isEmpty());
        auto stop_server = qScopeGuard([&] {
            server.terminate();
            server.waitForFinished(10'000);
        });

        App app;
        START(fixture_, app, QStringLiteral("remote.sqlite3"), false);  // no local model
        RemoteBackend remote;
        remote.setBaseUrl(url);    // without /v1: added
        QVERIFY(!remote.ready());  // no model chosen yet
        remote.refreshModels();
        QTRY_VERIFY_WITH_TIMEOUT(!remote.refreshing(), 10'000);
        QCOMPARE(remote.models(), QStringList{QStringLiteral("synthetic")});
        QCOMPARE(remote.model(), QStringLiteral("synthetic"));  // the first is picked
        QVERIFY(remote.ready());
        app.chat.setBackend(&remote);
        app.chat.setMaxReplyTokens(24);

        QTRY_COMPARE(app.personas.count(), 4);
        QSignalSpy created(&app.personas, &PersonaListModel::personaCreated);
        app.personas.create(QStringLiteral("Tester"), kSystemPrompt, QString(), QString(), false);
        QVERIFY(created.wait(10000));
        const qint64 persona = created.at(0).at(0).toLongLong();
        const qint64 c1 = create_conversation(app, persona);
        QVERIFY(c1 > 0);
        app.chat.setConversationId(c1);
        QTRY_VERIFY(app.chat.canSend());

        // ---- a streamed reply, with the statistics the server and the client know ----
        int streamed = 0;
        connect(&remote, &ChatBackend::requestEvent, this, [&](const sched::Event& e) {
            if (e.kind == sched::EventKind::Token) ++streamed;
        });
        int row = send_and_wait(app, QStringLiteral("Hello there, tell me a story"));
        QCOMPARE(row, 1);
        QCOMPARE(role(app.chat, 1, "state").toString(), QStringLiteral("done"));
        const QString remote_text = role(app.chat, 1, "text").toString();
        QVERIFY(!remote_text.isEmpty());
        QVERIFY(streamed > 1);
        QCOMPARE(role(app.chat, 1, "generatedTokens").toInt(), 24);
        QCOMPARE(role(app.chat, 1, "finishReason").toString(), QStringLiteral("length"));
        QVERIFY(role(app.chat, 1, "ttftMs").toDouble() > 0);
        QVERIFY(role(app.chat, 1, "tokensPerSecond").toDouble() > 0);

        // ---- the next turn: the history is cached on the server ----
        row = send_and_wait(app, QStringLiteral("And then?"));
        QCOMPARE(row, 3);
        QCOMPARE(role(app.chat, 3, "state").toString(), QStringLiteral("done"));
        QVERIFY2(role(app.chat, 3, "promptTokensCached").toInt() >= 16,
                 qPrintable(role(app.chat, 3, "promptTokensCached").toString()));

        // ---- regenerate: a second variant of the last reply ----
        QSignalSpy finished(&app.chat, &MessageListModel::replyFinished);
        QVERIFY(app.chat.regenerate());
        QVERIFY(finished.wait(kReplyTimeoutMs));
        QTRY_COMPARE(role(app.chat, 3, "variantCount").toInt(), 2);

        // ---- the chat's stop strings go to the server ('stop'): the reply (greedy, so
        // the same again) ends where its first characters appear, without them ----
        const QString again = role(app.chat, 3, "text").toString();
        QVERIFY(again.size() >= 3);
        app.chat.setConversationSampling(
            {{QStringLiteral("stop"), stop_strings_text({again.left(3)})}});
        QTRY_VERIFY(app.chat.conversationSampling().contains(QStringLiteral("stop")));
        finished.clear();
        QVERIFY(app.chat.regenerate());
        QVERIFY(finished.wait(kReplyTimeoutMs));
        QTRY_COMPARE(role(app.chat, 3, "variantCount").toInt(), 3);
        QTRY_COMPARE(role(app.chat, 3, "finishReason").toString(), QStringLiteral("stop"));
        QCOMPARE(role(app.chat, 3, "text").toString(), QString());
        app.chat.setConversationSampling({});

        // ---- stop mid-reply ----
        app.chat.setMaxReplyTokens(2000);
        bool stopped = false;
        auto c = connect(&remote, &ChatBackend::requestEvent, this, [&](const sched::Event& e) {
            if (e.kind == sched::EventKind::Token && !stopped) {
                stopped = true;
                app.chat.stop();
            }
        });
        finished.clear();
        QVERIFY(app.chat.send(QStringLiteral("Please stop me")));
        QVERIFY(finished.wait(kReplyTimeoutMs));
        disconnect(c);
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("stopped"));
        QTRY_COMPARE(app.chat.count(), 6);
        QVERIFY(role(app.chat, 5, "generatedTokens").toInt() < 2000);
        QTRY_VERIFY(app.chat.canSend());

        // ---- the same first turn on the local engine gives the same reply ----
        app.bridge.load(fixture_.model_path());
        QTRY_VERIFY_WITH_TIMEOUT(app.bridge.loaded(), kLoadTimeoutMs);
        app.chat.setBackend(&app.local);
        app.chat.setMaxReplyTokens(24);
        const qint64 c2 = create_conversation(app, persona);
        app.chat.setConversationId(c2);
        QTRY_VERIFY(app.chat.canSend());
        row = send_and_wait(app, QStringLiteral("Hello there, tell me a story"));
        QCOMPARE(row, 1);
        QCOMPARE(role(app.chat, 1, "text").toString(), remote_text);

        // ---- the server goes away: the reply fails with why; the message stays ----
        app.chat.setBackend(&remote);
        server.terminate();
        QVERIFY(server.waitForFinished(10'000));
        QTRY_VERIFY(app.chat.canSend());
        finished.clear();
        QVERIFY(app.chat.send(QStringLiteral("Are you there?")));
        QVERIFY(finished.wait(kReplyTimeoutMs));
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("error"));
        QTRY_COMPARE(app.chat.count(), 4);
        QCOMPARE(role(app.chat, 2, "text").toString(), QStringLiteral("Are you there?"));
        QVERIFY2(app.chat.errorString().contains(QLatin1String("connection")),
                 qPrintable(app.chat.errorString()));
    }

    // The Settings switch: the app's own engine served over HTTP, its cache shared with
    // the app's chats; it follows the settings and the loaded model.
    void localApiServerSharesTheAppsEngine() {
        App app;
        START(fixture_, app, QStringLiteral("served.sqlite3"));
        ConnectionSettings settings(fixture_.path(QStringLiteral("connections.ini")));
        LocalApiServer server;
        server.setBridge(&app.bridge);
        server.setSettings(&settings);
        QVERIFY(!server.running());
        int port = 0;
        {
            QTcpServer probe;  // a free port
            QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
            port = probe.serverPort();
        }
        settings.setServerPort(port);
        settings.setServerEnabled(true);
        QVERIFY2(server.running(), qPrintable(server.error()));
        QCOMPARE(server.url(), QStringLiteral("http://127.0.0.1:%1").arg(port));
        QCOMPARE(server.modelId(), QStringLiteral("synthetic"));

        // Another program (here: a RemoteBackend) chats through it on the app's engine.
        RemoteBackend client;
        client.setBaseUrl(server.url());
        client.setModel(QStringLiteral("synthetic"));
        const int64_t queried = app.bridge.engine()->stats().kv.prompt_tokens_queried;
        TurnRequest turn;
        turn.turn.messages = {{chat::Role::User, "Hello over HTTP", std::nullopt}};
        turn.turn.max_tokens = 8;
        turn.sampling = SamplingParams::greedy();
        QSignalSpy events(&client, &ChatBackend::requestEvent);
        QVERIFY(client.start(turn).ok());
        QTRY_VERIFY_WITH_TIMEOUT(
            !events.isEmpty() &&
                events.last().at(0).value<sched::Event>().kind == sched::EventKind::Finished,
            kReplyTimeoutMs);
        QVERIFY(app.bridge.engine()->stats().kv.prompt_tokens_queried > queried);

        // A key makes it restart with the key required; off stops it.
        settings.setServerKey(QStringLiteral("k3y"));
        QVERIFY(server.running());
        QFile ini(fixture_.path(QStringLiteral("connections.ini")));
        QCOMPARE(ini.permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther),
                 QFileDevice::Permissions());
        events.clear();
        QVERIFY(client.start(turn).ok());  // no key: refused
        QTRY_VERIFY_WITH_TIMEOUT(!events.isEmpty(), kReplyTimeoutMs);
        const auto refused = events.last().at(0).value<sched::Event>();
        QCOMPARE(refused.kind, sched::EventKind::Error);
        QVERIFY2(QString::fromStdString(refused.error).contains(QLatin1String("401")),
                 refused.error.c_str());
        settings.setServerEnabled(false);
        QVERIFY(!server.running());

        // Unloading the model: the server answers 503 rather than serve a dead engine.
        settings.setServerKey(QString());
        settings.setServerEnabled(true);
        QVERIFY(server.running());
        app.bridge.unload();
        QCOMPARE(server.modelId(), QString());
        events.clear();
        QVERIFY(client.start(turn).ok());
        QTRY_VERIFY_WITH_TIMEOUT(!events.isEmpty(), kReplyTimeoutMs);
        QVERIFY(QString::fromStdString(events.last().at(0).value<sched::Event>().error)
                    .contains(QLatin1String("503")));
    }

    void apiRoot() {
        QCOMPARE(RemoteBackend::api_root(QStringLiteral("localhost:8000")),
                 QStringLiteral("http://localhost:8000/v1"));
        QCOMPARE(RemoteBackend::api_root(QStringLiteral(" https://h.example/v1/ ")),
                 QStringLiteral("https://h.example/v1"));
        QCOMPARE(RemoteBackend::api_root(QString()), QString());
    }
};

QTEST_MAIN(TestRemoteBackend)
#include "tst_remote_backend.moc"
