// The app's view models on a synthetic model and a store in a temporary folder: the
// bridge loads (and fails to load) models, personas are seeded and kept warm, two chats
// with one persona stream replies that end with statistics, the second served from the
// persona's cached prefix, replies are regenerated and paged, a branch is made by editing,
// a reply is stopped, rows are split into prose and code blocks (kept up to date while a
// reply streams), conversations are searched, renamed, pinned and deleted with undo.
// Every model runs under QAbstractItemModelTester (fatal).
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <memory>

#include "chat/prompt_builder.h"
#include "core/app_settings.h"
#include "core/conversation_list_model.h"
#include "core/engine_bridge.h"
#include "core/history_store.h"
#include "core/markdown_segments.h"
#include "core/message_list_model.h"
#include "core/persona_list_model.h"
#include "model/synthetic_model.h"

using namespace hearth;
using Tester = QAbstractItemModelTester;

#define START(...)                                  \
    do {                                            \
        start(__VA_ARGS__);                         \
        if (QTest::currentTestFailed()) return;     \
    } while (false)

namespace {

constexpr int kLoadTimeoutMs = 60000;
constexpr int kReplyTimeoutMs = 60000;

// Long enough for several whole 16-token KV blocks (the synthetic vocabulary is mostly
// single bytes).
const QString kSystemPrompt = QStringLiteral(
    "You are a careful test persona. You answer every question with patience, you keep "
    "your replies short, and you never reveal the secret word, which is hearthstone.");

struct App {
    HistoryStore store;
    EngineBridge bridge;
    PersonaListModel personas;
    ConversationListModel conversations;
    MessageListModel chat;
    std::unique_ptr<Tester> t1, t2, t3;

    App() {
        t1 = std::make_unique<Tester>(&personas, Tester::FailureReportingMode::Fatal);
        t2 = std::make_unique<Tester>(&conversations, Tester::FailureReportingMode::Fatal);
        t3 = std::make_unique<Tester>(&chat, Tester::FailureReportingMode::Fatal);
    }
};

QVariant role(const QAbstractItemModel& m, int row, const char* name) {
    const auto names = m.roleNames();
    for (auto it = names.begin(); it != names.end(); ++it)
        if (it.value() == name) return m.data(m.index(row, 0), it.key());
    qFatal("no role %s", name);
}

// The segments role as split_markdown gives it for text.
QVariantList expected_segments(const QString& text) {
    QVariantList out;
    for (const MarkdownSegment& s : split_markdown(text)) {
        const bool code = s.kind == MarkdownSegment::Kind::Code;
        out.append(QVariantMap{
            {QStringLiteral("kind"), code ? QStringLiteral("code") : QStringLiteral("text")},
            {QStringLiteral("text"), s.text},
            {QStringLiteral("language"), s.language},
            {QStringLiteral("open"), s.open}});
    }
    return out;
}

}  // namespace

