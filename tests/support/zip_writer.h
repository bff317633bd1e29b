// ZIP archives built in a test, as Python's zipfile (a wheel) and office suites (Word,
// OpenDocument) write them: per member a local header and its data (stored, or raw
// deflate through zlib), then the central directory and the end record, with zlib's
// CRC-32. For readers of such files (documents/zip_extract.h) to be tested on archives
// made on the spot, whole, damaged or cut short.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

namespace hearth::test {

struct ZipMember {
    QString name;
    QByteArray data;
    bool deflate = false;  // deflated (method 8), else stored (method 0)
};

// The archive; where each member's data starts is appended to data_offsets (when given).
QByteArray make_zip(const QList<ZipMember>& members, QList<qsizetype>* data_offsets = nullptr);

// Appends v little-endian, in 2 or 4 bytes, as ZIP's fields are (to patch an archive).
void put16(QByteArray& bytes, quint32 v);
void put32(QByteArray& bytes, quint32 v);

// Raw deflate (no zlib header), as ZIP keeps a member; empty if zlib fails.
QByteArray raw_deflate(const QByteArray& data);

}  // namespace hearth::test
