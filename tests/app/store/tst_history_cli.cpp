// hearth-cli's history commands: output for people and for scripts, usage errors, and the
// promise that they never change the database.
#include <QCryptographicHash>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTest>
#include <sstream>

#include "cli/history_commands.h"
#include "store/schema.h"
#include "store_test_util.h"

using namespace hearth::store;
using namespace hearth::store::test;

namespace {

struct Run {
    int code = -1;
    std::string out;
    std::string err;
};

Run history(std::vector<std::string> args) {
    std::ostringstream out, err;
    Run r;
    r.code = hearth::cli::run_history_command(args, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
}

QByteArray sha(const QString& path) {
    return QCryptographicHash::hash(read_all(path), QCryptographicHash::Sha256);
}

QJsonValue json_of(const std::string& text) {
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(text));
    return doc.isArray() ? QJsonValue(doc.array()) : QJsonValue(doc.object());
}

}  // namespace

class TestHistoryCli : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string db_;
    Id chat_ = 0, pinned_ = 0, archived_ = 0;
    Id variant_ = 0;

  private slots:
    void initTestCase() {
        const QString path = dir_.filePath(QStringLiteral("history.sqlite3"));
        db_ = path.toStdString();
        auto store = Store::open(path);
        HEARTH_CHECK(store);
        auto chat = store->create_conversation(titled(QStringLiteral("Plain chat")));
        HEARTH_CHECK(chat);
        chat_ = chat->id;
        auto u = store->append_message(
            chat_, draft(Role::User, QStringLiteral("Where do capybaras live?")));
        HEARTH_CHECK(u);
        HEARTH_CHECK(store->append_message(
            chat_, draft(Role::Assistant, QStringLiteral("In South America."))));
        auto v = store->add_message(
            chat_, u->id,
            draft(Role::Assistant, QStringLiteral("Capybaras live near water in South America.")));
        HEARTH_CHECK(v);
        variant_ = v->id;
        auto pinned = store->create_conversation(titled(QStringLiteral("Pinned \u00e9t\u00e9")));
        HEARTH_CHECK(pinned);
        pinned_ = pinned->id;
        HEARTH_CHECK(store->set_pinned(pinned_, true));
        auto archived = store->create_conversation(titled(QStringLiteral("Old stuff")));
        HEARTH_CHECK(archived);
        archived_ = archived->id;
        HEARTH_CHECK(store->append_message(
            archived_, draft(Role::User, QStringLiteral("capybara facts, archived"))));
        HEARTH_CHECK(store->set_archived(archived_, true));
    }

    void list_for_people_and_scripts() {
        Run r = history({"list", "--db", db_});
        QCOMPARE(r.code, 0);
        QStringList lines =
            QString::fromStdString(r.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 3);  // a header, then the two that are not archived
        // A header naming the columns, and every row's cells under their names: ids and
        // counts right-aligned, the rest left-aligned.
        const QString header = lines[0];
        QVERIFY2(
            QRegularExpression(QStringLiteral("^ID  UPDATED \\(UTC\\) +FLAGS  MESSAGES  TITLE$"))
                .match(header)
                .hasMatch(),
            qPrintable(header));
        const auto cell = [&](const QString& row, const char* column, qsizetype width) {
            return row.mid(header.indexOf(QLatin1String(column)), width);
        };
        const qsizetype id_width = header.indexOf(QLatin1String("UPDATED")) - 2;
        QCOMPARE(lines[1].left(id_width).trimmed(), QString::number(pinned_));
        QCOMPARE(lines[1].left(id_width + 2).right(2), QStringLiteral("  "));
        QCOMPARE(cell(lines[1], "UPDATED", 16).size(), 16);  // yyyy-MM-dd HH:mm
        QCOMPARE(cell(lines[1], "FLAGS", 2), QStringLiteral("P-"));
        QCOMPARE(cell(lines[1], "MESSAGES", 8), QStringLiteral("       0"));
        QCOMPARE(cell(lines[1], "TITLE", -1), QStringLiteral("Pinned \u00e9t\u00e9"));
        QCOMPARE(lines[2].left(id_width).trimmed(), QString::number(chat_));
        QCOMPARE(cell(lines[2], "FLAGS", 2), QStringLiteral("--"));
        QCOMPARE(cell(lines[2], "MESSAGES", 8), QStringLiteral("       3"));
        QCOMPARE(cell(lines[2], "TITLE", -1), QStringLiteral("Plain chat"));

        r = history({"list", "--db=" + db_, "--json", "--all"});
        QCOMPARE(r.code, 0);
        const QJsonArray all = json_of(r.out).toArray();
        QCOMPARE(all.size(), 3);
        QJsonObject plain;
        for (const QJsonValue& v : all)
            if (v[QStringLiteral("id")].toInteger() == chat_) plain = v.toObject();
        QCOMPARE(plain[QStringLiteral("title")].toString(), QStringLiteral("Plain chat"));
        QCOMPARE(plain[QStringLiteral("messages")].toInt(), 3);
        QVERIFY(!plain[QStringLiteral("archived")].toBool());

        r = history({"list", "--db", db_, "--archived"});
        QCOMPARE(r.code, 0);
        QVERIFY(QString::fromStdString(r.out).contains(QStringLiteral("Old stuff")));
        QCOMPARE(QString::fromStdString(r.out).count(QLatin1Char('\n')), 2);
        r = history({"list", "--db", db_, "--limit", "1"});
        QCOMPARE(r.code, 0);
        QCOMPARE(QString::fromStdString(r.out).count(QLatin1Char('\n')), 2);
        r = history({"list", "--db", db_, "--limit", "0"});  // nothing: the header alone
        QCOMPARE(r.code, 0);
        QVERIFY(QString::fromStdString(r.out).startsWith(QStringLiteral("ID  UPDATED")));
        QCOMPARE(QString::fromStdString(r.out).count(QLatin1Char('\n')), 1);
    }

    void show_the_thread() {
        Run r = history({"show", std::to_string(chat_), "--db", db_});
        QCOMPARE(r.code, 0);
        const QString out = QString::fromStdString(r.out);
        QVERIFY(out.contains(QStringLiteral("Where do capybaras live?")));
        QVERIFY(out.contains(QStringLiteral("[%1 assistant 2/2 ").arg(variant_)));
        QVERIFY(!out.contains(QStringLiteral("In South America.")));  // the variant not shown
        r = history({"show", std::to_string(chat_), "--db", db_, "--json"});
        QCOMPARE(r.code, 0);
        const QJsonArray thread = json_of(r.out).toArray();
        QCOMPARE(thread.size(), 2);
        QCOMPARE(thread[1][QStringLiteral("id")].toInteger(), variant_);
        QCOMPARE(thread[1][QStringLiteral("variants")].toInt(), 2);
        QCOMPARE(thread[0][QStringLiteral("role")].toString(), QStringLiteral("user"));
    }

    void export_to_stdout_and_files() {
        auto store = Store::open(QString::fromStdString(db_));
        HEARTH_CHECK(store);
        auto md = store->export_conversation(chat_, ExportFormat::Markdown);
        HEARTH_CHECK(md);
        store = hearth::make_error("closed");  // the CLI works on its own connection
        Run r = history({"export", std::to_string(chat_), "--format", "md", "--db", db_});
        QCOMPARE(r.code, 0);
        QCOMPARE(QByteArray::fromStdString(r.out), *md);
        r = history({"export", std::to_string(chat_), "--format", "json", "--db", db_});
        QCOMPARE(r.code, 0);
        QCOMPARE(json_of(r.out)[QStringLiteral("format")].toString(),
                 QStringLiteral("hearth.conversation"));

        const std::string out = dir_.filePath(QStringLiteral("chat.md")).toStdString();
        r = history({"export", std::to_string(chat_), "--format", "md", "--out", out, "--db", db_});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.empty());
        QCOMPARE(read_all(QString::fromStdString(out)), *md);
        r = history(
            {"export", std::to_string(chat_), "--format", "json", "--out", out, "--db", db_});
        QCOMPARE(r.code, 1);
        QVERIFY(QString::fromStdString(r.err).contains(QStringLiteral("already exists")));
        r = history({"export", std::to_string(chat_), "--format", "json", "--out", out, "--force",
                     "--db", db_});
        QCOMPARE(r.code, 0);
        QVERIFY(read_all(QString::fromStdString(out)).startsWith('{'));
        r = history({"export", std::to_string(chat_), "--format", "md", "--out", db_, "--force",
                     "--db", db_});
        QCOMPARE(r.code, 1);
        QVERIFY(QString::fromStdString(r.err).contains(QStringLiteral("database itself")));
        r = history({"export", "999", "--format", "md", "--db", db_});
        QCOMPARE(r.code, 1);
        QVERIFY(QString::fromStdString(r.err).contains(QStringLiteral("no conversation 999")));
    }

    void search() {
        Run r = history({"search", "capybaras", "--db", db_});
        QCOMPARE(r.code, 0);
        QStringList lines =
            QString::fromStdString(r.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 2);
        for (const QString& line : lines)
            QVERIFY2(line.contains(QStringLiteral("[Capybaras]")) ||
                         line.contains(QStringLiteral("[capybaras]")),
                     qPrintable(line));
        r = history({"search", "capybara*", "south", "--db", db_, "--json"});
        QCOMPARE(r.code, 0);
        const QJsonArray hits = json_of(r.out).toArray();
        QCOMPARE(hits.size(), 1);
        QCOMPARE(hits[0][QStringLiteral("message")].toInteger(), variant_);
        QCOMPARE(hits[0][QStringLiteral("highlights")].toArray().size(), 2);
        r = history({"search", "--db", db_, "--", "--not-an-option"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.empty());
    }

    void usage_errors_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::addRow("nothing") << QStringList{} << "missing command";
        QTest::addRow("unknown command") << QStringList{"delete", "1"} << "unknown command";
        QTest::addRow("show without id") << QStringList{"show"} << "give one conversation id";
        QTest::addRow("show bad id") << QStringList{"show", "abc"} << "not a conversation id";
        QTest::addRow("export without format")
            << QStringList{"export", "1"} << "--format must be md or json";
        QTest::addRow("bad limit")
            << QStringList{"list", "--limit", "many"} << "--limit needs a number";
        QTest::addRow("missing value") << QStringList{"list", "--limit"} << "--limit needs a value";
        QTest::addRow("unknown option")
            << QStringList{"list", "--frobnicate"} << "unknown option --frobnicate";
        QTest::addRow("search nothing") << QStringList{"search"} << "give something to search for";
    }
    void usage_errors() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        std::vector<std::string> argv{};
        for (const QString& a : args) argv.push_back(a.toStdString());
        argv.push_back("--db");
        argv.push_back(db_);
        Run r = history(argv);
        QCOMPARE(r.code, 2);
        QVERIFY2(QString::fromStdString(r.err).contains(message), r.err.c_str());
        QVERIFY(
            QString::fromStdString(r.err).contains(QStringLiteral("usage: hearth-cli history")));
    }

    void help() {
        Run r = history({"help"});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, std::string(hearth::cli::history_usage()));
    }

    void databases_it_cannot_read() {
        const QString missing = dir_.filePath(QStringLiteral("missing.sqlite3"));
        Run r = history({"list", "--db", missing.toStdString()});
        QCOMPARE(r.code, 1);
        QVERIFY(QString::fromStdString(r.err).contains(QStringLiteral("does not exist")));
        QVERIFY(!QFileInfo::exists(missing));

        const QString old = dir_.filePath(QStringLiteral("old.sqlite3"));
        {
            auto db = Database::open(old, OpenMode::ReadWriteCreate);
            HEARTH_CHECK(db);
            HEARTH_CHECK(migrate(*db, kSchemaVersion - 1));
        }
        const QByteArray before = sha(old);
        r = history({"list", "--db", old.toStdString()});
        QCOMPARE(r.code, 1);
        QVERIFY(QString::fromStdString(r.err).contains(QStringLiteral("older version of Hearth")));
        QCOMPARE(sha(old), before);  // not upgraded behind the user's back

        const QString junk = dir_.filePath(QStringLiteral("junk.sqlite3"));
        QVERIFY(write_all(junk, "plain text"));
        r = history({"list", "--db", junk.toStdString()});
        QCOMPARE(r.code, 1);
        QVERIFY(
            QString::fromStdString(r.err).contains(QStringLiteral("not a Hearth chat history")));
        QCOMPARE(read_all(junk), QByteArray("plain text"));
    }

    void the_default_database() {
        const QByteArray saved = qgetenv("XDG_DATA_HOME");
        qputenv("XDG_DATA_HOME", dir_.filePath(QStringLiteral("xdg")).toUtf8());
        QCOMPARE(Store::default_path(), dir_.filePath(QStringLiteral("xdg/Hearth/hearth.sqlite3")));
        Run before = history({"list"});
        {
            auto store = Store::open(Store::default_path());
            HEARTH_CHECK(store);
            HEARTH_CHECK(
                store->create_conversation(titled(QStringLiteral("in the default place"))));
        }
        Run after = history({"list"});
        if (saved.isNull())
            qunsetenv("XDG_DATA_HOME");
        else
            qputenv("XDG_DATA_HOME", saved);
        QCOMPARE(before.code, 1);
        QCOMPARE(after.code, 0);
        QVERIFY(QString::fromStdString(after.out).contains(QStringLiteral("in the default place")));
    }

    void never_writes() {
        // Run last: every command above ran against db_, which must be byte-identical to
        // how the store left it, and no command may have created files beside it.
        const QString path = QString::fromStdString(db_);
        auto store = Store::open(path);
        HEARTH_CHECK(store);
        store = hearth::make_error("closed");  // a clean close checkpoints and removes the -wal
        QVERIFY(!QFileInfo::exists(path + "-wal"));
        const QByteArray before = sha(path);
        const auto modified = QFileInfo(path).lastModified();
        for (const auto& args : std::vector<std::vector<std::string>>{
                 {"list", "--db", db_, "--all"},
                 {"show", std::to_string(chat_), "--db", db_},
                 {"search", "capybara", "--db", db_},
                 {"export", std::to_string(chat_), "--format", "json", "--db", db_}})
            QCOMPARE(history(args).code, 0);
        QCOMPARE(sha(path), before);
        QCOMPARE(QFileInfo(path).lastModified(), modified);
    }
};

QTEST_GUILESS_MAIN(TestHistoryCli)
#include "tst_history_cli.moc"
