// ModelDownloader's public side and its life cycle: starting, resuming, cancelling and
// discarding, then verification and placement once the transfer
// (model_downloader_transfer.cpp) has the whole .part, and the state, progress and errors
// the UI shows.
#include "core/model_downloader.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

#include "common/log.h"
#include "common/paths.h"
#include "core/download_http.h"

using namespace hearth::download;

namespace {

constexpr qint64 kProgressIntervalMs = 100;
constexpr qint64 kSpeedIntervalMs = 500;

}  // namespace

ModelDownloader::ModelDownloader(QObject* parent)
    : QObject(parent), nam_(new QNetworkAccessManager(this)), models_dir_(defaultModelsDir()) {
    nam_->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);  // follow_redirect()
    connect(&verify_watcher_, &QFutureWatcher<VerifyResult>::finished, this,
            &ModelDownloader::on_verified);
}

ModelDownloader::~ModelDownloader() {
    drop_reply();
    if (verify_cancel_) verify_cancel_->store(true);
    verify_watcher_.disconnect(this);
    verify_watcher_.waitForFinished();
}

QString ModelDownloader::defaultModelsDir() {
    return QDir::cleanPath(QString::fromStdString(hearth::paths::data_dir()) +
                           QStringLiteral("/models"));
}

void ModelDownloader::setModelsDir(const QString& dir) {
    const QString clean = dir.isEmpty() ? defaultModelsDir() : QDir::cleanPath(dir);
    if (clean == models_dir_) return;
    models_dir_ = clean;
    emit modelsDirChanged();
}

void ModelDownloader::setToken(const QString& token) {
    if (token.trimmed() == token_) return;
    token_ = token.trimmed();
    emit tokenChanged();
}

double ModelDownloader::progress() const {
    if (state_ == Done) return 1.0;
    if (total_ <= 0) return 0.0;
    return std::clamp(static_cast<double>(received_) / static_cast<double>(total_), 0.0, 1.0);
}

QString ModelDownloader::fileNameForUrl(const QUrl& url) {
    QString name = normalize_url(url).fileName(QUrl::FullyDecoded).trimmed();
    static const QRegularExpression bad(QStringLiteral(R"([\\/:*?"<>|\x00-\x1f])"));
    name.remove(bad);
    if (name.isEmpty() || name == QLatin1String(".") || name == QLatin1String("..") ||
        name.startsWith(QLatin1Char('.')))
        return {};
    if (!name.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive))
        name += QStringLiteral(".gguf");
    return name;
}

bool ModelDownloader::destinationExists(const QUrl& url) const {
    const QString name = fileNameForUrl(url);
    return !name.isEmpty() && QFileInfo::exists(QDir(models_dir_).filePath(name));
}

void ModelDownloader::start(const QUrl& raw_url, const QString& sha256) {
    start_impl(raw_url, sha256, QString());
}

void ModelDownloader::startFile(const QUrl& url, const QString& file_name, const QString& sha256) {
    start_impl(url, sha256, file_name);
}

void ModelDownloader::start_impl(const QUrl& raw_url, const QString& sha256,
                                 const QString& file_name) {
    if (busy()) {
        hearth::log::get("download")->warn("start() ignored: a download is already running");
        return;
    }
    const QUrl url = normalize_url(raw_url);
    url_ = url;
    destination_.clear();
    emit destinationPathChanged();
    validator_.clear();
    restarts_ = 0;
    offset_ = received_ = 0;
    total_ = -1;
    speed_ = 0;
    emit progressChanged();

    const QString scheme = url.scheme().toLower();
    if (!url.isValid() || (scheme != QLatin1String("http") && scheme != QLatin1String("https")) ||
        url.host().isEmpty()) {
        fail(
            QStringLiteral("Not a download link: paste an http:// or https:// URL of a .gguf file"),
            false);
        return;
    }
    QString sha = sha256.trimmed().toLower();
    if (sha.startsWith(QLatin1String("sha256:"))) sha = sha.mid(7).trimmed();
    static const QRegularExpression hex(QStringLiteral("^[0-9a-f]{64}$"));
    if (!sha.isEmpty() && !hex.match(sha).hasMatch()) {
        fail(QStringLiteral("The SHA-256 checksum must be 64 hexadecimal digits"), false);
        return;
    }
    sha256_ = sha;
    check_gguf_ = file_name.isEmpty();

    const QString name = file_name.isEmpty() ? fileNameForUrl(url) : file_name;
    if (name.isEmpty() || name.contains(QLatin1Char('/')) || name.contains(QLatin1Char('\\')) ||
        name.startsWith(QLatin1Char('.'))) {
        fail(QStringLiteral("The link does not name a file to download"), false);
        return;
    }
    destination_ = QDir(models_dir_).filePath(name);
    emit destinationPathChanged();
    if (!QDir().mkpath(models_dir_)) {
        fail(QStringLiteral("Cannot create the models folder %1")
                 .arg(QDir::toNativeSeparators(models_dir_)),
             false);
        return;
    }
    if (QFileInfo::exists(destination_)) {
        fail(QStringLiteral("A model named %1 already exists in %2; delete or rename it first")
                 .arg(name, QDir::toNativeSeparators(models_dir_)),
             false);
        return;
    }
    begin(false);
}

