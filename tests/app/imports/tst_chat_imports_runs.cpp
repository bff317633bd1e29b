// Running the import again, a dry run, and hearth-cli import-chats.
#include <sstream>

#include "cli/commands.h"
#include "tst_chat_imports.h"

using namespace import_test;
using namespace fixtures;

namespace {

// One chat of each app in `root`: a GPT4All v12 file (chat_fixtures.cpp), a Jan 0.6 thread
// (src-tauri threads/commands.rs layout) and an LM Studio conversation (§3.2).
QStringList write_one_of_each(const QString& root) {
    const G4Chat g = rich_chat(12);
    write_text(root + QStringLiteral("/gpt4all/gpt4all-%1.chat").arg(g.id), gpt4all_file(g, 12));
    write_text(root + QStringLiteral("/jan/threads/5b0c4a5e/thread.json"),
               R"({"id":"5b0c4a5e","title":"Jan chat","created":1750000000.5,
                   "assistants":[{"id":"jan","name":"Jan","instructions":"Be kind."}]})");
    write_text(
        root + QStringLiteral("/jan/threads/5b0c4a5e/messages.jsonl"),
        R"({"role":"user","content":[{"type":"text","text":{"value":"Hi"}}],"created_at":1750000001000})"
        "\n");
    write_text(root + QStringLiteral("/lm/conversations/1733285730521.conversation.json"),
               R"({"name":"LM chat","createdAt":1733285730521,"messages":[{"versions":[
                   {"type":"singleStep","role":"user","content":[{"type":"text","text":"Yo"}]}],
                   "currentlySelected":0}]})");
    return {root + QStringLiteral("/gpt4all"), root + QStringLiteral("/jan"),
            root + QStringLiteral("/lm")};
}

struct Cli {
    int code = -1;
    QString out, err;
};

Cli import_cli(const std::vector<std::string>& args) {
    std::ostringstream out, err;
    Cli r;
    r.code = hearth::cli::run_import_chats(args, out, err);
    r.out = QString::fromStdString(out.str());
    r.err = QString::fromStdString(err.str());
    return r;
}

}  // namespace

// The origin of each chat is kept with the conversation (settings "import.origin.<origin>"):
// a second run finds them all, a chat deleted since comes back, and the same chat met twice
// in one run is imported once.
void TestChatImports::reimport_adds_nothing_twice() {
    QTemporaryDir dir;
    const QStringList paths = write_one_of_each(dir.path());
    auto s = store::Store::open(dir.filePath(QStringLiteral("h.sqlite3")));
    CHECK_OK(s);
    const ImportReport first = run(&*s, dir.path(), paths);
    for (const SourceReport& r : first.sources) QCOMPARE(r.count(Outcome::Imported), 1);
    QCOMPARE(conversation_count(*s), 3);
    auto jan_persona = s->personas();
    CHECK_OK(jan_persona);
    QCOMPARE(jan_persona->size(), std::size_t(1));

    const ImportReport second = run(&*s, dir.path(), paths);
    for (int i = 0; i < 3; ++i) {
        const SourceReport& r = second.sources[i];
        QCOMPARE(r.found(), 1);
        QCOMPARE(r.count(Outcome::AlreadyImported), 1);
        QCOMPARE(r.chats.front().conversation_id, first.sources[i].chats.front().conversation_id);
    }
    QVERIFY(second.text().contains(QStringLiteral("1 found, 0 imported, 1 already imported")));
    QCOMPARE(conversation_count(*s), 3);
    QCOMPARE(s->personas()->size(), std::size_t(1));  // the same persona is reused

    // Deleted since: imported again, once.
    CHECK_OK(s->delete_conversation(first.sources[1].chats.front().conversation_id));
    const ImportReport third = run(&*s, dir.path(), paths);
    QCOMPARE(third.sources[1].count(Outcome::Imported), 1);
    QCOMPARE(third.sources[0].count(Outcome::AlreadyImported), 1);
    QCOMPARE(conversation_count(*s), 3);

    // The same GPT4All file in two folders of one run.
    QTemporaryDir other;
    QVERIFY(QFile::copy(QDir(paths[0]).filePath(QDir(paths[0]).entryList(QDir::Files).front()),
                        other.filePath(QStringLiteral("gpt4all-copy.chat"))));
    QTemporaryDir fresh;
    auto t = store::Store::open(fresh.filePath(QStringLiteral("h.sqlite3")));
    CHECK_OK(t);
    const ImportReport twice =
        run(&*t, dir.path(), {paths[0], other.path()}, {ChatSource::Gpt4All});
    QCOMPARE(twice.sources[0].found(), 2);
    QCOMPARE(twice.sources[0].count(Outcome::Imported), 1);
    QCOMPARE(twice.sources[0].count(Outcome::AlreadyImported), 1);
    QCOMPARE(conversation_count(*t), 1);
}

