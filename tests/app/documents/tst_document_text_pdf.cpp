// PDF through poppler, on PDFs written by hand (document_fixtures.cpp): reading order on a
// two-column page, a table's rows, a page without text, and the errors. Without poppler
// (a build that did not find it) only pdf_without_poppler runs.
#include "tst_document_text.h"

using namespace document_test;

namespace {

#define SKIP_WITHOUT_POPPLER()                                                     \
    do {                                                                           \
        if (!hearth::documents::can_read_pdf())                                    \
            QSKIP("this build has no poppler (libpoppler-cpp-dev was not found)"); \
    } while (0)

// Page 1: two columns whose lines share their heights (raw order would interleave them),
// then a table of three columns under them. Poppler reads a table's rows in order when
// its cells are close, as here (40 pt apart, gaps of about 1.5 em); cells far apart
// (60 pt here) it takes for columns of text and reads column by column.
QList<PdfText> columns_and_table() {
    QList<PdfText> page;
    const QStringList left{"Left column opens the text of", "the first story about apples,",
                           "and it keeps going for a while", "before it ends on this line."};
    const QStringList right{"Right column starts a second", "story about rivers and boats",
                            "that goes on down the page", "and finishes in the corner."};
    for (int i = 0; i < left.size(); ++i) {
        page.append({72, 720.0 - 12 * i, left[i]});
        page.append({320, 720.0 - 12 * i, right[i]});
    }
    const QList<QStringList> rows{
        {"Fruit", "Count", "Price"}, {"Apples", "Seven", "Cheap"}, {"Pears", "Eleven", "Dear"}};
    for (int r = 0; r < rows.size(); ++r)
        for (int c = 0; c < rows[r].size(); ++c)
            page.append({72.0 + 40 * c, 600.0 - 12 * r, rows[r][c]});
    return page;
}

// Each of words found in text, in this order.
bool in_order(const QString& text, const QStringList& words) {
    qsizetype at = 0;
    for (const QString& w : words) {
        at = text.indexOf(w, at);
        if (at < 0) return false;
        at += w.size();
    }
    return true;
}

}  // namespace

void TestDocumentText::pdf_columns_table_and_empty_page() {
    SKIP_WITHOUT_POPPLER();
    const auto r = extract_document(file("story.pdf", make_pdf({columns_and_table(), {}})));
    CHECK_OK(r);
    QCOMPARE(r->format, DocumentFormat::Pdf);
    const QString& t = r->text;
    QVERIFY2(in_order(t, {"Left column opens", "first story about apples", "keeps going",
                          "ends on this line.", "Right column starts", "rivers and boats",
                          "down the page", "finishes in the corner."}),
             qPrintable(t));
    QVERIFY2(in_order(t, {"Fruit", "Count", "Price", "Apples", "Seven", "Cheap", "Pears", "Eleven",
                          "Dear"}),
             qPrintable(t));
    QCOMPARE(r->notes,
             QStringList{QStringLiteral("page 2 has no text (scanned images are not read)")});
    QCOMPARE(hearth::documents::format_name(r->format), QStringLiteral("PDF"));
}

void TestDocumentText::pdf_only_an_empty_page() {
    SKIP_WITHOUT_POPPLER();
    CHECK_ERROR(extract_document(file("scan.pdf", make_pdf({{}}))), "scan.pdf",
                "has no text: its pages are images (scanned)");
    // Several pages without text among pages with: named in one note.
    const QList<PdfText> words{{72, 700, "Some words"}};
    const auto r = extract_document(file("mixed.pdf", make_pdf({words, {}, words, {}, {}})));
    CHECK_OK(r);
    QCOMPARE(
        r->notes,
        QStringList{QStringLiteral("pages 2, 4 and 5 have no text (scanned images are not read)")});
    QCOMPARE(r->text, QStringLiteral("Some words\n\nSome words"));
}

void TestDocumentText::pdf_corrupt() {
    SKIP_WITHOUT_POPPLER();
    const QByteArray pdf = make_pdf({{{72, 700, "Some words"}}});
    CHECK_ERROR(extract_document(file("cut.pdf", pdf.first(40))), "cut.pdf", "is damaged");
    CHECK_ERROR(extract_document(file("junk.pdf", "%PDF-1.4\nthis is not a PDF at all\n")),
                "junk.pdf");
    CHECK_ERROR(extract_document(file("notpdf.pdf", "plain words")), "notpdf.pdf", "is damaged");
}

void TestDocumentText::pdf_password_protected() {
    SKIP_WITHOUT_POPPLER();
    const QByteArray pdf = make_pdf({{{72, 700, "Secret words"}}}, {QStringLiteral("hunter2")});
    CHECK_ERROR(extract_document(file("locked.pdf", pdf)), "locked.pdf", "password-protected");
}

void TestDocumentText::pdf_without_poppler() {
    if (hearth::documents::can_read_pdf()) QSKIP("this build reads PDFs (poppler)");
    CHECK_ERROR(extract_document(file("any.pdf", make_pdf({{{72, 700, "Some words"}}}))), "any.pdf",
                "PDF files cannot be read by this build of Hearth (it was built without poppler)");
}
