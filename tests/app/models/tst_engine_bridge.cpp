// EngineBridge (the app's one engine) and ModelInspector on a synthetic model: loads that
// fail with a readable error and keep the model there was, the user's engine settings on
// load, the model's facts, events on the GUI thread in order, a model switch mid-reply,
// and the Model page's facts and token pieces taken from the loaded model.
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QUrl>

#include <fstream>

#include "app_fixture.h"
#include "chat/prompt_builder.h"
#include "core/app_settings.h"
#include "device.h"
#include "engine.h"
#include "model_inspector.h"
#include "tokenizer/tokenizer.h"

using namespace hearth;

class TestEngineBridge : public QObject {
    Q_OBJECT
    AppFixture fixture_;

  private slots:
    void badModelFileGivesAnError() {
        EngineBridge bridge;
        QSignalSpy finished(&bridge, &EngineBridge::loadFinished);
        const QString bad = fixture_.path(QStringLiteral("bad.gguf"));
        {
            std::ofstream f(bad.toStdString(), std::ios::binary);
            f << "this is not a GGUF file at all, just some text";
        }
        bridge.load(bad);
        // Loading until the result is handled on this thread, also once the loading thread
        // has finished with it (a bad file fails in microseconds).
        QThread::msleep(200);
        QVERIFY(bridge.loading());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kLoadTimeoutMs);
        QCOMPARE(finished.at(0).at(0).toBool(), false);
        QVERIFY(!bridge.loaded());
        QVERIFY(!bridge.loading());
        QVERIFY2(!bridge.errorString().isEmpty(), "no error text");
        QCOMPARE(bridge.submit(1, {1, 2, 3}, SamplingParams::greedy(), 4), qint64{-1});

