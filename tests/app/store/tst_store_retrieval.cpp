// Looking up passages of documents too long to read whole: how a document is cut
// (chunking.h), that the paragraph answering a question ranks first among a persona's
// documents only, that an edit or a deletion keeps the index in step, and that the
// passages a message was given are kept with it (a fork, an export and an import too).
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "store/chunking.h"
#include "store_test_util.h"

using namespace hearth::store;
using namespace hearth::store::test;

namespace {

// A staff handbook: each section answers one of the questions below, in other words.
const char* kHandbook = R"(# Staff handbook

Welcome to the company. This handbook describes how we work together.

## Leave

### Holidays

Every employee receives twenty-five days of paid holiday each calendar year. Unused days carry over until the end of March.

### Sick leave

If you are ill, tell your manager before ten in the morning. From the fourth day a doctor's note is needed.

## Money

### Expenses

Travel expenses are reimbursed within fourteen days when the receipt is uploaded to the expenses portal.

### Salary

Salaries are paid on the last working day of each month by bank transfer.

## Equipment

Laptops are replaced every three years. A broken laptop is repaired by the IT desk on the second floor.

```
# this is a shell comment, not a heading
ssh desk@it.example
```

## Security

Badges must be worn visibly at all times inside the building. A lost badge is reported to reception at once.
)";

Document doc(Id persona, const QString& name, const QString& text) {
    Document d;
    d.persona_id = persona;
    d.name = name;
    d.format = QStringLiteral("markdown");
    d.text = text;
    return d;
}

// A paragraph of filler prose of about `chars` characters, sentence by sentence.
QString prose(int chars, int seed) {
    static const char* words[] = {"river",  "stone",  "lantern", "harbour", "meadow",
                                  "window", "garden", "orchard", "valley",  "bridge"};
    QString out;
    for (int i = 0; out.size() < chars; ++i) {
        out += QString::fromLatin1(words[(i * 7 + seed) % 10]);
        out += (i % 9 == 8) ? QStringLiteral(". ") : QStringLiteral(" ");
    }
    return out.trimmed() + QLatin1Char('.');
}

}  // namespace

