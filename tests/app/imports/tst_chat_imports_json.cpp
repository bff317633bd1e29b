// Jan's thread folders (three generations) and LM Studio's conversation files, written as
// each writes them, imported and read back (docs/research/chat-files.md §2, §3).
#include "tst_chat_imports.h"

using namespace import_test;
using namespace fixtures;
using hearth::store::MessageState;
using hearth::store::Role;

namespace {

QByteArray lines(std::initializer_list<const char*> items) {
    QByteArray out;
    for (const char* l : items) out += QByteArray(l) + '\n';
    return out;
}

void write_thread(const QString& data, const QString& id, const QByteArray& thread,
                  const QByteArray& messages) {
    const QString dir = data + QStringLiteral("/threads/") + id;
    QVERIFY(write_text(dir + QStringLiteral("/thread.json"), thread));
    if (!messages.isNull()) QVERIFY(write_text(dir + QStringLiteral("/messages.jsonl"), messages));
}

struct Expected {
    QString text;
    Role role;
    qint64 created_ms;
    MessageState state = MessageState::Complete;
};

}  // namespace

void TestChatImports::jan_dialects_data() {
    QTest::addColumn<QByteArray>("thread");
    QTest::addColumn<QByteArray>("messages");
    QTest::addColumn<QString>("title");
    QTest::addColumn<qint64>("created");
    QTest::addColumn<qint64>("updated");
    QTest::addColumn<QString>("prompt");
    QTest::addColumn<QString>("note");

    // 0.4 / early 0.5, Electron: conversational-extension/src/index.ts saveThread
    // (JSON.stringify(thread, null, 2)) and addNewMessage (one JSON line each); fields of
    // core/src/types/thread/threadEntity.ts and docs/src/pages/docs/data-folder.mdx.
    QTest::addRow("0.4 electron")
        << QByteArray(R"({
  "id": "jan_1725437954",
  "object": "thread",
  "title": "Electron thread",
  "assistants": [
    {
      "assistant_id": "jan",
      "assistant_name": "Jan",
      "model": { "id": "llama3.2-1b-instruct", "settings": { "ctx_len": 4096 },
                 "parameters": { "max_tokens": 2048 }, "engine": "nitro" },
      "instructions": "You are Jan."
    }
  ],
  "created": 1725437954000,
  "updated": 1725442802966,
  "metadata": { "lastMessage": "A cat." }
})")
        << lines(
               {R"({"id":"01J6Y6FH8PFTHQB5PNJTHEN27A","thread_id":"jan_1725437954","type":"Thread","role":"user","content":[{"type":"text","text":{"value":"Hi","annotations":[]}}],"status":"ready","created":1725442800000,"updated":1725442800000,"object":"thread.message"})",
                R"({"id":"01J6Y6FH8PFTHQB5PNJTHEN27C","thread_id":"jan_1725437954","type":"Thread","role":"assistant","content":[{"type":"text","text":{"value":"Hello! How can I help?","annotations":[]}}],"status":"ready","created":1725442802966,"updated":1725442802966,"object":"thread.message"})",
                "",
                R"({"id":"01J6Y6FH8PFTHQB5PNJTHEN27D","thread_id":"jan_1725437954","type":"Thread","role":"user","content":[{"type":"image","text":{"value":"What is this?","annotations":["threads/jan_1725437954/files/01J6Y6FH8PFTHQB5PNJTHEN27D.png"],"name":"cat.png","size":1234}}],"status":"ready","created":1725442803000,"updated":1725442803000,"object":"thread.message"})",
                R"({"id":"01J6Y6FH8PFTHQB5PNJTHEN27E","thread_id":"jan_1725437954","type":"Thread","role":"assistant","content":[{"type":"text","text":{"value":"A cat.","annotations":[]}}],"status":"stopped","created":1725442804000,"updated":1725442804000,"object":"thread.message"})"})
        << QStringLiteral("Electron thread") << qint64(1725437954000) << qint64(1725442804000)
        << QStringLiteral("You are Jan.")
        << QStringLiteral("1 attachment (cat.png) was not imported");

    // 0.5 cortex: engine/repositories/thread_fs_repository.cc SaveThread (jsoncpp
    // toStyledString), message_fs_repository.cc CreateMessage (FastWriter lines); fields of
    // engine/common/thread.h Thread::ToJson, assistant.h JanAssistant::ToJson, message.h.
    QTest::addRow("0.5 cortex")
        << QByteArray(R"({
   "assistants" : [
      {
         "created_at" : 0,
         "id" : "jan",
         "instructions" : "Be brief.",
         "model" : "llama3.2:3b",
         "name" : "Jan",
         "object" : "assistant",
         "tools" : []
      }
   ],
   "created_at" : 1736000000,
   "id" : "0194a1b2c3d4",
   "metadata" : {
      "title" : "Cortex thread"
   },
   "object" : "thread",
   "title" : "Cortex thread"
}
)")
        << lines(
               {R"({"content":[{"text":{"annotations":[],"value":"Summarise this."},"type":"text"}],"created_at":1736000100,"id":"01JGA","metadata":{},"object":"thread.message","role":"user","status":"completed","thread_id":"0194a1b2c3d4"})",
                R"({"completed_at":1736000105,"content":[{"text":{"annotations":[],"value":"Done."},"type":"text"}],"created_at":1736000100,"id":"01JGB","metadata":{},"object":"thread.message","role":"assistant","status":"completed","thread_id":"0194a1b2c3d4"})",
                R"({"content":[{"image_url":{"detail":"auto","url":"data:image/png;base64,iVBORw0KGgo="},"type":"image_url"},{"text":{"annotations":[],"value":"And this?"},"type":"text"}],"created_at":1736000200,"id":"01JGC","object":"thread.message","role":"user","status":"completed","thread_id":"0194a1b2c3d4"})",
                R"({"content":[{"text":{"annotations":[],"value":"Cannot."},"type":"text"}],"created_at":1736000201,"id":"01JGD","incomplete_at":1736000202,"object":"thread.message","role":"assistant","status":"incomplete","thread_id":"0194a1b2c3d4"})"})
        << QStringLiteral("Cortex thread") << qint64(1736000000000) << qint64(1736000201000)
        << QStringLiteral("Be brief.")
        << QStringLiteral("1 attachment (an image) was not imported");

    // 0.6+, Tauri: src-tauri/src/core/threads/commands.rs create_thread (UUID id,
    // to_string_pretty), create_message (appended lines); web-app services/threads/default.ts
    // (created/updated in seconds), lib/completion.ts (metadata.tool_calls), the reasoning
    // part of core/src/types/message/messageEntity.ts.
    QTest::addRow("0.6 tauri")
        << QByteArray(R"({
  "assistants": [
    {
      "id": "jan",
      "instructions": "You are a helpful assistant.",
      "model": { "engine": "llamacpp", "id": "Qwen3-4B-Q4_K_M" },
      "name": "Jan"
    }
  ],
  "created": 1750000500.5,
  "id": "5b0c4a5e-9f7e-4d55-8b38-3c2f1a0e9d11",
  "metadata": { "is_favorite": true, "order": 1 },
  "model": { "id": "Qwen3-4B-Q4_K_M", "provider": "llamacpp" },
  "object": "thread",
  "title": "Tauri thread",
  "updated": 1750000600.25
})")
        << lines(
               {R"({"completed_at":0,"content":[{"text":{"annotations":[],"value":"Plan a trip"},"type":"text"}],"created_at":1750000000123,"id":"01JXA","metadata":{},"object":"thread.message","role":"user","status":"ready","thread_id":"5b0c4a5e-9f7e-4d55-8b38-3c2f1a0e9d11","type":"text"})",
                R"({"completed_at":1750000010456,"content":[{"text":{"annotations":[],"value":"<think>\nUser wants a trip.\n</think>\n\nGo to Lisbon."},"type":"text"}],"created_at":1750000005000,"id":"01JXB","metadata":{"tool_calls":[{"tool":{"id":"call_1","type":"function","function":{"name":"search","arguments":"{}"}},"response":{"content":[]},"state":"completed"}]},"object":"thread.message","role":"assistant","status":"ready","thread_id":"5b0c4a5e-9f7e-4d55-8b38-3c2f1a0e9d11","type":"text"})",
                R"({"content":[{"text":{"annotations":[],"value":"Why?"},"type":"text"}],"created_at":1750000020000,"id":"01JXC","object":"thread.message","role":"user","status":"ready","thread_id":"5b0c4a5e-9f7e-4d55-8b38-3c2f1a0e9d11"})",
                R"({"content":[{"text":{"value":"Think about reasons."},"type":"reasoning"},{"text":{"annotations":[],"value":"Good food."},"type":"text"}],"created_at":1750000021000,"id":"01JXD","metadata":{"error":"model crashed"},"object":"thread.message","role":"assistant","status":"error","thread_id":"5b0c4a5e-9f7e-4d55-8b38-3c2f1a0e9d11"})"})
        << QStringLiteral("Tauri thread") << qint64(1750000000123) << qint64(1750000600250)
        << QStringLiteral("You are a helpful assistant.")
        << QStringLiteral("1 tool call was not imported");
}

