// AppSettings: defaults (the engine's, but for the repeat penalty), a round trip through an INI
// file, clamping of bad values from setters and from a hand-edited file, and the engine-facing
// accessors.
#include <QCoreApplication>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <cmath>
#include <limits>
#include <memory>

#include "core/app_settings.h"
#include "core/engine_bridge.h"

class TestAppSettings : public QObject {
    Q_OBJECT

  private slots:
    void init();
    void defaults();
    void roundTrip();
    void notifiesOnlyOnChange();
    void clampsSetters();
    void clampsStoredValues();
    void engineValues();
    void bridgeTakesEngineSettings();
    void resets();
    void defaultLocation();
    void contextSettingsFollowTheModel();
    void modelDefaults();
    void themeIsSaved();

  private:
    QString ini() const { return dir_->filePath(QStringLiteral("settings.ini")); }
    std::unique_ptr<QTemporaryDir> dir_;
};

void TestAppSettings::init() {
    dir_ = std::make_unique<QTemporaryDir>();
    QVERIFY(dir_->isValid());
}

void TestAppSettings::defaults() {
    AppSettings s(ini());
    const hearth::SamplingParams sp;
    QCOMPARE(s.temperature(), 0.8);
    QCOMPARE(static_cast<float>(s.temperature()), sp.temperature);
    QCOMPARE(s.topK(), sp.top_k);
    QCOMPARE(s.topP(), 0.95);
    QCOMPARE(s.minP(), 0.05);
    QCOMPARE(s.repeatPenalty(), AppSettings::kRepeatPenaltyDefault);
    QCOMPARE(s.frequencyPenalty(), 0.0);
    QCOMPARE(s.presencePenalty(), 0.0);
    QCOMPARE(s.maxReplyTokens(), 512);
    QCOMPARE(s.kvCacheMb(), 0);
    QCOMPARE(s.pinnedShare(), 0.25);
    QCOMPARE(s.threads(), 0);
    QCOMPARE(s.backend(), QStringLiteral("auto"));
    QCOMPARE(s.effectiveBackend(), QStringLiteral("cpu"));
    QVERIFY(s.speculate());
    QVERIFY(s.lastModelPath().isEmpty());
    QVERIFY(s.maxThreads() >= 1);
    QCOMPARE(s.fileName(), ini());
}

void TestAppSettings::roundTrip() {
    {
        AppSettings s(ini());
        s.setTemperature(0.3);
        s.setTopK(12);
        s.setTopP(0.5);
        s.setMinP(0.1);
        s.setRepeatPenalty(1.15);
        s.setFrequencyPenalty(0.25);
        s.setPresencePenalty(0.5);
        s.setMaxReplyTokens(2048);
        s.setKvCacheMb(768);
        s.setPinnedShare(0.4);
        s.setThreads(3);
        s.setBackend(QStringLiteral("cuda"));
        s.setSpeculate(false);
        s.setLastModelPath(QStringLiteral("/models/a b/ü.gguf"));
    }
    AppSettings s(ini());
    QCOMPARE(s.temperature(), 0.3);
    QCOMPARE(s.topK(), 12);
    QCOMPARE(s.topP(), 0.5);
    QCOMPARE(s.minP(), 0.1);
    QCOMPARE(s.repeatPenalty(), 1.15);
    QCOMPARE(s.frequencyPenalty(), 0.25);
    QCOMPARE(s.presencePenalty(), 0.5);
    QCOMPARE(s.maxReplyTokens(), 2048);
    QCOMPARE(s.kvCacheMb(), 768);
    QCOMPARE(s.pinnedShare(), 0.4);
    QCOMPARE(s.threads(), 3);
    QCOMPARE(s.backend(), QStringLiteral("cuda"));
    QCOMPARE(s.effectiveBackend(), QStringLiteral("cpu"));
    QVERIFY(s.backendNote().contains(QLatin1String("CUDA")));
    QCOMPARE(s.lastModelPath(), QStringLiteral("/models/a b/ü.gguf"));
    QVERIFY(!s.speculate());

    // What is on disk is what a QSettings reader sees.
    QSettings raw(ini(), QSettings::IniFormat);
    QCOMPARE(raw.value("sampling/topK").toInt(), 12);
    QCOMPARE(raw.value("engine/backend").toString(), QStringLiteral("cuda"));
}

