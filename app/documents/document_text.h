// The text of a document file, for a persona's prompt prefix: plain text, Markdown, code,
// HTML, PDF (poppler), Word (.docx) and OpenDocument (.odt). Only the text is kept, with
// a little Markdown where the document says what a line is (headings "# ", list items
// "- ", table cells " | "), since a language model reads that structure well. Everything
// a user can cause (a missing, huge, locked, damaged or scanned file) is an error value
// with a sentence naming the file; nothing here touches the GUI, so it runs on a worker.
#pragma once

#include <QByteArrayView>
#include <QString>
#include <QStringList>

#include <optional>

#include "common/result.h"

namespace hearth::documents {

enum class DocumentFormat { PlainText, Markdown, Code, Html, Pdf, Docx, Odt };

struct DocumentText {
    // '\n' line ends; no NULs or other control characters but '\n' and '\t'; no trailing
    // spaces on lines; at most 2 blank lines in a row; no leading or trailing blank lines.
    QString text;
    DocumentFormat format = DocumentFormat::PlainText;
    QString language;   // Code: a short name from the extension ("cpp", "python"); else empty
    QStringList notes;  // what the user should know that is not an error (pages without text)
};

struct ExtractOptions {
    qint64 max_file_bytes = 64 << 20;   // larger files are refused before reading
    qint64 max_text_chars = 4'000'000;  // longer text is refused, not cut
};

// The format from the extension (case-insensitive) and the first bytes of the file (a few
// kB: enough for a ZIP's first member names). The content wins where it is unmistakable
// (%PDF-; a ZIP holding word/ or an OpenDocument text's mimetype), so a renamed file is
// read as what it is; then the extension; a file without one is read as HTML when it
// starts so, as plain text when its first bytes are text. nullopt: not a file Hearth reads.
std::optional<DocumentFormat> format_of(const QString& path, QByteArrayView head);

// Reads path and extracts its text. Errors: not found or unreadable, too large, not a
// format Hearth reads, not text (binary bytes in a text file), damaged, password-protected,
// no text at all.
hearth::Result<DocumentText> extract_document(const QString& path, const ExtractOptions& = {});

// The format as a user names it: "PDF", "Word document", ...
QString format_name(DocumentFormat);

// Whether this build reads PDF files (poppler-cpp was found when it was configured).
bool can_read_pdf();

}  // namespace hearth::documents
