// OpenDocument text (.odt): the body of content.xml. text:p is a line, text:h a heading at
// its text:outline-level, a paragraph in a text:list-item a list item at the list's depth
// (the item's further paragraphs are plain lines). Whitespace collapses as ODF says, and
// text:s (text:c spaces), text:tab and text:line-break give it back. Footnotes and
// endnotes (text:note), comments (office:annotation) and deleted revisions
// (text:tracked-changes) are skipped: they would break into the sentence they annotate.
#include <QXmlStreamReader>

#include <algorithm>

#include "documents/document_formats.h"
#include "documents/office_text.h"

namespace hearth::documents::detail {

namespace {

const QString kMember = QStringLiteral("content.xml");
constexpr QStringView kText = u"urn:oasis:names:tc:opendocument:xmlns:text:1.0";
constexpr QStringView kTable = u"urn:oasis:names:tc:opendocument:xmlns:table:1.0";
constexpr QStringView kOffice = u"urn:oasis:names:tc:opendocument:xmlns:office:1.0";

int int_attribute(const QXmlStreamReader& xml, QStringView ns, QStringView name, int fallback) {
    bool ok = false;
    const int v = xml.attributes().value(ns.toString(), name.toString()).toInt(&ok);
    return ok ? v : fallback;
}

}  // namespace

hearth::Result<Extracted> odt_text(const QString& path, const QString& name,
                                   qint64 max_member_bytes) {
    hearth::Result<QByteArray> bytes = read_zip_member(
        path, name, kMember, QStringLiteral("an OpenDocument text"), max_member_bytes);
    if (!bytes) return bytes.error();
    QXmlStreamReader xml(*bytes);
    OfficeText out;
    int paragraph_depth = 0;  // text:p and text:h open (a text box nests them)
    int list_depth = 0;
    bool item_waits = false;  // a list item began: its first paragraph gets the "- "
    bool saw_document = false;
    while (!xml.atEnd()) {
        const QXmlStreamReader::TokenType token = xml.readNext();
        if (token == QXmlStreamReader::StartElement) {
            const QStringView n = xml.name(), ns = xml.namespaceUri();
            if (!saw_document) {
                if (n != u"document-content" || ns != kOffice)
                    return file_error(name, QStringLiteral("is not an OpenDocument text (its "
                                                           "%1 holds something else)")
                                                .arg(kMember));
                saw_document = true;
                continue;
            }
            if (ns == kOffice && n == u"annotation") {
                xml.skipCurrentElement();
            } else if (ns == kText) {
                if (n == u"note" || n == u"tracked-changes") {
                    xml.skipCurrentElement();
                } else if (n == u"p" || n == u"h") {
                    out.begin_paragraph();
                    ++paragraph_depth;
                    if (n == u"h") {
                        out.set_heading(int_attribute(xml, kText, u"outline-level", 1));
                    } else if (item_waits) {
                        out.set_list_level(list_depth - 1);
                    }
                    item_waits = false;
                } else if (n == u"list") {
                    ++list_depth;
                } else if (n == u"list-item" || n == u"list-header") {
                    item_waits = true;
                } else if (n == u"s") {
                    out.spaces(int_attribute(xml, kText, u"c", 1));
                } else if (n == u"tab") {
                    out.tab();
                } else if (n == u"line-break") {
                    out.line_break();
                }
            } else if (ns == kTable) {
                if (n == u"table") {
                    out.begin_table();
                } else if (n == u"table-row") {
                    out.begin_row();
                } else if (n == u"table-cell") {
                    out.begin_cell();
                } else if (n == u"covered-table-cell") {  // the hidden part of a merged cell
                    xml.skipCurrentElement();
                }
            }
        } else if (token == QXmlStreamReader::EndElement) {
            const QStringView n = xml.name(), ns = xml.namespaceUri();
            if (ns == kText) {
                if (n == u"p" || n == u"h") {
                    out.end_paragraph();
                    paragraph_depth = std::max(0, paragraph_depth - 1);
                    if (paragraph_depth > 0) out.begin_paragraph();  // the outer one goes on
                } else if (n == u"list") {
                    list_depth = std::max(0, list_depth - 1);
                }
            } else if (ns == kTable) {
                if (n == u"table-cell") {
                    out.end_cell();
                } else if (n == u"table-row") {
                    out.end_row();
                } else if (n == u"table") {
                    out.end_table();
                }
            }
        } else if (token == QXmlStreamReader::Characters && paragraph_depth > 0) {
            out.collapsed_text(xml.text());
        }
    }
    if (xml.hasError()) return xml_error(name, kMember, xml);
    return Extracted{out.take(), {}};
}

}  // namespace hearth::documents::detail
