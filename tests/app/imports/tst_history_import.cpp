// The app's import of other apps' chats (HistoryStore::findChats/importChats, the Settings
// page's "Look for chats from other apps"): run on the store's thread, a look says what an
// import would add and writes nothing, the import adds the chat (its system prompt as a
// persona) and says what was left out, and a second look finds it imported before.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "chat_fixtures.h"
#include "core/history_store.h"

using namespace fixtures;

class TestHistoryImport : public QObject {
    Q_OBJECT

  private slots:
    void looksThenImportsOnce() {
        QTemporaryDir home, data;
        // A GPT4All chat where GPT4All keeps them by default (its data folder on Linux).
        G4Chat chat;
        chat.created = 1735732800;  // 2025-01-01
        chat.id = QStringLiteral("0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d");
        chat.name = QStringLiteral("Bread");
        chat.model = QStringLiteral("Llama 3 8B Instruct");
        G4Item prompt =
            item(QStringLiteral("Prompt: "), QStringLiteral("How long does dough rise?"));
        G4Item reply = item(QStringLiteral("Response: "), QStringLiteral("About an hour."));
        reply.subs = {sub(QStringLiteral("Response: "), QStringLiteral("About an hour."))};
        chat.items = {prompt, reply};
        const QString folder = home.filePath(QStringLiteral(".local/share/nomic.ai/GPT4All"));
        QVERIFY(write_text(folder + QStringLiteral("/gpt4all-%1.chat").arg(chat.id),
                           gpt4all_file(chat, 12)));
        QVERIFY(write_text(folder + QStringLiteral("/gpt4all-broken.chat"), "not a chat"));

        HistoryStore history;
        history.setImportContext(hearth::models::RootContext{
            home.path(), QProcessEnvironment(), hearth::models::Os::Linux, {}, {}});
        QSignalSpy opened(&history, &HistoryStore::opened);
        history.openPath(data.filePath(QStringLiteral("history.sqlite3")));
        QVERIFY(opened.wait(10000));
        QVERIFY(opened.at(0).at(0).toBool());

        QSignalSpy found(&history, &HistoryStore::chatsFound);
        QSignalSpy imported(&history, &HistoryStore::chatsImported);
        QSignalSpy changed(&history, &HistoryStore::conversationsChanged);
        history.findChats();
        QVERIFY(found.wait(10000));
        QCOMPARE(found.at(0).at(0).toInt(), 1);  // to import
        QCOMPARE(found.at(0).at(1).toInt(), 0);  // imported before
        QCOMPARE(found.at(0).at(2).toInt(), 1);  // unreadable
        const QString look = found.at(0).at(3).toString();
        QVERIFY2(look.contains(QLatin1String("gpt4all-broken.chat")), qPrintable(look));
        QCOMPARE(changed.count(), 0);  // a look writes nothing

        history.importChats();
        QVERIFY(imported.wait(10000));
        QCOMPARE(imported.at(0).at(0).toInt(), 1);
        QCOMPARE(imported.at(0).at(2).toInt(), 1);
        // Its model is not one of Hearth's: named as left out.
        QCOMPARE(imported.at(0).at(3).toInt(), 1);
        const QString report = imported.at(0).at(5).toString();
        QVERIFY2(report.contains(QLatin1String("Llama 3 8B Instruct")), qPrintable(report));
        QCOMPARE(changed.count(), 1);

        found.clear();
        history.findChats();
        QVERIFY(found.wait(10000));
        QCOMPARE(found.at(0).at(0).toInt(), 0);
        QCOMPARE(found.at(0).at(1).toInt(), 1);
    }
};

QTEST_GUILESS_MAIN(TestHistoryImport)
#include "tst_history_import.moc"