void TestAppSettings::notifiesOnlyOnChange() {
    AppSettings s(ini());
    QSignalSpy temp(&s, &AppSettings::temperatureChanged);
    QSignalSpy any(&s, &AppSettings::settingsChanged);
    QSignalSpy backend(&s, &AppSettings::backendChanged);
    s.setTemperature(1.2);
    s.setTemperature(1.2);
    QCOMPARE(temp.count(), 1);
    s.setTemperature(9.0);  // clamps to 2
    s.setTemperature(3.0);  // clamps to 2 again: no change
    QCOMPARE(temp.count(), 2);
    s.setBackend(QStringLiteral("auto"));  // already auto
    QCOMPARE(backend.count(), 0);
    s.setBackend(QStringLiteral(" CPU "));
    QCOMPARE(s.backend(), QStringLiteral("cpu"));
    QCOMPARE(backend.count(), 1);
    QCOMPARE(any.count(), 3);
}

void TestAppSettings::clampsSetters() {
    AppSettings s(ini());
    s.setTemperature(-1);
    QCOMPARE(s.temperature(), 0.0);
    s.setTemperature(100);
    QCOMPARE(s.temperature(), 2.0);
    s.setTemperature(std::numeric_limits<double>::quiet_NaN());
    QCOMPARE(s.temperature(), 0.8);  // not a number: the default
    s.setTopK(-5);
    QCOMPARE(s.topK(), 0);
    s.setTopK(1 << 30);
    QCOMPARE(s.topK(), 1000);
    s.setTopP(0);
    QCOMPARE(s.topP(), 0.01);
    s.setTopP(1.5);
    QCOMPARE(s.topP(), 1.0);
    s.setMinP(1.0);
    QCOMPARE(s.minP(), 0.99);
    s.setMinP(-0.5);
    QCOMPARE(s.minP(), 0.0);
    s.setRepeatPenalty(0.2);
    QCOMPARE(s.repeatPenalty(), 1.0);
    s.setRepeatPenalty(std::numeric_limits<double>::infinity());
    QCOMPARE(s.repeatPenalty(), AppSettings::kRepeatPenaltyDefault);
    s.setRepeatPenalty(7);
    QCOMPARE(s.repeatPenalty(), 2.0);
    s.setFrequencyPenalty(-1);
    QCOMPARE(s.frequencyPenalty(), 0.0);
    s.setFrequencyPenalty(3);
    QCOMPARE(s.frequencyPenalty(), 2.0);
    s.setPresencePenalty(std::numeric_limits<double>::quiet_NaN());
    QCOMPARE(s.presencePenalty(), 0.0);
    s.setPresencePenalty(2.5);
    QCOMPARE(s.presencePenalty(), 2.0);
    s.setMaxReplyTokens(0);
    QCOMPARE(s.maxReplyTokens(), 1);
    s.setMaxReplyTokens(10000000);
    QCOMPARE(s.maxReplyTokens(), 32768);
    s.setKvCacheMb(-3);
    QCOMPARE(s.kvCacheMb(), 0);
    s.setKvCacheMb(5);
    QCOMPARE(s.kvCacheMb(), 16);
    s.setKvCacheMb(std::numeric_limits<int>::max());
    QCOMPARE(s.kvCacheMb(), 1 << 20);
    s.setPinnedShare(2);
    QCOMPARE(s.pinnedShare(), 0.9);
    s.setPinnedShare(-1);
    QCOMPARE(s.pinnedShare(), 0.0);
    s.setThreads(-1);
    QCOMPARE(s.threads(), 0);
    s.setThreads(5000);
    QCOMPARE(s.threads(), 1024);
    s.setBackend(QStringLiteral("vulkan"));
    QCOMPARE(s.backend(), QStringLiteral("auto"));
    s.setBackend(QStringLiteral("CUDA"));
    QCOMPARE(s.backend(), QStringLiteral("cuda"));
}

