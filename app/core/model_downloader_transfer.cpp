// ModelDownloader's HTTP transfer: the request (a Range request to resume a .part), the
// checks on the answer (status, Content-Range, free space), writing the body to the .part,
// starting over when a server ignores or botches the range, and how a transfer ends: the
// .part complete and off to verification, or a failure that says whether it can resume.
// Redirects are followed here (see model_downloader.h).
#include <QDir>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QStorageInfo>

#include "common/log.h"
#include "core/download_http.h"
#include "core/model_downloader.h"

using namespace hearth::download;

namespace {

constexpr int kMaxRedirects = 10;
constexpr int kMaxRestarts = 2;

bool same_origin(const QUrl& a, const QUrl& b) {
    return a.scheme().compare(b.scheme(), Qt::CaseInsensitive) == 0 &&
           a.host().compare(b.host(), Qt::CaseInsensitive) == 0 &&
           a.port(a.scheme() == QLatin1String("https") ? 443 : 80) ==
               b.port(b.scheme() == QLatin1String("https") ? 443 : 80);
}

// The Hub's X-Linked-ETag of an LFS file is its SHA-256 (quoted); of a small file kept in
// git, the blob's SHA-1, which says nothing about the content's SHA-256.
QString linked_sha256(const QByteArray& etag) {
    QString v = QString::fromLatin1(etag).trimmed();
    if (v.startsWith(QLatin1String("W/"))) v = v.mid(2);
    v.remove(QLatin1Char('"'));
    v = v.toLower();
    static const QRegularExpression hex(QStringLiteral("^[0-9a-f]{64}$"));
    return hex.match(v).hasMatch() ? v : QString();
}

}  // namespace

void ModelDownloader::send_request() {
    QNetworkRequest request(hop_url_);
    request.setTransferTimeout(transfer_timeout_ms_);
    request.setHeader(QNetworkRequest::UserAgentHeader, QStringLiteral("Hearth"));
    // An explicit encoding turns off Qt's transparent decompression, which would make the
    // byte counts and ranges disagree with the file.
    request.setRawHeader("Accept-Encoding", "identity");
    if (!token_.isEmpty() && same_origin(hop_url_, url_))
        request.setRawHeader("Authorization", "Bearer " + token_.toUtf8());
    if (offset_ > 0) {
        request.setRawHeader("Range", QByteArray("bytes=") + QByteArray::number(offset_) + '-');
        if (!validator_.isEmpty()) request.setRawHeader("If-Range", validator_.toUtf8());
    }
    response_checked_ = false;
    reply_ = nam_->get(request);
    connect(reply_, &QNetworkReply::readyRead, this, &ModelDownloader::on_ready_read);
    connect(reply_, &QNetworkReply::finished, this, &ModelDownloader::on_finished);
    hearth::log::get("download")
        ->info("GET {} (from byte {})", hop_url_.toDisplayString(QUrl::RemoveQuery).toStdString(),
               offset_);
}

bool ModelDownloader::follow_redirect(int status) {
    const QString linked = linked_sha256(reply_->rawHeader("X-Linked-ETag"));
    if (!linked.isEmpty()) {
        if (sha256_.isEmpty()) {
            sha256_ = linked;  // the .part's note keeps it for a resume after a restart
            hearth::log::get("download")->info("checksum from the Hub: {}", linked.toStdString());
        } else if (linked != sha256_) {
            drop_reply();
            fail(QStringLiteral("The file on the server changed since it was listed (its "
                                "checksum is now %1); list the files again")
                     .arg(linked),
                 false);
            return false;
        }
    }
    bool size_ok = false;
    const qint64 size = reply_->rawHeader("X-Linked-Size").toLongLong(&size_ok);
    if (size_ok && size > 0) linked_size_ = size;

    const QByteArray location = reply_->rawHeader("Location");
    const QUrl next = hop_url_.resolved(QUrl::fromEncoded(location));
    drop_reply();
    if (location.isEmpty() || !next.isValid()) {
        fail(QStringLiteral("The server answered HTTP %1 without saying where to").arg(status),
             false);
        return false;
    }
    if (hop_url_.scheme() == QLatin1String("https") && next.scheme() != QLatin1String("https")) {
        fail(QStringLiteral("The server redirected the download from https to an insecure "
                            "link (%1); it was not followed")
                 .arg(next.toDisplayString(QUrl::RemoveQuery)),
             false);
        return false;
    }
    if (next.scheme() != QLatin1String("http") && next.scheme() != QLatin1String("https")) {
        fail(QStringLiteral("The server redirected the download to %1, which is not a web link")
                 .arg(next.toDisplayString(QUrl::RemoveQuery)),
             false);
        return false;
    }
    if (++hops_ > kMaxRedirects) {
        fail(QStringLiteral("Too many redirects (more than %1)").arg(kMaxRedirects), false);
        return false;
    }
    hop_url_ = next;
    send_request();
    return false;
}

bool ModelDownloader::check_response() {
    response_checked_ = true;
    const QVariant status_attr = reply_->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    if (!status_attr.isValid()) return true;  // no HTTP answer: on_finished reports the error
    const int status = status_attr.toInt();
    const QString reason = reply_->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toString();
    if (status == 301 || status == 302 || status == 303 || status == 307 || status == 308)
        return follow_redirect(status);

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

    if (linked_size_ > 0 && total_ < 0) total_ = linked_size_;  // a body of unknown length
    if (linked_size_ > 0 && total_ != linked_size_) {
        fail(QStringLiteral("The server sends %1 bytes, but the Hub lists the file as %2 bytes; "
                            "try again later")
                 .arg(total_)
                 .arg(linked_size_),
             true);
        return false;
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
    if (check_gguf_) write_note();  // a model's .part can be continued after a restart
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
        fail(QStringLiteral("The server stopped sending data; ") + next_step(), true);
        return;
    }
    if (error == QNetworkReply::RemoteHostClosedError && total_ >= 0 && received_ < total_) {
        fail(QStringLiteral("The connection closed early (%1 of %2 received); ")
                     .arg(human_size(received_), human_size(total_)) +
                 next_step(),
             true);
        return;
    }
    if (error != QNetworkReply::NoError) {
        fail(QStringLiteral("Network error: %1; ").arg(error_text) + next_step(), true);
        return;
    }
    if (total_ >= 0 && received_ != total_) {
        fail(QStringLiteral("The connection closed early (%1 of %2 received); ")
                     .arg(human_size(received_), human_size(total_)) +
                 next_step(),
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

QString ModelDownloader::next_step() const {
    return received_ > 0 ? QStringLiteral("you can resume the download")
                         : QStringLiteral("nothing was received; try again");
}
