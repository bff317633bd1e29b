// The schema ladder: connection settings, migration of real data from every earlier
// version, atomic steps, and refusing a database from a newer Hearth without touching it.
#include <sqlite3.h>
#include <QCryptographicHash>
#include <QFileInfo>
#include <QTest>

#include "store/schema.h"
#include "store_test_util.h"

using namespace hearth::store;
using namespace hearth::store::test;

namespace {

// Data as Hearth would have written it at `version` (1..5), in that version's columns.
// Message 2 has two children; the thread on screen ends at the older one (4), so the v4
// backfill of remembered choices is observable: without it, the newest child (5) wins.
bool seed(Database& db, int version) {
    const char* common = R"sql(
        INSERT INTO personas (id, name, system_prompt, keep_warm, color, avatar, created_at, updated_at)
          VALUES (1, 'Ada', 'You are Ada.', 1, '#112233', 'A', 1000, 1000);
        INSERT INTO models VALUES (1, '/models/x.gguf', 'abcdef01', 'X', 1000, 2000);
        INSERT INTO conversations (id, title, persona_id, model_id, temperature, seed, created_at, updated_at)
          VALUES (1, 'Migrated chat', 1, 1, 0.7, 9007199254740993, 1000, 3000);
        INSERT INTO messages (id, conversation_id, parent_id, role, content, token_ids, token_fingerprint,
                              state, created_at, updated_at, ttft_ms)
          VALUES (1, 1, NULL, 'user', 'hello zebra', x'01000000ffffffff', 'abcdef01', 'complete', 1000, 1000, NULL),
                 (2, 1, 1, 'assistant', 'first reply about giraffes', NULL, '', 'complete', 1100, 1100, 12.5),
                 (3, 1, 1, 'assistant', 'second reply about okapis', NULL, '', 'complete', 1200, 1200, 13.5),
                 (4, 1, 2, 'user', 'older follow-up', NULL, '', 'complete', 1300, 1300, NULL),
                 (5, 1, 2, 'user', 'newer follow-up', NULL, '', 'complete', 1400, 1400, NULL);
        UPDATE conversations SET active_leaf_id = 4 WHERE id = 1;
        INSERT INTO settings VALUES ('theme', 'dark');
    )sql";
    if (!db.exec(common)) return false;
    if (version >= 3 && !db.exec("UPDATE conversations SET pinned = 1 WHERE id = 1")) return false;
    // From v4 on Hearth remembers the choices along the thread on screen as it writes.
    if (version >= 4 && !db.exec("UPDATE messages SET active_child_id = 2 WHERE id = 1;"
                                 "UPDATE messages SET active_child_id = 4 WHERE id = 2"))
        return false;
    // v10's documents, read whole then; v11 cuts them into passages when it opens them.
    if (version >= 10 &&
        !db.exec("INSERT INTO documents (persona_id, position, name, format, content, added_at, "
                 "updated_at) VALUES (1, 0, 'zoo.md', 'markdown', '# Okapis\n\nOkapis eat "
                 "leaves.', 1000, 1000)"))
        return false;
    return true;
}

QByteArray sha(const QString& path) {
    return QCryptographicHash::hash(read_all(path), QCryptographicHash::Sha256);
}

QStringList schema_of(Database& db) {
    auto stmt = db.prepare(
        "SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_schema ORDER BY name");
    QStringList out;
    if (!stmt) return out;
    while (true) {
        auto row = stmt->step();
        if (!row || !*row) break;
        out << stmt->column_text(0);
    }
    return out;
}

}  // namespace

