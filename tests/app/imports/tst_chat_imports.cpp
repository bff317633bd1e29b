// Chats of GPT4All, Jan and LM Studio, written in each app's own layout, imported into a
// temporary history and read back through the store. This file: GPT4All's .chat files,
// written with QDataStream as GPT4All's writer of each format version did (chat_fixtures.cpp).
#include "tst_chat_imports.h"

#include <QSettings>

#include "imports/gpt4all_chat.h"

using namespace import_test;
using namespace fixtures;
using hearth::store::MessageState;
using hearth::store::Role;

namespace {

void set_mtime(const QString& path, const QDateTime& t) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadWrite));
    QVERIFY(f.setFileTime(t, QFileDevice::FileModificationTime));
}

}  // namespace

// A chat with every feature its format version keeps (docs/research/chat-files.md §1.4).
G4Chat import_test::rich_chat(int v) {
    G4Chat c;
    c.created = 1683288000 + v * 86400;  // May 2023 on: version 0 files date from then
    c.id = QStringLiteral("3d1c2b4a-5e6f-4a7b-8c9d-0e1f2a3b4c%1").arg(v, 2, 10, QLatin1Char('0'));
    c.name = QStringLiteral("Generated title");
    if (v % 2) c.user_name = QStringLiteral("Renamed %1").arg(v);  // else null, as GPT4All
    c.model =
        v < 5 ? QStringLiteral("gpt4all-j-v1.3-groovy") : QStringLiteral("Llama 3 8B Instruct");
    if (v >= 3) c.collections = {QStringLiteral("Notes")};
    c.kv = v == 6 || v == 7;  // saveChatsContext on: the state follows (n_ctx from v7)
    const G4Source source{QStringLiteral("Notes"),
                          QStringLiteral("/home/u/notes.txt"),
                          QStringLiteral("notes.txt"),
                          QStringLiteral("Maths"),
                          QStringLiteral("Me"),
                          QStringLiteral("2023"),
                          QStringLiteral("2+2=4"),
                          1,
                          3,
                          4};
    G4Item p1 = item(QStringLiteral("Prompt: "), QStringLiteral("What is 2+2?"));
    if (v >= 10)
        p1.attachments = {
            {QUrl(QStringLiteral("file:///home/u/data.csv")), QByteArray("a,b\n1,2\n")}};
    if (v >= 11) p1.sources = {source};  // 225bf6be: sources live on the prompt
    G4Item r1 =
        item(QStringLiteral("Response: "), QStringLiteral("4"), QStringLiteral("What is 2+2?"));
    r1.up = true;
    if (v >= 3 && v < 11) r1.sources = {source};
    if (v >= 12) {
        // splitThinking/endThinking: a sub-Response with Text and Think, the answer in value.
        r1.value = QStringLiteral("The answer is 4.");
        G4Sub container = sub(QStringLiteral("Response: "));
        container.children = {
            sub(QStringLiteral("Text: "), QStringLiteral("Let me think. ")),
            sub(QStringLiteral("Think: "), QStringLiteral("<think>2 plus 2</think>"), 1500)};
        r1.subs = {container};
    }
    G4Item p2 = item(QStringLiteral("Prompt: "), QStringLiteral("And 3+3?"));
    G4Item r2 = item(QStringLiteral("Response: "), QStringLiteral("6"), QStringLiteral("And 3+3?"));
    r2.stopped = true;
    r2.new_response = QStringLiteral("Six.");
    if (v >= 12) {
        // splitToolCall: Text and ToolCall in a sub-Response, the tool's output beside it.
        G4Sub call = sub(QStringLiteral("ToolCall: "), QStringLiteral("<tool_call>{}</tool_call>"));
        call.tool_name = QStringLiteral("javascript_interpret");
        call.tool_result = QStringLiteral("6");
        call.params = {{QStringLiteral("code"), QStringLiteral("3+3")}};
        G4Sub container = sub(QStringLiteral("Response: "));
        container.children = {sub(QStringLiteral("Text: "), QStringLiteral("Computing. ")), call};
        r2.subs = {container, sub(QStringLiteral("ToolResponse: "), QStringLiteral("6"))};
    }
    c.items = {p1, r1, p2, r2};
    if (v >= 11) {
        G4Item r3 = item(QStringLiteral("Response: "), QStringLiteral("Error: model crashed"));
        r3.error = true;
        c.items << item(QStringLiteral("Prompt: "), QStringLiteral("Break")) << r3;
    }
    return c;
}

