#include "document_fixtures.h"

#include <QCryptographicHash>
#include <QFile>

#include <array>

namespace document_test {

namespace {

// RC4, the stream cipher of the PDF standard security handler's revision 2.
QByteArray rc4(const QByteArray& key, const QByteArray& data) {
    std::array<unsigned char, 256> s{};
    for (int i = 0; i < 256; ++i) s[i] = static_cast<unsigned char>(i);
    for (int i = 0, j = 0; i < 256; ++i) {
        j = (j + s[i] + static_cast<unsigned char>(key[i % key.size()])) & 0xff;
        std::swap(s[i], s[j]);
    }
    QByteArray out = data;
    for (int n = 0, i = 0, j = 0; n < out.size(); ++n) {
        i = (i + 1) & 0xff;
        j = (j + s[i]) & 0xff;
        std::swap(s[i], s[j]);
        out[n] = static_cast<char>(out[n] ^ static_cast<char>(s[(s[i] + s[j]) & 0xff]));
    }
    return out;
}

QByteArray md5(const QByteArray& data) {
    return QCryptographicHash::hash(data, QCryptographicHash::Md5);
}

// The password padded to 32 bytes with the standard's padding string (Algorithm 2).
QByteArray padded(const QString& password) {
    static const QByteArray pad =
        QByteArray::fromHex("28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A");
    return (password.toLatin1() + pad).left(32);
}

QByteArray escape_pdf_string(const QString& text) {
    QByteArray out;
    for (char c : text.toLatin1()) {
        if (c == '(' || c == ')' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

}  // namespace

QByteArray make_docx(const QString& body) {
    const QByteArray types =
        R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>)";
    const QByteArray rels =
        R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>)";
    const QByteArray document =
        R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><w:body>)" +
        body.toUtf8() + "</w:body></w:document>";
    return make_zip({{QStringLiteral("[Content_Types].xml"), types},
                     {QStringLiteral("_rels/.rels"), rels},
                     {QStringLiteral("word/document.xml"), document}});
}

QByteArray make_odt(const QString& text) {
    const QByteArray manifest =
        R"(<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>)";
    const QByteArray content =
        R"(<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" office:version="1.2">
  <office:automatic-styles/>
  <office:body>
    <office:text>)" +
        text.toUtf8() + "</office:text></office:body></office:document-content>";
    return make_zip({{QStringLiteral("mimetype"), "application/vnd.oasis.opendocument.text"},
                     {QStringLiteral("META-INF/manifest.xml"), manifest},
                     {QStringLiteral("content.xml"), content}});
}

QByteArray make_pdf(const QList<QList<PdfText>>& pages, const PdfOptions& options) {
    // Objects: 1 catalog, 2 page tree, 3 font, then a page and its content per page, and
    // the encryption dictionary last when encrypted.
    const int page_count = static_cast<int>(pages.size());
    const int encrypt_object = 4 + 2 * page_count;
    const bool encrypted = !options.user_password.isEmpty();
    const QByteArray file_id = md5("hearth test pdf");

    // Algorithms 3, 2 and 4 of the standard security handler, revision 2 (40-bit).
    const qint32 permissions = -4;
    QByteArray owner_entry, user_entry, file_key;
    if (encrypted) {
        owner_entry =
            rc4(md5(padded(QStringLiteral("owner"))).left(5), padded(options.user_password));
        QByteArray p;
        hearth::test::put32(p, static_cast<quint32>(permissions));
        file_key = md5(padded(options.user_password) + owner_entry + p + file_id).left(5);
        user_entry = rc4(file_key, padded(QString()));
    }
    const auto encrypt_stream = [&](int object, const QByteArray& data) {
        if (!encrypted) return data;
        QByteArray key = file_key;
        key.append(static_cast<char>(object & 0xff));
        key.append(static_cast<char>((object >> 8) & 0xff));
        key.append(static_cast<char>((object >> 16) & 0xff));
        key.append('\0');
        key.append('\0');
        return rc4(md5(key).left(10), data);
    };

    QByteArray pdf = "%PDF-1.4\n%\xE2\xE3\xCF\xD3\n";
    QList<qsizetype> offsets;
    const auto object = [&](const QByteArray& body) {
        offsets.append(pdf.size());
        pdf += QByteArray::number(offsets.size()) + " 0 obj\n" + body + "\nendobj\n";
    };
    object("<< /Type /Catalog /Pages 2 0 R >>");
    QByteArray kids;
    for (int i = 0; i < page_count; ++i) kids += QByteArray::number(4 + 2 * i) + " 0 R ";
    object("<< /Type /Pages /Kids [" + kids + "] /Count " + QByteArray::number(page_count) + " >>");
    object("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
    for (int i = 0; i < page_count; ++i) {
        const int page_object = 4 + 2 * i;
        object(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 "
            "3 0 R >> >> /Contents " +
            QByteArray::number(page_object + 1) + " 0 R >>");
        QByteArray content;
        for (const PdfText& t : pages[i])
            content += "BT /F1 10 Tf " + QByteArray::number(t.x) + " " + QByteArray::number(t.y) +
                       " Td (" + escape_pdf_string(t.text) + ") Tj ET\n";
        const QByteArray stream = encrypt_stream(page_object + 1, content);
        object("<< /Length " + QByteArray::number(stream.size()) + " >>\nstream\n" + stream +
               "\nendstream");
    }
    if (encrypted)
        object("<< /Filter /Standard /V 1 /R 2 /Length 40 /O <" + owner_entry.toHex() + "> /U <" +
               user_entry.toHex() + "> /P " + QByteArray::number(permissions) + " >>");

    const qsizetype xref = pdf.size();
    pdf += "xref\n0 " + QByteArray::number(offsets.size() + 1) + "\n0000000000 65535 f \n";
    for (qsizetype offset : offsets)
        pdf += QByteArray::number(offset).rightJustified(10, '0') + " 00000 n \n";
    pdf += "trailer\n<< /Size " + QByteArray::number(offsets.size() + 1) + " /Root 1 0 R /ID [<" +
           file_id.toHex() + "> <" + file_id.toHex() + ">]";
    if (encrypted) pdf += " /Encrypt " + QByteArray::number(encrypt_object) + " 0 R";
    pdf += " >>\nstartxref\n" + QByteArray::number(xref) + "\n%%EOF\n";
    return pdf;
}

QString write_file(const QString& dir, const QString& name, const QByteArray& bytes) {
    const QString path = dir + QLatin1Char('/') + name;
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size()) return {};
    return path;
}

}  // namespace document_test
