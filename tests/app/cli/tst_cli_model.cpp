// hearth-cli in a child process on the default model: info's readable model name, and
// in chat Ctrl+C (SIGINT) while a long reply streams stops it, with nothing more of that
// reply printed after the stop.
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <functional>

#include "support/test_model.h"

#if defined(Q_OS_UNIX)
#include <signal.h>
#endif

namespace {

constexpr int kWaitMs = 120000;

// Reads the child's stdout into `out` until `done(out)` holds, the child exits or the
// time is up; returns whether it holds.
bool read_until(QProcess& p, QByteArray& out, const std::function<bool(const QByteArray&)>& done) {
    QElapsedTimer clock;
    clock.start();
    while (!done(out) && clock.elapsed() < kWaitMs) {
        if (p.state() != QProcess::Running) {
            out += p.readAllStandardOutput();
            break;
        }
        p.waitForReadyRead(100);
        out += p.readAllStandardOutput();
    }
    return done(out);
}

}  // namespace

class TestCliModel : public QObject {
    Q_OBJECT

  private slots:
    void infoGivesAReadableName() {
        HEARTH_REQUIRE_MODEL(model);
        QProcess info;
        info.start(QStringLiteral(HEARTH_CLI_PATH), {QStringLiteral("info"), model});
        QVERIFY(info.waitForFinished(kWaitMs));
        QCOMPARE(info.exitCode(), 0);
        const QJsonObject o = QJsonDocument::fromJson(info.readAllStandardOutput()).object();
        const QString name = o.value(QStringLiteral("display_name")).toString();
        // general.name stays as the file has it; display_name is what people read.
        QVERIFY(o.contains(QStringLiteral("name")));
        if (QFileInfo(model).fileName() == QLatin1String("SmolLM2-135M-Instruct.Q4_1.gguf"))
            QCOMPARE(name, QStringLiteral("SmolLM2 135M Instruct"));
        else  // HEARTH_MODEL names another model
            QVERIFY(!name.isEmpty());
    }

    // Two runs of the CLI over one disk tier (a process restart): the second reads the
    // prompt's KV back from disk and generates the same tokens; cache stats and clear.
    void diskTierAcrossProcesses() {
        HEARTH_REQUIRE_MODEL(model);
        QTemporaryDir dir;
        const QStringList generate = {
            QStringLiteral("generate"),
            QStringLiteral("--model"),
            model,
            QStringLiteral("--kv-disk-dir"),
            dir.path(),
            QStringLiteral("--json"),
            QStringLiteral("--temperature"),
            QStringLiteral("0"),
            QStringLiteral("--max-tokens"),
            QStringLiteral("8"),
            QStringLiteral("--ignore-eos"),
            QStringLiteral("--prompt"),
            QStringLiteral("The lighthouse keeper climbed the stairs every evening, counting "
                           "them one by one, and at the top he lit the lamp and watched the "
                           "sea for ships that never came.")};
        QJsonObject runs[2];
        for (QJsonObject& o : runs) {
            QProcess p;
            p.start(QStringLiteral(HEARTH_CLI_PATH), generate);
            QVERIFY(p.waitForFinished(kWaitMs));
            QCOMPARE(p.exitCode(), 0);
            o = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        }
        const QJsonObject first = runs[0].value(QStringLiteral("stats")).toObject();
        const QJsonObject second = runs[1].value(QStringLiteral("stats")).toObject();
        QCOMPARE(first.value(QStringLiteral("prompt_tokens_loaded")).toInt(), 0);
        const int prompt = second.value(QStringLiteral("prompt_tokens")).toInt();
        // Every whole block of the prompt (the last token is always computed).
        QVERIFY(second.value(QStringLiteral("prompt_tokens_loaded")).toInt() >=
                (prompt - 1) / 16 * 16);
        QVERIFY(second.value(QStringLiteral("prompt_tokens_loaded")).toInt() > 0);
        QCOMPARE(runs[1].value(QStringLiteral("tokens")), runs[0].value(QStringLiteral("tokens")));
        QProcess stats;
        stats.start(QStringLiteral(HEARTH_CLI_PATH),
                    {QStringLiteral("cache"), QStringLiteral("stats"),
                     QStringLiteral("--kv-disk-dir"), dir.path(), QStringLiteral("--json")});
        QVERIFY(stats.waitForFinished(kWaitMs));
        const QJsonObject held = QJsonDocument::fromJson(stats.readAllStandardOutput()).object();
        QVERIFY(held.value(QStringLiteral("blocks")).toInt() > 0);
        QProcess clear;
        clear.start(QStringLiteral(HEARTH_CLI_PATH),
                    {QStringLiteral("cache"), QStringLiteral("clear"),
                     QStringLiteral("--kv-disk-dir"), dir.path()});
        QVERIFY(clear.waitForFinished(kWaitMs));
        QCOMPARE(clear.exitCode(), 0);
        stats.start(QStringLiteral(HEARTH_CLI_PATH),
                    {QStringLiteral("cache"), QStringLiteral("stats"),
                     QStringLiteral("--kv-disk-dir"), dir.path(), QStringLiteral("--json")});
        QVERIFY(stats.waitForFinished(kWaitMs));
        QCOMPARE(QJsonDocument::fromJson(stats.readAllStandardOutput())
                     .object()
                     .value(QStringLiteral("blocks"))
                     .toInt(),
                 0);
    }