void TestAppSettings::clampsStoredValues() {
    {
        QSettings raw(ini(), QSettings::IniFormat);
        raw.setValue("sampling/temperature", "warm");  // not a number
        raw.setValue("sampling/topK", 99999);
        raw.setValue("sampling/topP", -2);
        raw.setValue("sampling/minP", "nan");
        raw.setValue("sampling/repeatPenalty", 1.3);
        raw.setValue("sampling/maxReplyTokens", "-7");
        raw.setValue("engine/kvCacheMb", "9999999999");
        raw.setValue("engine/pinnedShare", 5);
        raw.setValue("engine/threads", "lots");
        raw.setValue("engine/backend", "tpu");
    }
    AppSettings s(ini());
    QCOMPARE(s.temperature(), 0.8);
    QCOMPARE(s.topK(), 1000);
    QCOMPARE(s.topP(), 0.01);
    QCOMPARE(s.minP(), 0.05);
    QCOMPARE(s.repeatPenalty(), 1.3);
    QCOMPARE(s.maxReplyTokens(), 1);
    QCOMPARE(s.kvCacheMb(), 1 << 20);
    QCOMPARE(s.pinnedShare(), 0.9);
    QCOMPARE(s.threads(), 0);
    QCOMPARE(s.backend(), QStringLiteral("auto"));
}

void TestAppSettings::engineValues() {
    AppSettings s(ini());
    s.setTemperature(0.5);
    s.setTopK(7);
    s.setTopP(0.9);
    s.setMinP(0.02);
    s.setRepeatPenalty(1.2);
    s.setFrequencyPenalty(0.3);
    s.setPresencePenalty(0.4);
    s.setKvCacheMb(512);
    s.setPinnedShare(0.5);
    s.setThreads(2);
    s.setLastModelPath(QStringLiteral("/tmp/m.gguf"));

    const hearth::SamplingParams p = s.samplingParams();
    QCOMPARE(p.temperature, 0.5f);
    QCOMPARE(p.top_k, 7);
    QCOMPARE(p.top_p, 0.9f);
    QCOMPARE(p.min_p, 0.02f);
    QCOMPARE(p.repeat_penalty, 1.2f);
    QCOMPARE(p.frequency_penalty, 0.3f);
    QCOMPARE(p.presence_penalty, 0.4f);
    const hearth::SamplingParams defaults;
    QCOMPARE(p.penalty_last_n, defaults.penalty_last_n);

    const hearth::EngineConfig c = s.engineConfig();
    QCOMPARE(c.model_path, std::string("/tmp/m.gguf"));
    QCOMPARE(c.n_threads, 2);
    QCOMPARE(c.kv_mb, std::size_t{512});
    QCOMPARE(c.max_pinned_share, 0.5);
    const hearth::EngineConfig engine_defaults;
    QCOMPARE(c.block_size, engine_defaults.block_size);
    QCOMPARE(c.prefix_caching, engine_defaults.prefix_caching);
    // The backend setting becomes the engine's device, word for word.
    QCOMPARE(engine_defaults.device, std::string("auto"));
    for (const auto& [setting, device] :
         {std::pair{"auto", "auto"}, std::pair{"cpu", "cpu"}, std::pair{"cuda", "cuda"}}) {
        s.setBackend(QLatin1String(setting));
        QCOMPARE(s.engineConfig().device, std::string(device));
    }
}

