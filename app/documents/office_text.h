// What the Word (.docx) and OpenDocument (.odt) readers share: the member read from the
// ZIP, the XML error, and OfficeText, which turns the paragraphs, headings, list items
// and tables both formats describe into lines ("# ", "- ", cells joined by " | ").
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <QStringView>

#include "common/result.h"

class QXmlStreamReader;

namespace hearth::documents::detail {

// member of the ZIP at path, at most max_bytes once inflated. kind ("a Word document")
// completes the error when the archive has no such member.
hearth::Result<QByteArray> read_zip_member(const QString& path, const QString& name,
                                           const QString& member, const QString& kind,
                                           qint64 max_bytes);

// "report.docx is damaged: its word/document.xml is not well-formed XML (line 3: ...)".
hearth::Error xml_error(const QString& name, const QString& member, const QXmlStreamReader& xml);

// The text as the document's elements arrive. A paragraph's style (heading, list item) may
// be set any time before it ends, since both formats give it in a child element. Inside a
// table the paragraphs of a cell are joined by spaces and each row of the outermost table
// becomes one line; a paragraph inside a paragraph (a text box) ends the outer one's line.
class OfficeText {
  public:
    void begin_paragraph();
    void set_heading(int level);     // 1 for "# "
    void set_list_level(int level);  // 0 for "- ", 1 for "  - "
    void end_paragraph();
    void text(QStringView s);
    void collapsed_text(QStringView s);  // whitespace runs become one space (ODF's rule)
    void spaces(int n);
    void tab();
    void line_break();
    void begin_table();
    void end_table();
    void begin_row();
    void end_row();
    void begin_cell();
    void end_cell();
    bool in_paragraph() const { return paragraph_open_; }
    QString take() { return std::move(out_); }

  private:
    void flush_paragraph();

    QString out_;
    QString paragraph_;
    bool paragraph_open_ = false;
    int heading_ = 0;
    int list_level_ = -1;
    int table_depth_ = 0;
    QStringList row_;
    QString cell_;
};

}  // namespace hearth::documents::detail