void TestChatImports::jan_dialects() {
    QFETCH(QByteArray, thread);
    QFETCH(QByteArray, messages);
    QFETCH(QString, title);
    QFETCH(qint64, created);
    QFETCH(qint64, updated);
    QFETCH(QString, prompt);
    QFETCH(QString, note);
    QTemporaryDir home;
    const QString data = home.filePath(QStringLiteral(".local/share/Jan/data"));
    write_thread(data, QStringLiteral("thread-1"), thread, messages);
    QVERIFY(QDir().mkpath(data + QStringLiteral("/threads/not-a-thread")));  // no thread.json
    auto s = store::Store::open(home.filePath(QStringLiteral("h.sqlite3")));
    CHECK_OK(s);

    // Found where Jan keeps it by default (models/source_roots.cpp, jan()).
    const ImportReport report = run(&*s, home.path(), {}, {ChatSource::Jan});
    const SourceReport& j = source_of(report, ChatSource::Jan);
    QCOMPARE(j.found(), 1);
    const ChatOutcome& out = j.chats.front();
    QVERIFY2(out.outcome == Outcome::Imported, qPrintable(out.reason));
    QVERIFY2(has_note(out, note), qPrintable(out.notes.join(QLatin1Char('|'))));
    auto conv = s->conversation(out.conversation_id);
    CHECK_OK(conv);
    QCOMPARE(conv->title, title);
    QCOMPARE(conv->created_at, utc_ms(created));
    QCOMPARE(conv->updated_at, utc_ms(updated));
    QCOMPARE(conv->pinned, title.startsWith(QLatin1String("Tauri")));  // metadata.is_favorite
    QVERIFY(conv->persona_id);
    auto persona = s->persona(*conv->persona_id);
    CHECK_OK(persona);
    QCOMPARE(persona->name, QStringLiteral("Jan"));
    QCOMPARE(persona->system_prompt, prompt);

    QList<Expected> expected;
    if (title.startsWith(QLatin1String("Electron")))
        expected = {
            {QStringLiteral("Hi"), Role::User, 1725442800000},
            {QStringLiteral("Hello! How can I help?"), Role::Assistant, 1725442802966},
            {QStringLiteral("What is this?"), Role::User, 1725442803000},
            {QStringLiteral("A cat."), Role::Assistant, 1725442804000, MessageState::Interrupted}};
    else if (title.startsWith(QLatin1String("Cortex")))
        expected = {
            {QStringLiteral("Summarise this."), Role::User, 1736000100000},
            {QStringLiteral("Done."), Role::Assistant, 1736000100000},
            {QStringLiteral("And this?"), Role::User, 1736000200000},
            {QStringLiteral("Cannot."), Role::Assistant, 1736000201000, MessageState::Interrupted}};
    else
        expected = {{QStringLiteral("Plan a trip"), Role::User, 1750000000123},
                    {QStringLiteral("<think>\nUser wants a trip.\n</think>\n\nGo to Lisbon."),
                     Role::Assistant, 1750000005000},
                    {QStringLiteral("Why?"), Role::User, 1750000020000},
                    {QStringLiteral("<think>\nThink about reasons.\n</think>\n\nGood food."),
                     Role::Assistant, 1750000021000, MessageState::Failed}};
    const std::vector<store::Message> got = thread_of(*s, out.conversation_id);
    QCOMPARE(got.size(), std::size_t(expected.size()));
    for (qsizetype i = 0; i < expected.size(); ++i) {
        const store::Message& m = got[static_cast<std::size_t>(i)];
        QCOMPARE(m.text, expected[i].text);
        QCOMPARE(m.role, expected[i].role);
        QCOMPARE(m.created_at, utc_ms(expected[i].created_ms));
        QCOMPARE(m.state, expected[i].state);
    }
    if (title.startsWith(QLatin1String("Cortex")))  // completed_at
        QCOMPARE(got[1].updated_at, utc_ms(1736000105000));
    if (title.startsWith(QLatin1String("Tauri"))) {
        QCOMPARE(got[1].updated_at, utc_ms(1750000010456));
        QCOMPARE(got[3].stats.error, std::optional(QStringLiteral("model crashed")));
    }
    // The model Hearth does not know is named.
    QVERIFY(has_note(out, QStringLiteral("is not one of Hearth's models")));
}

