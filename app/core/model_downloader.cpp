#include "core/model_downloader.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QStorageInfo>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

#include "common/log.h"
#include "common/paths.h"
#include "gguf/gguf_file.h"

namespace {

constexpr int kMaxRedirects = 10;
constexpr int kMaxRestarts = 2;
constexpr qint64 kProgressIntervalMs = 100;
constexpr qint64 kSpeedIntervalMs = 500;

QString human_size(qint64 bytes) {
    return QLocale::system().formattedDataSize(bytes);
}

// "bytes 100-199/1000" → {100, 199, 1000}; total -1 for "*". False when malformed.
bool parse_content_range(const QByteArray& header, qint64& first, qint64& last, qint64& total) {
    static const QRegularExpression re(QStringLiteral(R"(^\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*$)"),
                                       QRegularExpression::CaseInsensitiveOption);
    const auto m = re.match(QString::fromLatin1(header));
    if (!m.hasMatch()) return false;
    bool ok1 = false, ok2 = false, ok3 = true;
    first = m.captured(1).toLongLong(&ok1);
    last = m.captured(2).toLongLong(&ok2);
    total = m.captured(3) == QLatin1String("*") ? -1 : m.captured(3).toLongLong(&ok3);
    return ok1 && ok2 && ok3 && first <= last && (total < 0 || last < total);
}

// "bytes */1000" (a 416 answer) → 1000, else -1.
qint64 unsatisfied_range_total(const QByteArray& header) {
    static const QRegularExpression re(QStringLiteral(R"(^\s*bytes\s+\*/(\d+)\s*$)"),
                                       QRegularExpression::CaseInsensitiveOption);
    const auto m = re.match(QString::fromLatin1(header));
    bool ok = false;
    const qint64 total = m.hasMatch() ? m.captured(1).toLongLong(&ok) : -1;
    return ok ? total : -1;
}

QString http_status_message(int status, const QString& reason) {
    QString msg = QStringLiteral("The server answered HTTP %1").arg(status);
    if (!reason.isEmpty()) msg += QStringLiteral(" (%1)").arg(reason);
    switch (status) {
        case 401:
        case 403:
            msg += QStringLiteral(
                ": the model may be gated or private (accept its license on the "
                "website, or download it in the browser)");
            break;
        case 404:
            msg += QStringLiteral(": check the link");
            break;
        case 429:
            msg += QStringLiteral(": too many requests, try again later");
            break;
        default:
            if (status >= 500) msg += QStringLiteral(": the server has a problem, try again later");
            break;
    }
    return msg;
}

// A Hugging Face web page link (.../blob/<rev>/<file>) → its download link (.../resolve/...).
QUrl normalize_url(QUrl url) {
    const QString host = url.host().toLower();
    if (host != QLatin1String("huggingface.co") && host != QLatin1String("hf.co") &&
        host != QLatin1String("www.huggingface.co"))
        return url;
    QStringList segments = url.path(QUrl::FullyEncoded).split(QLatin1Char('/'));
    // "", org, repo, blob, rev, file...
    if (segments.size() >= 6 && segments[3] == QLatin1String("blob")) {
        segments[3] = QStringLiteral("resolve");
        url.setPath(segments.join(QLatin1Char('/')), QUrl::StrictMode);
    }
    return url;
}

}  // namespace

ModelDownloader::ModelDownloader(QObject* parent)
    : QObject(parent), nam_(new QNetworkAccessManager(this)), models_dir_(defaultModelsDir()) {
    nam_->setRedirectPolicy(QNetworkRequest::NoLessSafeRedirectPolicy);
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
    if (!destination_.isEmpty()) QFile::remove(part_path());
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
    send_request();
}

void ModelDownloader::send_request() {
    QNetworkRequest request(url_);
    request.setMaximumRedirectsAllowed(kMaxRedirects);
    request.setTransferTimeout(transfer_timeout_ms_);
    request.setHeader(QNetworkRequest::UserAgentHeader, QStringLiteral("Hearth"));
    // An explicit encoding turns off Qt's transparent decompression, which would make the
    // byte counts and ranges disagree with the file.
    request.setRawHeader("Accept-Encoding", "identity");
    if (offset_ > 0) {
        request.setRawHeader("Range", QByteArray("bytes=") + QByteArray::number(offset_) + '-');
        if (!validator_.isEmpty()) request.setRawHeader("If-Range", validator_.toUtf8());
    }
    response_checked_ = false;
    reply_ = nam_->get(request);
    connect(reply_, &QNetworkReply::readyRead, this, &ModelDownloader::on_ready_read);
    connect(reply_, &QNetworkReply::finished, this, &ModelDownloader::on_finished);
    hearth::log::get("download")
        ->info("GET {} (from byte {})", url_.toDisplayString(QUrl::RemoveQuery).toStdString(),
               offset_);
}

