// HubSearch: finding GGUF models on Hugging Face from the Model page, through its public
// API (huggingface_hub's HfApi.list_models and list_repo_tree send the same requests):
//   GET /api/models?search=…&filter=gguf&sort=downloads|trendingScore&limit=…
//       &expand=downloads&expand=likes&expand=gated&expand=lastModified
//     → [{id, downloads, likes, gated: false|"auto"|"manual", lastModified}]
//   GET /api/models/<owner>/<repo>/tree/main?recursive=true
//     → [{type: "file", path, size, oid, lfs: {oid: <sha256>, size}}], in pages: a Link
//       header's rel="next" names the next one (huggingface_hub's utils/_pagination.py)
// and the download link of a file, /<owner>/<repo>/resolve/main/<path>, which redirects to
// a CDN; ModelDownloader fetches it with the LFS SHA-256 to check.
//
// Each repository's files are listed as models: the GGUF files but projectors, a split
// model's parts as one entry (its "files" lists every part to download), the quantisation read from
// the name (the header confirms it after download), and whether it would fit this computer from its
// size (weights and the app; the KV cache is added once the header is read). Errors say what to do:
// no network or a proxy in the way, a gated repository (a token in Settings), a name that does not
// exist, the Hub asking to slow down.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QJsonArray>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QUrl>
#include <QVariantList>

class QNetworkAccessManager;
class QNetworkReply;

class HubSearch : public QObject {
    Q_OBJECT
    QML_ELEMENT
    // Where the Hub is (tests use a local server); default https://huggingface.co.
    Q_PROPERTY(QString baseUrl READ baseUrl WRITE setBaseUrl NOTIFY baseUrlChanged)
    // A Hugging Face access token for gated repositories ("" for none).
    Q_PROPERTY(QString token READ token WRITE setToken NOTIFY tokenChanged)
    // For the fit of each file: the memory read rate of this computer (bytes/s; 0: unknown).
    Q_PROPERTY(double readBandwidth READ readBandwidth WRITE setReadBandwidth NOTIFY filesChanged)
    Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)
    Q_PROPERTY(QVariantList results READ results NOTIFY resultsChanged)
    Q_PROPERTY(QString repo READ repo NOTIFY filesChanged)
    Q_PROPERTY(QVariantList files READ files NOTIFY filesChanged)

  public:
    explicit HubSearch(QObject* parent = nullptr);
    ~HubSearch() override;

    QString baseUrl() const { return base_url_; }
    void setBaseUrl(const QString& url);
    QString token() const { return token_; }
    void setToken(const QString& token);
    double readBandwidth() const { return read_bandwidth_; }
    void setReadBandwidth(double bytes_per_s);
    bool busy() const { return !reply_.isNull(); }
    QString errorString() const { return error_; }
    QVariantList results() const { return results_; }
    QString repo() const { return repo_; }
    QVariantList files() const { return files_; }

    // sort: "downloads" (the default) or "trending".
    Q_INVOKABLE void search(const QString& text, const QString& sort = QStringLiteral("downloads"));
    // Lists a repository's GGUF models ("owner/name").
    Q_INVOKABLE void listFiles(const QString& repo);
    Q_INVOKABLE void cancel();
    // The download link of a file in the listed repository.
    Q_INVOKABLE QUrl downloadUrl(const QString& path) const;

    // For tests: the parts of a listing, as the view gets them.
    static QVariantList parse_results(const QByteArray& json);
    static QVariantList parse_files(const QByteArray& json, QString* error);
    // "Qwen3-4B-Q4_K_M.gguf" → "Q4_K_M"; "" when the name says none.
    static QString quant_of(const QString& file_name);
    // A Link header's rel="next" address (RFC 8288), resolved against the page's; empty
    // when there is none.
    static QUrl next_page(const QByteArray& link_header, const QUrl& page);
    // The most pages of a repository's files read (a thousand files each on the Hub).
    static constexpr int kMaxTreePages = 20;

  signals:
    void baseUrlChanged();
    void tokenChanged();
    void busyChanged();
    void errorStringChanged();
    void resultsChanged();
    void filesChanged();

  private:
    enum class Kind { Search, Files };
    void send(const QUrl& url, Kind kind);
    void on_finished();
    void set_error(const QString& e);
    void add_fit(QVariantList& files) const;

    QNetworkAccessManager* nam_ = nullptr;
    QPointer<QNetworkReply> reply_;
    Kind kind_ = Kind::Search;
    QString pending_repo_;
    QJsonArray tree_;  // the pages of files read so far
    int tree_pages_ = 0;
    QString base_url_ = QStringLiteral("https://huggingface.co");
    QString token_;
    double read_bandwidth_ = 0;
    QString error_;
    QVariantList results_;
    QString repo_;
    QVariantList files_;
};
