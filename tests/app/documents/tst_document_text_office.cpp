// Word (.docx) and OpenDocument (.odt) files built in the test: headings, lists, a table,
// tabs and breaks, what is skipped; damaged, locked, foreign and oversized archives.
#include "tst_document_text.h"

using namespace document_test;

namespace {

const QString kDocxBody = QStringLiteral(R"(
<w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>Report</w:t></w:r></w:p>
<w:p><w:pPr><w:pStyle w:val="Heading2"/><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr><w:r><w:t>Section</w:t></w:r></w:p>
<w:p><w:r><w:t xml:space="preserve">Name:</w:t></w:r><w:r><w:tab/><w:t>Ada</w:t></w:r></w:p>
<w:p><w:r><w:t>First line</w:t><w:br/><w:t>second line</w:t></w:r></w:p>
<w:p><w:pPr><w:pStyle w:val="ListParagraph"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>apples</w:t></w:r></w:p>
<w:p><w:pPr><w:numPr><w:ilvl w:val="1"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>green ones</w:t></w:r></w:p>
<w:tbl><w:tblPr/><w:tr><w:tc><w:p><w:r><w:t>Fruit</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Count</w:t></w:r></w:p></w:tc></w:tr>
<w:tr><w:tc><w:p><w:r><w:t>Pears</w:t></w:r></w:p><w:p><w:r><w:t>(ripe)</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>4</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
<w:p><w:r><w:t xml:space="preserve">Kept </w:t></w:r><w:del><w:r><w:delText>deleted </w:delText></w:r></w:del><w:r><w:fldChar/><w:instrText>PAGE</w:instrText><w:t>text</w:t></w:r></w:p>
<w:p><w:r><mc:AlternateContent><mc:Choice><w:t>chosen</w:t></mc:Choice><mc:Fallback><w:t>fallback</w:t></mc:Fallback></mc:AlternateContent></w:r></w:p>
<w:sectPr/>)");

const QString kOdtText = QStringLiteral(R"(
<text:sequence-decls/>
<text:h text:outline-level="1">Report</text:h>
<text:h text:outline-level="2">Section</text:h>
<text:p>Name:<text:tab/>Ada</text:p>
<text:p>First line<text:line-break/>second line</text:p>
<text:p>Two<text:s text:c="3"/>spaced   and
    collapsed <text:span>span</text:span></text:p>
<text:list><text:list-item><text:p>apples</text:p><text:list><text:list-item><text:p>green ones</text:p></text:list-item></text:list></text:list-item></text:list>
<table:table><table:table-column/><table:table-row><table:table-cell><text:p>Fruit</text:p></table:table-cell><table:table-cell><text:p>Count</text:p></table:table-cell></table:table-row>
<table:table-row><table:table-cell><text:p>Pears</text:p></table:table-cell><table:table-cell><text:p>4</text:p></table:table-cell><table:covered-table-cell><text:p>hidden</text:p></table:covered-table-cell></table:table-row></table:table>
<text:p>Kept<text:note><text:note-citation>1</text:note-citation><text:note-body><text:p>a footnote</text:p></text:note-body></text:note> text</text:p>
)");

}  // namespace

void TestDocumentText::docx_structure() {
    const auto r = extract_document(file("report.docx", make_docx(kDocxBody)));
    CHECK_OK(r);
    QCOMPARE(r->format, DocumentFormat::Docx);
    QCOMPARE(r->text, QStringLiteral("# Report\n"
                                     "\n"
                                     "## Section\n"
                                     "\n"
                                     "Name:\tAda\n"
                                     "First line\n"
                                     "second line\n"
                                     "- apples\n"
                                     "  - green ones\n"
                                     "\n"
                                     "Fruit | Count\n"
                                     "Pears (ripe) | 4\n"
                                     "\n"
                                     "Kept text\n"
                                     "chosen"));
}