        bridge.load(fixture_.path(QStringLiteral("missing.gguf")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, kLoadTimeoutMs);
        QVERIFY(bridge.errorString().contains(QLatin1String("missing.gguf")));

        // A good load clears the error; a bad one afterwards keeps the good model.
        bridge.load(QUrl::fromLocalFile(fixture_.model_path()).toString());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 3, kLoadTimeoutMs);
        QVERIFY(bridge.loaded());
        QVERIFY(bridge.errorString().isEmpty());
        bridge.load(bad);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 4, kLoadTimeoutMs);
        QVERIFY(bridge.loaded());
        QVERIFY(!bridge.errorString().isEmpty());
    }

    // Backend "cuda" on a machine whose GPU cannot be used (here: no driver): the model does
    // not open, and the error says why and where to choose the CPU; cpu then opens it.
    void cudaSettingWithoutGpuSaysWhereToChange() {
        if (hearth::engine_cuda_support().inference && !hearth::list_gpus().devices.empty())
            QSKIP("a CUDA device is present");
        AppSettings settings(fixture_.path(QStringLiteral("cuda-settings.ini")));
        settings.setBackend(QStringLiteral("cuda"));
        EngineBridge bridge;
        bridge.setSettings(&settings);
        QSignalSpy finished(&bridge, &EngineBridge::loadFinished);
        bridge.load(fixture_.model_path());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kLoadTimeoutMs);
        QVERIFY(!bridge.loaded());
        QVERIFY2(bridge.errorString().startsWith(QLatin1String("cuda")),
                 qPrintable(bridge.errorString()));
        QVERIFY2(bridge.errorString().contains(QLatin1String("Settings, Backend")),
                 qPrintable(bridge.errorString()));
        settings.setBackend(QStringLiteral("cpu"));
        bridge.load(fixture_.model_path());
        QTRY_VERIFY_WITH_TIMEOUT(bridge.loaded(), kLoadTimeoutMs);
        QVERIFY(bridge.errorString().isEmpty());
    }

    // A second load while one is under way supersedes it: only the second is reported,
    // once. (The first engine is handed to the second load, which destroys it before it
    // plans its memory: on a GPU it would hold most of it.)
    void aLoadSupersededByAnother() {
        EngineBridge bridge;
        bridge.setThreads(1);
        bridge.setKvMegabytes(8);
        QSignalSpy finished(&bridge, &EngineBridge::loadFinished);
        bridge.load(fixture_.model_path());
        QVERIFY(bridge.loading());
        bridge.load(fixture_.slow_model_path());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() && !bridge.loading(), kLoadTimeoutMs);
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        QCOMPARE(bridge.modelPath(), fixture_.slow_model_path());
        QVERIFY(bridge.loaded());
    }

    // The user's engine settings reach the engine the bridge creates (and a change
    // applies when the model is next opened, not to the one running).
    void engineSettingsApplyOnLoad() {
        AppSettings settings(fixture_.path(QStringLiteral("engine-settings.ini")));
        settings.setThreads(1);
        settings.setKvCacheMb(24);
        settings.setPinnedShare(0.5);
        EngineBridge bridge;
        bridge.setSettings(&settings);
        bridge.load(fixture_.model_path());
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
        bridge.load(fixture_.model_path());
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
        QTRY_VERIFY_WITH_TIMEOUT(!kinds.empty() && kinds.back() == sched::EventKind::Finished,
                                 kReplyTimeoutMs);
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
        bridge.load(fixture_.model_path());
        QTRY_COMPARE_WITH_TIMEOUT(model_changed.count(), 2, kLoadTimeoutMs);
        QCOMPARE(about.count(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(!kinds.empty() && kinds.back() == sched::EventKind::Finished,
                                 kReplyTimeoutMs);
        bridge.unload();
        QVERIFY(!bridge.loaded());
    }

    // The Model page reads the model the bridge loaded (the same tokenizer: nothing is
    // opened twice); byte tokens that are not whole UTF-8 show as <0xNN>; a file that
    // fails to load is still described, with the bridge's error.
    void modelInspectorFollowsTheBridge() {
        EngineBridge bridge;
        ModelInspector inspector;
        inspector.setBridge(&bridge);
        QCOMPARE(inspector.status(), QStringLiteral("empty"));
        QVERIFY(inspector.tokenize(QStringLiteral("hello"), false).isEmpty());
        bridge.load(fixture_.model_path());
        QTRY_VERIFY_WITH_TIMEOUT(bridge.loaded(), kLoadTimeoutMs);
        QCOMPARE(inspector.status(), QStringLiteral("ready"));
        QCOMPARE(inspector.modelPath(), fixture_.model_path());
        QCOMPARE(inspector.facts().value(QStringLiteral("name")).toString(), bridge.modelName());
        QCOMPARE(inspector.facts().value(QStringLiteral("architecture")).toString(),
                 QStringLiteral("llama"));
        // The tokenizer panel starts from a user turn in the model's own format.
        QCOMPARE(inspector.facts().value(QStringLiteral("templateFamily")).toString(),
                 QStringLiteral("chatml"));
        QCOMPARE(inspector.facts().value(QStringLiteral("sampleText")).toString(),
                 QStringLiteral("<|im_start|>user\nHello, Hearth! 你好 👋<|im_end|>"));
        const QVariantList tokens = inspector.tokenize(QStringLiteral("héllo"), false);
        std::vector<int32_t> ids;
        for (const QVariant& t : tokens)
            ids.push_back(t.toMap().value(QStringLiteral("id")).toInt());
        QCOMPARE(ids, bridge.tokenizer()->encode("héllo", false));

        QCOMPARE(ModelInspector::readable_piece("plain"), QStringLiteral("plain"));
        QCOMPARE(ModelInspector::readable_piece("\xe2"), QStringLiteral("<0xE2>"));
        QCOMPARE(ModelInspector::readable_piece("a\xe2\x82"), QStringLiteral("a<0xE2><0x82>"));
        QCOMPARE(ModelInspector::readable_piece("\xe2\x82\xac!"),
                 QString::fromUtf8("\xe2\x82\xac!"));  // €
        QCOMPARE(ModelInspector::readable_piece("\xc0\xaf"),
                 QStringLiteral("<0xC0><0xAF>"));  // overlong
        QCOMPARE(ModelInspector::readable_piece("\xf0\x9f\x91"),
                 QStringLiteral("<0xF0><0x9F><0x91>"));

        const QString bad = fixture_.path(QStringLiteral("not-a-model.gguf"));
        std::ofstream(bad.toStdString()) << "GGUF but not really";
        QSignalSpy changed(&inspector, &ModelInspector::changed);
        bridge.load(bad);
        QTRY_COMPARE_WITH_TIMEOUT(inspector.status(), QStringLiteral("error"), kLoadTimeoutMs);
        QVERIFY(!inspector.errorText().isEmpty());
        QCOMPARE(inspector.errorText(), bridge.errorString());
        QCOMPARE(inspector.modelPath(), bad);
        QVERIFY(bridge.loaded());  // the good model stays
    }

    // The status bar's speed is the reply's own statistic: live while decoding, then the
    // last reply's (it used to be a rate over the last second of wall time: 1.7 vs 41.9).
    void speedAgreesWithTheReply() {
        EngineBridge bridge;
        bridge.setThreads(2);
        bridge.load(fixture_.model_path());
        QTRY_VERIFY_WITH_TIMEOUT(bridge.loaded(), kLoadTimeoutMs);
        double reply_speed = -1;
        connect(&bridge, &EngineBridge::requestEvent, this, [&](const sched::Event& e) {
            if (e.kind == sched::EventKind::Finished) reply_speed = e.stats.decode_tokens_per_s();
        });
        sched::Request r;
        r.conversation = 7;
        r.prompt = bridge.promptBuilder()->persona_prefix(std::string("count to ten"));
        r.max_tokens = 64;
        r.stop_at_end_of_generation = false;
        QVERIFY(bridge.submit(r) > 0);
        QTRY_VERIFY_WITH_TIMEOUT(reply_speed > 0, kReplyTimeoutMs);
        bridge.refreshStats();
        QTRY_VERIFY(bridge.speedIsLast());
        QCOMPARE(bridge.tokensPerSecond(), reply_speed);
    }
};

QTEST_GUILESS_MAIN(TestEngineBridge)
#include "tst_engine_bridge.moc"
