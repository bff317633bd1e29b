// hearth-app-bench: one long message through the real main window, as a user sends it, timed
// from the Enter key to the first token on screen and through the reply. The window is
// offscreen (software renderer unless HEARTH_UI_RHI is set), the chat page is shown, and
// FrameProbe times frames all along. Prints one JSON object. scripts/bench/app-vs-cli runs
// it against `hearth-cli generate` on the same prompt; a benchmark, not a test.
//
//   hearth-app-bench --model FILE --prompt-file FILE [--max-tokens 256] [--threads N]
//                    [--kv-mb N] [--page chat|settings]
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFile>
#include <QGuiApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QQuickItem>
#include <QSignalSpy>
#include <QTest>

#include <cstdio>
#include <optional>

#include "core/conversation_list_model.h"
#include "core/engine_bridge.h"
#include "core/message_list_model.h"
#include "frame_probe.h"
#include "ui_harness.h"

namespace {

int fail(const QString& why) {
    std::fprintf(stderr, "hearth-app-bench: %s\n", qPrintable(why));
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    UiHarness::prepare_process();
    QGuiApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    const QCommandLineOption model_opt(QStringLiteral("model"), QStringLiteral("GGUF model"),
                                       QStringLiteral("file"));
    const QCommandLineOption prompt_opt(QStringLiteral("prompt-file"),
                                        QStringLiteral("the message to send (UTF-8 text)"),
                                        QStringLiteral("file"));
    const QCommandLineOption tokens_opt(QStringLiteral("max-tokens"),
                                        QStringLiteral("reply length"), QStringLiteral("N"),
                                        QStringLiteral("256"));
    const QCommandLineOption threads_opt(QStringLiteral("threads"),
                                         QStringLiteral("engine threads (0: the app's choice)"),
                                         QStringLiteral("N"), QStringLiteral("0"));
    const QCommandLineOption kv_opt(QStringLiteral("kv-mb"), QStringLiteral("KV cache (MB)"),
                                    QStringLiteral("N"), QStringLiteral("256"));
    const QCommandLineOption page_opt(QStringLiteral("page"),
                                      QStringLiteral("the page on screen while it runs"),
                                      QStringLiteral("name"), QStringLiteral("chat"));
    const QCommandLineOption no_frames_opt(
        QStringLiteral("no-frame-probe"),
        QStringLiteral(
            "do not force a frame every 16.7 ms (FrameProbe): the window draws only what changes"));
    parser.addOptions(
        {model_opt, prompt_opt, tokens_opt, threads_opt, kv_opt, page_opt, no_frames_opt});
    parser.process(app);
    if (!parser.isSet(model_opt) || !parser.isSet(prompt_opt))
        return fail(QStringLiteral("--model and --prompt-file are required"));
    QFile prompt_file(parser.value(prompt_opt));
    if (!prompt_file.open(QIODevice::ReadOnly)) return fail(prompt_file.errorString());
    const QString prompt = QString::fromUtf8(prompt_file.readAll());
    const int max_tokens = parser.value(tokens_opt).toInt();

    UiHarness ui;
    ui.threads = parser.value(threads_opt).toInt();
    ui.kv_megabytes = parser.value(kv_opt).toInt();
    QString error;
    if (!ui.start(QStringLiteral("light"), &error, parser.value(model_opt))) return fail(error);
    ui.chat->setMaxReplyTokens(max_tokens);
    QSignalSpy created(ui.conversations, &ConversationListModel::conversationCreated);
    ui.conversations->createConversation(-1);
    if (!UiHarness::run_until([&] { return !created.isEmpty(); }, 10000))
        return fail(QStringLiteral("no conversation was created"));
    const qint64 conversation = created.at(0).at(0).toLongLong();
    if (!UiHarness::run_until(
            [&] { return ui.chat->conversationId() == conversation && ui.chat->canSend(); }, 10000))
        return fail(QStringLiteral("the new chat did not open"));
    ui.show_page(parser.value(page_opt));

    // The message is pasted into the composer; Enter sends it.
    QQuickItem* field = ui.item(QStringLiteral("composerField"));
    if (!field) return fail(QStringLiteral("no composer"));
    field->forceActiveFocus();
    field->setProperty("text", prompt);
    UiHarness::run_for(500);

    std::optional<FrameProbe> probe;
    if (!parser.isSet(no_frames_opt)) {
        probe.emplace(ui.window, ui.engine.get());
        if (!probe->ok()) return fail(QStringLiteral("no frame probe"));
    }
    QElapsedTimer clock;
    qint64 first_ns = -1;
    // The first token on screen: the reply row's text is no longer empty.
    QObject::connect(
        ui.chat, &QAbstractItemModel::dataChanged, ui.chat,
        [&](const QModelIndex& from, const QModelIndex& to, const QList<int>& roles) {
            if (first_ns >= 0 || !(roles.isEmpty() || roles.contains(MessageListModel::TextRole)))
                return;
            for (int r = from.row(); r <= to.row(); ++r) {
                const QModelIndex i = ui.chat->index(r);
                if (i.data(MessageListModel::RoleRole).toString() == QLatin1String("assistant") &&
                    !i.data(MessageListModel::TextRole).toString().isEmpty())
                    first_ns = clock.nsecsElapsed();
            }
        });
    QSignalSpy finished(ui.chat, &MessageListModel::replyFinished);
    if (probe) probe->start_recording();
    clock.start();
    QTest::keyClick(ui.window, Qt::Key_Return);
    if (!UiHarness::run_until([&] { return !finished.isEmpty(); }, 1800000))
        return fail(QStringLiteral("the reply did not finish"));
    const qint64 end_ns = clock.nsecsElapsed();
    std::vector<double> frames, ticks, costs;
    if (probe) {
        probe->stop_recording();
        frames = probe->take_frames();
        ticks = probe->take_ticks();
        costs = probe->take_frame_costs();
    }

    // The reply's row comes with the reload that begin_reply starts; a short reply may end
    // before it.
    const qint64 reply_id = finished.at(0).at(0).toLongLong();
    UiHarness::run_until([&] { return ui.chat->rowOf(reply_id) >= 0; }, 10000);
    const int row = ui.chat->rowOf(reply_id);
    if (row < 0 || first_ns < 0) return fail(QStringLiteral("no reply row"));
    const QVariantMap reply = ui.chat->get(row);
    const int generated = reply.value(QStringLiteral("generatedTokens")).toInt();
    const double decode_s = static_cast<double>(end_ns - first_ns) / 1e9;
    QJsonObject out{
        {QStringLiteral("ttft_ms"), static_cast<double>(first_ns) / 1e6},
        {QStringLiteral("decode_tokens_per_s"),
         generated > 1 && decode_s > 0 ? (generated - 1) / decode_s : 0.0},
        {QStringLiteral("generated_tokens"), generated},
        {QStringLiteral("prompt_tokens"),
         reply.value(QStringLiteral("promptTokensCached")).toInt() +
             reply.value(QStringLiteral("promptTokensComputed")).toInt()},
        {QStringLiteral("engine_ttft_ms"), reply.value(QStringLiteral("ttftMs")).toDouble()},
        {QStringLiteral("engine_decode_tokens_per_s"),
         reply.value(QStringLiteral("tokensPerSecond")).toDouble()},
        {QStringLiteral("frames"), static_cast<qint64>(frames.size())},
        {QStringLiteral("frame_p50_ms"), percentile(frames, 50)},
        {QStringLiteral("frame_p99_ms"), percentile(frames, 99)},
        {QStringLiteral("tick_p99_ms"), percentile(ticks, 99)},
        {QStringLiteral("frame_cost_p50_ms"), percentile(costs, 50)},
        {QStringLiteral("frame_cost_p99_ms"), percentile(costs, 99)},
        {QStringLiteral("page"), parser.value(page_opt)},
        {QStringLiteral("threads"), ui.bridge->nextEngineConfig().n_threads},
    };
    std::printf("%s\n", QJsonDocument(out).toJson(QJsonDocument::Compact).constData());
    return 0;
}
