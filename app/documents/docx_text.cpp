// Word (.docx): the body of word/document.xml. A paragraph (w:p) is a line; its style
// (w:pStyle Heading1..9 or Title, or w:outlineLvl) makes it a heading, numbering (w:numPr)
// a list item at its level (w:ilvl). Runs' text (w:t), tabs and breaks are kept; deleted
// revisions (w:del), field codes (w:instrText) and the fallback copies of drawings
// (mc:Fallback, which repeat the text of the mc:Choice) are not. Footnotes, endnotes,
// comments, headers and footers live in other members and are skipped: the body is what
// a persona needs. Style ids are matched as Word writes them in English ("Heading1");
// a document whose styles were named in another language keeps its text but may lose
// its heading marks (styles.xml would map them; not read yet).
#include <QXmlStreamReader>

#include <algorithm>

#include "documents/document_formats.h"
#include "documents/office_text.h"

namespace hearth::documents::detail {

namespace {

const QString kMember = QStringLiteral("word/document.xml");

bool is_word_namespace(QStringView uri) {
    return uri == u"http://schemas.openxmlformats.org/wordprocessingml/2006/main" ||
           uri == u"http://purl.oclc.org/ooxml/wordprocessingml/main";  // strict OOXML
}

// "Heading1".."Heading9" (also "heading 1"), "Title": the heading level; else 0.
int heading_of_style(QStringView style) {
    if (style.compare(u"Title", Qt::CaseInsensitive) == 0) return 1;
    if (!style.startsWith(u"heading", Qt::CaseInsensitive)) return 0;
    const QStringView digits = style.sliced(7).trimmed();
    if (digits.size() != 1 || digits[0] < u'1' || digits[0] > u'9') return 0;
    return digits[0].unicode() - u'0';
}

bool is_list_style(QStringView style) {
    return style.startsWith(u"ListParagraph", Qt::CaseInsensitive) ||
           style.startsWith(u"ListBullet", Qt::CaseInsensitive) ||
           style.startsWith(u"ListNumber", Qt::CaseInsensitive);
}

QStringView word_value(const QXmlStreamReader& xml) {
    for (const QXmlStreamAttribute& a : xml.attributes())
        if (a.name() == u"val") return a.value();
    return {};
}

}  // namespace

hearth::Result<Extracted> docx_text(const QString& path, const QString& name,
                                    qint64 max_member_bytes) {
    hearth::Result<QByteArray> bytes =
        read_zip_member(path, name, kMember, QStringLiteral("a Word document"), max_member_bytes);
    if (!bytes) return bytes.error();
    QXmlStreamReader xml(*bytes);
    OfficeText out;
    int paragraph_depth = 0;    // w:p open (a text box nests them)
    int run_depth = 0;          // inside w:r: w:tab and w:br there are text, not tab stops
    bool in_numbering = false;  // inside w:numPr
    int list_level = 0;
    bool numbered = false;
    bool saw_document = false;
    while (!xml.atEnd()) {
        const QXmlStreamReader::TokenType token = xml.readNext();
        if (token == QXmlStreamReader::StartElement) {
            const QStringView n = xml.name();
            if (!saw_document) {
                if (n != u"document" || !is_word_namespace(xml.namespaceUri()))
                    return file_error(name, QStringLiteral("is not a Word document (its %1 "
                                                           "holds something else)")
                                                .arg(kMember));
                saw_document = true;
                continue;
            }
            if (n == u"Fallback") {  // mc:Fallback repeats mc:Choice
                xml.skipCurrentElement();
                continue;
            }
            if (!is_word_namespace(xml.namespaceUri())) continue;
            if (n == u"del" || n == u"instrText" || n == u"delText" || n == u"footnoteReference") {
                xml.skipCurrentElement();
            } else if (n == u"p") {
                out.begin_paragraph();
                ++paragraph_depth;
                numbered = false;
                list_level = 0;
            } else if (n == u"pStyle") {
                const QStringView style = word_value(xml);
                if (const int level = heading_of_style(style))
                    out.set_heading(level);
                else if (is_list_style(style) && !numbered)
                    out.set_list_level(0);
            } else if (n == u"outlineLvl") {
                const int level = word_value(xml).toInt();
                if (level >= 0 && level < 9) out.set_heading(level + 1);
            } else if (n == u"numPr") {
                in_numbering = true;
            } else if (in_numbering && n == u"ilvl") {
                list_level = word_value(xml).toInt();
                out.set_list_level(list_level);
                numbered = true;
            } else if (in_numbering && n == u"numId") {
                // numId 0 takes a style's numbering away.
                if (word_value(xml) == u"0")
                    out.set_list_level(-1);
                else
                    out.set_list_level(list_level);
                numbered = true;
            } else if (n == u"r") {
                ++run_depth;
            } else if (n == u"t" && run_depth > 0) {
                out.text(xml.readElementText(QXmlStreamReader::IncludeChildElements));
            } else if (n == u"tab" && run_depth > 0) {
                out.tab();
            } else if ((n == u"br" || n == u"cr") && run_depth > 0) {
                out.line_break();
            } else if (n == u"noBreakHyphen" && run_depth > 0) {
                out.text(u"-");
            } else if (n == u"tbl") {
                out.begin_table();
            } else if (n == u"tr") {
                out.begin_row();
            } else if (n == u"tc") {
                out.begin_cell();
            }
        } else if (token == QXmlStreamReader::EndElement) {
            if (!is_word_namespace(xml.namespaceUri())) continue;
            const QStringView n = xml.name();
            if (n == u"p") {
                out.end_paragraph();
                paragraph_depth = std::max(0, paragraph_depth - 1);
                if (paragraph_depth > 0) out.begin_paragraph();  // the outer one goes on
            } else if (n == u"numPr") {
                in_numbering = false;
            } else if (n == u"r") {
                run_depth = std::max(0, run_depth - 1);
            } else if (n == u"tc") {
                out.end_cell();
            } else if (n == u"tr") {
                out.end_row();
            } else if (n == u"tbl") {
                out.end_table();
            }
        }
    }
    if (xml.hasError()) return xml_error(name, kMember, xml);
    return Extracted{out.take(), {}};
}

}  // namespace hearth::documents::detail
