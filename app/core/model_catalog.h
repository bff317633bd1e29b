// ModelCatalog: the curated list of models for the Model page's "Recommended" tab — the
// instruction-tuned models that run well on a desktop, each with its Hugging Face
// repository, a few quantisations with their sizes, context length, licence and a line
// to choose by (resources/catalog/catalog.json; each fact's source is in
// docs/research/catalog-sources.md, and what could not be checked is listed per entry).
//
// The list ships inside the app and works offline. It can be updated without a new
// release: checkForUpdate() fetches the same format from updateUrl, keeps it in the data
// folder only if it is valid and newer than the one built in, and uses it from then on.
// Automatic checks (once a day, while the tab is shown) follow updatesEnabled, which the
// user can turn off in Settings; nothing else about the user is sent.
//
// Each file gets a fit estimate for this computer: its size as the weights, and the KV
// cache from the layer, head and dimension numbers the entry carries (engine/fit_estimate.h,
// the same arithmetic as the list of models on this computer once a header is read).
// Downloads take the file from the Hub's "resolve" link; the Hub's X-Linked-Etag gives
// the checksum (ModelDownloader).
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QVariantList>

#include <optional>

class QNetworkAccessManager;
class QNetworkReply;

class ModelCatalog : public QObject {
    Q_OBJECT
    QML_ELEMENT
    // One map per model: {id, name, family, architecture, parametersB, repo, baseRepo,
    // license, contextLength, description, caveat (what to know about running it here),
    // thinking, recommended, sources, unchecked,
    // supported, files: [{name, quant, size, url, recommended, fit, fitText, fitDetail,
    // tokensPerSecond}]}.
    Q_PROPERTY(QVariantList models READ models NOTIFY modelsChanged)
    Q_PROPERTY(QString updated READ updated NOTIFY modelsChanged)     // the list's date
    Q_PROPERTY(bool fromUpdate READ fromUpdate NOTIFY modelsChanged)  // not the built-in one
    // Where the files are downloaded from; default https://huggingface.co.
    Q_PROPERTY(QString hubUrl READ hubUrl WRITE setHubUrl NOTIFY modelsChanged)
    Q_PROPERTY(QString updateUrl READ updateUrl WRITE setUpdateUrl NOTIFY updateUrlChanged)
    Q_PROPERTY(bool updatesEnabled READ updatesEnabled WRITE setUpdatesEnabled NOTIFY
                   updatesEnabledChanged)
    // Where an updated list is kept; default the data folder.
    Q_PROPERTY(QString cacheDir READ cacheDir WRITE setCacheDir NOTIFY modelsChanged)
    Q_PROPERTY(bool checking READ checking NOTIFY checkingChanged)
    Q_PROPERTY(QString status READ status NOTIFY statusChanged)  // the last check's outcome
    // For the fit: this computer's memory read rate (bytes/s; 0 unknown), the context to
    // estimate the KV cache for (0: each model's own) and the KV cache setting (0: auto).
    Q_PROPERTY(double readBandwidth READ readBandwidth WRITE setReadBandwidth NOTIFY modelsChanged)
    Q_PROPERTY(int context READ context WRITE setContext NOTIFY modelsChanged)
    Q_PROPERTY(int kvCacheMb READ kvCacheMb WRITE setKvCacheMb NOTIFY modelsChanged)

  public:
    static constexpr const char* kDefaultUpdateUrl =
        "https://raw.githubusercontent.com/hearth/hearth/main/resources/catalog/catalog.json";
    static constexpr qint64 kMaxBytes = qint64{2} << 20;
    static constexpr int kCheckIntervalHours = 24;

    explicit ModelCatalog(QObject* parent = nullptr);
    ~ModelCatalog() override;

    QVariantList models() const { return models_; }
    QString updated() const { return updated_; }
    bool fromUpdate() const { return from_update_; }
    QString hubUrl() const { return hub_url_; }
    void setHubUrl(const QString& url);
    QString updateUrl() const { return update_url_; }
    void setUpdateUrl(const QString& url);
    bool updatesEnabled() const { return updates_enabled_; }
    void setUpdatesEnabled(bool on);
    QString cacheDir() const { return cache_dir_; }
    void setCacheDir(const QString& dir);
    bool checking() const { return !reply_.isNull(); }
    QString status() const { return status_; }
    double readBandwidth() const { return read_bandwidth_; }
    void setReadBandwidth(double bytes_per_s);
    int context() const { return context_; }
    void setContext(int tokens);
    int kvCacheMb() const { return kv_cache_mb_; }
    void setKvCacheMb(int mb);

    // Fetches updateUrl now (the Settings button; it works with automatic checks off).
    Q_INVOKABLE void checkForUpdate();
    // An automatic check: only with updatesEnabled, once a run, and once a day.
    Q_INVOKABLE void checkIfDue();

    // A catalog document, validated as a whole: {models (as the property, without the
    // per-machine fields), updated}. nullopt and the reason when any part is malformed.
    struct Parsed {
        QVariantList models;
        QString updated;
    };
    static std::optional<Parsed> parse(const QByteArray& json, QString* error);
    QString cachePath() const;

  signals:
    void modelsChanged();
    void updateUrlChanged();
    void updatesEnabledChanged();
    void checkingChanged();
    void statusChanged();

  private:
    void load();     // the built-in list, or the kept update when it is newer
    void rebuild();  // the per-machine fields (links, fit)
    void on_finished();
    void set_status(const QString& s);

    QNetworkAccessManager* nam_ = nullptr;
    QPointer<QNetworkReply> reply_;
    Parsed source_;
    QVariantList models_;
    QString updated_;
    bool from_update_ = false;
    QString hub_url_ = QStringLiteral("https://huggingface.co");
    QString update_url_ = QLatin1String(kDefaultUpdateUrl);
    bool updates_enabled_ = true;
    bool checked_this_run_ = false;
    QString cache_dir_;
    QString status_;
    double read_bandwidth_ = 0;
    int context_ = 0;
    int kv_cache_mb_ = 0;
};
