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
#include "ui_harness.h"

namespace {

// Runs the event loop until pred() holds or ms have passed. (QTest::qWait sleeps between
// rounds of event processing, which would itself delay frames.)
template <typename Pred>
bool run_until(Pred pred, int ms) {
    if (pred()) return true;
    QEventLoop loop;
    QTimer poll;
    poll.setInterval(2);
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (pred()) loop.quit();
    });
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    poll.start();
    loop.exec();
    return pred();
}

void run_for(int ms) {
    run_until([] { return false; }, ms);
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t i = std::min(
        v.size() - 1, static_cast<size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5));
    return v[i];
}

}  // namespace

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
    // The display: a precise 60 Hz timer asks for a frame (an offscreen window has no
    // vsync, and Qt's animation timer there ticks every ~21 ms), and a small item turns a
    // little every frame so that each one has something to draw.
    QQmlComponent ticker(ui.engine.get());
    ticker.setData("import QtQuick\nRectangle { width: 6; height: 6; color: \"#c0c0c0\" }", QUrl());
    auto* tick = qobject_cast<QQuickItem*>(ticker.create());
    if (!tick) {
        std::fprintf(stderr, "hearth-ui-frame-bench: %s\n", qPrintable(ticker.errorString()));
        return 1;
    }
    tick->setParentItem(ui.window->contentItem());
    QTimer vsync;
    vsync.setTimerType(Qt::PreciseTimer);
    vsync.setInterval(std::chrono::microseconds(16667).count() / 1000);
    // The timer's own tick intervals: how long the GUI thread's event loop was unable to
    // run (16.7 ms when it never is).
    std::vector<double> ticks;
    qint64 last_tick_ns = -1;
    QElapsedTimer tick_clock;
    tick_clock.start();
    bool tick_recording = false;
    QObject::connect(&vsync, &QTimer::timeout, tick, [&, tick] {
        tick->setRotation(tick->rotation() + 6);
        const qint64 now = tick_clock.nsecsElapsed();
        if (tick_recording && last_tick_ns >= 0)
            ticks.push_back(static_cast<double>(now - last_tick_ns) / 1e6);
        last_tick_ns = now;
    });
    vsync.start();
    QSignalSpy created(ui.conversations, &ConversationListModel::conversationCreated);
    ui.conversations->createConversation(-1);
    run_until([&] { return !created.isEmpty(); }, 10000);
    if (created.isEmpty()) return 1;
    run_until([&] { return ui.chat->conversationId() == created.at(0).at(0).toLongLong(); }, 10000);

    std::vector<double> intervals;
    QElapsedTimer clock;
    clock.start();
    qint64 last_ns = -1;
    bool recording = false;
    QObject::connect(
        ui.window, &QQuickWindow::frameSwapped, ui.window,
        [&] {
            const qint64 now = clock.nsecsElapsed();
            if (recording && last_ns >= 0)
                intervals.push_back(static_cast<double>(now - last_ns) / 1e6);
            last_ns = now;
        },
        Qt::DirectConnection);

    // Baseline: the same window with nothing streaming, for two seconds.
    run_for(300);
    last_ns = last_tick_ns = -1;
    recording = tick_recording = true;
    run_for(2000);
    recording = tick_recording = false;
    const std::vector<double> idle = std::exchange(intervals, {});
    const std::vector<double> idle_ticks = std::exchange(ticks, {});

    int generated = 0;
    qint64 stream_ns = 0;
    for (int r = 0; r < replies; ++r) {
        run_until([&] { return ui.chat->canSend(); }, 10000);
        run_for(100);
        QSignalSpy started(ui.chat, &MessageListModel::replyStarted);
        QSignalSpy finished(ui.chat, &MessageListModel::replyFinished);
        if (!ui.chat->send(QStringLiteral("Tell me a long story, number %1.").arg(r + 1))) {
            std::fprintf(stderr, "hearth-ui-frame-bench: send failed\n");
            return 1;
        }
        const qint64 t0 = clock.nsecsElapsed();
        last_ns = last_tick_ns = -1;
        recording = tick_recording = true;
        run_until([&] { return !finished.isEmpty(); }, 300000);
        if (finished.isEmpty()) return 1;
        recording = tick_recording = false;
        stream_ns += clock.nsecsElapsed() - t0;
        const int row = ui.chat->rowOf(finished.at(0).at(0).toLongLong());
        generated += ui.chat->get(row).value(QStringLiteral("generatedTokens")).toInt();
    }
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
    std::printf("GUI event loop: intervals of a 16.7 ms precise timer:\n");
    row("idle", idle_ticks, "ticks");
    row("streaming", ticks, "ticks");
    return 0;
}
