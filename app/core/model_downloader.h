// ModelDownloader: fetches a GGUF model from a URL the user pastes (a Hugging Face
// "resolve" link, any http(s) URL; redirects are followed) into the models folder.
//
// Redirects are followed here, not by Qt, for two reasons. A token (a Hugging Face access
// token, for gated models) goes to the link's own host only, never to the CDN host the
// Hub redirects to. And the Hub's answer before the redirect names the file's LFS
// checksum and size (X-Linked-ETag, X-Linked-Size): without a checksum of its own the
// download is verified against that one, and with one that differs it stops (the file
// changed since it was listed).
//
// The body goes to "<name>.part" next to the destination. A dropped connection or a
// cancel keeps the .part, and resume() (or a later start() of the same name) continues
// it with an HTTP Range request; a server that ignores Range (200), answers with a
// Content-Range that does not start where asked, or says 416 makes the download start
// over cleanly. When the body is complete the file is verified off the GUI thread (the
// optional SHA-256, then GgufFile::open) and only then renamed to its final name, so a
// failed or cancelled download never leaves a half file under that name. An existing
// model is never overwritten: start() refuses, and so does the final rename.
//
// Beside a model's .part, "<name>.part.json" keeps its link and checksum, so a download
// paused (or cut off) in an earlier run is listed by pendingDownloads() and continues
// with start() after a restart.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QElapsedTimer>
#include <QFile>
#include <QFutureWatcher>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QUrl>
#include <QVariantList>

#include <atomic>
#include <memory>

#include "core/download_verify.h"

class QNetworkAccessManager;
class QNetworkReply;