void TestChatImports::jan_bad_threads_data() {
    QTest::addColumn<QByteArray>("thread");
    QTest::addColumn<QByteArray>("messages");
    QTest::addColumn<QString>("reason");
    const QByteArray good_thread = R"({"id":"bad","title":"Bad","created":1725437954000})";
    const QByteArray good_line =
        R"({"role":"user","content":[{"type":"text","text":{"value":"Hi"}}],"created":1725442800000})";
    QTest::addRow("malformed thread.json")
        << QByteArray(R"({"id": "bad", "title": )") << good_line + '\n'
        << QStringLiteral("thread.json is not valid JSON");
    QTest::addRow("malformed message line")
        << good_thread << good_line + "\n{\"role\":\"user\", \"content\": [\n"
        << QStringLiteral("messages.jsonl line 2 is not valid JSON");
    QTest::addRow("message not an object") << good_thread << good_line + "\n[1, 2]\n"
                                           << QStringLiteral("line 2 is not a JSON object");
    QTest::addRow("missing messages.jsonl")
        << good_thread << QByteArray() << QStringLiteral("messages.jsonl is missing");
    QTest::addRow("no messages") << good_thread << QByteArray("\n\n")
                                 << QStringLiteral("it has no messages");
}

// A thread Jan could not load either (helpers.rs read_messages_from_file fails on any bad
// line) is skipped whole; the good thread beside it is imported.
void TestChatImports::jan_bad_threads() {
    QFETCH(QByteArray, thread);
    QFETCH(QByteArray, messages);
    QFETCH(QString, reason);
    QTemporaryDir home;
    const QString data = home.filePath(QStringLiteral("jan-data"));
    write_thread(data, QStringLiteral("bad"), thread, messages);
    write_thread(data, QStringLiteral("good"), R"({"id":"good","title":"Good"})",
                 lines({R"({"role":"user","content":"Hello","created_at":1736000000})"}));
    auto s = store::Store::open(home.filePath(QStringLiteral("h.sqlite3")));
    CHECK_OK(s);
    const ImportReport report = run(&*s, home.path(), {data}, {ChatSource::Jan});
    const SourceReport& j = source_of(report, ChatSource::Jan);
    QCOMPARE(j.found(), 2);
    QCOMPARE(j.count(Outcome::Skipped), 1);
    QCOMPARE(j.count(Outcome::Imported), 1);
    const ChatOutcome& bad = j.chats.front();  // "bad" sorts first
    QCOMPARE(bad.file, QStringLiteral("threads/bad"));
    QVERIFY2(bad.reason.contains(reason), qPrintable(bad.reason));
    QVERIFY(report.text().contains(QStringLiteral("skipped threads/bad: ") + bad.reason));
    QCOMPARE(conversation_count(*s), 1);
    auto personas = s->personas();
    CHECK_OK(personas);
    QCOMPARE(personas->size(), std::size_t(0));
}

