// PersonaListModel and ConversationListModel on a store in a temporary folder: personas
// are seeded and kept warm, created, edited, duplicated and removed; conversations are
// renamed, pinned, archived and deleted with undo; an empty new chat is reused; search
// hits carry their conversation's persona; a store opened after the models are set up
// gives no error; the order holds under the pointer and the busy chats are named; a chat
// is exported (Markdown, JSON) and imported back as a new one.
#include <QFile>
#include <QSignalSpy>
#include <QTest>
#include <QUrl>

#include "app_fixture.h"
#include "core/app_settings.h"

using namespace hearth;

class TestListModels : public QObject {
    Q_OBJECT
    AppFixture fixture_;

  private slots:
    void personasAreSeededAndKeptWarm() {
        App app;
        START(fixture_, app, QStringLiteral("personas.sqlite3"));
        QTRY_COMPARE(app.personas.count(), 4);
        // The default "Assistant" is kept warm: pinned once the model is there.
        int assistant = -1;
        for (int i = 0; i < app.personas.count(); ++i)
            if (role(app.personas, i, "name").toString() == QLatin1String("Assistant"))
                assistant = i;
        QVERIFY(assistant >= 0);
        QVERIFY(role(app.personas, assistant, "keepWarm").toBool());
        QTRY_COMPARE_WITH_TIMEOUT(
            role(app.personas,
                 app.personas.rowOf(role(app.personas, assistant, "personaId").toLongLong()),
                 "warmState")
                .toString(),
            QStringLiteral("pinned"), 30000);

        QSignalSpy created(&app.personas, &PersonaListModel::personaCreated);
        app.personas.create(QStringLiteral("Pirate"), kSystemPrompt, QStringLiteral("#aa3300"),
                            QStringLiteral("P"), false);
        QVERIFY(created.wait(10000));
        const qint64 pirate = created.at(0).at(0).toLongLong();
        // One colour per persona for every view; a fallback where there is none.
        QTRY_COMPARE(app.personas.colorOf(pirate), QStringLiteral("#aa3300"));
        QCOMPARE(app.personas.colorOf(role(app.personas, assistant, "personaId").toLongLong()),
                 QStringLiteral("#e07a3f"));
        QCOMPARE(app.personas.colorOf(-1), QString::fromLatin1(PersonaListModel::kNoColor));
        QCOMPARE(app.personas.colorOf(pirate + 1000),
                 QString::fromLatin1(PersonaListModel::kNoColor));
        QSignalSpy plain_created(&app.personas, &PersonaListModel::personaCreated);
        app.personas.create(QStringLiteral("Plain"), kSystemPrompt);
        QVERIFY(plain_created.wait(10000));
        QTRY_VERIFY(app.personas.rowOf(plain_created.at(0).at(0).toLongLong()) >= 0);
        QCOMPARE(app.personas.colorOf(plain_created.at(0).at(0).toLongLong()),
                 QString::fromLatin1(PersonaListModel::kNoColor));
        app.personas.remove(plain_created.at(0).at(0).toLongLong());
        QTRY_COMPARE(app.personas.count(), 5);
        QTRY_VERIFY(app.personas.rowOf(pirate) >= 0);
        QCOMPARE(role(app.personas, app.personas.rowOf(pirate), "warmState").toString(), QString());

        app.personas.setKeepWarm(pirate, true);
        QTRY_COMPARE_WITH_TIMEOUT(
            role(app.personas, app.personas.rowOf(pirate), "warmState").toString(),
            QStringLiteral("pinned"), 30000);
        QTRY_VERIFY(app.bridge.kvBlocksPinned() > 0);

        app.personas.edit(pirate, {{QStringLiteral("name"), QStringLiteral("Captain")}});
        QTRY_COMPARE(role(app.personas, app.personas.rowOf(pirate), "name").toString(),
                     QStringLiteral("Captain"));

        app.personas.duplicate(pirate);
        QTRY_COMPARE(app.personas.count(), 6);
        bool copy = false;
        for (int i = 0; i < app.personas.count(); ++i)
            if (role(app.personas, i, "name").toString() == QLatin1String("Captain (copy)")) {
                copy = true;
                QVERIFY(!role(app.personas, i, "keepWarm").toBool());
                QCOMPARE(role(app.personas, i, "systemPrompt").toString(), kSystemPrompt);
            }
        QVERIFY(copy);

        app.personas.setKeepWarm(pirate, false);
        QTRY_COMPARE(role(app.personas, app.personas.rowOf(pirate), "warmState").toString(),
                     QString());
        app.personas.remove(pirate);
        QTRY_COMPARE(app.personas.count(), 5);
        QCOMPARE(app.personas.rowOf(pirate), -1);

        // A new model warms every keep-warm persona up again.
        app.bridge.load(fixture_.model_path());
        QSignalSpy changed(&app.bridge, &EngineBridge::modelChanged);
        QVERIFY(changed.wait(kLoadTimeoutMs));
        QTRY_COMPARE_WITH_TIMEOUT(role(app.personas, assistant, "warmState").toString(),
                                  QStringLiteral("pinned"), 30000);
    }

