// The whole history: a backup is a readable copy of the database; restoring it into
// another history adds its personas and chats (every branch, pinned and archived as they
// were) beside what is there, only once however often it is restored, and refuses files
// that are not a Hearth history.
#include <QTest>

#include "store_test_util.h"

using namespace hearth::store;
using namespace hearth::store::test;

class TestStoreBackup : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    QString path(const QString& name) const { return dir_.filePath(name); }

    static Persona persona(const QString& name, const QString& prompt) {
        Persona p;
        p.name = name;
        p.system_prompt = prompt;
        return p;
    }

    // Two personas (one without chats) and three chats: one with an edited message (two
    // branches), a pinned one and an archived one.
    static void fill(Store& s) {
        auto lonely =
            s.create_persona(persona(QStringLiteral("Lonely"), QStringLiteral("No chats.")));
        HEARTH_CHECK(lonely);
        auto ada = s.create_persona(persona(QStringLiteral("Ada"), QStringLiteral("You are Ada.")));
        HEARTH_CHECK(ada);
        Conversation c = titled(QStringLiteral("Branches"));
        c.persona_id = ada->id;
        auto branches = s.create_conversation(c);
        HEARTH_CHECK(branches);
        auto q = s.append_message(branches->id, draft(Role::User, QStringLiteral("first try")));
        HEARTH_CHECK(q);
        HEARTH_CHECK(s.append_message(branches->id, draft(Role::Assistant, QStringLiteral("a1"))));
        HEARTH_CHECK(s.edit_message(q->id, draft(Role::User, QStringLiteral("second try"))));
        HEARTH_CHECK(s.append_message(branches->id, draft(Role::Assistant, QStringLiteral("a2"))));
        Conversation pinned = titled(QStringLiteral("Pinned"));
        pinned.pinned = true;
        auto p = s.create_conversation(pinned);
        HEARTH_CHECK(p);
        HEARTH_CHECK(s.append_message(p->id, draft(Role::User, QStringLiteral("keep me on top"))));
        Conversation archived = titled(QStringLiteral("Archived"));
        archived.archived = true;
        HEARTH_CHECK(s.create_conversation(archived));
    }

    static std::vector<Conversation> every_conversation(Store& s) {
        ConversationFilter all;
        all.archived = ConversationFilter::Archived::Include;
        auto list = s.conversations(all);
        return list ? *list : std::vector<Conversation>{};
    }

  private slots:
    void backupAndRestore() {
        auto original = Store::open(path(QStringLiteral("original.sqlite3")));
        HEARTH_CHECK(original);
        fill(*original);
        const QString backup = path(QStringLiteral("backup.hearth"));
        HEARTH_CHECK(original->backup_to(backup, false));
        HEARTH_CHECK_ERROR(original->backup_to(backup, false), "exists");
        HEARTH_CHECK(original->backup_to(backup, true));
        HEARTH_CHECK_ERROR(original->backup_to(original->path(), true), "chat history");
        QVERIFY(!QFile::exists(
            backup + QStringLiteral(".partial-%1").arg(QCoreApplication::applicationPid())));

        // Another history with a chat of its own and the same "Ada".
        auto other = Store::open(path(QStringLiteral("other.sqlite3")));
        HEARTH_CHECK(other);
        HEARTH_CHECK(
            other->create_persona(persona(QStringLiteral("Ada"), QStringLiteral("You are Ada."))));
        auto mine = other->create_conversation(titled(QStringLiteral("Mine")));
        HEARTH_CHECK(mine);
        auto report = other->restore_from(backup);
        HEARTH_CHECK(report);
        QCOMPARE(report->conversations_added, 3);
        QCOMPARE(report->conversations_present, 0);
        QCOMPARE(report->personas_added, 1);  // Ada was there already
        auto personas = other->personas();
        HEARTH_CHECK(personas);
        QCOMPARE(personas->size(), std::size_t{2});

        const auto chats = every_conversation(*other);
        QCOMPARE(chats.size(), std::size_t{4});
        std::map<QString, Conversation> by_title;
        for (const Conversation& c : chats) by_title[c.title] = c;
        QVERIFY(by_title.count(QStringLiteral("Mine")));
        QVERIFY(by_title[QStringLiteral("Pinned")].pinned);
        QVERIFY(by_title[QStringLiteral("Archived")].archived);
        QVERIFY(by_title[QStringLiteral("Branches")].persona_id);
        auto thread = other->active_thread(by_title[QStringLiteral("Branches")].id);
        HEARTH_CHECK(thread);
        QCOMPARE(thread->size(), std::size_t{2});
        QCOMPARE(thread->front().message.text, QStringLiteral("second try"));
        QCOMPARE(thread->front().variant_count, 2);  // the first try came too
        auto all = other->all_messages(by_title[QStringLiteral("Branches")].id);
        HEARTH_CHECK(all);
        QCOMPARE(all->size(), std::size_t{4});

        // Again: nothing new.
        report = other->restore_from(backup);
        HEARTH_CHECK(report);
        QCOMPARE(report->conversations_added, 0);
        QCOMPARE(report->conversations_present, 3);
        QCOMPARE(report->personas_added, 0);
        QCOMPARE(every_conversation(*other).size(), std::size_t{4});
        // The backup is untouched by reading it.
        auto reread = Store::open(backup);
        HEARTH_CHECK(reread);
        QCOMPARE(every_conversation(*reread).size(), std::size_t{3});
    }

    void notABackup() {
        auto store = Store::open(path(QStringLiteral("target.sqlite3")));
        HEARTH_CHECK(store);
        const QString text = path(QStringLiteral("notes.txt"));
        QVERIFY(write_all(text, QByteArray("these are not chats\n").repeated(500)));
        HEARTH_CHECK_ERROR(store->restore_from(text), "not a Hearth backup");
        HEARTH_CHECK_ERROR(store->restore_from(path(QStringLiteral("missing.hearth"))), "no file");
        HEARTH_CHECK_ERROR(store->restore_from(dir_.path()), "not a file");
        HEARTH_CHECK_ERROR(store->restore_from(store->path()), "itself");
        QVERIFY(every_conversation(*store).empty());
        // No copy is left behind.
        QCOMPARE(QDir(dir_.path()).entryList({QStringLiteral("*restoring*")}, QDir::Files).size(),
                 0);
    }
};

QTEST_GUILESS_MAIN(TestStoreBackup)
#include "tst_store_backup.moc"
