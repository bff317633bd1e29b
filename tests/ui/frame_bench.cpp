// hearth-ui-frame-bench: the real main window offscreen streams a reply while every frame
// swap is timed (QQuickWindow::frameSwapped); prints the frame intervals' p50 / p99 / max.
// A benchmark, not a test: nothing is asserted about time.
//
//   hearth-ui-frame-bench [--tokens N] [--model file.gguf] [--replies R]
// Offscreen (QT_QPA_PLATFORM=offscreen is set unless given) and, unless HEARTH_UI_RHI is set,
// with Qt Quick's software renderer, so the numbers are the GUI thread's own cost.
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QGuiApplication>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/engine_bridge.h"
#include "core/message_list_model.h"
#include "core/conversation_list_model.h"
#include "ui_harness.h"

namespace {

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t i = std::min(v.size() - 1, static_cast<size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5));
    return v[i];
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    UiHarness::prepare_process();
    QGuiApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    QCommandLineOption tokens_opt(QStringLiteral("tokens"), QStringLiteral("tokens per reply"), QStringLiteral("N"), QStringLiteral("256"));
    QCommandLineOption replies_opt(QStringLiteral("replies"), QStringLiteral("replies to stream"), QStringLiteral("R"), QStringLiteral("3"));
    QCommandLineOption model_opt(QStringLiteral("model"), QStringLiteral("a GGUF instead of the synthetic model"), QStringLiteral("file"));
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
    QSignalSpy created(ui.conversations, &ConversationListModel::conversationCreated);
    ui.conversations->createConversation(-1);
    for (int i = 0; i < 1000 && created.isEmpty(); ++i) QTest::qWait(10);
    if (created.isEmpty()) return 1;
    for (int i = 0; i < 1000 && ui.chat->conversationId() != created.at(0).at(0).toLongLong(); ++i) QTest::qWait(10);

    std::vector<double> intervals;
    QElapsedTimer clock;
    clock.start();
    qint64 last_ns = -1;
    bool recording = false;
    QObject::connect(ui.window, &QQuickWindow::frameSwapped, ui.window, [&] {
        const qint64 now = clock.nsecsElapsed();
        if (recording && last_ns >= 0) intervals.push_back(static_cast<double>(now - last_ns) / 1e6);
        last_ns = now;
    }, Qt::DirectConnection);

    int generated = 0;
    qint64 stream_ns = 0;
    for (int r = 0; r < replies; ++r) {
        for (int i = 0; i < 1000 && !ui.chat->canSend(); ++i) QTest::qWait(10);
        QTest::qWait(100);
        QSignalSpy started(ui.chat, &MessageListModel::replyStarted);
        QSignalSpy finished(ui.chat, &MessageListModel::replyFinished);
        if (!ui.chat->send(QStringLiteral("Tell me a long story, number %1.").arg(r + 1))) {
            std::fprintf(stderr, "hearth-ui-frame-bench: send failed\n");
            return 1;
        }
        const qint64 t0 = clock.nsecsElapsed();
        last_ns = -1;
        recording = true;
        for (int i = 0; i < 30000 && finished.isEmpty(); ++i) QTest::qWait(10);
        if (finished.isEmpty()) return 1;
        recording = false;
        stream_ns += clock.nsecsElapsed() - t0;
        const int row = ui.chat->rowOf(finished.at(0).at(0).toLongLong());
        generated += ui.chat->get(row).value(QStringLiteral("generatedTokens")).toInt();
    }
    std::printf("hearth-ui-frame-bench: %d replies, %d tokens streamed in %.2f s (%.1f tokens/s), %zu frames\n",
                replies, generated, static_cast<double>(stream_ns) / 1e9,
                generated / (static_cast<double>(stream_ns) / 1e9), intervals.size() + static_cast<size_t>(replies));
    std::printf("frame interval ms: p50 %.2f  p90 %.2f  p99 %.2f  max %.2f  (renderer: %s)\n",
                percentile(intervals, 50), percentile(intervals, 90), percentile(intervals, 99),
                intervals.empty() ? 0.0 : *std::max_element(intervals.begin(), intervals.end()),
                qEnvironmentVariableIsEmpty("HEARTH_UI_RHI") ? "software" : qPrintable(qEnvironmentVariable("HEARTH_UI_RHI")));
    return 0;
}