    void conversationListActions() {
        App app;
        START(fixture_, app, QStringLiteral("list.sqlite3"), /*load=*/false);
        const qint64 a = create_conversation(app, -1);
        QVERIFY(a > 0);
        // Empty untitled chats do not pile up: the same persona (none) reuses it.
        QCOMPARE(create_conversation(app, -1), a);
        QTRY_COMPARE(app.conversations.count(), 1);
        const QDateTime a_updated = role(app.conversations, 0, "updatedAt").toDateTime();
        QSignalSpy created(&app.conversations, &ConversationListModel::conversationCreated);
        // Distinct times, so the order (newest first) is defined.
        QTRY_VERIFY(QDateTime::currentDateTime() > a_updated);
        app.conversations.createConversation(-1,
                                             QStringLiteral("New chat"));  // a title: always new
        QVERIFY(created.wait(10000));
        const qint64 b = created.at(0).at(0).toLongLong();
        QVERIFY(b > 0 && b != a);
        QTRY_COMPARE(app.conversations.count(), 2);
        QCOMPARE(role(app.conversations, 0, "conversationId").toLongLong(), b);
        QCOMPARE(role(app.conversations, 0, "title").toString(), QStringLiteral("New chat"));

        app.conversations.rename(a, QStringLiteral("Holiday plans"));
        QTRY_COMPARE(role(app.conversations, app.conversations.rowOf(a), "title").toString(),
                     QStringLiteral("Holiday plans"));
        app.conversations.setPinned(a, true);
        QTRY_COMPARE(role(app.conversations, 0, "conversationId").toLongLong(), a);  // pinned first
        QVERIFY(role(app.conversations, 0, "pinned").toBool());

        // Delete with undo.
        app.conversations.setUndoTimeoutMs(60000);
        app.conversations.remove(b);
        QCOMPARE(app.conversations.count(), 1);
        QVERIFY(app.conversations.canUndo());
        QCOMPARE(app.conversations.undoTitle(), QStringLiteral("New chat"));
        app.conversations.undo();
        QVERIFY(!app.conversations.canUndo());
        QTRY_COMPARE(app.conversations.count(), 2);
        app.conversations.setUndoTimeoutMs(50);
        QSignalSpy deleted(&app.conversations, &ConversationListModel::deleted);
        app.conversations.remove(b);
        QCOMPARE(app.conversations.count(), 1);
        QVERIFY(deleted.wait(10000));
        QCOMPARE(deleted.at(0).at(0).toLongLong(), b);
        app.conversations.reload();
        QTRY_COMPARE(app.conversations.count(), 1);

        // Archive: out of the list, into the archived one.
        app.conversations.setArchived(a, true);
        QTRY_COMPARE(app.conversations.count(), 0);
        app.conversations.setShowArchived(true);
        QTRY_COMPARE(app.conversations.count(), 1);
        QVERIFY(role(app.conversations, 0, "archived").toBool());

        // Without a model nothing can be sent.
        app.chat.setConversationId(a);
        QTRY_COMPARE(app.chat.title(), QStringLiteral("Holiday plans"));
        QVERIFY(!app.chat.canSend());
        QVERIFY(!app.chat.send(QStringLiteral("hello")));
    }