void TestChatImports::gpt4all_versions_data() {
    QTest::addColumn<int>("version");
    for (int v : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}) QTest::addRow("v%d", v) << v;
}

// Every version GPT4All wrote, as ChatSaver::saveChats / Chat::serialize / ChatItem::serialize
// of that version wrote it (chat_fixtures.cpp), read back field by field.
void TestChatImports::gpt4all_versions() {
    QFETCH(int, version);
    const int v = version;
    QTemporaryDir dir;
    auto s = store::Store::open(dir.filePath(QStringLiteral("h.sqlite3")));
    CHECK_OK(s);
    const G4Chat chat = rich_chat(v);
    const QString file = dir.filePath(QStringLiteral("gpt4all-%1.chat").arg(chat.id));
    QVERIFY(write_text(file, gpt4all_file(chat, v)));
    const QDateTime modified = QDateTime::fromSecsSinceEpoch(chat.created + 3600, Qt::UTC);
    set_mtime(file, modified);

    const ImportReport report = run(&*s, dir.path(), {file});
    const SourceReport& g = source_of(report, ChatSource::Gpt4All);
    QCOMPARE(g.found(), 1);
    const ChatOutcome& out = g.chats.front();
    QVERIFY2(out.outcome == Outcome::Imported, qPrintable(out.reason));
    QCOMPARE(out.file, QFileInfo(file).fileName());

    auto conv = s->conversation(out.conversation_id);
    CHECK_OK(conv);
    QCOMPARE(conv->title, chat.user_name.isEmpty() ? chat.name : chat.user_name);
    QCOMPARE(conv->created_at, QDateTime::fromSecsSinceEpoch(chat.created, Qt::UTC));
    QCOMPARE(conv->updated_at, modified);
    QVERIFY(!conv->persona_id);  // GPT4All keeps no system prompt in the chat (§1.6)
    QVERIFY(!conv->model_id);

    const std::vector<store::Message> thread = thread_of(*s, out.conversation_id);
    QCOMPARE(thread.size(), std::size_t(v >= 11 ? 6 : 4));
    QCOMPARE(thread[0].role, Role::User);
    QCOMPARE(thread[0].text, QStringLiteral("What is 2+2?"));
    QCOMPARE(thread[1].role, Role::Assistant);
    QCOMPARE(thread[1].text, v >= 12
                                 ? QStringLiteral("<think>\n2 plus 2\n</think>\n\nLet me think. "
                                                  "The answer is 4.")
                                 : QStringLiteral("4"));
    QCOMPARE(thread[1].stats.reasoning_ms, v >= 12 ? std::optional<double>(1500) : std::nullopt);
    QCOMPARE(thread[1].state, MessageState::Complete);
    QCOMPARE(thread[2].text, QStringLiteral("And 3+3?"));
    QCOMPARE(thread[3].text, v >= 12 ? QStringLiteral("Computing. 6") : QStringLiteral("6"));
    QCOMPARE(thread[3].state, MessageState::Interrupted);  // stopped
    QCOMPARE(thread[3].stats.finish_reason, std::optional(store::FinishReason::Cancelled));
    for (const store::Message& m : thread) {
        QCOMPARE(m.created_at, conv->created_at);  // GPT4All keeps no per-message times
        QCOMPARE(m.parent_id.has_value(), &m != &thread.front());
    }
    if (v >= 11) {
        QCOMPARE(thread[4].text, QStringLiteral("Break"));
        QCOMPARE(thread[5].state, MessageState::Failed);
        QCOMPARE(thread[5].stats.error, std::optional(QStringLiteral("Error: model crashed")));
    }
    // The user's better answer for the data lake: another version beside the reply.
    auto versions = s->variants(thread[3].id);
    CHECK_OK(versions);
    QCOMPARE(versions->size(), std::size_t(2));
    auto alt = s->message(versions->back());
    CHECK_OK(alt);
    QCOMPARE(alt->text, QStringLiteral("Six."));
    auto all = s->all_messages(out.conversation_id);
    CHECK_OK(all);
    QCOMPARE(all->size(), thread.size() + 1);

    // Everything else is named.
    QVERIFY(has_note(out, QStringLiteral("better answer written by the user")));
    QVERIFY(has_note(out, QStringLiteral("ratings of 1 answer")));
    QCOMPARE(has_note(out, QStringLiteral("LocalDocs collections it searched (Notes)")), v >= 3);
    QCOMPARE(has_note(out, QStringLiteral("LocalDocs sources cited by 1 message")), v >= 3);
    QCOMPARE(has_note(out, QStringLiteral("1 attachment (data.csv) was not imported")), v >= 10);
    QCOMPARE(has_note(out, QStringLiteral("1 tool call and its result was not imported")), v >= 12);
    QVERIFY(has_note(
        out, QStringLiteral("its model \"%1\" is not one of Hearth's models").arg(chat.model)));
    QVERIFY(report.text().contains(
        QStringLiteral("partly imported %1 (\"%2\"):\n    - ").arg(out.file, conv->title)));
    QVERIFY(!report.text().contains(QStringLiteral("Jan:")));  // no path of Jan's given
}