void ModelDownloader::write_note() const {
    QFile note(note_path());
    if (!note.open(QIODevice::WriteOnly | QIODevice::Truncate)) return;  // resumable this run only
    note.write(QJsonDocument(QJsonObject{{QStringLiteral("url"), url_.toString()},
                                         {QStringLiteral("sha256"), sha256_}})
                   .toJson(QJsonDocument::Compact));
}

QVariantList ModelDownloader::pendingDownloads() const {
    QVariantList out;
    const QDir dir(models_dir_);
    for (const QString& note_name :
         dir.entryList({QStringLiteral("*.part.json")}, QDir::Files, QDir::Name)) {
        const QString name = note_name.chopped(10);  // less ".part.json"
        const QFileInfo part(dir.filePath(name + QStringLiteral(".part")));
        if (!part.isFile() || QFileInfo::exists(dir.filePath(name))) continue;
        if (busy() && dir.filePath(name) == destination_) continue;  // under way
        QFile note(dir.filePath(note_name));
        if (!note.open(QIODevice::ReadOnly) || note.size() > 65536) continue;
        const QJsonObject o = QJsonDocument::fromJson(note.readAll()).object();
        const QUrl url(o.value(QStringLiteral("url")).toString());
        if (!url.isValid() || url.isEmpty()) continue;
        out << QVariantMap{{QStringLiteral("name"), name},
                           {QStringLiteral("url"), url},
                           {QStringLiteral("sha256"), o.value(QStringLiteral("sha256")).toString()},
                           {QStringLiteral("received"), part.size()}};
    }
    return out;
}

void ModelDownloader::discardPending(const QString& name) {
    if (name.isEmpty() || name.contains(QLatin1Char('/')) || name.contains(QLatin1Char('\\')))
        return;
    const QString path = QDir(models_dir_).filePath(name);
    if (busy() && path == destination_) return;
    QFile::remove(path + QStringLiteral(".part"));
    QFile::remove(path + QStringLiteral(".part.json"));
    emit stateChanged();  // the list of pending downloads changed
}

void ModelDownloader::resume() {
    if (!canResume()) return;
    if (QFileInfo::exists(destination_)) {
        fail(QStringLiteral("A model named %1 already exists; delete or rename it first")
                 .arg(QFileInfo(destination_).fileName()),
             false);
        return;
    }
    restarts_ = 0;
    begin(false);
}

void ModelDownloader::discard() {
    if (state_ != Failed && state_ != Cancelled) return;
    verify_watcher_.waitForFinished();
    if (!destination_.isEmpty()) {
        QFile::remove(part_path());
        QFile::remove(note_path());
    }
    resumable_ = false;
    received_ = 0;
    total_ = -1;
    speed_ = 0;
    set_error(QString());
    emit progressChanged();
    set_state(Idle);
}