class TestStoreSchema : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString path(const char* name) const { return dir_.filePath(QLatin1String(name)); }

  private slots:
    void fresh_database_settings() {
        auto store = Store::open(path("fresh.sqlite3"));
        HEARTH_CHECK(store);
        QVERIFY(store->report().created);
        QCOMPARE(store->report().migrated_from, -1);
        Database& db = store->database();
        auto version = db.user_version();
        HEARTH_CHECK(version);
        QCOMPARE(*version, kSchemaVersion);
        auto mode = db.query_text("PRAGMA journal_mode");
        HEARTH_CHECK(mode);
        QCOMPARE(*mode, QStringLiteral("wal"));
        auto fk = db.query_int("PRAGMA foreign_keys");
        HEARTH_CHECK(fk);
        QCOMPARE(*fk, 1);
        auto busy = db.query_int("PRAGMA busy_timeout");
        HEARTH_CHECK(busy);
        QCOMPARE(*busy, 5000);
        auto sync = db.query_int("PRAGMA synchronous");
        HEARTH_CHECK(sync);
        QCOMPARE(*sync, 2);  // FULL
    }

    void normal_sync_is_an_option() {
        OpenOptions options;
        options.full_sync = false;
        options.busy_timeout = std::chrono::milliseconds(1234);
        auto store = Store::open(path("normal.sqlite3"), options);
        HEARTH_CHECK(store);
        auto sync = store->database().query_int("PRAGMA synchronous");
        HEARTH_CHECK(sync);
        QCOMPARE(*sync, 1);  // NORMAL
        auto busy = store->database().query_int("PRAGMA busy_timeout");
        HEARTH_CHECK(busy);
        QCOMPARE(*busy, 1234);
    }

    void migrates_from_every_earlier_version_data() {
        QTest::addColumn<int>("from");
        for (int v = 0; v < kSchemaVersion; ++v) QTest::addRow("v%d", v) << v;
    }
    void migrates_from_every_earlier_version() {
        QFETCH(int, from);
        const QString file = dir_.filePath(QStringLiteral("v%1.sqlite3").arg(from));
        {
            auto db = Database::open(file, OpenMode::ReadWriteCreate);
            HEARTH_CHECK(db);
            HEARTH_CHECK(migrate(*db, from));
            auto version = db->user_version();
            HEARTH_CHECK(version);
            QCOMPARE(*version, from);
            if (from > 0) QVERIFY(seed(*db, from));
        }
        auto store = Store::open(file);
        HEARTH_CHECK(store);
        QCOMPARE(store->report().created, from == 0);
        QCOMPARE(store->report().migrated_from, from == 0 ? -1 : from);
        auto integrity = store->integrity_check();
        HEARTH_CHECK(integrity);
        QCOMPARE(*integrity, QStringLiteral("ok"));
        auto version = store->database().user_version();
        HEARTH_CHECK(version);
        QCOMPARE(*version, kSchemaVersion);

        // The same schema as a database created by this version.
        auto fresh = Store::open(dir_.filePath(QStringLiteral("fresh-for-v%1.sqlite3").arg(from)));
        HEARTH_CHECK(fresh);
        QCOMPARE(schema_of(store->database()), schema_of(fresh->database()));
        if (from == 0) return;

        auto c = store->conversation(1);
        HEARTH_CHECK(c);
        QCOMPARE(c->title, QStringLiteral("Migrated chat"));
        QCOMPARE(c->persona_id, std::optional<Id>(1));
        QCOMPARE(c->sampling.temperature, std::optional<double>(0.7));
        QCOMPARE(c->sampling.seed, std::optional<std::int64_t>(9007199254740993LL));
        QCOMPARE(c->pinned, from >= 3);  // added in v3 with a default of false
        QVERIFY(!c->archived);
        auto first = store->message(1);
        HEARTH_CHECK(first);
        QCOMPARE(first->token_ids, (std::vector<std::int32_t>{1, -1}));
        auto setting = store->setting(QStringLiteral("theme"));
        HEARTH_CHECK(setting);
        QCOMPARE(setting->value_or(QString()), QStringLiteral("dark"));

        // v5's additions read as empty for data written before them; the rest is kept.
        QVERIFY(!c->sampling.frequency_penalty);
        QVERIFY(!c->sampling.presence_penalty);
        auto reply = store->message(2);
        HEARTH_CHECK(reply);
        QCOMPARE(reply->stats.ttft_ms, std::optional<double>(12.5));
        QVERIFY(!reply->stats.seed);
        QVERIFY(!reply->stats.finish_reason);
        // v6's too.
        QVERIFY(!c->sampling.thinking);
        QVERIFY(!reply->stats.reasoning_ms);
        QVERIFY(!reply->stats.error);             // and v7's
        QVERIFY(!reply->stats.messages_dropped);  // and v8's
        QVERIFY(!reply->stats.prompt_tokens_shifted);
        QVERIFY(!reply->stats.prompt_tokens_loaded);  // and v9's
        QVERIFY(!reply->stats.draft_tokens);          // and v12's
        QVERIFY(!reply->stats.draft_accepted);
        QVERIFY(!c->sampling.stop);
        QVERIFY(!c->forked_from);
        if (from >= 10) {  // a v10 document is looked up from now on, where it is needed
            auto documents = store->persona_documents(1);
            HEARTH_CHECK(documents);
            QCOMPARE(documents->size(), std::size_t{1});
            QVERIFY(!documents->front().lookup);
            const std::vector<Id> ids{documents->front().id};
            auto found = store->retrieve(ids, QStringLiteral("what do okapis eat?"), 5);
            HEARTH_CHECK(found);
            QCOMPARE(found->size(), std::size_t{1});
            QCOMPARE(found->front().heading, QStringLiteral("Okapis"));
        }
        auto persona = store->persona(1);
        HEARTH_CHECK(persona);
        QCOMPARE(persona->name, QStringLiteral("Ada"));
        QCOMPARE(persona->system_prompt, QStringLiteral("You are Ada."));
        QVERIFY(persona->keep_warm);
        QCOMPARE(persona->color, QStringLiteral("#112233"));
        QCOMPARE(persona->avatar, QStringLiteral("A"));
        QCOMPARE(persona->sampling, SamplingSettings{});
        // ...and can be written now.
        persona->sampling.presence_penalty = 0.5;
        HEARTH_CHECK(store->update_persona(*persona));
        c->sampling.frequency_penalty = 0.5;
        HEARTH_CHECK(store->update_conversation(*c));
        auto tuned = store->persona(1);
        HEARTH_CHECK(tuned);
        QCOMPARE(tuned->sampling.presence_penalty, std::optional<double>(0.5));
        c->sampling.thinking = false;
        HEARTH_CHECK(store->update_conversation(*c));
        auto switched = store->conversation(1);
        HEARTH_CHECK(switched);
        QCOMPARE(switched->sampling.thinking, std::optional<bool>(false));
        QCOMPARE(switched->sampling.frequency_penalty, std::optional<double>(0.5));
        c->sampling.stop = std::vector<QString>{QStringLiteral("\nUser:")};
        HEARTH_CHECK(store->update_conversation(*c));
        auto stopped = store->conversation(1);
        HEARTH_CHECK(stopped);
        QCOMPARE(stopped->sampling.stop, c->sampling.stop);

        // Messages written before the search index existed are found.
        auto hits = store->search(QStringLiteral("giraffes"));
        HEARTH_CHECK(hits);
        QCOMPARE(hits->size(), std::size_t{1});
        QCOMPARE(hits->front().message_id, Id{2});

        auto thread = store->active_thread(1);
        HEARTH_CHECK(thread);
        QCOMPARE(thread->size(), std::size_t{3});
        QCOMPARE(thread->back().message.id, Id{4});
        // Page to the other reply and back: the choice below it (4, not the newer 5) was
        // remembered by the v4 backfill.
        auto shown = store->page_variant(2, +1);
        HEARTH_CHECK(shown);
        QCOMPARE(*shown, Id{3});
        shown = store->page_variant(3, -1);
        HEARTH_CHECK(shown);
        thread = store->active_thread(1);
        HEARTH_CHECK(thread);
        QCOMPARE(thread->back().message.id, Id{4});
    }

    void a_failed_step_leaves_the_previous_version() {
        const QString file = path("blocked.sqlite3");
        {
            auto db = Database::open(file, OpenMode::ReadWriteCreate);
            HEARTH_CHECK(db);
            HEARTH_CHECK(migrate(*db, 1));
            QVERIFY(seed(*db, 1));
            // Something in the way of step 2, which creates messages_fts.
            HEARTH_CHECK(db->exec("CREATE TABLE messages_fts (x)"));
        }
        HEARTH_CHECK_ERROR(Store::open(file), "upgrading the chat history to version 2");
        {
            auto db = Database::open(file, OpenMode::ReadWrite);
            HEARTH_CHECK(db);
            auto version = db->user_version();
            HEARTH_CHECK(version);
            QCOMPARE(*version, 1);
            // None of step 2 is left behind (its triggers came after the failing CREATE
            // in the same transaction), and v1 data is intact.
            auto triggers =
                db->query_int("SELECT count(*) FROM sqlite_schema WHERE type = 'trigger'");
            HEARTH_CHECK(triggers);
            QCOMPARE(*triggers, 0);
            auto messages = db->query_int("SELECT count(*) FROM messages");
            HEARTH_CHECK(messages);
            QCOMPARE(*messages, 5);
            HEARTH_CHECK(db->exec("DROP TABLE messages_fts"));
        }
        auto store = Store::open(file);
        HEARTH_CHECK(store);
        QCOMPARE(store->report().migrated_from, 1);
    }

    void newer_version_is_refused_untouched() {
        const QString file = path("newer.sqlite3");
        {
            auto db = Database::open(file, OpenMode::ReadWriteCreate);
            HEARTH_CHECK(db);
            HEARTH_CHECK(migrate(*db));
            HEARTH_CHECK(db->set_user_version(kSchemaVersion + 1));
        }
        const QByteArray before = sha(file);
        const auto modified = QFileInfo(file).lastModified();
        HEARTH_CHECK_ERROR(Store::open(file), "newer version of Hearth");
        OpenOptions read_only;
        read_only.read_only = true;
        HEARTH_CHECK_ERROR(Store::open(file, read_only), "newer version of Hearth");
        QCOMPARE(sha(file), before);
        QCOMPARE(QFileInfo(file).lastModified(), modified);
        QVERIFY(!QFileInfo::exists(file + "-wal"));
        QVERIFY(!QFileInfo::exists(file + "-shm"));
    }

    void newer_version_in_the_wal_is_refused_too() {
        // A newer Hearth upgraded the schema and stopped before checkpointing: the file's
        // header still says the old version, only the -wal has the new one.
        const QString file = path("newer-wal.sqlite3");
        {
            auto db = Database::open(file, OpenMode::ReadWriteCreate);
            HEARTH_CHECK(db);
            HEARTH_CHECK(db->exec("PRAGMA journal_mode = WAL"));
            HEARTH_CHECK(migrate(*db));
            HEARTH_CHECK(db->exec("PRAGMA wal_checkpoint(TRUNCATE)"));
            HEARTH_CHECK(db->exec("PRAGMA wal_autocheckpoint = 0"));
            HEARTH_CHECK(db->set_user_version(kSchemaVersion + 1));
            sqlite3_db_config(db->handle(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
        }
        QVERIFY(QFileInfo(file + "-wal").size() > 0);
        const QByteArray main_before = sha(file);
        const QByteArray wal_before = sha(file + "-wal");
        HEARTH_CHECK_ERROR(Store::open(file), "newer version of Hearth");
        QCOMPARE(sha(file), main_before);
        QCOMPARE(sha(file + "-wal"), wal_before);
    }

    void negative_version_is_refused() {
        const QString file = path("negative.sqlite3");
        {
            auto db = Database::open(file, OpenMode::ReadWriteCreate);
            HEARTH_CHECK(db);
            HEARTH_CHECK(db->set_user_version(-3));
        }
        const QByteArray before = sha(file);
        HEARTH_CHECK_ERROR(Store::open(file), "unknown schema version (-3)");
        QCOMPARE(sha(file), before);
    }
};

QTEST_GUILESS_MAIN(TestStoreSchema)
#include "tst_store_schema.moc"