    // info --devices answers on any machine (here: no driver); auto's reason is given, and
    // a device that cannot be used is an error that names it, without the model hint.
    void devicesAreListedAndChosen() {
        HEARTH_REQUIRE_MODEL(model);
        QProcess devices;
        devices.start(
            QStringLiteral(HEARTH_CLI_PATH),
            {QStringLiteral("info"), QStringLiteral("--devices"), QStringLiteral("--json")});
        QVERIFY(devices.waitForFinished(kWaitMs));
        QCOMPARE(devices.exitCode(), 0);
        const QJsonObject o = QJsonDocument::fromJson(devices.readAllStandardOutput()).object();
        QVERIFY(o.value(QStringLiteral("devices")).isArray());
        const QJsonObject automatic = o.value(QStringLiteral("auto")).toObject();
        QCOMPARE(automatic.value(QStringLiteral("device")).toString(), QStringLiteral("cpu"));
        QVERIFY(!automatic.value(QStringLiteral("cpu_reason")).toString().isEmpty());

        QProcess bad;
        bad.start(QStringLiteral(HEARTH_CLI_PATH),
                  {QStringLiteral("generate"), QStringLiteral("--model"), model,
                   QStringLiteral("--device"), QStringLiteral("cuda:7"), QStringLiteral("--prompt"),
                   QStringLiteral("Hi")});
        QVERIFY(bad.waitForFinished(kWaitMs));
        QVERIFY(bad.exitCode() != 0);
        const QString error = QString::fromUtf8(bad.readAllStandardError());
        QVERIFY2(error.contains(QLatin1String("cuda:7")), qPrintable(error));
        QVERIFY2(!error.contains(QLatin1String("fetch-model")), qPrintable(error));
    }

    void interruptStopsTheReplyAtOnce() {
#if defined(Q_OS_UNIX)
        HEARTH_REQUIRE_MODEL(model);
        QProcess chat;
        // Greedy: this prompt gets a reply far longer than the wait below (it repeats
        // itself until max-tokens).
        chat.start(
            QStringLiteral(HEARTH_CLI_PATH),
            {QStringLiteral("chat"), QStringLiteral("--model"), model,
             QStringLiteral("--temperature"), QStringLiteral("0"), QStringLiteral("--max-tokens"),
             QStringLiteral("2000"), QStringLiteral("--threads"), QStringLiteral("2")});
        QVERIFY2(chat.waitForStarted(kWaitMs), qPrintable(chat.errorString()));
        QByteArray out;
        QVERIFY2(read_until(chat, out, [](const QByteArray& o) { return o.endsWith("> "); }),
                 chat.readAllStandardError().constData());
        chat.write("Write a very long, detailed essay about the history of the Roman Empire.\n");
        const qsizetype reply_at = out.size();
        QVERIFY2(
            read_until(chat, out, [&](const QByteArray& o) { return o.size() - reply_at > 200; }),
            "the reply did not stream");
        ::kill(static_cast<pid_t>(chat.processId()), SIGINT);

        // The stop marker, then the prompt for the next message: nothing in between.
        const QByteArray marker = "[stopped]";
        QVERIFY2(
            read_until(chat, out,
                       [&](const QByteArray& o) {
                           const qsizetype at = o.indexOf(marker, reply_at);
                           return at >= 0 && o.indexOf("> ", at) >= 0;
                       }),
            qPrintable(QStringLiteral("no stop marker and prompt after Ctrl+C; stdout ends: ") +
                       QString::fromUtf8(out.right(200))));
        chat.write("/quit\n");
        chat.closeWriteChannel();
        QVERIFY(chat.waitForFinished(kWaitMs));
        out += chat.readAllStandardOutput();
        QCOMPARE(chat.exitStatus(), QProcess::NormalExit);
        QCOMPARE(chat.exitCode(), 0);

        const qsizetype at = out.indexOf(marker, reply_at);
        QCOMPARE(out.indexOf(marker, at + 1), qsizetype(-1));
        // After the marker: line breaks and the one prompt, no more reply text.
        const QByteArray after = out.mid(at + marker.size());
        QVERIFY2(
            after.trimmed() == ">",
            qPrintable(
                QStringLiteral("printed after the stop: \"%1\"").arg(QString::fromUtf8(after))));
        const QByteArray err = chat.readAllStandardError();
        QVERIFY2(err.contains("stopped]"), err.constData());  // the stats line says so too
#else
        QSKIP("sends SIGINT");
#endif
    }
};

QTEST_GUILESS_MAIN(TestCliModel)
#include "tst_cli_model.moc"
