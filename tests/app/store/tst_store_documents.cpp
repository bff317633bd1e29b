// Documents a persona or a conversation holds: added in order, read with their persona,
// removed with the rest moving up, refreshed from their file, deleted with their owner,
// copied by a fork and by a backup's restore; and what is refused.
#include <QTest>

#include "store_test_util.h"

using namespace hearth::store;
using namespace hearth::store::test;

namespace {

Document doc(const QString& name, const QString& text) {
    Document d;
    d.name = name;
    d.format = QStringLiteral("markdown");
    d.text = text;
    return d;
}

QStringList names(const std::vector<Document>& documents) {
    QStringList out;
    for (const Document& d : documents)
        out << d.name + QLatin1Char('@') + QString::number(d.position);
    return out;
}

}  // namespace

class TestStoreDocuments : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::optional<Store> store_;
    int n_ = 0;

    Id persona(const QString& name) {
        Persona p;
        p.name = name;
        p.system_prompt = QStringLiteral("You answer from the handbook.");
        auto made = store_->create_persona(p);
        return made ? made->id : 0;
    }

  private slots:
    void init() {
        auto store = Store::open(dir_.filePath(QStringLiteral("documents-%1.sqlite3").arg(++n_)));
        HEARTH_CHECK(store);
        store_.emplace(std::move(*store));
    }
    void cleanup() { store_.reset(); }

    void aPersonasDocumentsInOrder() {
        const Id p = persona(QStringLiteral("Librarian"));
        QVERIFY(p > 0);
        for (const char* name : {"a.md", "b.pdf", "c.txt"}) {
            Document d = doc(QString::fromLatin1(name), QStringLiteral("Text of %1").arg(name));
            d.persona_id = p;
            d.source_path = QStringLiteral("/home/u/") + QString::fromLatin1(name);
            d.file_size = 123;
            d.file_modified = QDateTime::fromMSecsSinceEpoch(1'700'000'000'000);
            auto added = store_->add_document(d);
            HEARTH_CHECK(added);
            QCOMPARE(added->file_size, std::optional<std::int64_t>(123));
            QCOMPARE(added->file_modified->toMSecsSinceEpoch(), 1'700'000'000'000);
        }
        auto read = store_->persona(p);
        HEARTH_CHECK(read);
        QCOMPARE(names(read->documents), (QStringList{"a.md@0", "b.pdf@1", "c.txt@2"}));
        QCOMPARE(read->documents[1].text, QStringLiteral("Text of b.pdf"));
        QCOMPARE(read->documents[1].source_path, QStringLiteral("/home/u/b.pdf"));
        auto all = store_->personas();
        HEARTH_CHECK(all);
        QCOMPARE(all->front().documents.size(), std::size_t{3});

        // Removing one: the rest move up, so a new one goes last.
        HEARTH_CHECK(store_->delete_document(read->documents[0].id));
        Document d = doc(QStringLiteral("d.html"), QStringLiteral("New"));
        d.persona_id = p;
        HEARTH_CHECK(store_->add_document(d));
        auto now = store_->persona_documents(p);
        HEARTH_CHECK(now);
        QCOMPARE(names(*now), (QStringList{"b.pdf@0", "c.txt@1", "d.html@2"}));

        // Read again from its file: new text, the file's new size and time.
        auto refreshed =
            store_->update_document_text(now->at(1).id, QStringLiteral("Edited"), 99, std::nullopt);
        HEARTH_CHECK(refreshed);
        QCOMPARE(refreshed->text, QStringLiteral("Edited"));
        QCOMPARE(refreshed->file_size, std::optional<std::int64_t>(99));
        QVERIFY(!refreshed->file_modified);
        QCOMPARE(refreshed->position, 1);

        // A persona's update leaves them; its deletion takes them.
        Persona edited = *store_->persona(p);
        edited.documents.clear();
        edited.system_prompt = QStringLiteral("Changed");
        HEARTH_CHECK(store_->update_persona(edited));
        QCOMPARE(store_->persona(p)->documents.size(), std::size_t{3});
        const Id kept = now->at(0).id;
        HEARTH_CHECK(store_->delete_persona(p));
        HEARTH_CHECK_ERROR(store_->document(kept), "no document");
    }

    void refusesWhatItCannotKeep() {
        const Id p = persona(QStringLiteral("P"));
        Document d = doc(QStringLiteral("x.md"), QStringLiteral("text"));
        HEARTH_CHECK_ERROR(store_->add_document(d), "persona or to a conversation");
        d.persona_id = p;
        d.conversation_id = 1;
        HEARTH_CHECK_ERROR(store_->add_document(d), "persona or to a conversation");
        d.conversation_id.reset();
        d.persona_id = p + 100;
        HEARTH_CHECK_ERROR(store_->add_document(d), "no persona");
        d.persona_id = p;
        d.text = QStringLiteral("  \n ");
        HEARTH_CHECK_ERROR(store_->add_document(d), "needs some text");
        d.text = QString(kMaxDocumentChars + 1, QLatin1Char('a'));
        HEARTH_CHECK_ERROR(store_->add_document(d), "at most 4000000 characters");
        d.text = QStringLiteral("ok");
        d.name = QStringLiteral(" ");
        HEARTH_CHECK_ERROR(store_->add_document(d), "needs a name");
        d.name = QStringLiteral("x.md");
        d.format.clear();
        HEARTH_CHECK_ERROR(store_->add_document(d), "format");
        HEARTH_CHECK_ERROR(store_->update_document_text(12345, QStringLiteral("t"), {}, {}),
                           "no document");
        HEARTH_CHECK_ERROR(store_->delete_document(12345), "no document");
        QCOMPARE(store_->persona_documents(p)->size(), std::size_t{0});  // nothing half-added
    }

    // A conversation's own: deleted with it, copied by a fork (its prompt is the original's).
    void aConversationsDocumentsAndItsForks() {
        auto c = store_->create_conversation(titled(QStringLiteral("Report")));
        HEARTH_CHECK(c);
        Document d = doc(QStringLiteral("notes.txt"), QStringLiteral("Meeting notes"));
        d.conversation_id = c->id;
        auto added = store_->add_document(d);
        HEARTH_CHECK(added);
        auto m = store_->append_message(c->id, draft(Role::User, QStringLiteral("Summarise")));
        HEARTH_CHECK(m);
        auto fork = store_->fork_conversation(m->id);
        HEARTH_CHECK(fork);
        auto copied = store_->conversation_documents(fork->id);
        HEARTH_CHECK(copied);
        QCOMPARE(names(*copied), QStringList{"notes.txt@0"});
        QCOMPARE(copied->front().text, QStringLiteral("Meeting notes"));
        QVERIFY(copied->front().id != added->id);
        HEARTH_CHECK(store_->delete_conversation(c->id));
        HEARTH_CHECK_ERROR(store_->document(added->id), "no document");
        QCOMPARE(store_->conversation_documents(fork->id)->size(), std::size_t{1});
    }

    // A restored backup brings a persona with its documents.
    void aBackupRestoresThem() {
        const Id p = persona(QStringLiteral("Librarian"));
        for (const char* name : {"one.md", "two.md"}) {
            Document d = doc(QString::fromLatin1(name), QStringLiteral("about ") + name);
            d.persona_id = p;
            HEARTH_CHECK(store_->add_document(d));
        }
        const QString backup = dir_.filePath(QStringLiteral("backup-%1.sqlite3").arg(n_));
        HEARTH_CHECK(store_->backup_to(backup, true));
        auto fresh = Store::open(dir_.filePath(QStringLiteral("fresh-%1.sqlite3").arg(n_)));
        HEARTH_CHECK(fresh);
        auto report = fresh->restore_from(backup);
        HEARTH_CHECK(report);
        QCOMPARE(report->personas_added, 1);
        auto restored = fresh->personas();
        HEARTH_CHECK(restored);
        QCOMPARE(names(restored->front().documents), (QStringList{"one.md@0", "two.md@1"}));
        QCOMPARE(restored->front().documents[1].text, QStringLiteral("about two.md"));
    }
};

QTEST_GUILESS_MAIN(TestStoreDocuments)
#include "tst_store_documents.moc"