void ModelDownloader::cancel() {
    if (state_ == Downloading) {
        drop_reply();
        if (part_.isOpen()) {
            part_.flush();
            part_.close();
        }
        resumable_ = true;
        speed_ = 0;
        update_progress(true);
        set_state(Cancelled);
    } else if (state_ == Verifying) {
        if (verify_cancel_) verify_cancel_->store(true);
        resumable_ = true;
        set_state(Cancelled);
    }
}

void ModelDownloader::begin(bool fresh) {
    // A cancelled verification may still be reading the .part: let it notice and stop.
    verify_watcher_.waitForFinished();
    set_error(QString());
    if (fresh) QFile::remove(part_path());
    const QFileInfo part(part_path());
    offset_ = part.exists() ? part.size() : 0;
    received_ = offset_;
    total_ = -1;
    speed_ = 0;
    speed_bytes_ = received_;
    speed_clock_.start();
    progress_clock_.start();
    resumable_ = false;
    set_state(Downloading);
    update_progress(true);
    hop_url_ = url_;  // a CDN's signed link from an earlier attempt may have expired
    hops_ = 0;
    linked_size_ = -1;
    send_request();
}

void ModelDownloader::start_verify() {
    speed_ = 0;
    set_state(Verifying);
    if (state_ != Verifying) return;  // cancelled from a stateChanged handler
    update_progress(true);
    verify_cancel_ = std::make_shared<std::atomic_bool>(false);
    auto cancel_flag = verify_cancel_;
    const QString path = part_path();
    const QString expected = sha256_;
    const bool check_gguf = check_gguf_;
    verify_watcher_.setFuture(
        QtConcurrent::run([path, expected, check_gguf, cancel_flag]() -> VerifyResult {
            return verify_download(path, expected, check_gguf, *cancel_flag);
        }));
}

void ModelDownloader::on_verified() {
    if (state_ != Verifying) return;  // cancelled meanwhile
    const VerifyResult r = verify_watcher_.result();
    if (r.cancelled) return;
    if (!r.ok) {
        if (r.discard) {
            QFile::remove(part_path());
            QFile::remove(note_path());
        }
        fail(r.error, !r.discard);
        return;
    }
    if (const QString error = place_download(part_path(), destination_); !error.isEmpty()) {
        fail(error, false);
        return;
    }
    QFile::remove(note_path());
    hearth::log::get("download")
        ->info("downloaded {} ({} bytes)", destination_.toStdString(), received_);
    update_progress(true);
    set_state(Done);
    emit finished(destination_);
}

void ModelDownloader::fail(const QString& error, bool resumable) {
    drop_reply();
    if (part_.isOpen()) {
        part_.flush();
        part_.close();
    }
    resumable_ = resumable && !url_.isEmpty() && !destination_.isEmpty();
    if (!destination_.isEmpty() && !QFileInfo::exists(part_path())) QFile::remove(note_path());
    speed_ = 0;
    hearth::log::get("download")->warn("download failed: {}", error.toStdString());
    set_error(error);
    update_progress(true);
    set_state(Failed);
    emit failed(error);
}

void ModelDownloader::set_state(State s) {
    if (s == state_) {
        if (s == Failed) emit stateChanged();  // canResume may differ
        return;
    }
    state_ = s;
    emit stateChanged();
}

void ModelDownloader::set_error(const QString& e) {
    if (e == error_) return;
    error_ = e;
    emit errorStringChanged();
}

void ModelDownloader::update_progress(bool force) {
    const qint64 since_sample = speed_clock_.isValid() ? speed_clock_.elapsed() : 0;
    if (state_ == Downloading && since_sample >= kSpeedIntervalMs) {
        const double now = static_cast<double>(received_ - speed_bytes_) * 1000.0 /
                           static_cast<double>(since_sample);
        speed_ = speed_ <= 0 ? now : 0.7 * speed_ + 0.3 * now;
        speed_bytes_ = received_;
        speed_clock_.restart();
    }
    if (!force && progress_clock_.isValid() && progress_clock_.elapsed() < kProgressIntervalMs)
        return;
    progress_clock_.restart();
    emit progressChanged();
}

void ModelDownloader::drop_reply() {
    if (!reply_) return;
    QNetworkReply* reply = reply_;
    reply_ = nullptr;
    reply->disconnect(this);
    reply->abort();
    reply->deleteLater();
}
