// A persona's documents in the app: read from files into its prefix, their cost counted
// with the open model's tokenizer, looked up per message where the conversation would have
// too little room, served from the prefix cache to every new chat of the persona, read again from
// the first changed block on when the file changes, copied by duplicate, removed.
#include <QFile>
#include <QSignalSpy>
#include <QTest>

#include "app_fixture.h"
#include "core/conversation_documents.h"
#include "core/document_lookup.h"
#include "core/persona_prefix.h"

namespace {

bool write_file(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

// Text the synthetic tokenizer reads at about one token a character.
QByteArray handbook(int sentences) {
    QByteArray out("# Handbook\n\n");
    for (int i = 0; i < sentences; ++i)
        out += "Rule " + QByteArray::number(i) + ": close the gate at dusk.\n";
    return out;
}

// The same rules, each under a heading of its own (a passage each, that a small context
// has room for).
QByteArray manual(int sentences) {
    QByteArray out("# Manual\n\n");
    for (int i = 0; i < sentences; ++i)
        out += "## Rule " + QByteArray::number(i) + "\n\nClose the gate at dusk.\n\n";
    return out;
}

QVariantList documents(App& app, qint64 persona) {
    return role(app.personas, app.personas.rowOf(persona), "documents").toList();
}

}  // namespace

class TestPersonaDocuments : public QObject {
    Q_OBJECT
    AppFixture fixture_;

    qint64 make_persona(App& app, const QString& name) {
        QSignalSpy created(&app.personas, &PersonaListModel::personaCreated);
        app.personas.create(name, kSystemPrompt);
        if (!created.wait(10000)) return -1;
        const qint64 id = created.at(0).at(0).toLongLong();
        return QTest::qWaitFor([&] { return app.personas.rowOf(id) >= 0; }, 10000) ? id : -1;
    }
    // Adds files and waits for the report: {added, problems}.
    std::pair<int, QStringList> add(App& app, qint64 persona, const QStringList& files) {
        QSignalSpy done(&app.personas, &PersonaListModel::documentsAdded);
        QVariantList list;
        for (const QString& f : files) list << f;
        app.personas.addDocuments(persona, list);
        if (!done.wait(20000)) return {-1, {}};
        settle(app);
        return {done.at(0).at(1).toInt(), done.at(0).at(2).toStringList()};
    }
    // A new chat with the persona, one question; the reply's row.
    int new_chat(App& app, qint64 persona) {
        app.chat.setConversationId(create_conversation(app, persona));
        if (!QTest::qWaitFor([&] { return app.chat.canSend(); }, 10000)) return -1;
        return send_and_wait(app, QStringLiteral("What is rule 3?"));
    }

  private slots:
    void documentsJoinThePrefixAndItsCache() {
        App app;
        START(fixture_, app, QStringLiteral("documents-cache.sqlite3"));
        app.chat.setMaxReplyTokens(2);
        const qint64 persona = make_persona(app, QStringLiteral("Keeper"));
        QVERIFY(persona > 0);
        const QString file = fixture_.path(QStringLiteral("handbook.md"));
        QVERIFY(write_file(file, handbook(8)));
        const auto [added, problems] = add(app, persona, {file});
        QCOMPARE(added, 1);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
        QVariantList docs = documents(app, persona);
        QCOMPARE(docs.size(), 1);
        QVariantMap d = docs.front().toMap();
        QCOMPARE(d.value("name").toString(), QStringLiteral("handbook.md"));
        QCOMPARE(d.value("format").toString(), QStringLiteral("markdown"));
        QCOMPARE(d.value("changed").toBool(), false);

        // Its cost with the open model: the prefix is the instructions and the document.
        const QVariantMap cost = app.personas.prefixCost(persona);
        const int prefix = cost.value("tokens").toInt();
        const int instructions = cost.value("instructions").toInt();
        const int document =
            cost.value("documents").toList().front().toMap().value("tokens").toInt();
        QVERIFY(instructions > 0 && document > 200);
        QVERIFY2(prefix >= instructions + document, qPrintable(QString::number(prefix)));
        QCOMPARE(cost.value("context").toInt(), app.bridge.contextLength());
        QCOMPARE(cost.value("room").toInt(), app.bridge.contextLength() - prefix);
        QVERIFY(cost.value("fits").toBool());

        // The first chat computes the prefix; every later one takes it from the cache and
        // computes its question only.
        int row = new_chat(app, persona);
        QVERIFY(row > 0);
        QVERIFY(role(app.chat, row, "promptTokensComputed").toInt() >= prefix);
        for (int chat = 0; chat < 2; ++chat) {
            row = new_chat(app, persona);
            QVERIFY(row > 0);
            const int cached = role(app.chat, row, "promptTokensCached").toInt();
            const int computed = role(app.chat, row, "promptTokensComputed").toInt();
            QVERIFY2(cached >= prefix - 16 && computed < 40,
                     qPrintable(QStringLiteral("cached %1, computed %2, prefix %3")
                                    .arg(cached)
                                    .arg(computed)
                                    .arg(prefix)));
        }

        // The file changes at its end: the persona says so; read again, a new chat computes
        // from the changed block on, the blocks before it still come from the cache.
        QVERIFY(write_file(file, handbook(8) + "Rule 8: feed the cat.\n"));
        QTRY_VERIFY_WITH_TIMEOUT(documents(app, persona).front().toMap().value("changed").toBool(),
                                 10000);
        app.personas.refreshDocument(d.value("documentId").toLongLong());
        QTRY_VERIFY_WITH_TIMEOUT(
            documents(app, persona).front().toMap().value("characters").toInt() >
                d.value("characters").toInt(),
            10000);
        QVERIFY(!documents(app, persona).front().toMap().value("changed").toBool());
        const int new_prefix = app.personas.prefixCost(persona).value("tokens").toInt();
        QVERIFY(new_prefix > prefix);
        row = new_chat(app, persona);
        QVERIFY(row > 0);
        const int cached = role(app.chat, row, "promptTokensCached").toInt();
        const int computed = role(app.chat, row, "promptTokensComputed").toInt();
        QVERIFY2(cached >= prefix - 48 && computed < new_prefix - prefix + 80,
                 qPrintable(QStringLiteral("cached %1, computed %2, prefix %3 -> %4")
                                .arg(cached)
                                .arg(computed)
                                .arg(prefix)
                                .arg(new_prefix)));
    }