void TestChatImports::dry_run_writes_nothing() {
    QTemporaryDir dir;
    const QStringList paths = write_one_of_each(dir.path());
    auto s = store::Store::open(dir.filePath(QStringLiteral("h.sqlite3")));
    CHECK_OK(s);
    const ImportReport dry = run(
        &*s, dir.path(), paths, {ChatSource::Gpt4All, ChatSource::Jan, ChatSource::LmStudio}, true);
    QVERIFY(dry.dry_run);
    for (const SourceReport& r : dry.sources) QCOMPARE(r.count(Outcome::Imported), 1);
    QVERIFY(dry.text().startsWith(QStringLiteral("Dry run: nothing was written.")));
    QVERIFY(dry.text().contains(QStringLiteral("1 found, 1 to import")));
    QCOMPARE(conversation_count(*s), 0);
    QCOMPARE(s->personas()->size(), std::size_t(0));
    auto marker = s->setting(QStringLiteral("import.origin.jan:5b0c4a5e"));
    CHECK_OK(marker);
    QVERIFY(!*marker);
    // Without a history at all.
    const ImportReport bare = run(nullptr, dir.path(), paths);
    QCOMPARE(bare.sources[2].count(Outcome::Imported), 1);
}

// hearth-cli import-chats: the report, --from, --dry-run, --db, usage errors.
void TestChatImports::cli_import_chats() {
    QTemporaryDir dir;
    const QStringList paths = write_one_of_each(dir.path());
    // The command looks at this computer's apps only without PATHs; keep HOME out of it.
    qputenv("HOME", dir.path().toUtf8());
    const std::string db = dir.filePath(QStringLiteral("cli.sqlite3")).toStdString();

    Cli dry = import_cli({"--dry-run", "--db", db, paths[0].toStdString()});
    QCOMPARE(dry.code, 0);
    QVERIFY2(dry.out.contains(QStringLiteral("GPT4All: 1 found, 1 to import")),
             qPrintable(dry.out));
    QVERIFY(!QFile::exists(QString::fromStdString(db)));  // a dry run creates nothing

    Cli one = import_cli({"--from", "jan", "--db", db, paths[1].toStdString()});
    QCOMPARE(one.code, 0);
    QVERIFY2(one.out.startsWith(QStringLiteral("Jan: 1 found, 1 imported, 0 already imported, "
                                               "0 skipped")),
             qPrintable(one.out));
    QVERIFY(!one.out.contains(QStringLiteral("GPT4All")));

    Cli all = import_cli({"--db", db, "--verbose", paths[0].toStdString(), paths[1].toStdString(),
                          paths[2].toStdString()});
    QCOMPARE(all.code, 0);
    QVERIFY2(all.out.contains(QStringLiteral("GPT4All: 1 found, 1 imported")), qPrintable(all.out));
    QVERIFY(all.out.contains(QStringLiteral("Jan: 1 found, 0 imported, 1 already imported")));
    QVERIFY(all.out.contains(QStringLiteral("LM Studio: 1 found, 1 imported")));
    QVERIFY(all.out.contains(QStringLiteral("1 tool call and its result was not imported")));
    QVERIFY(all.out.contains(QStringLiteral("Jan already imported threads/5b0c4a5e \"Jan chat\"")));
    auto s = store::Store::open(QString::fromStdString(db));
    CHECK_OK(s);
    QCOMPARE(conversation_count(*s), 3);

    Cli wrong = import_cli({"--from", "chatgpt"});
    QCOMPARE(wrong.code, 2);
    QVERIFY(wrong.err.contains(QStringLiteral("--from must be gpt4all, jan, lmstudio or all")));
    QCOMPARE(import_cli({"--nope"}).code, 2);
    Cli missing =
        import_cli({"--db", db, dir.filePath(QStringLiteral("nothing-here")).toStdString()});
    QCOMPARE(missing.code, 0);
    QVERIFY(missing.out.contains(QStringLiteral("nothing-here: no such file or folder")));
    Cli help = import_cli({"--help"});
    QCOMPARE(help.code, 0);
    QVERIFY(help.out.contains(QStringLiteral("--dry-run")));
}