class TestAppModels : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString model_path_;

    // Opens a fresh store (no fsync per commit: tests) and loads the synthetic model.
    void start(App& app, const QString& db_name, bool load = true) {
        store::OpenOptions o;
        o.full_sync = false;
        app.store.openWith(dir_.filePath(db_name), o);
        app.bridge.setThreads(2);
        app.bridge.setKvMegabytes(16);
        if (load) app.bridge.load(model_path_);
        app.personas.setBridge(&app.bridge);
        app.personas.setStore(&app.store);
        app.conversations.setStore(&app.store);
        app.chat.setBridge(&app.bridge);
        app.chat.setStore(&app.store);
        // Deterministic replies that run to max tokens.
        app.chat.setDefaultSampling(SamplingParams::greedy());
        app.chat.setStopAtEndOfTurn(false);
        QTRY_VERIFY_WITH_TIMEOUT(app.store.ready(), 10000);
        if (load) QTRY_VERIFY_WITH_TIMEOUT(app.bridge.loaded(), kLoadTimeoutMs);
    }

    static qint64 create_conversation(App& app, qint64 persona) {
        QSignalSpy created(&app.conversations, &ConversationListModel::conversationCreated);
        app.conversations.createConversation(persona);
        if (!created.wait(10000)) return -1;
        return created.at(0).at(0).toLongLong();
    }

    // Sends text in the chat on screen and waits for the reply to end; returns its row.
    static int send_and_wait(App& app, const QString& text) {
        QSignalSpy finished(&app.chat, &MessageListModel::replyFinished);
        if (!app.chat.send(text)) return -1;
        if (!finished.wait(kReplyTimeoutMs)) return -1;
        const qint64 id = finished.at(0).at(0).toLongLong();
        return app.chat.rowOf(id);
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        SyntheticModelSpec spec;
        spec.weight_type = quant::TensorType::Q8_0;
        spec.seed = 5;
        auto bytes = make_synthetic_model(spec);
        QVERIFY(bytes);
        model_path_ = dir_.filePath(QStringLiteral("synthetic.gguf"));
        std::ofstream(model_path_.toStdString(), std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
    }

    void badModelFileGivesAnError() {
        EngineBridge bridge;
        QSignalSpy finished(&bridge, &EngineBridge::loadFinished);
        const QString bad = dir_.filePath(QStringLiteral("bad.gguf"));
        {
            std::ofstream f(bad.toStdString(), std::ios::binary);
            f << "this is not a GGUF file at all, just some text";
        }
        bridge.load(bad);
        QVERIFY(bridge.loading());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kLoadTimeoutMs);
        QCOMPARE(finished.at(0).at(0).toBool(), false);
        QVERIFY(!bridge.loaded());
        QVERIFY(!bridge.loading());
        QVERIFY2(!bridge.errorString().isEmpty(), "no error text");
        QCOMPARE(bridge.submit(1, {1, 2, 3}, SamplingParams::greedy(), 4), qint64{-1});

        bridge.load(dir_.filePath(QStringLiteral("missing.gguf")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, kLoadTimeoutMs);
        QVERIFY(bridge.errorString().contains(QLatin1String("missing.gguf")));

        // A good load clears the error; a bad one afterwards keeps the good model.
        bridge.load(QUrl::fromLocalFile(model_path_).toString());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 3, kLoadTimeoutMs);
        QVERIFY(bridge.loaded());
        QVERIFY(bridge.errorString().isEmpty());
        bridge.load(bad);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 4, kLoadTimeoutMs);
        QVERIFY(bridge.loaded());
        QVERIFY(!bridge.errorString().isEmpty());
    }

    // The user's engine settings reach the engine the bridge creates (and a change
    // applies when the model is next opened, not to the one running).
    void engineSettingsApplyOnLoad() {
        AppSettings settings(dir_.filePath(QStringLiteral("engine-settings.ini")));
        settings.setThreads(1);
        settings.setKvCacheMb(24);
        settings.setPinnedShare(0.5);
        EngineBridge bridge;
        bridge.setSettings(&settings);
        bridge.load(model_path_);
        QTRY_VERIFY_WITH_TIMEOUT(bridge.loaded(), kLoadTimeoutMs);
        QCOMPARE(bridge.engine()->config().n_threads, 1);
        QCOMPARE(bridge.engine()->config().kv_mb, std::size_t{24});
        QCOMPARE(bridge.engine()->config().max_pinned_share, 0.5);
        const qint64 kv_24 = bridge.kvCacheBytes();
        QVERIFY(kv_24 > 0);

        settings.setKvCacheMb(40);
        settings.setPinnedShare(0.2);
        QCOMPARE(bridge.engine()->config().kv_mb, std::size_t{24});  // not reopened
        QSignalSpy changed(&bridge, &EngineBridge::modelChanged);
        bridge.load(bridge.modelPath());
        QTRY_VERIFY_WITH_TIMEOUT(changed.count() >= 1 && !bridge.loading(), kLoadTimeoutMs);
        QCOMPARE(bridge.engine()->config().kv_mb, std::size_t{40});
        QCOMPARE(bridge.engine()->config().max_pinned_share, 0.2);
        QVERIFY(bridge.kvCacheBytes() > kv_24);
    }

    void bridgeDescribesTheModelAndStreams() {
        EngineBridge bridge;
        bridge.setThreads(2);
        bridge.setKvMegabytes(8);
        QSignalSpy model_changed(&bridge, &EngineBridge::modelChanged);
        bridge.load(model_path_);
        QTRY_VERIFY_WITH_TIMEOUT(bridge.loaded(), kLoadTimeoutMs);
        QCOMPARE(model_changed.count(), 1);
        QCOMPARE(bridge.architecture(), QStringLiteral("llama"));
        QCOMPARE(bridge.contextLength(), 1024);
        QVERIFY(!bridge.quantisation().isEmpty());
        QVERIFY(!bridge.backendName().isEmpty());
        QVERIFY(!bridge.modelName().isEmpty());
        QVERIFY(!bridge.fingerprint().isEmpty());
        QVERIFY(bridge.kvBlocksTotal() > 0);
        QVERIFY(bridge.tokenizer() && bridge.promptBuilder());

        // Events arrive on this thread, in order, under the bridge's id.
        std::vector<sched::EventKind> kinds;
        QThread* gui = QThread::currentThread();
        bool on_gui = true;
        connect(&bridge, &EngineBridge::requestEvent, this, [&](const sched::Event& e) {
            kinds.push_back(e.kind);
            on_gui = on_gui && QThread::currentThread() == gui;
        });
        sched::Request r;
        r.conversation = 3;
        r.prompt = bridge.promptBuilder()->persona_prefix(std::string("hello world"));
        r.max_tokens = 6;
        r.stop_at_end_of_generation = false;
        const qint64 id = bridge.submit(r);
        QVERIFY(id > 0);
        QTRY_VERIFY_WITH_TIMEOUT(!kinds.empty() && kinds.back() == sched::EventKind::Finished, kReplyTimeoutMs);
        QVERIFY(on_gui);
        QCOMPARE(std::count(kinds.begin(), kinds.end(), sched::EventKind::Token), 6);
        QTRY_VERIFY(bridge.tokensPerSecond() >= 0);

        // Switching models while generating: the request ends as cancelled.
        r.conversation = 4;
        r.max_tokens = 400;
        kinds.clear();
        const qint64 id2 = bridge.submit(r);
        QVERIFY(id2 > id);
        QTRY_VERIFY_WITH_TIMEOUT(!kinds.empty(), kReplyTimeoutMs);
        QSignalSpy about(&bridge, &EngineBridge::aboutToUnload);
        bridge.load(model_path_);
        QTRY_COMPARE_WITH_TIMEOUT(model_changed.count(), 2, kLoadTimeoutMs);
        QCOMPARE(about.count(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(!kinds.empty() && kinds.back() == sched::EventKind::Finished, kReplyTimeoutMs);
        bridge.unload();
        QVERIFY(!bridge.loaded());
    }

    void personasAreSeededAndKeptWarm() {
        App app;
        START(app, QStringLiteral("personas.sqlite3"));
        QTRY_COMPARE(app.personas.count(), 4);
        // The default "Assistant" is kept warm: pinned once the model is there.
        int assistant = -1;
        for (int i = 0; i < app.personas.count(); ++i)
            if (role(app.personas, i, "name").toString() == QLatin1String("Assistant")) assistant = i;
        QVERIFY(assistant >= 0);
        QVERIFY(role(app.personas, assistant, "keepWarm").toBool());
        QTRY_COMPARE_WITH_TIMEOUT(role(app.personas, app.personas.rowOf(role(app.personas, assistant, "personaId").toLongLong()), "warmState").toString(),
                                  QStringLiteral("pinned"), 30000);

        QSignalSpy created(&app.personas, &PersonaListModel::personaCreated);
        app.personas.create(QStringLiteral("Pirate"), kSystemPrompt, QStringLiteral("#aa3300"), QStringLiteral("P"), false);
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
        QTRY_COMPARE_WITH_TIMEOUT(role(app.personas, app.personas.rowOf(pirate), "warmState").toString(),
                                  QStringLiteral("pinned"), 30000);
        QTRY_VERIFY(app.bridge.kvBlocksPinned() > 0);

        app.personas.edit(pirate, {{QStringLiteral("name"), QStringLiteral("Captain")}});
        QTRY_COMPARE(role(app.personas, app.personas.rowOf(pirate), "name").toString(), QStringLiteral("Captain"));

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
        QTRY_COMPARE(role(app.personas, app.personas.rowOf(pirate), "warmState").toString(), QString());
        app.personas.remove(pirate);
        QTRY_COMPARE(app.personas.count(), 5);
        QCOMPARE(app.personas.rowOf(pirate), -1);

        // A new model warms every keep-warm persona up again.
        app.bridge.load(model_path_);
        QSignalSpy changed(&app.bridge, &EngineBridge::modelChanged);
        QVERIFY(changed.wait(kLoadTimeoutMs));
        QTRY_COMPARE_WITH_TIMEOUT(role(app.personas, assistant, "warmState").toString(), QStringLiteral("pinned"), 30000);
    }

    void twoChatsWithOnePersona() {
        App app;
        START(app, QStringLiteral("chats.sqlite3"));
        QTRY_COMPARE(app.personas.count(), 4);
        QSignalSpy created(&app.personas, &PersonaListModel::personaCreated);
        app.personas.create(QStringLiteral("Tester"), kSystemPrompt, QString(), QString(), true);
        QVERIFY(created.wait(10000));
        const qint64 persona = created.at(0).at(0).toLongLong();
        QTRY_COMPARE_WITH_TIMEOUT(app.bridge.pinState(persona), QStringLiteral("pinned"), 30000);

        const qint64 c1 = create_conversation(app, persona);
        const qint64 c2 = create_conversation(app, persona);
        QVERIFY(c1 > 0 && c2 > 0 && c1 != c2);
        QTRY_COMPARE(app.conversations.count(), 2);

        // ---- chat 1: a streamed reply that ends with statistics ----
        app.chat.setMaxReplyTokens(160);
        app.chat.setConversationId(c1);
        QTRY_VERIFY(app.chat.canSend());
        QCOMPARE(app.chat.count(), 0);
        QCOMPARE(app.chat.personaName(), QStringLiteral("Tester"));
        std::vector<int> lengths_seen;  // of the reply's text while it streamed
        connect(&app.chat, &QAbstractItemModel::dataChanged, this, [&](const QModelIndex& tl, const QModelIndex&) {
            if (role(app.chat, tl.row(), "state").toString() == QLatin1String("streaming"))
                lengths_seen.push_back(role(app.chat, tl.row(), "generatedTokens").toInt());
        });
        QSignalSpy generating(&app.chat, &MessageListModel::generatingChanged);
        int row = send_and_wait(app, QStringLiteral("Hello there, tell me a story"));
        QVERIFY(row >= 0);
        QVERIFY(generating.count() >= 2);  // on, then off
        QVERIFY(!app.chat.generating());
        QCOMPARE(app.chat.count(), 2);
        QCOMPARE(row, 1);
        QCOMPARE(role(app.chat, 0, "role").toString(), QStringLiteral("user"));
        QCOMPARE(role(app.chat, 0, "text").toString(), QStringLiteral("Hello there, tell me a story"));
        QCOMPARE(role(app.chat, 1, "role").toString(), QStringLiteral("assistant"));
        QCOMPARE(role(app.chat, 1, "state").toString(), QStringLiteral("done"));
        QCOMPARE(role(app.chat, 1, "generatedTokens").toInt(), 160);
        QVERIFY(role(app.chat, 1, "ttftMs").toDouble() > 0);
        QVERIFY(role(app.chat, 1, "tokensPerSecond").toDouble() > 0);
        QVERIFY(role(app.chat, 1, "inContext").toBool());
        // The persona was pinned: its whole blocks came from the cache.
        const int cached1 = role(app.chat, 1, "promptTokensCached").toInt();
        const int computed1 = role(app.chat, 1, "promptTokensComputed").toInt();
        QVERIFY2(cached1 >= 16, qPrintable(QString::number(cached1)));
        QVERIFY(computed1 > 0);
        // It grew while streaming: several different lengths were shown before the end.
        std::sort(lengths_seen.begin(), lengths_seen.end());
        lengths_seen.erase(std::unique(lengths_seen.begin(), lengths_seen.end()), lengths_seen.end());
        QVERIFY2(lengths_seen.size() >= 2, qPrintable(QString::number(lengths_seen.size())));
        const QString reply1 = role(app.chat, 1, "text").toString();
        QVERIFY(!reply1.isEmpty());
        // The conversation was named after its first message.
        QTRY_COMPARE(app.chat.title(), QStringLiteral("Hello there, tell me a story"));

        // ---- chat 2, same persona: its prefix comes from the cache ----
        app.chat.setConversationId(c2);
        QCOMPARE(app.chat.count(), 0);
        QTRY_VERIFY(app.chat.canSend());
        row = send_and_wait(app, QStringLiteral("Second chat here"));
        QVERIFY(row >= 0);
        QVERIFY(role(app.chat, row, "promptTokensCached").toInt() >= 16);
        QCOMPARE(role(app.chat, row, "state").toString(), QStringLiteral("done"));

        // ---- back to chat 1: the stored thread, then a second turn from the cache ----
        app.chat.setConversationId(c1);
        QTRY_COMPARE(app.chat.count(), 2);
        QCOMPARE(role(app.chat, 1, "text").toString(), reply1);
        QCOMPARE(role(app.chat, 1, "promptTokensCached").toInt(), cached1);  // stored stats
        QTRY_VERIFY(app.chat.canSend());
        row = send_and_wait(app, QStringLiteral("Go on"));
        QCOMPARE(row, 3);
        // The whole first turn (prompt and reply) was reused, give or take a block.
        const int cached2 = role(app.chat, 3, "promptTokensCached").toInt();
        QVERIFY2(cached2 >= cached1 + computed1 + 160 - 16, qPrintable(QString::number(cached2)));

        // ---- regenerate: a second variant of the last reply; page back and forth ----
        const QString reply2 = role(app.chat, 3, "text").toString();
        const qint64 variant1 = role(app.chat, 3, "messageId").toLongLong();
        QSignalSpy finished(&app.chat, &MessageListModel::replyFinished);
        app.chat.setDefaultSampling([] {
            SamplingParams p;
            p.temperature = 1.5f;
            p.top_k = 0;
            p.top_p = 1.0f;
            p.min_p = 0.0f;
            p.seed = 99;
            return p;
        }());
        QVERIFY(app.chat.regenerate());
        QVERIFY(finished.wait(kReplyTimeoutMs));
        QTRY_COMPARE(role(app.chat, 3, "variantCount").toInt(), 2);
        QCOMPARE(role(app.chat, 3, "variantIndex").toInt(), 1);
        QCOMPARE(app.chat.count(), 4);
        const qint64 variant2 = role(app.chat, 3, "messageId").toLongLong();
        const QString reply2b = role(app.chat, 3, "text").toString();
        // (The synthetic model's replies may well read the same; the ids differ.)
        QVERIFY(variant2 != variant1);
        QCOMPARE(role(app.chat, 3, "state").toString(), QStringLiteral("done"));
        app.chat.pageVariant(variant2, -1);
        QTRY_COMPARE(role(app.chat, 3, "variantIndex").toInt(), 0);
        QCOMPARE(role(app.chat, 3, "messageId").toLongLong(), variant1);
        QCOMPARE(role(app.chat, 3, "text").toString(), reply2);
        app.chat.pageVariant(role(app.chat, 3, "messageId").toLongLong(), +1);
        QTRY_COMPARE(role(app.chat, 3, "messageId").toLongLong(), variant2);
        QCOMPARE(role(app.chat, 3, "text").toString(), reply2b);

        // ---- edit the first message: a branch with a reply of its own ----
        app.chat.setDefaultSampling(SamplingParams::greedy());
        const qint64 first = role(app.chat, 0, "messageId").toLongLong();
        finished.clear();
        QVERIFY(app.chat.editAndResend(first, QStringLiteral("Hello, a different question")));
        QVERIFY(finished.wait(kReplyTimeoutMs));
        QTRY_COMPARE(app.chat.count(), 2);
        QCOMPARE(role(app.chat, 0, "text").toString(), QStringLiteral("Hello, a different question"));
        QCOMPARE(role(app.chat, 0, "variantCount").toInt(), 2);
        QCOMPARE(role(app.chat, 0, "variantIndex").toInt(), 1);
        QCOMPARE(role(app.chat, 1, "state").toString(), QStringLiteral("done"));
        // Paging the first message back restores the old branch below it.
        app.chat.pageVariant(role(app.chat, 0, "messageId").toLongLong(), -1);
        QTRY_COMPARE(app.chat.count(), 4);
        QCOMPARE(role(app.chat, 3, "messageId").toLongLong(), variant2);

        // ---- stop a reply ----
        app.chat.setMaxReplyTokens(500);
        finished.clear();
        bool stopped_early = false;
        QMetaObject::Connection c = connect(&app.bridge, &EngineBridge::requestEvent, this, [&](const sched::Event& e) {
            if (e.kind == sched::EventKind::Token && !stopped_early) {
                stopped_early = true;
                app.chat.stop();
            }
        });
        QVERIFY(app.chat.send(QStringLiteral("Please stop me")));
        QVERIFY(app.chat.generating());
        QVERIFY(finished.wait(kReplyTimeoutMs));
        disconnect(c);
        QVERIFY(stopped_early);
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("stopped"));
        QTRY_COMPARE(app.chat.count(), 6);
        QCOMPARE(role(app.chat, 5, "state").toString(), QStringLiteral("stopped"));
        QVERIFY(role(app.chat, 5, "generatedTokens").toInt() < 500);
        QVERIFY(!app.chat.generating());
        QVERIFY(app.chat.canSend());
        // The stored copy says so too.
        app.chat.reload();
        QTRY_COMPARE(role(app.chat, 5, "state").toString(), QStringLiteral("stopped"));

        // ---- search ----
        app.conversations.search(QStringLiteral("second"));
        QVERIFY(app.conversations.searching());
        QTRY_VERIFY(app.conversations.count() >= 1 && role(app.conversations, 0, "isSearchHit").toBool());
        QCOMPARE(role(app.conversations, 0, "conversationId").toLongLong(), c2);
        QVERIFY(role(app.conversations, 0, "snippet").toString().contains(QLatin1String("Second")));
        QVERIFY(!role(app.conversations, 0, "highlights").toList().isEmpty());
        QVERIFY(role(app.conversations, 0, "snippetHtml").toString().contains(QLatin1String("<b>Second</b>")));
        app.conversations.search(QString());
        QTRY_VERIFY(app.conversations.count() == 2 && !role(app.conversations, 0, "isSearchHit").toBool());
        // Newest first: chat 1 had the last message.
        QCOMPARE(role(app.conversations, 0, "conversationId").toLongLong(), c1);
    }

    // The end of a reply racing a reload: a reload issued just before the Finished event
    // is handled reads the store while the reply is still "streaming" there, and its
    // snapshot arrives after the model ended the stream. The row must not go back to
    // streaming (it used to, until another reload came, or for good when none did).
    void staleReloadAfterEndKeepsTheEnd() {
        App app;
        // Runs before the model's own handler (connected in start()): on the reply's
        // Finished event, reload first.
        int reloads = 0;
        connect(&app.bridge, &EngineBridge::requestEvent, this, [&](const sched::Event& e) {
            if (e.kind == sched::EventKind::Finished) {
                app.chat.reload();
                ++reloads;
            }
        });
        START(app, QStringLiteral("stale-reload.sqlite3"));
        const qint64 c = create_conversation(app, -1);
        QVERIFY(c > 0);
        app.chat.setMaxReplyTokens(24);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());

        for (int turn = 0; turn < 3; ++turn) {
            qint64 reply = -1;
            QStringList states_after_end;  // of the reply's row, once it ended
            auto record = [&](int row) {
                if (reply >= 0 && row >= 0 &&
                    role(app.chat, row, "messageId").toLongLong() == reply)
                    states_after_end.append(role(app.chat, row, "state").toString());
            };
            auto on_changed = connect(&app.chat, &QAbstractItemModel::dataChanged, this,
                                      [&](const QModelIndex& tl, const QModelIndex& br) {
                                          for (int r = tl.row(); r <= br.row(); ++r) record(r);
                                      });
            auto on_inserted = connect(&app.chat, &QAbstractItemModel::rowsInserted, this,
                                       [&](const QModelIndex&, int first, int last) {
                                           for (int r = first; r <= last; ++r) record(r);
                                       });
            auto on_finished = connect(&app.chat, &MessageListModel::replyFinished, this,
                                       [&](qint64 id, const QString&) { reply = id; });
            QSignalSpy finished(&app.chat, &MessageListModel::replyFinished);
            QVERIFY(app.chat.send(QStringLiteral("Turn %1, say something").arg(turn)));
            QVERIFY(finished.wait(kReplyTimeoutMs));
            const int before = reloads;
            QVERIFY(before >= turn + 1);
            // Let the stale snapshot, the store's write and the reloads after it land.
            QTest::qWait(300);
            const int row = app.chat.rowOf(reply);
            QVERIFY(row >= 0);
            QCOMPARE(role(app.chat, row, "state").toString(), QStringLiteral("done"));
            QCOMPARE(role(app.chat, row, "generatedTokens").toInt(), 24);
            QVERIFY2(!states_after_end.contains(QStringLiteral("streaming")),
                     qPrintable(states_after_end.join(QLatin1Char(','))));
            QVERIFY(!app.chat.generating());
            disconnect(on_changed);
            disconnect(on_inserted);
            disconnect(on_finished);
        }
    }

    void conversationListActions() {
        App app;
        START(app, QStringLiteral("list.sqlite3"), /*load=*/false);
        const qint64 a = create_conversation(app, -1);
        QTest::qWait(5);  // distinct creation times, so the order is defined
        const qint64 b = create_conversation(app, -1);
        QVERIFY(a > 0 && b > 0);
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

    // Every row has its text split into prose and code (the `segments` role), kept up to
    // date while a reply streams (announced with the text) and forgotten with the row.
    void segmentsRole() {
        App app;
        START(app, QStringLiteral("segments.sqlite3"));
        const qint64 c = create_conversation(app, -1);
        QVERIFY(c > 0);
        app.chat.setMaxReplyTokens(160);  // long enough to be seen streaming
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());
        QVERIFY(app.chat.roleNames().value(MessageListModel::SegmentsRole) == "segments");

        int streamed = 0;
        QStringList mismatches;
        connect(&app.chat, &QAbstractItemModel::dataChanged, this,
                [&](const QModelIndex& tl, const QModelIndex&, const QList<int>& roles) {
                    if (!roles.contains(MessageListModel::TextRole)) return;
                    if (!roles.contains(MessageListModel::SegmentsRole)) {
                        mismatches << QStringLiteral("text changed without its segments");
                        return;
                    }
                    ++streamed;
                    const QString text = role(app.chat, tl.row(), "text").toString();
                    if (role(app.chat, tl.row(), "segments").toList() != expected_segments(text))
                        mismatches << text;
                });
        const QString message = QStringLiteral(
            "Why do these "
            "differ?\n\n```python\nprint(`a`)\n```\n\nand\n\n~~~js\nconsole.log(1)\n~~~");
        QSignalSpy finished(&app.chat, &MessageListModel::replyFinished);
        QVERIFY(app.chat.send(message));
        QVERIFY(finished.wait(kReplyTimeoutMs));
        // The reply's row comes with the reload begin_reply starts (a short reply may end first).
        const qint64 reply = finished.at(0).at(0).toLongLong();
        QTRY_VERIFY(app.chat.rowOf(reply) > 0);
        const int row = app.chat.rowOf(reply);
        QVERIFY2(mismatches.isEmpty(), qPrintable(mismatches.join(QStringLiteral("\n---\n"))));
        QVERIFY(streamed > 3);

        const QVariantList user = role(app.chat, row - 1, "segments").toList();
        QCOMPARE(user.size(), 4);
        const auto seg = [&](int i, const char* key) {
            return user.at(i).toMap().value(QLatin1String(key));
        };
        QCOMPARE(seg(0, "kind").toString(), QStringLiteral("text"));
        QCOMPARE(seg(0, "text").toString(), QStringLiteral("Why do these differ?"));
        QCOMPARE(seg(1, "kind").toString(), QStringLiteral("code"));
        QCOMPARE(seg(1, "language").toString(), QStringLiteral("python"));
        QCOMPARE(seg(1, "text").toString(), QStringLiteral("print(`a`)"));
        QCOMPARE(seg(1, "open").toBool(), false);
        QCOMPARE(seg(2, "text").toString(), QStringLiteral("and"));
        QCOMPARE(seg(3, "language").toString(), QStringLiteral("js"));
        QCOMPARE(seg(3, "text").toString(), QStringLiteral("console.log(1)"));
        QCOMPARE(app.chat.get(row - 1).value(QStringLiteral("segments")).toList(), user);
        // The finished reply (and after a reload from the store) splits as its text does.
        QTRY_COMPARE(role(app.chat, row, "state").toString(), QStringLiteral("done"));
        QCOMPARE(role(app.chat, row, "segments").toList(),
                 expected_segments(role(app.chat, row, "text").toString()));
        app.chat.reload();
        QTRY_COMPARE(role(app.chat, row, "segments").toList(),
                     expected_segments(role(app.chat, row, "text").toString()));
        // No clipboard without a QGuiApplication; never for prose or a segment not there.
        const qint64 user_id = role(app.chat, row - 1, "messageId").toLongLong();
        QVERIFY(!app.chat.copyCode(user_id, 1));
        QVERIFY(!app.chat.copyCode(user_id, 0));
        QVERIFY(!app.chat.copyCode(user_id, 9));
        QVERIFY(!app.chat.copyCode(-5, 1));
        // Another conversation: rows (and their segments) replaced.
        const qint64 other = create_conversation(app, -1);
        app.chat.setConversationId(other);
        QTRY_VERIFY(app.chat.canSend());
        QCOMPARE(app.chat.count(), 0);
        app.chat.setConversationId(c);
        QTRY_COMPARE(app.chat.count(), 2);
        QCOMPARE(role(app.chat, 0, "segments").toList(), user);
    }

    void destroyedWhileStreaming() {
        QString db;
        {
            App app;
            START(app, QStringLiteral("teardown.sqlite3"));
            const qint64 c = create_conversation(app, -1);
            app.chat.setMaxReplyTokens(500);
            app.chat.setConversationId(c);
            QTRY_VERIFY(app.chat.canSend());
            QSignalSpy started(&app.chat, &MessageListModel::replyStarted);
            QVERIFY(app.chat.send(QStringLiteral("Talk for a long time")));
            QVERIFY(started.wait(kReplyTimeoutMs));
        }  // everything goes at once, mid-reply
        // The reply was kept, marked stopped.
        App again;
        START(again, QStringLiteral("teardown.sqlite3"), false);
        QTRY_COMPARE(again.conversations.count(), 1);
        again.chat.setConversationId(role(again.conversations, 0, "conversationId").toLongLong());
        QTRY_COMPARE(again.chat.count(), 2);
        QCOMPARE(role(again.chat, 1, "state").toString(), QStringLiteral("stopped"));
    }
};

QTEST_GUILESS_MAIN(TestAppModels)
#include "tst_app_models.moc"