    // A reply that ends in the background does not move the row under the pointer
    // (holdOrder); the chats with a reply under way are named (the list's indicator); the
    // order by last activity is back once the pointer leaves.
    void listOrderHoldsUnderThePointer() {
        App app;
        START(fixture_, app, QStringLiteral("hold-order.sqlite3"));
        QSignalSpy created(&app.conversations, &ConversationListModel::conversationCreated);
        app.conversations.createConversation(-1, QStringLiteral("Older"));
        QVERIFY(created.wait(10000));
        const qint64 a = created.at(0).at(0).toLongLong();
        QTRY_COMPARE(app.conversations.count(), 1);
        const QDateTime a_created = role(app.conversations, 0, "updatedAt").toDateTime();
        QTRY_VERIFY(QDateTime::currentDateTime() > a_created);
        app.conversations.createConversation(-1, QStringLiteral("Newer"));
        QVERIFY(created.wait(10000));
        const qint64 b = created.at(1).at(0).toLongLong();
        QTRY_COMPARE(app.conversations.count(), 2);
        QCOMPARE(role(app.conversations, 0, "conversationId").toLongLong(), b);
        const QDateTime b_created = role(app.conversations, 0, "updatedAt").toDateTime();

        app.conversations.setHoldOrder(true);
        QList<QVariantList> busy;
        connect(&app.chat, &MessageListModel::busyConversationsChanged, this,
                [&] { busy.append(app.chat.busyConversations()); });
        app.chat.setMaxReplyTokens(4);
        app.chat.setConversationId(a);
        QTRY_VERIFY(app.chat.canSend());
        QTRY_VERIFY(QDateTime::currentDateTime() > b_created);
        QVERIFY(send_and_wait(app, QStringLiteral("Hello there")) > 0);
        QVERIFY(settle(app));
        QVERIFY(!busy.isEmpty());
        QCOMPARE(busy.first(), QVariantList{a});
        QCOMPARE(busy.last(), QVariantList{});
        QCOMPARE(app.chat.busyConversations(), QVariantList{});
        // a is the newest now, and the list knows it, but it stays where it was.
        QVERIFY(role(app.conversations, app.conversations.rowOf(a), "updatedAt").toDateTime() >
                b_created);
        QCOMPARE(role(app.conversations, 0, "conversationId").toLongLong(), b);
        QCOMPARE(role(app.conversations, 1, "conversationId").toLongLong(), a);
        // Pinning still takes effect at once.
        app.conversations.setPinned(b, true);
        QTRY_VERIFY(role(app.conversations, 0, "pinned").toBool());
        app.conversations.setPinned(b, false);
        QTRY_VERIFY(!role(app.conversations, 0, "pinned").toBool());
        QCOMPARE(role(app.conversations, 0, "conversationId").toLongLong(), b);

        app.conversations.setHoldOrder(false);
        QTRY_COMPARE(role(app.conversations, 0, "conversationId").toLongLong(), a);
    }

    // Export and import from the app's list: Markdown and JSON files, the JSON imported
    // back as a new chat with the same messages; a file that is not an export is refused
    // with a reason, and the list is unchanged.
    void exportAndImport() {
        App app;
        START(fixture_, app, QStringLiteral("exchange.sqlite3"));
        app.conversations.createConversation(-1, QStringLiteral("Trip to Lisbon"));
        QSignalSpy created(&app.conversations, &ConversationListModel::conversationCreated);
        QVERIFY(created.wait(10000));
        const qint64 c = created.at(0).at(0).toLongLong();
        app.chat.setMaxReplyTokens(4);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());
        QVERIFY(send_and_wait(app, QStringLiteral("Which tram goes up to the castle?")) > 0);

        QSignalSpy exported(&app.conversations, &ConversationListModel::exported);
        const QString md = fixture_.path(QStringLiteral("trip.md"));
        app.conversations.exportConversation(c, QStringLiteral("markdown"),
                                             QUrl::fromLocalFile(md).toString());
        QVERIFY(exported.wait(10000));
        QCOMPARE(exported.at(0).at(0).toString(), md);
        QFile md_file(md);
        QVERIFY(md_file.open(QIODevice::ReadOnly));
        const QString md_text = QString::fromUtf8(md_file.readAll());
        QVERIFY(md_text.contains(QStringLiteral("Trip to Lisbon")));
        QVERIFY(md_text.contains(QStringLiteral("Which tram goes up to the castle?")));

