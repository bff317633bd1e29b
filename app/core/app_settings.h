// AppSettings: the user's preferences, kept in QSettings (the platform's usual place for
// the application "Hearth", or an INI file given to the constructor).
//
// Every value is validated: out-of-range numbers are clamped into their range, values
// that do not parse (a hand-edited file) fall back to the default, and an unknown
// backend reads as "auto". Setters write through at once; each property has its own
// notify signal, and settingsChanged() follows any change.
//
// The bridge takes engineConfig(), samplingParams() and maxReplyTokens() when it
// (re)starts the engine. The backend setting is the engine's device (EngineConfig::device):
// "cpu", or "auto", which "cuda" also asks for while the engine has no CUDA inference; so
// the CPU runs every choice today (effectiveBackend) and the Model page says why.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QDateTime>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVariantMap>

#include <memory>

#include "chat/turn_planner.h"
#include "engine.h"
#include "sampling/sampler.h"
#include "store/types.h"

class QSettings;

class AppSettings : public QObject {
    Q_OBJECT
    QML_ELEMENT
    // Sampling defaults for new replies.
    Q_PROPERTY(double temperature READ temperature WRITE setTemperature NOTIFY temperatureChanged)
    Q_PROPERTY(int topK READ topK WRITE setTopK NOTIFY topKChanged)
    Q_PROPERTY(double topP READ topP WRITE setTopP NOTIFY topPChanged)
    Q_PROPERTY(double minP READ minP WRITE setMinP NOTIFY minPChanged)
    Q_PROPERTY(
        double repeatPenalty READ repeatPenalty WRITE setRepeatPenalty NOTIFY repeatPenaltyChanged)
    Q_PROPERTY(double frequencyPenalty READ frequencyPenalty WRITE setFrequencyPenalty NOTIFY
                   frequencyPenaltyChanged)
    Q_PROPERTY(double presencePenalty READ presencePenalty WRITE setPresencePenalty NOTIFY
                   presencePenaltyChanged)
    Q_PROPERTY(
        int maxReplyTokens READ maxReplyTokens WRITE setMaxReplyTokens NOTIFY maxReplyTokensChanged)
    // The engine.
    Q_PROPERTY(int kvCacheMb READ kvCacheMb WRITE setKvCacheMb NOTIFY kvCacheMbChanged)  // 0: auto
    // The KV cache's disk tier (MiB, all models together; 0: none): conversations continue
    // after a restart without prefilling their history again.
    Q_PROPERTY(int kvDiskMb READ kvDiskMb WRITE setKvDiskMb NOTIFY kvDiskMbChanged)
    Q_PROPERTY(QString kvDiskDir READ kvDiskDir CONSTANT)
    // The host-RAM tier under a GPU's KV cache (MiB; 0: none). Unused on the CPU.
    Q_PROPERTY(int kvHostMb READ kvHostMb WRITE setKvHostMb NOTIFY kvHostMbChanged)
    Q_PROPERTY(double pinnedShare READ pinnedShare WRITE setPinnedShare NOTIFY pinnedShareChanged)
    Q_PROPERTY(int threads READ threads WRITE setThreads NOTIFY threadsChanged)  // 0: all cores
    Q_PROPERTY(
        QString backend READ backend WRITE setBackend NOTIFY backendChanged)  // auto, cpu, cuda
    Q_PROPERTY(QString effectiveBackend READ effectiveBackend NOTIFY backendChanged)
    Q_PROPERTY(QString backendNote READ backendNote NOTIFY backendChanged)
    Q_PROPERTY(
        QString lastModelPath READ lastModelPath WRITE setLastModelPath NOTIFY lastModelPathChanged)
    // The model to open at start (the Model page's "Open at start"); "": the last one.
    Q_PROPERTY(QString defaultModelPath READ defaultModelPath WRITE setDefaultModelPath NOTIFY
                   defaultModelPathChanged)
    // Folders of models the user added to the Model page's list.
    Q_PROPERTY(
        QStringList modelFolders READ modelFolders WRITE setModelFolders NOTIFY modelFoldersChanged)
    // The ranges, for sliders and spin boxes.
    Q_PROPERTY(int maxThreads READ maxThreads CONSTANT)
    Q_PROPERTY(QString fileName READ fileName CONSTANT)
    // The model's context settings, one set per model file (the last model's; they follow
    // it when another is opened): the context to serve in tokens (0: the model's own; a
    // model reopens to take a new one), what a chat that outgrows it does ("drop": its
    // oldest turns leave in steps and the rest is computed again, exactly; "shift": the
    // rest's KV is moved, not computed, and not bit-identical; "ask"), and the share of
    // the context a step keeps (chat/turn_planner.h).
    Q_PROPERTY(
        int contextLength READ contextLength WRITE setContextLength NOTIFY contextSettingsChanged)
    Q_PROPERTY(QString contextOverflow READ contextOverflow WRITE setContextOverflow NOTIFY
                   contextSettingsChanged)
    Q_PROPERTY(
        double contextKeep READ contextKeep WRITE setContextKeep NOTIFY contextSettingsChanged)
    // The window's theme: "light", "dark" or "" (follow the system).
    Q_PROPERTY(QString theme READ theme WRITE setTheme NOTIFY themeChanged)
    // The interface's language: "" (the system's), or a language code ("en", "de").
    Q_PROPERTY(QString language READ language WRITE setLanguage NOTIFY languageChanged)
    // Whether the model catalog checks for a newer list once a day (core/model_catalog.h).
    Q_PROPERTY(bool catalogUpdates READ catalogUpdates WRITE setCatalogUpdates NOTIFY
                   catalogUpdatesChanged)
    // Speculative decoding for local replies (sched/scheduler.h): drafts from the
    // conversation's own text, verified by the model; the same reply either way, faster when
    // it repeats what is there. Takes effect with the next reply.
    Q_PROPERTY(bool speculate READ speculate WRITE setSpeculate NOTIFY speculateChanged)
    // The open model's own defaults (below): what its replies and new chats start from.
    Q_PROPERTY(QVariantMap openModelSampling READ openModelSampling NOTIFY modelDefaultsChanged)
    Q_PROPERTY(int openModelPersona READ openModelPersona NOTIFY modelDefaultsChanged)

