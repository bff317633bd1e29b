#include "core/download_verify.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "gguf/gguf_file.h"

namespace hearth::download {

VerifyResult verify_download(const QString& path, const QString& expected, bool check_gguf,
                             const std::atomic_bool& cancel) {
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
            if (cancel.load()) {
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
    if (cancel.load()) {
        r.cancelled = true;
        return r;
    }
    if (!check_gguf) {
        r.ok = true;
        return r;
    }
    // One part of a split model is checked alone (the others may not be here yet).
    auto gguf = hearth::gguf::GgufFile::open_part(QFile::encodeName(path).toStdString());
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
}

QString place_download(const QString& part_path, const QString& destination) {
    if (QFileInfo::exists(destination))
        return QStringLiteral(
                   "A model named %1 appeared while downloading; the download was kept as %2")
            .arg(QFileInfo(destination).fileName(), QFileInfo(part_path).fileName());
    // QFile::rename never replaces an existing file.
    if (!QFile::rename(part_path, destination))
        return QStringLiteral("Cannot rename %1 to %2")
            .arg(QDir::toNativeSeparators(part_path), QFileInfo(destination).fileName());
    return {};
}

}  // namespace hearth::download
