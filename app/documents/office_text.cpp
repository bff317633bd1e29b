// The ZIP member of an office document, its XML errors, and OfficeText (office_text.h).
#include "documents/office_text.h"

#include <QBuffer>
#include <QXmlStreamReader>

#include <algorithm>
#include <utility>

#include "documents/document_formats.h"
#include "documents/zip_extract.h"

namespace hearth::documents::detail {

hearth::Result<QByteArray> read_zip_member(const QString& path, const QString& name,
                                           const QString& member, const QString& kind,
                                           qint64 max_bytes) {
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    app::ZipExtractOptions options;
    options.max_size = max_bytes;
    const app::ZipExtractResult r = app::extract_zip_member(path, member, buffer, options);
    if (r.ok) return buffer.data();
    if (r.no_member)
        return file_error(name, QStringLiteral("is not %1 (it has no %2)").arg(kind, member));
    if (r.too_large)
        return file_error(name, QStringLiteral("is too large: its %1 unpacks to more than %2, "
                                               "the most Hearth reads of a document")
                                    .arg(member, size_text(max_bytes)));
    return file_error(name, QStringLiteral("is damaged: %1").arg(r.error));
}

hearth::Error xml_error(const QString& name, const QString& member, const QXmlStreamReader& xml) {
    return file_error(name,
                      QStringLiteral("is damaged: its %1 is not well-formed XML (line %2: %3)")
                          .arg(member)
                          .arg(xml.lineNumber())
                          .arg(xml.errorString()));
}

void OfficeText::begin_paragraph() {
    if (paragraph_open_) flush_paragraph();  // a text box inside a paragraph
    paragraph_open_ = true;
    heading_ = 0;
    list_level_ = -1;
}

void OfficeText::set_heading(int level) {
    heading_ = std::clamp(level, 0, 9);
}

void OfficeText::set_list_level(int level) {
    list_level_ = std::clamp(level, -1, 9);
}

void OfficeText::end_paragraph() {
    if (paragraph_open_) flush_paragraph();
}

void OfficeText::text(QStringView s) {
    paragraph_ += s;
}

void OfficeText::collapsed_text(QStringView s) {
    for (QChar c : s) {
        if (c == u' ' || c == u'\n' || c == u'\t' || c == u'\r') {
            if (!paragraph_.isEmpty() && !paragraph_.endsWith(u' ')) paragraph_ += u' ';
        } else {
            paragraph_ += c;
        }
    }
}

void OfficeText::spaces(int n) {
    paragraph_ += QString(std::clamp(n, 0, 1000), u' ');
}

void OfficeText::tab() {
    paragraph_ += table_depth_ > 0 ? u' ' : u'\t';
}

void OfficeText::line_break() {
    paragraph_ += table_depth_ > 0 ? u' ' : u'\n';
}

void OfficeText::flush_paragraph() {
    paragraph_open_ = false;
    const QString text = std::exchange(paragraph_, QString());
    if (table_depth_ > 0) {
        const QString t = text.trimmed();
        if (!t.isEmpty()) cell_ += (cell_.isEmpty() ? QString() : QStringLiteral(" ")) + t;
        return;
    }
    QString prefix;
    if (heading_ > 0 && !text.trimmed().isEmpty()) {
        prefix = QString(heading_, u'#') + u' ';
        // Headings stand apart, as in Markdown.
        if (!out_.isEmpty() && !out_.endsWith(QStringLiteral("\n\n"))) out_ += u'\n';
    } else if (list_level_ >= 0 && !text.trimmed().isEmpty()) {
        prefix = QString(2 * list_level_, u' ') + QStringLiteral("- ");
    }
    out_ += prefix + (prefix.isEmpty() ? text : text.trimmed()) + u'\n';
    if (!prefix.isEmpty() && heading_ > 0) out_ += u'\n';
}

void OfficeText::begin_table() {
    if (paragraph_open_ && table_depth_ == 0) flush_paragraph();
    if (++table_depth_ == 1 && !out_.isEmpty() && !out_.endsWith(QStringLiteral("\n\n")))
        out_ += u'\n';
}

void OfficeText::end_table() {
    if (table_depth_ == 0) return;
    if (--table_depth_ == 0) out_ += u'\n';
}

void OfficeText::begin_row() {
    if (table_depth_ == 1) row_.clear();
}

void OfficeText::end_row() {
    if (table_depth_ != 1) return;
    out_ += row_.join(QStringLiteral(" | ")) + u'\n';
    row_.clear();
}

void OfficeText::begin_cell() {
    if (table_depth_ == 1)
        cell_.clear();
    else if (!cell_.isEmpty())
        cell_ += u' ';  // a nested table's cells run on inside the outer cell
}

void OfficeText::end_cell() {
    if (paragraph_open_) flush_paragraph();
    if (table_depth_ != 1) return;
    row_.append(cell_);
    cell_.clear();
}

}  // namespace hearth::documents::detail