bool ModelDownloader::check_response() {
    response_checked_ = true;
    const QVariant status_attr = reply_->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    if (!status_attr.isValid()) return true;  // no HTTP answer: on_finished reports the error
    const int status = status_attr.toInt();
    const QString reason = reply_->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toString();

    if (status == 416 && offset_ > 0) {
        const qint64 total = unsatisfied_range_total(reply_->rawHeader("Content-Range"));
        if (total == offset_) {  // the .part already holds the whole file
            drop_reply();
            total_ = received_ = offset_;
            update_progress(true);
            start_verify();
        } else {
            restart_from_zero();
        }
        return false;
    }
    if (status >= 400) {
        fail(http_status_message(status, reason), status >= 500 || status == 408 || status == 429);
        return false;
    }
    if (status < 200 || status >= 300) {
        fail(
            QStringLiteral("Unexpected answer from the server: HTTP %1 %2").arg(status).arg(reason),
            false);
        return false;
    }

    const QByteArray etag = reply_->rawHeader("ETag");
    const QByteArray modified = reply_->rawHeader("Last-Modified");
    validator_ = !etag.isEmpty() && !etag.startsWith("W/") ? QString::fromLatin1(etag)
                                                           : QString::fromLatin1(modified);
    const qint64 length = reply_->header(QNetworkRequest::ContentLengthHeader).isValid()
                              ? reply_->header(QNetworkRequest::ContentLengthHeader).toLongLong()
                              : -1;
    if (status == 206) {
        qint64 first = 0, last = 0, total = -1;
        if (!parse_content_range(reply_->rawHeader("Content-Range"), first, last, total) ||
            first != offset_ || (length >= 0 && length != last - first + 1)) {
            hearth::log::get("download")
                ->warn("unusable 206 answer (Content-Range '{}' for byte {}): starting over",
                       reply_->rawHeader("Content-Range").toStdString(), offset_);
            restart_from_zero();
            return false;
        }
        total_ = total >= 0 ? total : last + 1;
        if (!open_part(false)) return false;
    } else {
        if (offset_ > 0)
            hearth::log::get("download")->info("the server sent the whole file: starting over");
        offset_ = 0;
        received_ = 0;
        speed_bytes_ = 0;
        total_ = length;
        if (!open_part(true)) return false;
    }

    if (total_ > received_) {
        const QStorageInfo storage(models_dir_);
        const qint64 need = total_ - received_;
        if (storage.isValid() && storage.bytesAvailable() >= 0 && storage.bytesAvailable() < need) {
            fail(QStringLiteral("Not enough disk space: the model needs %1 more, %2 is free in %3")
                     .arg(human_size(need), human_size(storage.bytesAvailable()),
                          QDir::toNativeSeparators(models_dir_)),
                 true);
            return false;
        }
    }
    update_progress(true);
    return true;
}

bool ModelDownloader::open_part(bool truncate) {
    part_.close();
    part_.setFileName(part_path());
    bool ok = false;
    if (truncate) {
        ok = part_.open(QIODevice::WriteOnly | QIODevice::Truncate);
    } else {
        ok = part_.open(QIODevice::ReadWrite) &&
             (part_.size() == offset_ || part_.resize(offset_)) && part_.seek(offset_);
    }
    if (!ok) {
        fail(QStringLiteral("Cannot write %1: %2")
                 .arg(QDir::toNativeSeparators(part_path()), part_.errorString()),
             false);
        return false;
    }
    return true;
}

bool ModelDownloader::write_available() {
    const QByteArray data = reply_->readAll();
    if (data.isEmpty()) return true;
    if (part_.write(data) != data.size()) {
        fail(QStringLiteral("Cannot write %1: %2 (is the disk full?)")
                 .arg(QDir::toNativeSeparators(part_path()), part_.errorString()),
             true);
        return false;
    }
    received_ += data.size();
    update_progress(false);
    return true;
}

void ModelDownloader::on_ready_read() {
    if (!reply_ || state_ != Downloading) return;
    // An error answer's body is not wanted; it is judged once the reply has finished
    // (aborting it here would make Qt report the error twice).
    if (reply_->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() >= 400) {
        reply_->readAll();
        return;
    }
    if (!response_checked_ && !check_response()) return;
    write_available();
}