  public:
    // Ranges and defaults (the defaults are the engine's: SamplingParams, EngineConfig).
    static constexpr double kTemperatureMin = 0.0, kTemperatureMax = 2.0;
    static constexpr int kTopKMin = 0, kTopKMax = 1000;
    static constexpr double kTopPMin = 0.01, kTopPMax = 1.0;
    static constexpr double kMinPMin = 0.0, kMinPMax = 0.99;
    static constexpr double kRepeatPenaltyMin = 1.0, kRepeatPenaltyMax = 2.0;
    // Unlike the engine (1.0: off), replies repeat less by default: small models loop
    // without it (the default model, asked to summarise 600 tokens, looped to its limit
    // with 1.0 on 3 seeds of 3, and ended on its own with 1.1 on 3 of 3).
    static constexpr double kRepeatPenaltyDefault = 1.1;
    static constexpr double kFrequencyPenaltyMin = 0.0, kFrequencyPenaltyMax = 2.0;
    static constexpr double kPresencePenaltyMin = 0.0, kPresencePenaltyMax = 2.0;
    static constexpr int kMaxReplyTokensMin = 1, kMaxReplyTokensMax = 32768,
                         kMaxReplyTokensDefault = 512;
    static constexpr int kKvCacheMbMin = 16, kKvCacheMbMax = 1 << 20;  // or 0 (auto)
    static constexpr double kPinnedShareMin = 0.0, kPinnedShareMax = 0.9;
    static constexpr int kThreadsMax = 1024;
    static constexpr int kKvDiskMbMax = 1 << 20;                                // 1 TiB
    static constexpr int kContextLengthMin = 256, kContextLengthMax = 1 << 24;  // or 0 (own)
    static constexpr double kContextKeepMin = 0.1, kContextKeepMax = 1.0;

    // The application's settings: QSettings of the organisation and application "Hearth"
    // (~/.config/Hearth/Hearth.conf on Linux). Settings that an earlier version kept under
    // "Unknown Organization" are moved over the first time.
    explicit AppSettings(QObject* parent = nullptr);
    // Settings in the INI file at ini_path (tests, portable installs).
    explicit AppSettings(const QString& ini_path, QObject* parent = nullptr);
    ~AppSettings() override;

    double temperature() const { return temperature_; }
    int topK() const { return top_k_; }
    double topP() const { return top_p_; }
    double minP() const { return min_p_; }
    double repeatPenalty() const { return repeat_penalty_; }
    double frequencyPenalty() const { return frequency_penalty_; }
    double presencePenalty() const { return presence_penalty_; }
    int maxReplyTokens() const { return max_reply_tokens_; }
    int kvCacheMb() const { return kv_cache_mb_; }
    int kvDiskMb() const { return kv_disk_mb_; }
    int kvHostMb() const { return kv_host_mb_; }
    void setKvHostMb(int v);
    void setKvDiskMb(int v);
    QString kvDiskDir() const;
    double pinnedShare() const { return pinned_share_; }
    int threads() const { return threads_; }
    QString backend() const { return backend_; }
    QString effectiveBackend() const { return QStringLiteral("cpu"); }
    QString backendNote() const;
    QString lastModelPath() const { return last_model_path_; }
    QString defaultModelPath() const { return default_model_path_; }
    QStringList modelFolders() const { return model_folders_; }
    // What to open at start: the default model while its file is there, else the last one.
    QString modelToOpen() const;
    // When a model file was last opened (invalid: never), and noting that it is now.
    Q_INVOKABLE QDateTime modelLastUsed(const QString& model_path) const;
    void noteModelUsed(const QString& model_path);
    int maxThreads() const;
    QString fileName() const;
    int contextLength() const { return context_length_; }
    QString contextOverflow() const { return context_overflow_; }
    double contextKeep() const { return context_keep_; }
    QString theme() const { return theme_; }
    QString language() const { return language_; }
    bool catalogUpdates() const { return catalog_updates_; }
    bool speculate() const { return speculate_; }
    hearth::chat::ContextPolicy overflowPolicy() const;
    // The context setting of another model file (what opening it serves; 0: its own).
    int contextLengthFor(const QString& model_path) const;