// LM Studio's home from ~/.lmstudio-home-pointer (lmstudio-bug-tracker#553), conversations in
// sub-folders (#652), and the .conversation.json shape of docs/research/chat-files.md §3.2-3.3
// (YorkieDev converter script.js; mac-resource-monitor chat-history-viewer-prompt.md).
void TestChatImports::lmstudio_conversations() {
    QTemporaryDir home;
    const QString lm = home.filePath(QStringLiteral("elsewhere/lm"));
    QVERIFY(
        write_text(home.filePath(QStringLiteral(".lmstudio-home-pointer")), lm.toUtf8() + "\n"));
    QVERIFY(write_text(lm + QStringLiteral("/conversations/1733285730521.conversation.json"), R"({
  "name": "Trip ideas",
  "pinned": true,
  "createdAt": 1733285730521,
  "preset": "",
  "tokenCount": 321,
  "userLastMessagedAt": 1733285790000,
  "assistantLastMessagedAt": 1733285800000,
  "systemPrompt": "old prompt",
  "messages": [
    { "versions": [ { "type": "singleStep", "role": "user", "content": [
        { "type": "text", "text": "Suggest a city" },
        { "type": "file", "fileIdentifier": "1733285730999 - 1.png", "fileType": "image", "sizeBytes": 1234 } ] } ],
      "currentlySelected": 0 },
    { "versions": [
        { "type": "multiStep", "role": "assistant", "senderInfo": { "senderName": "qwen3-8b" }, "steps": [
          { "type": "contentBlock", "stepIdentifier": "a", "content": [ { "type": "text", "text": "Paris." } ],
            "defaultShouldIncludeInContext": true, "shouldIncludeInContext": true } ] },
        { "type": "multiStep", "role": "assistant", "senderInfo": { "senderName": "qwen3-8b" }, "steps": [
          { "type": "contentBlock", "stepIdentifier": "b", "style": { "type": "thinking", "ended": true, "title": "Thought" },
            "content": [ { "type": "text", "text": "Maybe Lisbon." } ] },
          { "type": "contentBlock", "stepIdentifier": "c",
            "content": [ { "type": "text", "text": "Lisbon", "tokensCount": 2 }, { "type": "text", "text": "!" } ],
            "genInfo": { "identifier": "qwen3-8b", "indexedModelIdentifier": "lmstudio-community/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf",
                         "stats": { "stopReason": "eosFound", "tokensPerSecond": 25.5, "timeToFirstTokenSec": 0.25,
                                    "predictedTokensCount": 40, "promptTokensCount": 20 } } },
          { "type": "debugInfoBlock", "stepIdentifier": "d", "debugInfo": "timings" } ] } ],
      "currentlySelected": 1 },
    { "versions": [ { "type": "singleStep", "role": "user", "content": [ { "type": "text", "text": "Why?" } ] } ],
      "currentlySelected": 0 },
    { "versions": [ { "type": "multiStep", "role": "assistant", "steps": [
          { "type": "contentBlock", "content": [ { "type": "toolCallRequest", "name": "search" } ] },
          { "type": "toolStatus", "callId": 1, "statusState": { "status": { "type": "toolCallSucceeded", "timeMs": 5 } } },
          { "type": "contentBlock", "content": [ { "type": "text", "text": "Food." } ],
            "genInfo": { "stats": { "stopReason": "userStopped" } } } ] } ],
      "currentlySelected": 0 }
  ],
  "usePerChatPredictionConfig": true,
  "perChatPredictionConfig": { "fields": [ { "key": "llm.prediction.temperature", "value": 0.7 },
                                           { "key": "llm.prediction.systemPrompt", "value": "You plan trips." } ] },
  "lastUsedModel": { "identifier": "qwen3-8b", "indexedModelIdentifier": "lmstudio-community/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf",
                     "instanceLoadTimeConfig": { "fields": [] }, "instanceOperationTimeConfig": { "fields": [] } },
  "notes": [], "plugins": [], "pluginConfigs": {}, "clientInput": "", "clientInputFiles": [], "userFilesSizeBytes": 1234
})"));
    // An older file in a user folder: no name, no createdAt (the file name is the time),
    // the system prompt at the top level.
    QVERIFY(
        write_text(lm + QStringLiteral("/conversations/Work/1733300000000.conversation.json"), R"({
  "systemPrompt": "Old style prompt",
  "messages": [
    { "versions": [ { "type": "singleStep", "role": "user", "content": [ { "type": "text", "text": "\n  Draft an email\nto Bob" } ] } ], "currentlySelected": 0 },
    { "versions": [ { "type": "multiStep", "role": "assistant", "steps": [
        { "type": "contentBlock", "content": [ { "type": "text", "text": "Dear Bob," } ] } ] } ], "currentlySelected": 0 }
  ]
})"));
    auto s = store::Store::open(home.filePath(QStringLiteral("h.sqlite3")));
    CHECK_OK(s);
    auto model = s->upsert_model(QStringLiteral("/m/Qwen3-8B-Q4_K_M.gguf"), QStringLiteral("fe01"),
                                 QStringLiteral("Qwen3 8B"));
    CHECK_OK(model);

    const ImportReport report = run(&*s, home.path(), {}, {ChatSource::LmStudio});
    const SourceReport& l = source_of(report, ChatSource::LmStudio);
    QCOMPARE(l.folders.front(), lm + QStringLiteral("/conversations"));
    QCOMPARE(l.found(), 2);
    QCOMPARE(l.count(Outcome::Imported), 2);
    const ChatOutcome& trip = l.chats[0];
    const ChatOutcome& work = l.chats[1];
    QCOMPARE(trip.file, QStringLiteral("1733285730521.conversation.json"));
    QCOMPARE(work.file, QStringLiteral("Work/1733300000000.conversation.json"));

    auto conv = s->conversation(trip.conversation_id);
    CHECK_OK(conv);
    QCOMPARE(conv->title, QStringLiteral("Trip ideas"));
    QCOMPARE(conv->created_at, utc_ms(1733285730521));
    QCOMPARE(conv->updated_at, utc_ms(1733285800000));
    QVERIFY(conv->pinned);
    QCOMPARE(conv->model_id, std::optional(model->id));  // by indexedModelIdentifier's file
    auto persona = s->persona(*conv->persona_id);
    CHECK_OK(persona);
    QCOMPARE(persona->name, QStringLiteral("LM Studio"));
    QCOMPARE(persona->system_prompt, QStringLiteral("You plan trips."));
    auto thread = s->active_thread(trip.conversation_id);
    CHECK_OK(thread);
    QCOMPARE(thread->size(), std::size_t(4));
    const auto& t = *thread;
    QCOMPARE(t[0].message.text, QStringLiteral("Suggest a city"));
    QCOMPARE(t[1].message.text, QStringLiteral("<think>\nMaybe Lisbon.\n</think>\n\nLisbon!"));
    QCOMPARE(t[1].variant_count, 2);  // "Paris." kept as a branch
    QCOMPARE(t[1].variant_index, 1);  // the selected version, in LM Studio's order
    QCOMPARE(t[1].message.stats.tokens_per_second, std::optional(25.5));
    QCOMPARE(t[1].message.stats.ttft_ms, std::optional(250.0));
    QCOMPARE(t[1].message.stats.generated_tokens, std::optional<std::int64_t>(40));
    QCOMPARE(t[1].message.stats.finish_reason, std::optional(store::FinishReason::Stop));
    QCOMPARE(t[2].message.text, QStringLiteral("Why?"));
    QCOMPARE(t[3].message.text, QStringLiteral("Food."));
    QCOMPARE(t[3].message.state, MessageState::Interrupted);
    auto paris = s->page_variant(t[1].message.id, -1);
    CHECK_OK(paris);
    QCOMPARE(s->message(*paris)->text, QStringLiteral("Paris."));
    for (const store::ThreadEntry& e : t) QCOMPARE(e.message.created_at, conv->created_at);
    QVERIFY(has_note(trip, QStringLiteral("1 other version of 1 message (regenerated or edited) "
                                          "was kept as branches")));
    QVERIFY(has_note(trip, QStringLiteral("1 attached file (1733285730999 - 1.png) was not")));
    QVERIFY(has_note(trip, QStringLiteral("1 tool call and its result was not imported")));
    QCOMPARE(trip.notes.size(), 3);

    auto older = s->conversation(work.conversation_id);
    CHECK_OK(older);
    QCOMPARE(older->title, QStringLiteral("Draft an email"));
    QCOMPARE(older->created_at, utc_ms(1733300000000));
    QVERIFY(!older->pinned);
    QCOMPARE(s->persona(*older->persona_id)->system_prompt, QStringLiteral("Old style prompt"));
    QCOMPARE(thread_of(*s, work.conversation_id).back().text, QStringLiteral("Dear Bob,"));
}