class ModelDownloader : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(State state READ state NOTIFY stateChanged)
    Q_PROPERTY(bool busy READ busy NOTIFY stateChanged)
    Q_PROPERTY(bool canResume READ canResume NOTIFY stateChanged)
    Q_PROPERTY(double progress READ progress NOTIFY progressChanged)
    Q_PROPERTY(qint64 bytesReceived READ bytesReceived NOTIFY progressChanged)
    Q_PROPERTY(qint64 bytesTotal READ bytesTotal NOTIFY progressChanged)  // -1: unknown
    Q_PROPERTY(double speed READ speed NOTIFY progressChanged)            // bytes per second
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)
    Q_PROPERTY(QString destinationPath READ destinationPath NOTIFY destinationPathChanged)
    Q_PROPERTY(QUrl url READ url NOTIFY destinationPathChanged)
    // Where models go; default <data dir>/models (hearth::paths::data_dir()).
    Q_PROPERTY(QString modelsDir READ modelsDir WRITE setModelsDir NOTIFY modelsDirChanged)
    // Sent as "Authorization: Bearer <token>" to the link's host (scheme, host and port)
    // only; "" for none.
    Q_PROPERTY(QString token READ token WRITE setToken NOTIFY tokenChanged)

  public:
    enum State { Idle, Downloading, Verifying, Done, Failed, Cancelled };
    Q_ENUM(State)

    explicit ModelDownloader(QObject* parent = nullptr);
    ~ModelDownloader() override;

    State state() const { return state_; }
    bool busy() const { return state_ == Downloading || state_ == Verifying; }
    bool canResume() const { return (state_ == Failed || state_ == Cancelled) && resumable_; }
    double progress() const;
    qint64 bytesReceived() const { return received_; }
    qint64 bytesTotal() const { return total_; }
    double speed() const { return speed_; }
    QString errorString() const { return error_; }
    QString destinationPath() const { return destination_; }
    QUrl url() const { return url_; }
    QString modelsDir() const { return models_dir_; }
    void setModelsDir(const QString& dir);
    QString token() const { return token_; }
    void setToken(const QString& token);

    // Starts downloading url into modelsDir. sha256: optional expected checksum (64 hex
    // digits, a "sha256:" prefix is accepted). Continues an existing .part of the same
    // name. Ignored while busy. Refuses (state Failed) when the URL is not http(s) or
    // names no file, when the checksum is malformed, or when a file of that name already
    // exists. A Hugging Face ".../blob/..." page link is turned into its ".../resolve/..."
    // download link.
    Q_INVOKABLE void start(const QUrl& url, const QString& sha256 = QString());
    // For C++ (any file, not only models): downloads url into modelsDir as file_name (a
    // plain name, no folders), verified by the SHA-256 alone (no GGUF check). Otherwise
    // as start().
    void startFile(const QUrl& url, const QString& file_name, const QString& sha256);
    // Stops a download or a verification; the .part is kept for resume().
    Q_INVOKABLE void cancel();
    // Continues the last failed or cancelled download from its .part.
    Q_INVOKABLE void resume();
    // Deletes the .part of the last failed or cancelled download and returns to Idle.
    Q_INVOKABLE void discard();

    // The file name a URL downloads to ("tiny.gguf" for .../resolve/main/tiny.gguf?x=1);
    // empty when the URL names no usable file.
    static QString fileNameForUrl(const QUrl& url);
    // For QML, before start(): that name, and whether a model of that name is already in
    // modelsDir (start() would refuse it).
    Q_INVOKABLE QString fileNameFor(const QUrl& url) const { return fileNameForUrl(url); }
    Q_INVOKABLE bool destinationExists(const QUrl& url) const;
    // The default models folder.
    static QString defaultModelsDir();
    // Downloads of models left unfinished in modelsDir, this run's or an earlier one's:
    // {name, url, sha256, received (bytes in the .part)}; start(url, sha256) continues one.
    Q_INVOKABLE QVariantList pendingDownloads() const;
    // Deletes an unfinished download's .part and its note (not the one under way).
    Q_INVOKABLE void discardPending(const QString& name);

    // Milliseconds without any data before the transfer is abandoned (default 60).
    void setTransferTimeout(int ms) { transfer_timeout_ms_ = ms; }

  signals:
    void stateChanged();
    void progressChanged();
    void errorStringChanged();
    void destinationPathChanged();
    void modelsDirChanged();
    void tokenChanged();
    void finished(const QString& path);  // verified and under its final name
    void failed(const QString& error);

  private:
    using VerifyResult = hearth::download::VerifyResult;

    void start_impl(const QUrl& url, const QString& sha256, const QString& file_name);
    void begin(bool fresh);
    void send_request();
    void on_ready_read();
    void on_finished();
    bool check_response();  // false: the reply was dealt with (aborted or failed)
    // A 3xx answer: the next hop, after reading the Hub's X-Linked-* headers. false: the
    // download failed (too many hops, a downgrade to http, a checksum that disagrees).
    bool follow_redirect(int status);
    bool open_part(bool truncate);
    bool write_available();
    void restart_from_zero();
    void start_verify();
    void on_verified();
    void fail(const QString& error, bool resumable);
    // What a failed transfer's message ends with: resuming once something was received,
    // else trying again (there is nothing to resume).
    QString next_step() const;
    void set_state(State s);
    void set_error(const QString& e);
    void update_progress(bool force);
    void drop_reply();
    QString part_path() const { return destination_ + QStringLiteral(".part"); }
    QString note_path() const { return part_path() + QStringLiteral(".json"); }
    void write_note() const;

    QNetworkAccessManager* nam_ = nullptr;
    QPointer<QNetworkReply> reply_;
    QFile part_;
    QFutureWatcher<VerifyResult> verify_watcher_;
    std::shared_ptr<std::atomic_bool> verify_cancel_;

    State state_ = Idle;
    QUrl url_;
    QUrl hop_url_;  // where the current request goes: url_, or where it redirected
    int hops_ = 0;
    QString token_;
    qint64 linked_size_ = -1;  // X-Linked-Size: the file's size as the Hub lists it
    QString sha256_;           // lower-case hex, or empty
    QString destination_;
    QString models_dir_;
    QString error_;
    QString validator_;  // ETag or Last-Modified of the last response, for If-Range
    qint64 offset_ = 0;  // bytes already in the .part when the request was sent
    qint64 received_ = 0;
    qint64 total_ = -1;
    double speed_ = 0;
    bool resumable_ = false;
    bool check_gguf_ = true;  // false for startFile()
    bool response_checked_ = false;
    int restarts_ = 0;  // guards against restart loops with a misbehaving server
    int transfer_timeout_ms_ = 60000;

    QElapsedTimer progress_clock_;  // since the last progressChanged
    QElapsedTimer speed_clock_;     // since the last speed sample
    qint64 speed_bytes_ = 0;        // received_ at the last speed sample
};