    // Documents that would leave the conversation too little room are looked up instead:
    // the prefix is the instructions alone, each message is given the passages that
    // match it (kept with it, shown under the reply), and the history stays cached.
    void tooLongToReadWholeIsLookedUp() {
        App app;
        START(fixture_, app, QStringLiteral("documents-room.sqlite3"));
        app.chat.setMaxReplyTokens(2);
        const qint64 persona = make_persona(app, QStringLiteral("Full"));
        QVERIFY(persona > 0);
        const int context = app.bridge.contextLength();
        // Room for the conversation: half the synthetic model's small context.
        QCOMPARE(app.personas.conversationRoom(), PersonaListModel::kDefaultConversationRoom);
        const QString small = fixture_.path(QStringLiteral("small.txt"));
        const QString big = fixture_.path(QStringLiteral("big.txt"));
        const QString binary = fixture_.path(QStringLiteral("binary.txt"));
        QVERIFY(write_file(small, "The gate is painted green.\n"));
        QVERIFY(write_file(big, manual(context / 45)));  // about 2/3 of the context
        QVERIFY(write_file(binary, QByteArray("\x00\x01\x02\xff\xfe", 5).repeated(50)));
        const auto [added, problems] = add(app, persona, {big, binary, small});
        QVERIFY2(added == 2, qPrintable(problems.join('\n')));  // not the binary file
        QCOMPARE(problems.size(), 2);
        QVERIFY2(problems.join('\n').contains(QStringLiteral("binary.txt")),
                 qPrintable(problems.join('\n')));
        QVERIFY2(problems.join('\n').contains(QStringLiteral("too long to read whole")) &&
                     problems.join('\n').contains(
                         QStringLiteral("of the model's %1 tokens").arg(context)),
                 qPrintable(problems.join('\n')));
        QCOMPARE(documents(app, persona).size(), 2);
        QVariantMap cost = app.personas.prefixCost(persona);
        QVERIFY(cost.value("lookup").toBool());
        QVERIFY(cost.value("fits").toBool());
        QCOMPARE(cost.value("tokens").toInt(), cost.value("instructions").toInt());

        // A chat: the message is given the passage that answers it, shown as its source.
        app.chat.setConversationId(create_conversation(app, persona));
        QVERIFY(QTest::qWaitFor([&] { return app.chat.canSend(); }, 10000));
        int row = send_and_wait(app, QStringLiteral("Which colour is the gate painted?"));
        QVERIFY(row > 0);
        QVariantList sources = role(app.chat, row, "sources").toList();
        QVERIFY(!sources.isEmpty());
        QVariantMap first = sources.front().toMap();
        QCOMPARE(first.value("name").toString(), QStringLiteral("small.txt"));
        QCOMPARE(first.value("snippet").toString(), QStringLiteral("The gate is painted green."));
        QCOMPARE(first.value("path").toString(), small);
        QVERIFY(first.value("exists").toBool());
        QVERIFY(role(app.chat, row - 1, "sources").toList().isEmpty());  // a reply's only
        // The model read the passages with the message: more than the question's tokens.
        const int prompt = role(app.chat, row, "promptTokensComputed").toInt() +
                           role(app.chat, row, "promptTokensCached").toInt();
        QVERIFY2(prompt > cost.value("tokens").toInt() + 20, qPrintable(QString::number(prompt)));
        // The sources shown are the passages the model read: the message's stored ids are
        // its text with exactly those passages.
        std::optional<hearth::store::Message> asked;
        app.store.run<hearth::store::Message>(
            [id = role(app.chat, row - 1, "messageId").toLongLong()](hearth::store::Store& s) {
                return s.message(id);
            },
            [&](hearth::Result<hearth::store::Message> m) {
                if (m) asked = *m;
            });
        QTRY_VERIFY(asked.has_value());
        QCOMPARE(asked->sources.size(), static_cast<std::size_t>(sources.size()));
        for (qsizetype i = 0; i < sources.size(); ++i) {
            const QVariantMap shown = sources[i].toMap();
            const auto& given = asked->sources[static_cast<std::size_t>(i)];
            QCOMPARE(shown.value("name").toString(), given.name);
            QCOMPARE(shown.value("heading").toString(), given.heading);
            // (its start, after the heading line the section already names)
            QVERIFY(given.text.simplified().contains(
                shown.value("snippet").toString().remove(QChar(0x2026))));
        }
        QCOMPARE(asked->token_ids,
                 app.local.encode_content(hearth::chat::Role::User,
                                          hearth::app::with_passages(asked->text, asked->sources)));

        // A regenerated reply is given the same passages, from the cache.
        QVERIFY(app.chat.regenerate());
        QTRY_VERIFY_WITH_TIMEOUT(!app.chat.generating() && app.chat.canSend(), 20000);
        row = app.chat.count() - 1;
        QCOMPARE(role(app.chat, row, "sources").toList(), sources);
        QVERIFY2(role(app.chat, row, "promptTokensComputed").toInt() < 16,
                 qPrintable(role(app.chat, row, "promptTokensComputed").toString()));

        // The next turn's passages come after the history, which stays cached.
        row = send_and_wait(app, QStringLiteral("And rule 7 of the handbook about dusk?"));
        QVERIFY(row > 0);
        sources = role(app.chat, row, "sources").toList();
        QVERIFY(!sources.isEmpty());
        QCOMPARE(sources.front().toMap().value("name").toString(), QStringLiteral("big.txt"));
        QVERIFY2(role(app.chat, row, "promptTokensCached").toInt() >= prompt,
                 qPrintable(role(app.chat, row, "promptTokensCached").toString()));

        // Without the big one they fit again, and are read whole with the instructions.
        qint64 big_id = -1;
        for (const QVariant& d : documents(app, persona))
            if (d.toMap().value("name").toString() == QLatin1String("big.txt"))
                big_id = d.toMap().value("documentId").toLongLong();
        app.personas.removeDocument(big_id);
        QTRY_COMPARE(documents(app, persona).size(), 1);
        QTRY_VERIFY(!app.personas.prefixCost(persona).value("lookup").toBool());
        cost = app.personas.prefixCost(persona);
        QVERIFY(cost.value("tokens").toInt() > cost.value("instructions").toInt());
    }

