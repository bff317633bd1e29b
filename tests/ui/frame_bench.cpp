// hearth-ui-frame-bench: the real main window offscreen streams a reply while every frame
// swap is timed (QQuickWindow::frameSwapped); prints the frame intervals' p50 / p99 / max.
// A 60 Hz timer changes a small item in a corner of the window all along (as a scroll or
// any running transition would), so a frame is wanted every display interval and the
// intervals show whether the GUI thread keeps up while tokens arrive, rather than how
// often tokens arrive. The same window idle for two seconds is the baseline. A benchmark, not a
// test: nothing is asserted about time.
//
//   hearth-ui-frame-bench [--tokens N] [--model file.gguf] [--replies R]
// Offscreen (QT_QPA_PLATFORM=offscreen is set unless given) and, unless HEARTH_UI_RHI is set,
// with Qt Quick's software renderer, so the numbers are the GUI thread's own cost.
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QGuiApplication>
#include <QQmlComponent>
#include <QQuickItem>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "core/conversation_list_model.h"
#include "core/engine_bridge.h"
#include "core/message_list_model.h"
#include "frame_probe.h"
#include "ui_harness.h"

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    UiHarness::prepare_process();
    QGuiApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    QCommandLineOption tokens_opt(QStringLiteral("tokens"), QStringLiteral("tokens per reply"),
                                  QStringLiteral("N"), QStringLiteral("256"));
    QCommandLineOption replies_opt(QStringLiteral("replies"), QStringLiteral("replies to stream"),
                                   QStringLiteral("R"), QStringLiteral("3"));
    QCommandLineOption model_opt(QStringLiteral("model"),
                                 QStringLiteral("a GGUF instead of the synthetic model"),
                                 QStringLiteral("file"));
    parser.addOptions({tokens_opt, replies_opt, model_opt});
    parser.process(app);
    const int tokens = parser.value(tokens_opt).toInt();
    const int replies = parser.value(replies_opt).toInt();

    UiHarness ui;
    QString error;
    if (!ui.start(QStringLiteral("light"), &error, parser.value(model_opt))) {
        std::fprintf(stderr, "hearth-ui-frame-bench: %s\n", qPrintable(error));
        return 1;
    }
    ui.chat->setMaxReplyTokens(tokens);
    FrameProbe probe(ui.window, ui.engine.get());
    if (!probe.ok()) return 1;
    QSignalSpy created(ui.conversations, &ConversationListModel::conversationCreated);
    ui.conversations->createConversation(-1);
    UiHarness::run_until([&] { return !created.isEmpty(); }, 10000);
    if (created.isEmpty()) return 1;
    UiHarness::run_until(
        [&] { return ui.chat->conversationId() == created.at(0).at(0).toLongLong(); }, 10000);

    // Baseline: the same window with nothing streaming, for two seconds.
    UiHarness::run_for(300);
    probe.start_recording();
    UiHarness::run_for(2000);
    probe.stop_recording();
    const std::vector<double> idle = probe.take_frames();
    const std::vector<double> idle_ticks = probe.take_ticks();
    QElapsedTimer clock;
    clock.start();

    int generated = 0;
    qint64 stream_ns = 0;
    for (int r = 0; r < replies; ++r) {
        UiHarness::run_until([&] { return ui.chat->canSend(); }, 10000);
        UiHarness::run_for(100);
        QSignalSpy started(ui.chat, &MessageListModel::replyStarted);
        QSignalSpy finished(ui.chat, &MessageListModel::replyFinished);
        if (!ui.chat->send(QStringLiteral("Tell me a long story, number %1.").arg(r + 1))) {
            std::fprintf(stderr, "hearth-ui-frame-bench: send failed\n");
            return 1;
        }
        const qint64 t0 = clock.nsecsElapsed();
        probe.start_recording();
        UiHarness::run_until([&] { return !finished.isEmpty(); }, 300000);
        if (finished.isEmpty()) return 1;
        probe.stop_recording();
        stream_ns += clock.nsecsElapsed() - t0;
        // (The reply's row comes with a reload that may land after the reply's end.)
        const qint64 reply_id = finished.at(0).at(0).toLongLong();
        UiHarness::run_until([&] { return ui.chat->rowOf(reply_id) >= 0; }, 10000);
        const int row = ui.chat->rowOf(reply_id);
        if (row < 0) {
            std::fprintf(stderr, "hearth-ui-frame-bench: no row for the reply\n");
            return 1;
        }
        generated += ui.chat->get(row).value(QStringLiteral("generatedTokens")).toInt();
    }
    const std::vector<double> intervals = probe.take_frames();
    const std::vector<double> ticks = probe.take_ticks();
    const std::vector<double> costs = probe.take_frame_costs();
    std::printf(
        "hearth-ui-frame-bench: %d replies, %d tokens streamed in %.2f s (%.1f tokens/s), %zu "
        "frames\n",
        replies, generated, static_cast<double>(stream_ns) / 1e9,
        generated / (static_cast<double>(stream_ns) / 1e9),
        intervals.size() + static_cast<size_t>(replies));
    const auto row = [](const char* name, const std::vector<double>& v,
                        const char* unit = "frames") {
        std::printf("%-10s %6zu %-6s  p50 %6.2f  p90 %6.2f  p99 %6.2f  max %6.2f ms\n", name,
                    v.size(), unit, percentile(v, 50), percentile(v, 90), percentile(v, 99),
                    v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()));
    };
    std::printf("frame intervals (renderer: %s):\n",
                qEnvironmentVariableIsEmpty("HEARTH_UI_RHI")
                    ? "software"
                    : qPrintable(qEnvironmentVariable("HEARTH_UI_RHI")));
    row("idle", idle);
    row("streaming", intervals);
    std::printf("streaming p99 / idle p99 = %.2f (target: streaming p99 < 20 ms)\n",
                percentile(intervals, 99) / std::max(1e-9, percentile(idle, 99)));
    row("cost", costs);
    std::printf("(cost: polish/sync to swap of each frame while streaming)\n");
    std::printf("GUI event loop: intervals of a 16.7 ms precise timer:\n");
    row("idle", idle_ticks, "ticks");
    row("streaming", ticks, "ticks");
    return 0;
}