        const QString json = fixture_.path(QStringLiteral("trip.json"));
        app.conversations.exportConversation(c, QStringLiteral("json"), json);
        QVERIFY(exported.wait(10000));
        QTRY_COMPARE(app.conversations.count(), 1);
        QSignalSpy imported(&app.conversations, &ConversationListModel::imported);
        app.conversations.importConversation(QUrl::fromLocalFile(json).toString());
        QVERIFY(imported.wait(10000));
        const qint64 copy = imported.at(0).at(0).toLongLong();
        QVERIFY(copy > 0 && copy != c);
        QTRY_COMPARE(app.conversations.count(), 2);
        QCOMPARE(role(app.conversations, app.conversations.rowOf(copy), "title").toString(),
                 QStringLiteral("Trip to Lisbon"));
        app.chat.setConversationId(copy);
        QTRY_COMPARE(app.chat.count(), 2);
        QCOMPARE(role(app.chat, 0, "text").toString(),
                 QStringLiteral("Which tram goes up to the castle?"));

        // Not an export: refused, with a reason; nothing added.
        app.conversations.importConversation(md);
        QTRY_VERIFY(!app.conversations.errorString().isEmpty());
        QVERIFY(settle(app));
        QCOMPARE(app.conversations.count(), 2);
        QCOMPARE(imported.count(), 1);
    }

    // Views set up before the history is open (QML creates them with it, and the store
    // opens a moment later) wait for it: no "the chat history is not open" error, and the
    // personas and conversations arrive once it is open.
    void storeOpenedAfterTheViews() {
        App app;
        app.personas.setStore(&app.store);
        app.conversations.setStore(&app.store);
        app.chat.setStore(&app.store);
        app.chat.setConversationId(1);
        QVERIFY(!app.store.isOpen());
        store::OpenOptions o;
        o.full_sync = false;
        app.store.openWith(fixture_.path(QStringLiteral("late-open.sqlite3")), o);
        QTRY_VERIFY(app.store.ready());
        QTRY_COMPARE(app.personas.count(), 4);
        QVERIFY(settle(app));
        QCOMPARE(app.personas.errorString(), QString());
        QCOMPARE(app.conversations.errorString(), QString());
        QCOMPARE(app.store.errorString(), QString());
        // (The chat's conversation 1 does not exist: that is the one error there is.)
        QVERIFY(!app.chat.errorString().contains(QLatin1String("not open")));
    }

    // A search hit shows its conversation's persona (it used to show none).
    void searchHitsCarryTheirPersona() {
        App app;
        START(fixture_, app, QStringLiteral("search-persona.sqlite3"));
        QSignalSpy created(&app.personas, &PersonaListModel::personaCreated);
        app.personas.create(QStringLiteral("Sailor"), kSystemPrompt, QStringLiteral("#2266aa"),
                            QStringLiteral("icon:star"));
        QVERIFY(created.wait(10000));
        const qint64 persona = created.at(0).at(0).toLongLong();
        const qint64 c = create_conversation(app, persona);
        app.chat.setMaxReplyTokens(4);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());
        QVERIFY(send_and_wait(app, QStringLiteral("Where is the lighthouse?")) > 0);
        app.conversations.search(QStringLiteral("lighthouse"));
        QTRY_VERIFY(app.conversations.count() >= 1 &&
                    role(app.conversations, 0, "isSearchHit").toBool());
        QCOMPARE(role(app.conversations, 0, "personaId").toLongLong(), persona);
        QCOMPARE(role(app.conversations, 0, "conversationId").toLongLong(), c);

        // Hits are grouped by conversation: each chat's hits are together, whatever their
        // ranks (a second chat whose one message outranks the first chat's second hit).
        QVERIFY(send_and_wait(app, QStringLiteral(
                                       "The lighthouse keeper, the lighthouse, a lighthouse")) > 0);
        const qint64 d = create_conversation(app, persona);
        app.chat.setConversationId(d);
        QTRY_VERIFY(app.chat.canSend());
        QVERIFY(send_and_wait(app, QStringLiteral("Lighthouse lighthouse lighthouse lighthouse")) >
                0);
        app.conversations.search(QStringLiteral("keeper"));  // reload the hits below
        QTRY_VERIFY(app.conversations.count() >= 1);
        app.conversations.search(QStringLiteral("lighthouse"));
        QTRY_VERIFY(app.conversations.count() >= 3);
        QList<qint64> order;
        for (int i = 0; i < app.conversations.count(); ++i) {
            const qint64 id = role(app.conversations, i, "conversationId").toLongLong();
            if (order.isEmpty() || order.last() != id) {
                QVERIFY2(!order.contains(id), "a conversation's hits are split");
                order << id;
            }
        }
        QCOMPARE(order.size(), 2);
    }

    // A persona's own reply settings: stored, read back, copied by duplicate, and used
    // for the replies of its chats.
    void personaReplySettings() {
        App app;
        START(fixture_, app, QStringLiteral("persona-sampling.sqlite3"));
        QSignalSpy created(&app.personas, &PersonaListModel::personaCreated);
        app.personas.create(
            QStringLiteral("Terse"), kSystemPrompt, QString(), QString(), false,
            {{QStringLiteral("maxTokens"), 3}, {QStringLiteral("repeatPenalty"), 1.3}});
        QVERIFY(created.wait(10000));
        const qint64 persona = created.at(0).at(0).toLongLong();
        QTRY_VERIFY(app.personas.rowOf(persona) >= 0);
        QVariantMap m = role(app.personas, app.personas.rowOf(persona), "sampling").toMap();
        QCOMPARE(m.value(QStringLiteral("maxTokens")).toInt(), 3);
        QCOMPARE(m.value(QStringLiteral("repeatPenalty")).toDouble(), 1.3);
        QVERIFY(!m.contains(QStringLiteral("temperature")));
        app.personas.edit(persona, {{QStringLiteral("sampling"),
                                     QVariantMap{{QStringLiteral("maxTokens"), 6},
                                                 {QStringLiteral("seed"), QStringLiteral("9")}}}});
        QTRY_COMPARE(role(app.personas, app.personas.rowOf(persona), "sampling")
                         .toMap()
                         .value(QStringLiteral("maxTokens"))
                         .toInt(),
                     6);
        m = role(app.personas, app.personas.rowOf(persona), "sampling").toMap();
        QCOMPARE(m.value(QStringLiteral("seed")).toString(), QStringLiteral("9"));
        QVERIFY(!m.contains(QStringLiteral("repeatPenalty")));
        // Its chats reply with them (6 tokens, seed 9), the chat's own settings over them.
        const qint64 c = create_conversation(app, persona);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());
        QCOMPARE(app.chat.personaSampling().value(QStringLiteral("maxTokens")).toInt(), 6);
        int row = send_and_wait(app, QStringLiteral("Hi"));
        QVERIFY(row > 0);
        QCOMPARE(role(app.chat, row, "generatedTokens").toInt(), 6);
        QCOMPARE(role(app.chat, row, "seed").toString(), QStringLiteral("9"));
        app.chat.setConversationSampling({{QStringLiteral("maxTokens"), 2}});
        row = send_and_wait(app, QStringLiteral("Again"));
        QVERIFY(row > 0);
        QCOMPARE(role(app.chat, row, "generatedTokens").toInt(), 2);
        // Duplicates keep the settings.
        app.personas.duplicate(persona);
        QTRY_VERIFY(app.personas.count() == 6);
        for (int i = 0; i < app.personas.count(); ++i)
            if (role(app.personas, i, "name").toString() == QLatin1String("Terse (copy)"))
                QCOMPARE(role(app.personas, i, "sampling")
                             .toMap()
                             .value(QStringLiteral("maxTokens"))
                             .toInt(),
                         6);
    }

    // The open model's own reply settings (Model page → Defaults…): under a persona's and
    // a chat's, over the app's; another model's are not used.
    void modelReplySettings() {
        App app;
        START(fixture_, app, QStringLiteral("model-sampling.sqlite3"));
        AppSettings settings(fixture_.path(QStringLiteral("model-sampling.ini")));
        settings.setLastModelPath(fixture_.model_path());
        settings.setModelSampling(QString(), {{QStringLiteral("maxTokens"), 4},
                                              {QStringLiteral("seed"), QStringLiteral("11")}});
        app.chat.setSettings(&settings);
        const qint64 plain = create_conversation(app, -1);
        app.chat.setConversationId(plain);
        QTRY_VERIFY(app.chat.canSend());
        int row = send_and_wait(app, QStringLiteral("Hi"));
        QVERIFY(row > 0);
        QCOMPARE(role(app.chat, row, "generatedTokens").toInt(), 4);
        QCOMPARE(role(app.chat, row, "seed").toString(), QStringLiteral("11"));
        // A persona's own length is over the model's; the model's seed stays (the persona
        // fixes none).
        QSignalSpy created(&app.personas, &PersonaListModel::personaCreated);
        app.personas.create(QStringLiteral("Longer"), kSystemPrompt, QString(), QString(), false,
                            {{QStringLiteral("maxTokens"), 6}});
        QVERIFY(created.wait(10000));
        const qint64 persona = created.at(0).at(0).toLongLong();
        app.chat.setConversationId(create_conversation(app, persona));
        QTRY_VERIFY(app.chat.canSend());
        row = send_and_wait(app, QStringLiteral("Hi"));
        QVERIFY(row > 0);
        QCOMPARE(role(app.chat, row, "generatedTokens").toInt(), 6);
        QCOMPARE(role(app.chat, row, "seed").toString(), QStringLiteral("11"));
        // A chat's own are over both.
        app.chat.setConversationSampling({{QStringLiteral("maxTokens"), 2}});
        row = send_and_wait(app, QStringLiteral("Again"));
        QVERIFY(row > 0);
        QCOMPARE(role(app.chat, row, "generatedTokens").toInt(), 2);
        // Another model open: its defaults (none), so the app's length and a fresh seed.
        settings.setLastModelPath(fixture_.path(QStringLiteral("another.gguf")));
        settings.setMaxReplyTokens(3);
        app.chat.setConversationId(plain);
        QTRY_VERIFY(app.chat.canSend());
        row = send_and_wait(app, QStringLiteral("And again"));
        QVERIFY(row > 0);
        QCOMPARE(role(app.chat, row, "generatedTokens").toInt(), 3);
        QVERIFY(role(app.chat, row, "seed").toString() != QLatin1String("11"));
        app.chat.setSettings(nullptr);
    }

    // A persona's name is one line of at most 60 characters (3,000 were taken), and its
    // reply settings take top-p, min-p and top-k as the app's settings do.
    void personaNamesAndSamplers() {
        App app;
        START(fixture_, app, QStringLiteral("persona-names.sqlite3"));
        QSignalSpy created(&app.personas, &PersonaListModel::personaCreated);
        app.personas.create(QString(3000, QLatin1Char('x')), kSystemPrompt, QString(), QString(),
                            false,
                            {{QStringLiteral("topP"), 0.8},
                             {QStringLiteral("minP"), 0.05},
                             {QStringLiteral("topK"), 20}});
        QVERIFY(created.wait(10000));
        const qint64 persona = created.at(0).at(0).toLongLong();
        QTRY_VERIFY(app.personas.rowOf(persona) >= 0);
        const int row = app.personas.rowOf(persona);
        QCOMPARE(role(app.personas, row, "name").toString(), QString(60, QLatin1Char('x')));
        const QVariantMap m = role(app.personas, row, "sampling").toMap();
        QCOMPARE(m.value(QStringLiteral("topP")).toDouble(), 0.8);
        QCOMPARE(m.value(QStringLiteral("minP")).toDouble(), 0.05);
        QCOMPARE(m.value(QStringLiteral("topK")).toInt(), 20);
        app.personas.edit(persona, {{QStringLiteral("name"), QStringLiteral("  Two\n lines  ")}});
        QTRY_COMPARE(role(app.personas, app.personas.rowOf(persona), "name").toString(),
                     QStringLiteral("Two lines"));
        QCOMPARE(PersonaListModel::clean_name(QString(59, QLatin1Char('a')) + QStringLiteral("😀")),
                 QString(59, QLatin1Char('a')));  // not half an emoji
    }
};

QTEST_GUILESS_MAIN(TestListModels)
#include "tst_list_models.moc"