    // A chat's own documents follow its persona's in its prefix: the persona's part is
    // still shared with its other chats; too long, they are looked up like a persona's.
    void aChatsOwnDocuments() {
        App app;
        START(fixture_, app, QStringLiteral("documents-chat.sqlite3"));
        app.chat.setMaxReplyTokens(2);
        const qint64 persona = make_persona(app, QStringLiteral("Clerk"));
        QVERIFY(persona > 0);
        // A first chat with the persona alone: its prefix is cached.
        QVERIFY(new_chat(app, persona) > 0);
        const qint64 chat = create_conversation(app, persona);
        app.chat.setConversationId(chat);
        ConversationDocuments documents;
        documents.setStoreObject(&app.store);
        documents.setBridge(&app.bridge);
        documents.setConversationId(chat);
        const QString notes = fixture_.path(QStringLiteral("notes.md"));
        QVERIFY(write_file(notes, handbook(6)));
        QSignalSpy added(&documents, &ConversationDocuments::documentsAdded);
        documents.addDocuments(chat, {notes});
        QVERIFY(added.wait(20000));
        QCOMPARE(added.at(0).at(1).toInt(), 1);
        QTRY_COMPARE(documents.count(), 1);
        QCOMPARE(documents.documentsOf(chat).front().toMap().value("name").toString(),
                 QStringLiteral("notes.md"));
        QVERIFY(documents.documentsOf(chat + 1).isEmpty());
        const QVariantMap cost = documents.prefixCost(chat);
        const int prefix = cost.value("tokens").toInt();
        const int persona_part = cost.value("instructions").toInt();
        QVERIFY2(prefix > persona_part + 100 && !cost.value("lookup").toBool(),
                 qPrintable(QStringLiteral("%1 %2").arg(prefix).arg(persona_part)));
        // The reply reads the persona's part from the cache and computes the chat's own.
        QVERIFY(QTest::qWaitFor([&] { return app.chat.canSend(); }, 10000));
        const int row = send_and_wait(app, QStringLiteral("What is rule 2?"));
        QVERIFY(row > 0);
        const int cached = role(app.chat, row, "promptTokensCached").toInt();
        const int computed = role(app.chat, row, "promptTokensComputed").toInt();
        QVERIFY2(cached >= persona_part - 16 && computed >= prefix - persona_part,
                 qPrintable(QStringLiteral("cached %1, computed %2").arg(cached).arg(computed)));

        // Too long for the room: looked up, and the chat's messages given its passages.
        const QString big = fixture_.path(QStringLiteral("ledger.md"));
        QVERIFY(write_file(big, manual(app.bridge.contextLength() / 45)));
        added.clear();
        documents.addDocuments(chat, {big});
        QVERIFY(added.wait(20000));
        QVERIFY2(added.at(0).at(2).toStringList().join(' ').contains("too long to read whole"),
                 qPrintable(added.at(0).at(2).toStringList().join(' ')));
        QTRY_COMPARE(documents.count(), 2);
        QVERIFY(documents.prefixCost(chat).value("lookup").toBool());
        const int next = send_and_wait(app, QStringLiteral("Which rule is about dusk?"));
        QVERIFY(next > 0);
        QVERIFY(!role(app.chat, next, "sources").toList().isEmpty());
        // Removing the long one reads the rest whole again.
        qint64 big_id = -1;
        for (const QVariant& d : documents.documentsOf(chat))
            if (d.toMap().value("name").toString() == QLatin1String("ledger.md"))
                big_id = d.toMap().value("documentId").toLongLong();
        documents.removeDocument(big_id);
        QTRY_COMPARE(documents.count(), 1);
        QTRY_VERIFY(!documents.prefixCost(chat).value("lookup").toBool());
    }