// GPT4All.ini's modelPath and [model-<id>] filename (mysettings.cpp), the headerless chats
// beside it (ChatsRestoreThread::run), and the chat's model linked to the one Hearth knows.
void TestChatImports::gpt4all_finds_chats_and_links_models() {
    QTemporaryDir home;
    const QString models = home.filePath(QStringLiteral("llms"));
    const QString ini = home.filePath(QStringLiteral(".config/nomic.ai/GPT4All.ini"));
    QCOMPARE(gpt4all_settings_file(fake_home(home.path())), ini);
    {
        QDir().mkpath(models);
        QSettings settings(ini, QSettings::IniFormat);
        settings.setValue(QStringLiteral("modelPath"), models);
        settings.setValue(QStringLiteral("model-Llama 3 8B Instruct/filename"),
                          QStringLiteral("Meta-Llama-3-8B-Instruct.Q4_0.gguf"));
    }
    const QList<ChatLocation> where = chat_locations(fake_home(home.path()), {ChatSource::Gpt4All});
    QCOMPARE(where.size(), 2);
    QCOMPARE(where[0].path, models);
    QCOMPARE(where[1].path, QFileInfo(ini).absolutePath());
    QVERIFY(where[1].legacy);

    const G4Chat v12 = rich_chat(12), v0 = rich_chat(0);
    QVERIFY(
        write_text(models + QStringLiteral("/gpt4all-%1.chat").arg(v12.id), gpt4all_file(v12, 12)));
    QVERIFY(write_text(models + QStringLiteral("/gpt4all-%1.chat.tmp").arg(v12.id), "partial"));
    QVERIFY(
        write_text(QFileInfo(ini).absolutePath() + QStringLiteral("/gpt4all-%1.chat").arg(v0.id),
                   gpt4all_file(v0, 0)));

    QTemporaryDir dir;
    auto s = store::Store::open(dir.filePath(QStringLiteral("h.sqlite3")));
    CHECK_OK(s);
    auto model = s->upsert_model(QStringLiteral("/m/Meta-Llama-3-8B-Instruct.Q4_0.gguf"),
                                 QStringLiteral("abc123"), QStringLiteral("Llama 3 8B"));
    CHECK_OK(model);
    const ImportReport report = run(&*s, home.path(), {}, {ChatSource::Gpt4All});
    const SourceReport& g = source_of(report, ChatSource::Gpt4All);
    QCOMPARE(g.found(), 2);
    QCOMPARE(g.count(Outcome::Imported), 2);
    for (const ChatOutcome& c : g.chats) {
        auto conv = s->conversation(c.conversation_id);
        CHECK_OK(conv);
        if (c.file.contains(v12.id)) {
            QCOMPARE(conv->model_id, std::optional(model->id));
            QVERIFY(!has_note(c, QStringLiteral("its model")));
        } else {
            QVERIFY(!conv->model_id);
            QCOMPARE(conv->title, v0.name);
        }
    }
}