void TestChatImports::lmstudio_bad_files() {
    QTemporaryDir home;
    const QString conversations = home.filePath(QStringLiteral(".lmstudio/conversations"));
    QVERIFY(write_text(conversations + QStringLiteral("/1.conversation.json"), "{not json"));
    QVERIFY(write_text(conversations + QStringLiteral("/2.conversation.json"), R"({"name":"x"})"));
    QVERIFY(write_text(conversations + QStringLiteral("/3.conversation.json"),
                       R"({"name":"empty","messages":[]})"));
    auto s = store::Store::open(home.filePath(QStringLiteral("h.sqlite3")));
    CHECK_OK(s);
    const ImportReport report = run(&*s, home.path(), {}, {ChatSource::LmStudio});
    const SourceReport& l = source_of(report, ChatSource::LmStudio);
    QCOMPARE(l.found(), 3);
    QCOMPARE(l.count(Outcome::Skipped), 3);
    QVERIFY(l.chats[0].reason.startsWith(QLatin1String("not valid JSON (at byte")));
    QCOMPARE(l.chats[1].reason,
             QStringLiteral("not an LM Studio conversation (it has no \"messages\" list)"));
    QCOMPARE(l.chats[2].reason, QStringLiteral("it has no messages"));
    QVERIFY(
        report.text().contains(QStringLiteral("skipped 2.conversation.json: not an LM Studio")));
    QCOMPARE(conversation_count(*s), 0);
}