    // A model's own defaults (the Model page's "Defaults…"), kept per model file as its
    // context is. Reply settings: a layer between the app's and a persona's
    // (app → model → persona → chat), as sampling_settings_map.h's map (only what the
    // model sets; an empty map: all the app's). Persona: the one a new chat starts with
    // while this model is open, unless one is picked (-1: none; the chat on screen's).
    // An empty path is the open model.
    Q_INVOKABLE QVariantMap modelSampling(const QString& model_path) const;
    Q_INVOKABLE void setModelSampling(const QString& model_path, const QVariantMap& values);
    Q_INVOKABLE int modelPersona(const QString& model_path) const;
    Q_INVOKABLE void setModelPersona(const QString& model_path, int persona_id);
    Q_INVOKABLE int modelContextLength(const QString& model_path) const;
    Q_INVOKABLE void setModelContextLength(const QString& model_path, int length);
    QVariantMap openModelSampling() const { return modelSampling(QString()); }
    int openModelPersona() const { return modelPersona(QString()); }
    // The open model's reply settings, for the reply planner.
    hearth::store::SamplingSettings modelSamplingSettings() const;

    void setTemperature(double v);
    void setTopK(int v);
    void setTopP(double v);
    void setMinP(double v);
    void setRepeatPenalty(double v);
    void setFrequencyPenalty(double v);
    void setPresencePenalty(double v);
    void setMaxReplyTokens(int v);
    void setKvCacheMb(int v);  // 0: auto; anything else is clamped to [16, 2^20]
    void setPinnedShare(double v);
    void setThreads(int v);
    void setBackend(const QString& v);  // unknown names become "auto"
    void setLastModelPath(const QString& v);
    void setDefaultModelPath(const QString& v);
    void setModelFolders(const QStringList& v);  // cleaned, duplicates and empties dropped
    void setContextLength(int v);                // 0: the model's own; else ≥ 256
    void setContextOverflow(const QString& v);   // unknown names become "drop"
    void setContextKeep(double v);
    void setTheme(const QString& v);     // unknown names become "" (follow the system)
    void setLanguage(const QString& v);  // a code of letters (and "_"), else "" (the system's)
    void setCatalogUpdates(bool on);
    void setSpeculate(bool on);

    // Back to the defaults (the last model path is kept).
    Q_INVOKABLE void resetSampling();
    Q_INVOKABLE void resetEngine();
    // Writes pending changes to storage now (QSettings also does it on its own).
    Q_INVOKABLE void sync();

    // For the engine: the sampling defaults, and an EngineConfig with model_path (the last
    // model), n_threads, kv_mb and max_pinned_share set, the rest at their defaults.
    hearth::SamplingParams samplingParams() const;
    hearth::EngineConfig engineConfig() const;

  signals:
    void temperatureChanged();
    void topKChanged();
    void topPChanged();
    void minPChanged();
    void repeatPenaltyChanged();
    void frequencyPenaltyChanged();
    void presencePenaltyChanged();
    void maxReplyTokensChanged();
    void kvCacheMbChanged();
    void kvDiskMbChanged();
    void kvHostMbChanged();
    void pinnedShareChanged();
    void threadsChanged();
    void backendChanged();
    void lastModelPathChanged();
    void defaultModelPathChanged();
    void modelFoldersChanged();
    void contextSettingsChanged();
    void themeChanged();
    void languageChanged();
    void catalogUpdatesChanged();
    void speculateChanged();
    void modelDefaultsChanged();  // a model's own defaults, or which model is open
    void settingsChanged();

  private:
    void load();
    void load_model_context();
    // "models/<file name>/<name>": a model's own key (the last model's by default).
    QString model_key(const char* name, const QString& model_path) const;
    QString model_key(const char* name) const { return model_key(name, last_model_path_); }
    // The model a path names: the open one for an empty path.
    QString model_of(const QString& model_path) const {
        return model_path.isEmpty() ? last_model_path_ : model_path;
    }
    static int read_context_length(QSettings& s, const QString& key);

    std::unique_ptr<QSettings> settings_;
    double temperature_ = 0;
    int top_k_ = 0;
    double top_p_ = 0;
    double min_p_ = 0;
    double repeat_penalty_ = 0;
    double frequency_penalty_ = 0;
    double presence_penalty_ = 0;
    int max_reply_tokens_ = kMaxReplyTokensDefault;
    int kv_cache_mb_ = 0;
    int kv_disk_mb_ = 0;
    int kv_host_mb_ = 0;
    double pinned_share_ = 0;
    int threads_ = 0;
    QString backend_;
    QString last_model_path_;
    QString default_model_path_;
    QStringList model_folders_;
    int context_length_ = 0;
    QString context_overflow_;
    double context_keep_ = 0;
    QString theme_;
    QString language_;
    bool catalog_updates_ = true;
    bool speculate_ = true;
};
