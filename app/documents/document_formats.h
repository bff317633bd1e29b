// What the format readers share (inside hearth_documents only): each reader gets the bytes
// or the path and the file's name for its messages, and returns raw text that
// extract_document then normalises (normalize_text) and measures.
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>
#include <QStringList>
#include <QStringView>

#include "common/result.h"

namespace hearth::documents::detail {

struct Extracted {
    QString text;  // not yet normalised
    QStringList notes;
};

// "report.txt is not text ..." and the like: an error naming the file.
hearth::Error file_error(const QString& name, const QString& rest);

// Text from bytes: a UTF-8 BOM, a UTF-16 BOM (either order), else UTF-8. Binary bytes are
// an error: any NUL, or more than a few invalid UTF-8 sequences. Latin-1 is not guessed:
// that would read any binary file as text.
hearth::Result<QString> decode_text(QByteArrayView bytes, const QString& name);

// Whether the first bytes of a file look like text (decode_text would likely take them):
// a UTF-16 BOM, or no NUL and valid UTF-8 but for a sequence cut at the end.
bool looks_like_text(QByteArrayView head);

// '\n' line ends, no control characters but '\n' and '\t', no trailing whitespace, at most
// 2 blank lines in a row, none at the start or end.
QString normalize_text(QStringView text);

// HTML (or XHTML) to text with Markdown-ish headings, lists and table rows.
QString html_to_text(QStringView html);
// The bytes of an HTML file as text: its BOM or <meta charset> when that names Latin-1 or
// windows-1252, else decode_text.
hearth::Result<QString> decode_html(QByteArrayView bytes, const QString& name);

// PDF through poppler (pdf_text.cpp); without poppler an error saying so.
hearth::Result<Extracted> pdf_text(const QByteArray& bytes, const QString& name);
bool pdf_supported();

// Word and OpenDocument text files: the XML member is read from the ZIP at path, at most
// max_member_bytes of it (a ZIP bomb is refused).
hearth::Result<Extracted> docx_text(const QString& path, const QString& name,
                                    qint64 max_member_bytes);
hearth::Result<Extracted> odt_text(const QString& path, const QString& name,
                                   qint64 max_member_bytes);

// A size for messages: "812 bytes", "3.4 MB".
QString size_text(qint64 bytes);

}  // namespace hearth::documents::detail