// What EngineBridge opens the next model with: the settings, changed live, with the
// bridge's own threads / kvMegabytes overriding them, and automatic threads resolved.
void TestAppSettings::bridgeTakesEngineSettings() {
    AppSettings s(ini());
    s.setThreads(3);
    s.setKvCacheMb(48);
    s.setPinnedShare(0.4);
    EngineBridge bridge;
    QSignalSpy changed(&bridge, &EngineBridge::settingsChanged);
    bridge.setSettings(&s);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(bridge.settings(), &s);
    hearth::EngineConfig c = bridge.nextEngineConfig();
    QCOMPARE(c.n_threads, 3);
    QCOMPARE(c.kv_mb, std::size_t{48});
    QCOMPARE(c.max_pinned_share, 0.4);
    QVERIFY(c.model_path.empty());

    // Later changes count for the next load.
    s.setPinnedShare(0.6);
    s.setKvCacheMb(64);
    c = bridge.nextEngineConfig();
    QCOMPARE(c.max_pinned_share, 0.6);
    QCOMPARE(c.kv_mb, std::size_t{64});

    // The bridge's own values win where set.
    bridge.setThreads(2);
    bridge.setKvMegabytes(16);
    c = bridge.nextEngineConfig();
    QCOMPARE(c.n_threads, 2);
    QCOMPARE(c.kv_mb, std::size_t{16});
    QCOMPARE(c.max_pinned_share, 0.6);

    // Automatic threads: all cores but one where there are more than two.
    bridge.setThreads(0);
    s.setThreads(0);
    const int cores = QThread::idealThreadCount();
    QCOMPARE(bridge.nextEngineConfig().n_threads, cores > 2 ? cores - 1 : 0);

    // Without settings: the engine's defaults.
    bridge.setSettings(nullptr);
    bridge.setKvMegabytes(0);
    const hearth::EngineConfig defaults;
    QCOMPARE(bridge.nextEngineConfig().kv_mb, defaults.kv_mb);
    QCOMPARE(bridge.nextEngineConfig().max_pinned_share, defaults.max_pinned_share);
}

void TestAppSettings::resets() {
    AppSettings s(ini());
    s.setTemperature(1.5);
    s.setTopK(3);
    s.setThreads(4);
    s.setBackend(QStringLiteral("cuda"));
    s.setSpeculate(false);
    s.setLastModelPath(QStringLiteral("/x.gguf"));
    s.resetSampling();
    QCOMPARE(s.temperature(), 0.8);
    QCOMPARE(s.topK(), 40);
    QCOMPARE(s.threads(), 4);  // engine settings untouched
    QVERIFY(!s.speculate());
    s.resetEngine();
    QCOMPARE(s.threads(), 0);
    QCOMPARE(s.backend(), QStringLiteral("auto"));
    QVERIFY(s.speculate());
    QCOMPARE(s.lastModelPath(), QStringLiteral("/x.gguf"));
}

void TestAppSettings::defaultLocation() {
    // The default constructor uses the user's QSettings of "Hearth"; point the user scope at
    // the temporary folder so nothing touches the real configuration. Whatever the
    // application calls itself, the file is Hearth's own (not "Unknown Organization").
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir_->path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir_->path());
    QCoreApplication::setOrganizationName(QString());
    QCoreApplication::setApplicationName(QStringLiteral("SomethingElse"));
    {
        // Settings an earlier version wrote without an organisation name.
        QSettings legacy(QSettings::NativeFormat, QSettings::UserScope,
                         QStringLiteral("Unknown Organization"), QStringLiteral("Hearth"));
        legacy.setValue("sampling/topK", 17);
    }
    {
        AppSettings s;
        QVERIFY2(s.fileName().startsWith(dir_->path()), qPrintable(s.fileName()));
        QVERIFY2(s.fileName().contains(QStringLiteral("Hearth/Hearth")), qPrintable(s.fileName()));
        QVERIFY(!s.fileName().contains(QStringLiteral("Unknown")));
        QCOMPARE(s.topK(), 17);  // moved over
        s.setTopK(5);
    }
    QVERIFY(QSettings(QSettings::NativeFormat, QSettings::UserScope,
                      QStringLiteral("Unknown Organization"), QStringLiteral("Hearth"))
                .allKeys()
                .isEmpty());
    AppSettings again;
    QCOMPARE(again.topK(), 5);
}

