// Files for tst_document_text, made in the test rather than committed: Word and
// OpenDocument files (through support/zip_writer.h), and a PDF
// writer (Helvetica text placed with BT/Tf/Td/Tj, xref offsets computed; optionally
// encrypted with the standard security handler, RC4 40-bit, so that it needs a password).
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include "support/zip_writer.h"

namespace document_test {

// ZIP archives: the tests' shared writer.
using hearth::test::make_zip;
using hearth::test::ZipMember;

// A Word document: [Content_Types].xml, _rels/.rels and word/document.xml around body
// (the children of w:body, with the w: prefix bound).
QByteArray make_docx(const QString& body);

// An OpenDocument text: mimetype (first, stored), META-INF/manifest.xml and content.xml
// around text (the children of office:text, with office:, text: and table: bound).
QByteArray make_odt(const QString& text);

// A line of text at (x, y) points from the page's bottom left, 10 pt Helvetica.
struct PdfText {
    double x = 0;
    double y = 0;
    QString text;  // ASCII
};

struct PdfOptions {
    QString user_password;  // non-empty: encrypted (RC4 40-bit, revision 2) with it
};

// A PDF of US Letter pages, one list of text lines per page (an empty list: a page
// without text, as a scanned page is to a text reader).
QByteArray make_pdf(const QList<QList<PdfText>>& pages, const PdfOptions& options = {});

// Writes bytes to dir/name; the path.
QString write_file(const QString& dir, const QString& name, const QByteArray& bytes);

}  // namespace document_test