void TestChatImports::gpt4all_bad_files_data() {
    QTest::addColumn<QByteArray>("data");
    QTest::addColumn<QString>("reason");
    const QByteArray good = gpt4all_file(rich_chat(12), 12);
    const auto header = [](qint32 version) {
        QByteArray d;
        QDataStream out(&d, QIODevice::WriteOnly);
        out << quint32(0xF5D553CC) << version;
        out.setVersion(QDataStream::Qt_6_2);
        out << qint64(1714557600) << QStringLiteral("id") << QStringLiteral("name") << QString()
            << QStringLiteral("model");
        return d;
    };
    QByteArray wrong_magic = good;
    wrong_magic.replace(0, 4, "ABCD");
    QTest::addRow("wrong magic") << wrong_magic
                                 << "not a GPT4All chat file: it lacks GPT4All's chat header";
    QByteArray newer = good;
    newer[7] = 13;
    QTest::addRow("newer version") << newer << "format version 13 is newer than this Hearth reads";
    QByteArray zero = good;
    zero[7] = 0;
    QTest::addRow("version 0 with a header") << zero << "format version 0 is not one GPT4All";
    QTest::addRow("truncated") << good.left(good.size() - 3) << "cut short";
    QTest::addRow("truncated mid-item") << good.left(good.size() / 2) << "cut short";
    QTest::addRow("tiny") << good.left(5) << "it is only 5 bytes long";
    QTest::addRow("extra bytes") << good + "xyz"
                                 << "3 bytes of extra data follow the chat";
    QByteArray huge_text = header(12).left(8 + 8);
    huge_text += QByteArray::fromHex("7ffffff0") + "ab";
    QTest::addRow("huge length prefix") << huge_text << "claims 2147483632 bytes but only 2";
    QByteArray odd = header(12).left(16) + QByteArray::fromHex("00000003") + "abc";
    QTest::addRow("odd text length") << odd << "odd byte count";
    QByteArray items = header(12);
    {
        QDataStream out(&items, QIODevice::Append);
        out << QStringList() << qint32(0x7FFFFFFF);
    }
    QTest::addRow("huge item count") << items << "item count says 2147483647";
    QByteArray logits = header(5);
    {
        QDataStream out(&logits, QIODevice::Append);
        out << QStringList() << qint32(2) << qint32(0) << QString() << QString() << quint32(0)
            << qint32(0) << quint64(0x3FFFFFFFFFFFFFFFULL);
    }
    QTest::addRow("huge logit count") << logits << "logit count says";
    QByteArray sources = header(12);
    {
        QDataStream out(&sources, QIODevice::Append);
        out << QStringList() << qint32(1) << QStringLiteral("Prompt: ") << QStringLiteral("hi")
            << QString() << false << false << false << false << qint64(0x7FFFFFFFFFFFFFFFLL);
    }
    QTest::addRow("huge source count") << sources << "source count says";
    QByteArray kind = header(12);
    {
        QDataStream out(&kind, QIODevice::Append);
        out << QStringList() << qint32(1) << QStringLiteral("System: ");
    }
    QTest::addRow("unknown item kind") << kind << "unknown kind \"System: \"";
}

// Damaged, foreign or newer files: skipped with the reason, nothing imported half-way, and
// no allocation from a hostile length (the limits are checked against the file's size).
// GPT4All refuses the same files (chatlistmodel.cpp ChatsRestoreThread::run: bad magic,
// version < 1 or > CHAT_FORMAT_VERSION, a failed deserialize, "extra data at end of file").
void TestChatImports::gpt4all_bad_files() {
    QFETCH(QByteArray, data);
    QFETCH(QString, reason);
    QTemporaryDir dir;
    auto s = store::Store::open(dir.filePath(QStringLiteral("h.sqlite3")));
    CHECK_OK(s);
    const QString file = dir.filePath(QStringLiteral("gpt4all-bad.chat"));
    QVERIFY(write_text(file, data));
    const ImportReport report = run(&*s, dir.path(), {file});
    const SourceReport& g = source_of(report, ChatSource::Gpt4All);
    QCOMPARE(g.found(), 1);
    QCOMPARE(g.count(Outcome::Skipped), 1);
    QVERIFY2(g.chats.front().reason.contains(reason), qPrintable(g.chats.front().reason));
    QVERIFY(report.text().contains(QStringLiteral("skipped gpt4all-bad.chat: ") +
                                   g.chats.front().reason + QLatin1Char('\n')));
    QCOMPARE(conversation_count(*s), 0);
    auto personas = s->personas();
    CHECK_OK(personas);
    QCOMPARE(personas->size(), std::size_t(0));
}

QTEST_GUILESS_MAIN(TestChatImports)