class TestStoreRetrieval : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::optional<Store> store_;
    int n_ = 0;

    Id persona(const QString& name) {
        Persona p;
        p.name = name;
        auto made = store_->create_persona(p);
        return made ? made->id : 0;
    }

  private slots:
    void init() {
        auto store = Store::open(dir_.filePath(QStringLiteral("retrieval-%1.sqlite3").arg(++n_)));
        HEARTH_CHECK(store);
        store_.emplace(std::move(*store));
    }
    void cleanup() { store_.reset(); }

    void cutsAtHeadingsAndParagraphs() {
        const QString text = QString::fromUtf8(kHandbook);
        const auto chunks = chunk_document(text);
        QStringList headings;
        int last_end = 0;
        for (const ChunkSpan& c : chunks) {
            headings << c.heading;
            QVERIFY(c.start >= last_end);  // in order, without overlap
            QVERIFY(c.length > 0 && c.length <= kChunkMax);
            QVERIFY(!text.mid(c.start, c.length).trimmed().isEmpty());
            last_end = c.start + c.length;
        }
        // Each section is a passage of its own, under its headings; the shell comment in
        // the code block is not a heading (the block stays with the equipment section).
        QCOMPARE(headings, (QStringList{QStringLiteral("Staff handbook"),
                                        QStringLiteral("Staff handbook › Leave"),
                                        QStringLiteral("Staff handbook › Leave › Holidays"),
                                        QStringLiteral("Staff handbook › Leave › Sick leave"),
                                        QStringLiteral("Staff handbook › Money"),
                                        QStringLiteral("Staff handbook › Money › Expenses"),
                                        QStringLiteral("Staff handbook › Money › Salary"),
                                        QStringLiteral("Staff handbook › Equipment"),
                                        QStringLiteral("Staff handbook › Security")}));
        const ChunkSpan& equipment = chunks[7];
        QVERIFY(text.mid(equipment.start, equipment.length).contains(QLatin1String("ssh desk")));
        QVERIFY(
            text.mid(chunks[2].start, chunks[2].length).startsWith(QLatin1String("### Holidays")));
    }

    void longParagraphsAreCutAtSentences() {
        // Short paragraphs gather up to the target; one longer than the most is cut.
        QString text;
        for (int i = 0; i < 6; ++i) text += prose(200, i) + QStringLiteral("\n\n");
        text += prose(3000, 9);
        const auto chunks = chunk_document(text);
        QVERIFY(chunks.size() >= 5);
        for (const ChunkSpan& c : chunks) {
            QVERIFY2(c.length <= kChunkMax, qPrintable(QString::number(c.length)));
            const QString part = text.mid(c.start, c.length);
            QVERIFY2(part.endsWith(QLatin1Char('.')), qPrintable(part.right(20)));
            QVERIFY(c.heading.isEmpty());
        }
        // The first chunk holds several of the short paragraphs (about the target).
        QVERIFY(chunks.front().length > 400 && chunks.front().length <= kChunkTarget + 210);
        // Together they cover every word.
        QString joined;
        for (const ChunkSpan& c : chunks) joined += text.mid(c.start, c.length) + QLatin1Char(' ');
        QCOMPARE(joined.simplified().size(), text.simplified().size());
        QVERIFY(chunk_document(QString()).empty());
        QVERIFY(chunk_document(QStringLiteral("\n\n  \n")).empty());
    }

    void aFirstLineAloneIsTheTitle() {
        // A text file's title line is a heading over the whole document...
        const QString titled =
            QStringLiteral("Lighthouse log, winter 1890\n\nFog all week.\n\n") + prose(900, 3);
        const auto chunks = chunk_document(titled);
        QVERIFY(chunks.size() >= 2);
        for (const ChunkSpan& c : chunks)
            QCOMPARE(c.heading, QStringLiteral("Lighthouse log, winter 1890"));
        // ...but not a first sentence, a long first line, or a document of one line.
        for (const QString& text :
             {QStringLiteral("The gate is green.\n\nIt was painted in May."),
              prose(150, 1) + QStringLiteral("\n\nMore."), QStringLiteral("Just a title")})
            for (const ChunkSpan& c : chunk_document(text)) QVERIFY(c.heading.isEmpty());
    }

    void queriesAreWordsAnyOfWhichMatch() {
        QCOMPARE(to_retrieval_query(QStringLiteral("How many days of holiday do I get?")),
                 QStringLiteral("\"many\" OR \"days\" OR \"holiday\" OR \"get\""));
        // Operators and quotes are words like any other, never FTS5 syntax.
        QCOMPARE(to_retrieval_query(QStringLiteral("NEAR(\"a\" OR b*) AND x")),
                 QStringLiteral("\"near\""));
        QVERIFY(to_retrieval_query(QStringLiteral("what is it? ...")).isEmpty());
    }

    void theAnsweringParagraphRanksFirst_data() {
        QTest::addColumn<QString>("question");
        QTest::addColumn<QString>("heading");
        QTest::addRow("holiday") << "How many paid holiday days do we get in a year?"
                                 << "Staff handbook › Leave › Holidays";
        QTest::addRow("ill") << "I'm ill today, who should I tell and by when?"
                             << "Staff handbook › Leave › Sick leave";
        QTest::addRow("receipt") << "When do I get my travel costs back?"
                                 << "Staff handbook › Money › Expenses";
        QTest::addRow("salary") << "On which day is the salary paid?"
                                << "Staff handbook › Money › Salary";
        QTest::addRow("laptop") << "My laptop broke, where do I take it?"
                                << "Staff handbook › Equipment";
        QTest::addRow("badge") << "I lost my badge"
                               << "Staff handbook › Security";
    }
    void theAnsweringParagraphRanksFirst() {
        QFETCH(QString, question);
        QFETCH(QString, heading);
        const Id p = persona(QStringLiteral("HR"));
        auto handbook = store_->add_document(
            doc(p, QStringLiteral("handbook.md"), QString::fromUtf8(kHandbook)));
        HEARTH_CHECK(handbook);
        // Other documents of the persona, about other things, share some words.
        for (int i = 0; i < 20; ++i) {
            auto other = store_->add_document(
                doc(p, QStringLiteral("notes-%1.md").arg(i),
                    prose(1500, i) + QStringLiteral(" The year and the day and the building.")));
            HEARTH_CHECK(other);
        }
        auto all = store_->persona_documents(p);
        HEARTH_CHECK(all);
        std::vector<Id> ids;
        for (const Document& d : *all) ids.push_back(d.id);
        auto found = store_->retrieve(ids, question, 5);
        HEARTH_CHECK(found);
        QVERIFY(!found->empty());
        QCOMPARE(found->front().heading, heading);
        QCOMPARE(found->front().name, QStringLiteral("handbook.md"));
        QCOMPARE(found->front().document_id, handbook->id);
        const QString text = QString::fromUtf8(kHandbook);
        QCOMPARE(text.mid(found->front().start, found->front().text.size()), found->front().text);
    }

    void onlyTheGivenDocumentsAreSearched() {
        const Id a = persona(QStringLiteral("A"));
        const Id b = persona(QStringLiteral("B"));
        auto mine = store_->add_document(
            doc(a, QStringLiteral("a.md"), QStringLiteral("Zebras are striped.")));
        auto theirs = store_->add_document(
            doc(b, QStringLiteral("b.md"), QStringLiteral("Zebras run fast.")));
        HEARTH_CHECK(mine);
        HEARTH_CHECK(theirs);
        const std::vector<Id> ids{mine->id};
        auto found = store_->retrieve(ids, QStringLiteral("zebras"), 5);
        HEARTH_CHECK(found);
        QCOMPARE(found->size(), std::size_t{1});
        QCOMPARE(found->front().text, QStringLiteral("Zebras are striped."));
        auto none = store_->retrieve({}, QStringLiteral("zebras"), 5);
        HEARTH_CHECK(none);
        QVERIFY(none->empty());
        none = store_->retrieve(ids, QStringLiteral("the of and"), 5);  // no word to look up
        HEARTH_CHECK(none);
        QVERIFY(none->empty());
    }

    void editsAndDeletionsKeepTheIndexInStep() {
        const Id p = persona(QStringLiteral("P"));
        auto d = store_->add_document(
            doc(p, QStringLiteral("d.md"), QStringLiteral("Okapis eat leaves.")));
        HEARTH_CHECK(d);
        const std::vector<Id> ids{d->id};
        HEARTH_CHECK(store_->update_document_text(d->id, QStringLiteral("Tapirs eat fruit."),
                                                  std::nullopt, std::nullopt));
        auto old = store_->retrieve(ids, QStringLiteral("okapis"), 5);
        HEARTH_CHECK(old);
        QVERIFY(old->empty());
        auto now = store_->retrieve(ids, QStringLiteral("tapir"), 5);  // stemmed: tapirs
        HEARTH_CHECK(now);
        QCOMPARE(now->size(), std::size_t{1});
        HEARTH_CHECK(store_->delete_persona(p));  // its documents and their passages go
        auto left = store_->database().query_int("SELECT count(*) FROM document_chunks");
        HEARTH_CHECK(left);
        QCOMPARE(*left, 0);
        HEARTH_CHECK(store_->database().exec(
            "INSERT INTO document_chunks_fts (document_chunks_fts) VALUES ('integrity-check')"));
        auto matches = store_->database().query_int(
            "SELECT count(*) FROM document_chunks_fts WHERE document_chunks_fts MATCH 'tapir'");
        HEARTH_CHECK(matches);
        QCOMPARE(*matches, 0);
    }

    void anOwnersDocumentsAreLookedUpTogether() {
        const Id p = persona(QStringLiteral("P"));
        const Id q = persona(QStringLiteral("Q"));
        for (Id owner : {p, p, q})
            HEARTH_CHECK(
                store_->add_document(doc(owner, QStringLiteral("x.md"), QStringLiteral("x"))));
        HEARTH_CHECK(store_->set_documents_lookup(DocumentOwner::Persona, p, true));
        auto mine = store_->persona_documents(p);
        auto theirs = store_->persona_documents(q);
        HEARTH_CHECK(mine);
        HEARTH_CHECK(theirs);
        for (const Document& d : *mine) QVERIFY(d.lookup);
        QVERIFY(!theirs->front().lookup);
        // A chat of P searches P's looked-up documents and its own looked-up ones only.
        Conversation draft;
        draft.persona_id = p;
        auto chat = store_->create_conversation(draft);
        HEARTH_CHECK(chat);
        Document own = doc(p, QStringLiteral("own.md"), QStringLiteral("own"));
        own.persona_id.reset();
        own.conversation_id = chat->id;
        auto added = store_->add_document(own);
        HEARTH_CHECK(added);
        auto ids = store_->lookup_documents(chat->id);
        HEARTH_CHECK(ids);
        QCOMPARE(ids->size(), std::size_t{2});  // not its own yet: read whole
        HEARTH_CHECK(store_->set_documents_lookup(DocumentOwner::Conversation, chat->id, true));
        ids = store_->lookup_documents(chat->id);
        HEARTH_CHECK(ids);
        QCOMPARE(*ids, (std::vector<Id>{(*mine)[0].id, (*mine)[1].id, added->id}));
    }

    void aMessageKeepsItsPassages() {
        const Id p = persona(QStringLiteral("P"));
        Conversation draft;
        draft.title = QStringLiteral("Chat");
        draft.persona_id = p;
        auto c = store_->create_conversation(draft);
        HEARTH_CHECK(c);
        MessageDraft m;
        m.text = QStringLiteral("How many holiday days?");
        m.sources = {Source{7, QStringLiteral("handbook.md"), QStringLiteral("Leave › Holidays"),
                            QStringLiteral("/home/u/handbook.md"), 120,
                            QStringLiteral("Every employee receives \"25\" days.")},
                     Source{8, QStringLiteral("faq.pdf"), {}, {}, 0, QStringLiteral("Q: days?")}};
        auto sent = store_->append_message(c->id, m);
        HEARTH_CHECK(sent);
        QCOMPARE(sent->sources, m.sources);
        auto thread = store_->active_thread(c->id);
        HEARTH_CHECK(thread);
        QCOMPARE(thread->front().message.sources, m.sources);
        // A fork keeps them; an export and an import too (without this history's ids).
        auto fork = store_->fork_conversation(sent->id);
        HEARTH_CHECK(fork);
        auto forked = store_->active_thread(fork->id);
        HEARTH_CHECK(forked);
        QCOMPARE(forked->front().message.sources, m.sources);
        auto json = store_->export_conversation(c->id, ExportFormat::Json);
        HEARTH_CHECK(json);
        auto imported = store_->import_json(*json);
        HEARTH_CHECK(imported);
        auto back = store_->active_thread(*imported);
        HEARTH_CHECK(back);
        std::vector<Source> expected = m.sources;
        for (Source& s : expected) s.document_id = 0;
        QCOMPARE(back->front().message.sources, expected);
        // A damaged column is an error that names the message, not a crash.
        HEARTH_CHECK(store_->database().exec("UPDATE messages SET sources = '{' WHERE id = 1"));
        HEARTH_CHECK_ERROR(store_->message(1), "message 1");
    }
};

QTEST_GUILESS_MAIN(TestStoreRetrieval)
#include "tst_store_retrieval.moc"