// The long-chat settings belong to a model file: each file keeps its own, the last model's
// are the properties, and they are validated like the rest.
void TestAppSettings::contextSettingsFollowTheModel() {
    const QString a = dir_->filePath(QStringLiteral("models/a.gguf"));
    const QString b = dir_->filePath(QStringLiteral("other/b.gguf"));
    {
        AppSettings s(ini());
        QCOMPARE(s.contextLength(), 0);  // the model's own
        QCOMPARE(s.contextOverflow(), QStringLiteral("drop"));
        QCOMPARE(s.contextKeep(), hearth::chat::kDefaultKeep);
        s.setLastModelPath(a);
        QSignalSpy changed(&s, &AppSettings::contextSettingsChanged);
        s.setContextLength(4096);
        s.setContextOverflow(QStringLiteral("SHIFT "));
        s.setContextKeep(0.3);
        QCOMPARE(changed.count(), 3);
        QCOMPARE(s.overflowPolicy(), hearth::chat::ContextPolicy::Shift);
        QCOMPARE(s.engineConfig().context_length, 4096);
        s.setLastModelPath(b);  // another model: its own (default) settings
        QCOMPARE(changed.count(), 4);
        QCOMPARE(s.contextLength(), 0);
        QCOMPARE(s.contextOverflow(), QStringLiteral("drop"));
        s.setContextOverflow(QStringLiteral("ask"));
        s.setContextLength(10);  // below the least: the least
        QCOMPARE(s.contextLength(), AppSettings::kContextLengthMin);
        s.setContextOverflow(QStringLiteral("fail"));  // the API's rule is not a chat's
        QCOMPARE(s.contextOverflow(), QStringLiteral("drop"));
        s.setContextOverflow(QStringLiteral("ask"));
        s.setContextKeep(7.0);
        QCOMPARE(s.contextKeep(), AppSettings::kContextKeepMax);
        QCOMPARE(s.contextLengthFor(a), 4096);
    }
    AppSettings back(ini());
    QCOMPARE(back.lastModelPath(), b);
    QCOMPARE(back.contextOverflow(), QStringLiteral("ask"));
    QCOMPARE(back.contextLength(), AppSettings::kContextLengthMin);
    back.setLastModelPath(a);
    QCOMPARE(back.contextLength(), 4096);
    QCOMPARE(back.contextOverflow(), QStringLiteral("shift"));
    QCOMPARE(back.contextKeep(), 0.3);
    {  // A hand-edited file: nonsense reads as the defaults.
        QSettings raw(ini(), QSettings::IniFormat);
        raw.setValue(QStringLiteral("models/a.gguf/contextLength"), QStringLiteral("lots"));
        raw.setValue(QStringLiteral("models/a.gguf/overflow"), QStringLiteral("explode"));
        raw.setValue(QStringLiteral("models/a.gguf/keep"), QStringLiteral("nan"));
    }
    AppSettings edited(ini());
    edited.setLastModelPath(a);
    QCOMPARE(edited.contextLength(), 0);
    QCOMPARE(edited.contextOverflow(), QStringLiteral("drop"));
    QCOMPARE(edited.contextKeep(), hearth::chat::kDefaultKeep);
}

