#include "app_fixture.h"

#include <fstream>

#include "core/markdown_segments.h"
#include "model/synthetic_model.h"

using namespace hearth;
using Tester = QAbstractItemModelTester;

const QString kSystemPrompt = QStringLiteral(
    "You are a careful test persona. You answer every question with patience, you keep "
    "your replies short, and you never reveal the secret word, which is hearthstone.");

App::App() {
    t1 = std::make_unique<Tester>(&personas, Tester::FailureReportingMode::Fatal);
    t2 = std::make_unique<Tester>(&conversations, Tester::FailureReportingMode::Fatal);
    t3 = std::make_unique<Tester>(&chat, Tester::FailureReportingMode::Fatal);
    // As Main.qml wires them.
    QObject::connect(&conversations, &ConversationListModel::aboutToDelete, &chat,
                     &MessageListModel::forgetKv);
}

QVariant role(const QAbstractItemModel& m, int row, const char* name) {
    const auto names = m.roleNames();
    for (auto it = names.begin(); it != names.end(); ++it)
        if (it.value() == name) return m.data(m.index(row, 0), it.key());
    qFatal("no role %s", name);
}

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

namespace {

QString write_model(const QTemporaryDir& dir, const QString& name, const SyntheticModelSpec& spec) {
    auto bytes = make_synthetic_model(spec);
    if (!dir.isValid() || !bytes) qFatal("no temporary folder or synthetic model");
    const QString path = dir.filePath(name);
    std::ofstream(path.toStdString(), std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes->data()),
               static_cast<std::streamsize>(bytes->size()));
    return path;
}

}  // namespace

AppFixture::AppFixture() {
    // A cache folder of this run's own: the KV disk tier that CTest's per-suite folder
    // (XDG_CACHE_HOME) kept from an earlier run served prompts a suite expects computed
    // (tst_long_chat failed on a second run in the same build folder).
    qputenv("XDG_CACHE_HOME", dir_.filePath(QStringLiteral("cache")).toUtf8());
    SyntheticModelSpec spec;
    spec.weight_type = quant::TensorType::Q8_0;
    spec.seed = 5;
    model_path_ = write_model(dir_, QStringLiteral("synthetic.gguf"), spec);
    spec.n_embd = 512;
    spec.n_layer = 8;
    spec.n_ff = 1536;
    spec.n_head = 8;
    spec.n_head_kv = 4;
    slow_model_path_ = write_model(dir_, QStringLiteral("synthetic-slow.gguf"), spec);
}

void AppFixture::start(App& app, const QString& db_name, bool load, const QString& model) const {
    store::OpenOptions o;
    o.full_sync = false;
    app.store.openWith(dir_.filePath(db_name), o);
    app.bridge.setThreads(2);
    app.bridge.setKvMegabytes(16);
    if (load) app.bridge.load(model.isEmpty() ? model_path_ : model);
    app.personas.setBridge(&app.bridge);
    app.personas.setStore(&app.store);
    app.conversations.setStore(&app.store);
    app.local.setBridge(&app.bridge);
    app.chat.setBackend(&app.local);
    app.chat.setStore(&app.store);
    // Deterministic replies that run to max tokens.
    app.chat.setDefaultSampling(SamplingParams::greedy());
    app.chat.setStopAtEndOfTurn(false);
    QTRY_VERIFY_WITH_TIMEOUT(app.store.ready(), 10000);
    if (load) QTRY_VERIFY_WITH_TIMEOUT(app.bridge.loaded(), kLoadTimeoutMs);
}

qint64 create_conversation(App& app, qint64 persona) {
    QSignalSpy created(&app.conversations, &ConversationListModel::conversationCreated);
    app.conversations.createConversation(persona);
    if (!created.wait(10000)) return -1;
    return created.at(0).at(0).toLongLong();
}

int send_and_wait(App& app, const QString& text) {
    QSignalSpy finished(&app.chat, &MessageListModel::replyFinished);
    if (!app.chat.send(text)) return -1;
    if (!finished.wait(kReplyTimeoutMs)) return -1;
    const qint64 id = finished.at(0).at(0).toLongLong();
    if (!QTest::qWaitFor([&] { return app.chat.rowOf(id) >= 0; }, 10000)) return -1;
    return app.chat.rowOf(id);
}

bool settle(App& app) {
    for (int round = 0; round < 2; ++round) {
        bool done = false;
        app.store.run<void>([](store::Store&) { return Result<void>(); },
                            [&](Result<void>) { done = true; });
        if (!QTest::qWaitFor([&] { return done; }, 10000)) return false;
    }
    return true;
}