void TestDocumentText::odt_structure() {
    const auto r = extract_document(file("report.odt", make_odt(kOdtText)));
    CHECK_OK(r);
    QCOMPARE(r->format, DocumentFormat::Odt);
    QCOMPARE(r->text, QStringLiteral("# Report\n"
                                     "\n"
                                     "## Section\n"
                                     "\n"
                                     "Name:\tAda\n"
                                     "First line\n"
                                     "second line\n"
                                     "Two   spaced and collapsed span\n"
                                     "- apples\n"
                                     "  - green ones\n"
                                     "\n"
                                     "Fruit | Count\n"
                                     "Pears | 4\n"
                                     "\n"
                                     "Kept text"));
}

void TestDocumentText::docx_damaged() {
    const QByteArray docx = make_docx(kDocxBody);
    CHECK_ERROR(extract_document(file("cut.docx", docx.first(docx.size() - 30))), "cut.docx",
                "is damaged");
    CHECK_ERROR(extract_document(file("half.docx", docx.first(docx.size() / 2))), "half.docx",
                "is damaged");
    // A wrong CRC: the member's bytes changed inside an intact archive.
    QByteArray flipped = docx;
    flipped[flipped.indexOf("Report")] = 'X';
    CHECK_ERROR(extract_document(file("flipped.docx", flipped)), "flipped.docx", "is damaged",
                "CRC-32");
}

void TestDocumentText::docx_password_protected() {
    QByteArray ole("\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", 8);
    ole += QByteArray(504, '\0');
    CHECK_ERROR(extract_document(file("locked.docx", ole)), "locked.docx", "password-protected");
}

void TestDocumentText::docx_without_document_xml() {
    const QByteArray zip = make_zip({{QStringLiteral("[Content_Types].xml"), "<Types/>"},
                                     {QStringLiteral("xl/workbook.xml"), "<workbook/>"}});
    CHECK_ERROR(extract_document(file("sheet.docx", zip)), "sheet.docx",
                "is not a Word document (it has no word/document.xml)");
    CHECK_ERROR(extract_document(file("other.odt", zip)), "other.odt",
                "is not an OpenDocument text (it has no content.xml)");
    // word/document.xml that is not WordprocessingML.
    const QByteArray html =
        make_zip({{QStringLiteral("word/document.xml"), "<html><p>x</p></html>"}});
    CHECK_ERROR(extract_document(file("odd.docx", html)), "odd.docx", "is not a Word document");
}

void TestDocumentText::docx_malformed_xml() {
    CHECK_ERROR(extract_document(file("bad.docx", make_docx("<w:p><w:r><w:t>open</w:r></w:p>"))),
                "bad.docx", "is damaged", "not well-formed XML");
    CHECK_ERROR(extract_document(file("bad.odt", make_odt("<text:p>open</text:h>"))), "bad.odt",
                "is damaged", "not well-formed XML");
}

// A member that inflates past max_file_bytes is refused before it is inflated.
void TestDocumentText::docx_zip_bomb() {
    const QByteArray big =
        "<?xml version=\"1.0\"?><w:document xmlns:w=\"http://schemas."
        "openxmlformats.org/wordprocessingml/2006/main\"><w:body>" +
        QByteArray(4 << 20, ' ') + "</w:body></w:document>";
    const QByteArray zip = make_zip({{QStringLiteral("word/document.xml"), big, true}});
    QVERIFY(zip.size() < 64 << 10);
    ExtractOptions options;
    options.max_file_bytes = 1 << 20;
    CHECK_ERROR(extract_document(file("bomb.docx", zip), options), "bomb.docx", "is too large",
                "word/document.xml");
    // Under the default limit it is read: a document of spaces, so no text.
    CHECK_ERROR(extract_document(file("bomb.docx", zip)), "has no text");
}

void TestDocumentText::odt_not_text() {
    CHECK_ERROR(extract_document(file("empty.odt", make_odt(""))), "empty.odt", "has no text");
    const QByteArray other =
        make_zip({{QStringLiteral("content.xml"), "<?xml version=\"1.0\"?><root><p>x</p></root>"}});
    CHECK_ERROR(extract_document(file("other.odt", other)), "other.odt",
                "is not an OpenDocument text");
}
