// What ModelDownloader needs to understand HTTP answers and links, as plain functions:
// Content-Range headers, messages for error statuses, sizes for people, and Hugging Face
// page links turned into download links.
#pragma once

#include <QByteArray>
#include <QString>
#include <QUrl>

namespace hearth::download {

// 1.5 GB, in the system locale.
QString human_size(qint64 bytes);
// "bytes 100-199/1000" → {100, 199, 1000}; total -1 for "*". False when malformed.
bool parse_content_range(const QByteArray& header, qint64& first, qint64& last, qint64& total);
// "bytes */1000" (a 416 answer) → 1000, else -1.
qint64 unsatisfied_range_total(const QByteArray& header);
// "The server answered HTTP 404 (Not Found): check the link", with advice per status.
QString http_status_message(int status, const QString& reason);
// A Hugging Face web page link (.../blob/<rev>/<file>) → its download link
// (.../resolve/...); any other URL as it is.
QUrl normalize_url(QUrl url);

}  // namespace hearth::download
