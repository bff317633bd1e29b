#include "core/download_http.h"

#include <QLocale>
#include <QRegularExpression>
#include <QStringList>

namespace hearth::download {

QString human_size(qint64 bytes) {
    return QLocale::system().formattedDataSize(bytes);
}

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

}  // namespace hearth::download
