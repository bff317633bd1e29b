// ModelLibrary: every model on this computer for the Model page — Hearth's own models
// folder, folders the user added, and the models other apps downloaded (Ollama, LM Studio,
// GPT4All, Jan, llama.cpp, Hugging Face's cache), used in place (app/models/). Each row
// says what the file is (read from its GGUF header), whether Hearth can run it, when it
// was last opened, and whether it is the one opened at start.
//
// Scans run on the thread pool (listing folders, reading headers); the header facts of a
// file are kept while its size and time are unchanged, so a refresh reads new files only.
// Deleting is offered for files in Hearth's folder and the user's folders; another app's
// files are that app's to delete (an Ollama blob, say, belongs to its manifests).
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QAbstractListModel>
#include <QFutureWatcher>
#include <QHash>
#include <QPointer>
#include <QStringList>
#include <QUrl>
#include <QVariantList>

#include <optional>

#include "models/model_scan.h"

class AppSettings;
class EngineBridge;

class ModelLibrary : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(AppSettings* settings READ settings WRITE setSettings NOTIFY settingsChanged)
    // The running engine, which deletes a deleted model's KV blocks from its disk tier.
    Q_PROPERTY(EngineBridge* bridge READ bridge WRITE setBridge NOTIFY settingsChanged)
    // Hearth's own models folder; default ModelDownloader::defaultModelsDir().
    Q_PROPERTY(QString modelsDir READ modelsDir WRITE setModelsDir NOTIFY modelsDirChanged)
    // The model open now (bind the bridge's modelPath): its row says so, and opening a
    // model notes when it was last used.
    Q_PROPERTY(QString openPath READ openPath WRITE setOpenPath NOTIFY openPathChanged)
    // Scans only while true (the page shows the list): nothing is read at start.
    Q_PROPERTY(bool active READ active WRITE setActive NOTIFY activeChanged)
    // false: Hearth's folder and the user's only (tests).
    Q_PROPERTY(bool otherApps READ otherApps WRITE setOtherApps NOTIFY otherAppsChanged)
    Q_PROPERTY(bool scanning READ scanning NOTIFY scanningChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    // Where Hearth looked: {source, label, path, present, models, problems (a list)}, one
    // per folder, for the page's "Where Hearth looks".
    Q_PROPERTY(QVariantList sources READ sources NOTIFY scanned)
    // This computer's memory read rate (bytes/s), measured with the first scan; 0 before.
    Q_PROPERTY(double readBandwidth READ readBandwidth NOTIFY scanned)

  public:
    enum Role {
        PathRole = Qt::UserRole + 1,
        NameRole,  // what its app calls it
        FileNameRole,
        AliasesRole,      // other names of the same file (Ollama tags)
        SourceRole,       // "hearth", "folder", "ollama", …
        SourceLabelRole,  // "Hearth", "Your folder", "Ollama", …
        RepoRole,         // Hugging Face repository, where known
        SizeRole,         // bytes
        PartsRole,        // a split model's files
        TitleRole,        // from its header: "Qwen3 4B Instruct"
        ArchitectureRole,
        QuantisationRole,
        ParametersRole,
        ContextLengthRole,
        SupportedRole,  // Hearth can open it
        WhyNotRole,     // when not: why
        LastUsedRole,   // QDateTime, invalid: never opened
        IsOpenRole,
        IsDefaultRole,  // opened at start
        CanDeleteRole,
        ThinkingSwitchRole,  // its chat template can turn reasoning off (Qwen3)
        OwnDefaultsRole,     // it has defaults of its own (AppSettings::modelSampling, …)
        // Will it run here (fit_estimate.h), at its context setting: "fits", "tight",
        // "too-big" ("" when it cannot be opened), in plain words, and the numbers behind.
        FitRole,
        FitTextRole,
        FitDetailRole,
        EstimatedBytesRole,
        EstimatedTokensPerSecondRole,
    };
    Q_ENUM(Role)

    explicit ModelLibrary(QObject* parent = nullptr);
    ~ModelLibrary() override;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    AppSettings* settings() const { return settings_; }
    void setSettings(AppSettings* settings);
    EngineBridge* bridge() const;
    void setBridge(EngineBridge* bridge);
    // Where the KV cache's disk tier is (hearth::paths::kv_cache_dir()); tests move it.
    void setKvDiskDir(const QString& dir) { kv_disk_dir_ = dir; }
    QString modelsDir() const { return models_dir_; }
    void setModelsDir(const QString& dir);
    QString openPath() const { return open_path_; }
    void setOpenPath(const QString& path);
    bool active() const { return active_; }
    void setActive(bool on);
    bool otherApps() const { return other_apps_; }
    void setOtherApps(bool on);
    bool scanning() const { return watcher_.isRunning(); }
    QVariantList sources() const { return sources_; }
    double readBandwidth() const { return machine_.read_bytes_per_s; }

    // Looks again (a scan already running is followed by one more); not while inactive.
    Q_INVOKABLE void refresh();
    // Adds a folder (a path or a file: URL) to the list. Returns why it cannot (not a
    // folder, already listed), or "".
    Q_INVOKABLE QString addFolder(const QVariant& folder);
    Q_INVOKABLE void removeFolder(const QString& folder);
    // Deletes a model file (all parts of a split one) in Hearth's or the user's folder, and
    // its KV blocks kept on disk. Returns what went wrong for the user, or "" when it is
    // gone. Refuses the open model.
    Q_INVOKABLE QString remove(const QString& path);
    // Opens the file's folder in the file manager.
    Q_INVOKABLE void reveal(const QString& path) const;
    // Opens this model at start ("": the last one opened, as before).
    Q_INVOKABLE void setDefault(const QString& path);
    // The row of a path, -1 if not listed.
    Q_INVOKABLE int indexOf(const QString& path) const;
    // The estimate of a listed model as the roles give it ({fit, text, detail, bytes,
    // tokensPerSecond}), empty when there is none.
    Q_INVOKABLE QVariantMap estimateFor(const QString& path) const;

    // For tests: the roots to read instead of this computer's.
    void setRootsForTesting(std::optional<QList<hearth::models::SourceRoot>> roots);

  signals:
    void settingsChanged();
    void modelsDirChanged();
    void openPathChanged();
    void activeChanged();
    void otherAppsChanged();
    void scanningChanged();
    void countChanged();
    void scanned();

  private:
    struct Row {
        hearth::models::FoundModel model;
        hearth::models::ModelFacts facts;
        QString canonical;  // the file behind links (an Ollama blob linked to a model, say)
    };
    struct FactsKey {
        qint64 size;
        QDateTime modified;
        hearth::models::ModelFacts facts;
    };
    struct ScanResult {
        hearth::models::LibraryScan scan;
        QList<hearth::models::ModelFacts> facts;  // one per scan.models
        hearth::MachineFacts machine;
    };
    std::optional<hearth::FitEstimate> estimate(const Row& row) const;
    QVariantMap estimate_map(const Row& row) const;  // as estimateFor() gives it

    QList<hearth::models::SourceRoot> roots() const;
    void on_scanned();
    int row_of(const QString& path) const;
    void refresh_flags();

    QPointer<AppSettings> settings_;
    QPointer<EngineBridge> bridge_;
    QString models_dir_;
    QString kv_disk_dir_;
    QString open_path_;
    QString open_canonical_;
    bool active_ = false;
    bool other_apps_ = true;
    bool rescan_ = false;
    std::optional<QList<hearth::models::SourceRoot>> test_roots_;
    QList<Row> rows_;
    QVariantList sources_;
    hearth::MachineFacts machine_;          // read at each scan; the bandwidth measured once
    QHash<QString, FactsKey> facts_cache_;  // path → facts of that size and time
    QFutureWatcher<ScanResult> watcher_;
};