void ModelDownloader::on_finished() {
    if (!reply_ || state_ != Downloading) return;
    if (!response_checked_ && !check_response()) return;
    if (part_.isOpen() && !write_available()) return;  // what came before an error counts too

    const QNetworkReply::NetworkError error = reply_->error();
    const QString error_text = reply_->errorString();
    drop_reply();
    bool flushed = true;
    QString file_error;
    if (part_.isOpen()) {
        flushed = part_.flush();
        file_error = part_.errorString();
        part_.close();
    }
    if (!flushed) {
        fail(QStringLiteral("Cannot write %1: %2 (is the disk full?)")
                 .arg(QDir::toNativeSeparators(part_path()), file_error),
             true);
        return;
    }
    if (error == QNetworkReply::OperationCanceledError || error == QNetworkReply::TimeoutError) {
        fail(QStringLiteral("The server stopped sending data; you can resume the download"), true);
        return;
    }
    if (error == QNetworkReply::RemoteHostClosedError && total_ >= 0 && received_ < total_) {
        fail(QStringLiteral(
                 "The connection closed early (%1 of %2 received); you can resume the download")
                 .arg(human_size(received_), human_size(total_)),
             true);
        return;
    }
    if (error != QNetworkReply::NoError) {
        fail(QStringLiteral("Network error: %1; you can resume the download").arg(error_text),
             true);
        return;
    }
    if (total_ >= 0 && received_ != total_) {
        fail(QStringLiteral(
                 "The connection closed early (%1 of %2 received); you can resume the download")
                 .arg(human_size(received_), human_size(total_)),
             true);
        return;
    }
    total_ = received_;
    update_progress(true);
    start_verify();
}

void ModelDownloader::restart_from_zero() {
    drop_reply();
    part_.close();
    if (++restarts_ > kMaxRestarts) {
        fail(QStringLiteral("The server does not send the requested part of the file; "
                            "delete the partial download and try again"),
             false);
        return;
    }
    QFile::remove(part_path());
    offset_ = received_ = 0;
    speed_bytes_ = 0;
    total_ = -1;
    validator_.clear();
    update_progress(true);
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
    verify_watcher_.setFuture(QtConcurrent::run([path, expected, check_gguf,
                                                 cancel_flag]() -> VerifyResult {
        VerifyResult r;
        if (!expected.isEmpty()) {
            QFile file(path);
            if (!file.open(QIODevice::ReadOnly)) {
                r.error = QStringLiteral("Cannot read %1: %2")
                              .arg(QDir::toNativeSeparators(path), file.errorString());
                return r;
            }
            QCryptographicHash hash(QCryptographicHash::Sha256);
            QByteArray buffer(4 << 20, Qt::Uninitialized);
            for (;;) {
                if (cancel_flag->load()) {
                    r.cancelled = true;
                    return r;
                }
                const qint64 n = file.read(buffer.data(), buffer.size());
                if (n < 0) {
                    r.error = QStringLiteral("Cannot read %1: %2")
                                  .arg(QDir::toNativeSeparators(path), file.errorString());
                    return r;
                }
                if (n == 0) break;
                hash.addData(QByteArrayView(buffer.constData(), n));
            }
            const QString actual = QString::fromLatin1(hash.result().toHex());
            if (actual != expected) {
                r.discard = true;
                r.error = QStringLiteral(
                              "Checksum mismatch: expected SHA-256 %1, the download has %2. "
                              "The file is damaged or not the one expected; it was deleted")
                              .arg(expected, actual);
                return r;
            }
        }
        if (cancel_flag->load()) {
            r.cancelled = true;
            return r;
        }
        if (!check_gguf) {
            r.ok = true;
            return r;
        }
        auto gguf = hearth::gguf::GgufFile::open(QFile::encodeName(path).toStdString());
        if (!gguf) {
            QFile file(path);
            QByteArray head;
            if (file.open(QIODevice::ReadOnly)) head = file.read(512).trimmed().toLower();
            QString hint;
            if (head.startsWith("<!doctype") || head.startsWith("<html") || head.startsWith("{"))
                hint = QStringLiteral(
                    " The server sent a web page or a message instead of the model: "
                    "use the file's download link (on Hugging Face, \"resolve\", not \"blob\").");
            r.discard = true;
            r.error = QStringLiteral("The download is not a GGUF model (%1); it was deleted.%2")
                          .arg(QString::fromStdString(gguf.message()), hint);
            return r;
        }
        r.ok = true;
        return r;
    }));
}

void ModelDownloader::on_verified() {
    if (state_ != Verifying) return;  // cancelled meanwhile
    const VerifyResult r = verify_watcher_.result();
    if (r.cancelled) return;
    if (!r.ok) {
        if (r.discard) QFile::remove(part_path());
        fail(r.error, !r.discard);
        return;
    }
    if (QFileInfo::exists(destination_)) {
        fail(QStringLiteral(
                 "A model named %1 appeared while downloading; the download was kept as %2")
                 .arg(QFileInfo(destination_).fileName(), QFileInfo(part_path()).fileName()),
             false);
        return;
    }
    // QFile::rename never replaces an existing file.
    if (!QFile::rename(part_path(), destination_)) {
        fail(QStringLiteral("Cannot rename %1 to %2")
                 .arg(QDir::toNativeSeparators(part_path()), QFileInfo(destination_).fileName()),
             false);
        return;
    }
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