    void duplicatedAndRemoved() {
        App app;
        START(fixture_, app, QStringLiteral("documents-copy.sqlite3"));
        const qint64 persona = make_persona(app, QStringLiteral("Source"));
        QVERIFY(persona > 0);
        const QString a = fixture_.path(QStringLiteral("a.md"));
        const QString b = fixture_.path(QStringLiteral("b.md"));
        QVERIFY(write_file(a, "Alpha.\n"));
        QVERIFY(write_file(b, "Beta.\n"));
        QCOMPARE(add(app, persona, {a, b}).first, 2);
        QSignalSpy created(&app.personas, &PersonaListModel::personaCreated);
        app.personas.duplicate(persona);
        QVERIFY(created.wait(10000));
        const qint64 copy = created.at(0).at(0).toLongLong();
        QTRY_VERIFY(app.personas.rowOf(copy) >= 0);
        QStringList names;
        for (const QVariant& d : documents(app, copy)) names << d.toMap().value("name").toString();
        QCOMPARE(names, (QStringList{"a.md", "b.md"}));
        app.personas.removeDocument(
            documents(app, persona).front().toMap().value("documentId").toLongLong());
        QTRY_COMPARE(documents(app, persona).size(), 1);
        QCOMPARE(documents(app, persona).front().toMap().value("name").toString(),
                 QStringLiteral("b.md"));
        QCOMPARE(documents(app, copy).size(), 2);  // the copy keeps its own
    }

    // The layout is the instructions, then each document in order, nothing else: the same
    // documents give the same text (and so the same tokens) anywhere.
    void theLayoutIsStable() {
        hearth::store::Document one;
        one.name = QStringLiteral("a \"quoted\" <name>.md");
        one.text = QStringLiteral("First.\n\n");
        hearth::store::Document two;
        two.name = QStringLiteral("b.md");
        two.text = QStringLiteral("Second.");
        const std::vector<hearth::store::Document> list{one, two};
        const QString prefix = hearth::app::persona_prefix(QStringLiteral("Be kind.\n"), list);
        QCOMPARE(prefix, QStringLiteral("Be kind.\n\nDocuments for reference:\n\n"
                                        "<document name=\"a &quot;quoted&quot; &lt;name&gt;.md\">\n"
                                        "First.\n</document>\n\n<document name=\"b.md\">\nSecond.\n"
                                        "</document>"));
        QCOMPARE(hearth::app::persona_prefix(QStringLiteral("Be kind."), {}),
                 QStringLiteral("Be kind."));
        // A conversation's own come after the persona's.
        QVERIFY(hearth::app::persona_prefix(QString(), std::span(&one, 1), std::span(&two, 1))
                    .endsWith(hearth::app::document_block(two)));
    }
};

QTEST_GUILESS_MAIN(TestPersonaDocuments)
#include "tst_persona_documents.moc"