// A model's own defaults (Model page → Defaults…): reply settings, persona and context,
// kept per model file across a restart; an empty path is the open model; what a
// hand-edited file gets wrong is left unset.
void TestAppSettings::modelDefaults() {
    const QString a = dir_->filePath(QStringLiteral("models/a.gguf"));
    const QString b = dir_->filePath(QStringLiteral("other/b.gguf"));
    {
        AppSettings s(ini());
        QVERIFY(s.modelSampling(a).isEmpty());
        QCOMPARE(s.modelPersona(a), -1);
        s.setModelSampling(QString(), {{"temperature", 0.6}});  // no model open: nothing kept
        QVERIFY(s.openModelSampling().isEmpty());
        s.setLastModelPath(a);
        QSignalSpy changed(&s, &AppSettings::modelDefaultsChanged);
        s.setModelSampling(a, {{"temperature", 0.6},
                               {"topK", 20.4},
                               {"minP", 5.0},                     // clamped to the app's range
                               {"topP", QStringLiteral("much")},  // does not parse: unset
                               {"seed", QStringLiteral("18446744073709551615")},
                               {"thinking", false},
                               {"stop", QStringLiteral("<|end|>\\nUser:")}});
        s.setModelSampling(a, s.modelSampling(a));  // the same again: no signal
        s.setModelPersona(QString(), 7);            // the open model: a
        s.setModelPersona(b, 9);
        QCOMPARE(changed.count(), 3);
        s.setModelContextLength(b,
                                100);  // another model's: clamped, kept, the open one's unchanged
        QCOMPARE(changed.count(), 4);
        QCOMPARE(s.contextLength(), 0);
        QSignalSpy context(&s, &AppSettings::contextSettingsChanged);
        s.setModelContextLength(a, 8192);  // the open model's: its property (the engine restarts)
        QCOMPARE(context.count(), 1);
        QCOMPARE(s.contextLength(), 8192);
    }
    AppSettings back(ini());
    QCOMPARE(back.lastModelPath(), a);
    const QVariantMap own = back.openModelSampling();
    QCOMPARE(own.value("temperature").toDouble(), 0.6);
    QCOMPARE(own.value("topK").toInt(), 20);
    QCOMPARE(own.value("minP").toDouble(), AppSettings::kMinPMax);
    QVERIFY(!own.contains("topP"));
    QCOMPARE(own.value("seed").toString(), QStringLiteral("18446744073709551615"));
    QCOMPARE(own.value("thinking").toBool(), false);
    QCOMPARE(own.value("stop").toString(), QStringLiteral("<|end|>\\nUser:"));
    const hearth::store::SamplingSettings ss = back.modelSamplingSettings();
    QCOMPARE(ss.temperature, std::optional<double>(0.6));
    QCOMPARE(ss.seed, std::optional<std::int64_t>(-1));  // all 64 bits
    QVERIFY(ss.stop == std::vector<QString>{QStringLiteral("<|end|>\nUser:")});
    QCOMPARE(back.openModelPersona(), 7);
    QCOMPARE(back.modelPersona(b), 9);
    QCOMPARE(back.modelContextLength(a), 8192);
    QCOMPARE(back.modelContextLength(b), AppSettings::kContextLengthMin);
    QVERIFY(back.modelSampling(b).isEmpty());  // each model its own
    QSignalSpy switched(&back, &AppSettings::modelDefaultsChanged);
    back.setLastModelPath(b);  // the open model's defaults are b's now
    QCOMPARE(switched.count(), 1);
    QVERIFY(back.openModelSampling().isEmpty());
    QCOMPARE(back.openModelPersona(), 9);
    back.setModelPersona(b, 0);  // none
    QCOMPARE(back.openModelPersona(), -1);
    back.setModelSampling(a, {});  // all back to the app's
    QVERIFY(back.modelSampling(a).isEmpty());
    {  // A hand-edited file: what does not parse is unset; what does is clamped.
        QSettings raw(ini(), QSettings::IniFormat);
        raw.setValue(QStringLiteral("models/b.gguf/sampling/temperature"), QStringLiteral("hot"));
        raw.setValue(QStringLiteral("models/b.gguf/sampling/topK"), QStringLiteral("5000"));
        raw.setValue(QStringLiteral("models/b.gguf/sampling/unknown"), 3);
        raw.setValue(QStringLiteral("models/b.gguf/persona"), QStringLiteral("Coder"));
    }
    AppSettings edited(ini());
    QCOMPARE(edited.openModelSampling(), (QVariantMap{{"topK", AppSettings::kTopKMax}}));
    QCOMPARE(edited.openModelPersona(), -1);
}

// The theme outlives a restart (it used to be the window's property only: Dark was Light
// again after a restart); a hand-edited value it does not know follows the system.
void TestAppSettings::themeIsSaved() {
    {
        AppSettings s(ini());
        QCOMPARE(s.theme(), QString());
        QSignalSpy changed(&s, &AppSettings::themeChanged);
        s.setTheme(QStringLiteral(" Dark"));
        s.setTheme(QStringLiteral("dark"));
        QCOMPARE(changed.count(), 1);
    }
    QCOMPARE(AppSettings(ini()).theme(), QStringLiteral("dark"));
    QSettings(ini(), QSettings::IniFormat)
        .setValue(QStringLiteral("appearance/theme"), QStringLiteral("neon"));
    QCOMPARE(AppSettings(ini()).theme(), QString());
    AppSettings s(ini());
    s.setTheme(QStringLiteral("light"));
    s.setTheme(QStringLiteral("sepia"));  // unknown: follow the system
    QCOMPARE(s.theme(), QString());
}

QTEST_GUILESS_MAIN(TestAppSettings)
#include "tst_app_settings.moc"
