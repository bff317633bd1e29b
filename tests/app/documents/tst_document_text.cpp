// Plain text, Markdown and code: encodings, the normal form, binary files, sizes; and
// format_of by extension and by content.
#include "tst_document_text.h"

using namespace document_test;

void TestDocumentText::init() {
    dir_ = std::make_unique<QTemporaryDir>();
    QVERIFY(dir_->isValid());
}

QString TestDocumentText::file(const QString& name, const QByteArray& bytes) {
    return write_file(dir_->path(), name, bytes);
}

void TestDocumentText::utf8_with_bom_and_crlf() {
    const auto r = extract_document(file("notes.txt",
                                         "\xEF\xBB\xBFGr\xC3\xBC\xC3\x9F"
                                         "e\r\nzweite Zeile\r\n"));
    CHECK_OK(r);
    QCOMPARE(r->text, QStringLiteral("Grüße\nzweite Zeile"));
    QCOMPARE(r->format, DocumentFormat::PlainText);
    QVERIFY(r->language.isEmpty());
    QVERIFY(r->notes.isEmpty());
}

void TestDocumentText::utf16le_with_bom() {
    const QString text = QStringLiteral("Ünïcode line\r\n\x3042 second\r\n");
    QByteArray bytes = "\xFF\xFE";
    for (QChar c : text) {
        bytes.append(static_cast<char>(c.unicode() & 0xff));
        bytes.append(static_cast<char>(c.unicode() >> 8));
    }
    const auto r = extract_document(file("wide.txt", bytes));
    CHECK_OK(r);
    QCOMPARE(r->text, QStringLiteral("Ünïcode line\n\x3042 second"));
}

// Control characters go, trailing whitespace goes, blank runs shrink to two, none at the
// ends; tabs and a lone CR (old Mac line end) are kept as a tab and a line end.
void TestDocumentText::text_is_normalised() {
    const auto r = extract_document(file(
        "messy.log", "\n\n  \nfirst\x07 line   \t\nsecond\rthird\n\n\n\n\n\tindented\x1b\n\n \n"));
    CHECK_OK(r);
    QCOMPARE(r->text, QStringLiteral("first line\nsecond\nthird\n\n\n\tindented"));
}

void TestDocumentText::binary_named_txt_is_not_text() {
    QByteArray bytes;
    for (int i = 0; i < 512; ++i) bytes.append(static_cast<char>((i * 37) & 0xff));
    CHECK_ERROR(extract_document(file("data.txt", bytes)), "data.txt", "is not text");
    // Latin-1 is not guessed: many bytes that are not UTF-8 make it binary too.
    CHECK_ERROR(
        extract_document(file("latin1.txt", QByteArray("caf\xE9 na\xEFve r\xE9sum\xE9 \xE0 la "
                                                       "cr\xE8me br\xFBl\xE9"
                                                       "e \xE9t\xE9"))),
        "is not text");
    // UTF-16 without a BOM has NULs.
    CHECK_ERROR(extract_document(file("wide.txt", QByteArray("h\0i\0", 4))), "is not text");
}

void TestDocumentText::a_few_stray_bytes_are_text() {
    const auto r = extract_document(file("log.txt", "a caf\xE9 in an otherwise UTF-8 log\n"));
    CHECK_OK(r);
    QCOMPARE(r->text, QStringLiteral("a caf\uFFFD in an otherwise UTF-8 log"));
}

void TestDocumentText::empty_and_missing_files() {
    CHECK_ERROR(extract_document(file("empty.txt", "")), "empty.txt", "is empty");
    CHECK_ERROR(extract_document(file("blank.md", " \n\t\r\n")), "blank.md", "has no text");
    CHECK_ERROR(extract_document(dir_->filePath("nowhere.txt")), "nowhere.txt", "not found");
    CHECK_ERROR(extract_document(dir_->path()), "is a folder");
}

void TestDocumentText::over_the_size_limit() {
    ExtractOptions options;
    options.max_file_bytes = 100;
    CHECK_ERROR(extract_document(file("big.txt", QByteArray(500, 'x')), options), "big.txt",
                "too large", "500 bytes", "100 bytes");
    const auto at_limit = extract_document(file("fits.txt", QByteArray(100, 'x')), options);
    CHECK_OK(at_limit);
    QCOMPARE(at_limit->text.size(), 100);
}

void TestDocumentText::over_the_text_limit() {
    ExtractOptions options;
    options.max_text_chars = 10;
    CHECK_ERROR(extract_document(file("long.txt", "eleven char"), options), "long.txt",
                "its text is 11 characters; Hearth keeps at most 10 per document");
    CHECK_OK(extract_document(file("short.txt", "ten chars!"), options));
}

void TestDocumentText::code_and_markdown() {
    const auto cpp = extract_document(file("main.CPP", "int main() {\r\n\treturn 0;  \r\n}\r\n"));
    CHECK_OK(cpp);
    QCOMPARE(cpp->format, DocumentFormat::Code);
    QCOMPARE(cpp->language, QStringLiteral("cpp"));
    QCOMPARE(cpp->text, QStringLiteral("int main() {\n\treturn 0;\n}"));
    const auto py = extract_document(file("tool.py", "print('hi')\n"));
    CHECK_OK(py);
    QCOMPARE(py->language, QStringLiteral("python"));
    const auto cmake = extract_document(file("CMakeLists.txt", "project(x)\n"));
    CHECK_OK(cmake);
    QCOMPARE(cmake->format, DocumentFormat::Code);
    QCOMPARE(cmake->language, QStringLiteral("cmake"));
    const auto md = extract_document(file("README.md", "# Title\n\n- item\n"));
    CHECK_OK(md);
    QCOMPARE(md->format, DocumentFormat::Markdown);
    QCOMPARE(md->text, QStringLiteral("# Title\n\n- item"));
    QVERIFY(md->language.isEmpty());
    const auto bare = extract_document(file("NOTES", "no extension, but text\n"));
    CHECK_OK(bare);
    QCOMPARE(bare->format, DocumentFormat::PlainText);
    QCOMPARE(hearth::documents::format_name(DocumentFormat::Docx), QStringLiteral("Word document"));
    QCOMPARE(hearth::documents::format_name(DocumentFormat::Pdf), QStringLiteral("PDF"));
}

void TestDocumentText::unknown_format() {
    CHECK_ERROR(extract_document(file("photo.png", "\x89PNG\r\n\x1a\n")), "photo.png",
                "not a kind of file Hearth reads");
    CHECK_ERROR(extract_document(file("blob", QByteArray("\0\1\2\3", 4))), "blob",
                "not a kind of file");
}

void TestDocumentText::format_of_extensions_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("format");  // -1: none
    const auto row = [](const char* path, int format) {
        QTest::newRow(path) << QString::fromLatin1(path) << format;
    };
    using F = DocumentFormat;
    for (const char* p : {"a.txt", "a.TEXT", "a.log", "a.csv", "a.tsv"}) row(p, int(F::PlainText));
    for (const char* p : {"a.md", "a.Markdown"}) row(p, int(F::Markdown));
    for (const char* p : {"a.c",
                          "a.h",
                          "a.cpp",
                          "a.hpp",
                          "a.cc",
                          "a.py",
                          "a.js",
                          "a.ts",
                          "a.java",
                          "a.rs",
                          "a.go",
                          "a.rb",
                          "a.sh",
                          "a.json",
                          "a.yaml",
                          "a.yml",
                          "a.toml",
                          "a.xml",
                          "a.sql",
                          "a.qml",
                          "a.cmake",
                          "Makefile",
                          "/x/CMakeLists.txt"})
        row(p, int(F::Code));
    for (const char* p : {"a.html", "a.HTM", "a.xhtml"}) row(p, int(F::Html));
    row("a.pdf", int(F::Pdf));
    row("a.docx", int(F::Docx));
    row("a.odt", int(F::Odt));
    for (const char* p : {"a.doc", "a.png", "a.exe", "a.ods", "a.zip"}) row(p, -1);
}

void TestDocumentText::format_of_extensions() {
    QFETCH(QString, path);
    QFETCH(int, format);
    // The head says nothing (plain ASCII): the extension decides.
    const auto f = format_of(path, "abc");
    QCOMPARE(f ? int(*f) : -1, format);
}

void TestDocumentText::format_of_content() {
    // Content that cannot be mistaken wins over the name.
    QCOMPARE(format_of("scan.bin", "%PDF-1.7\n"), DocumentFormat::Pdf);
    QCOMPARE(format_of("renamed.txt", "%PDF-1.4\n"), DocumentFormat::Pdf);
    const QByteArray docx = make_docx("<w:p/>");
    QCOMPARE(format_of("report.zip", docx), DocumentFormat::Docx);
    QCOMPARE(format_of("report", docx), DocumentFormat::Docx);
    const QByteArray odt = make_odt("<text:p/>");
    QCOMPARE(format_of("essay.zip", odt), DocumentFormat::Odt);
    QCOMPARE(format_of("essay.docx", odt), DocumentFormat::Odt);
    // A ZIP that is neither is what its name says, or nothing.
    const QByteArray zip = make_zip({{QStringLiteral("a.txt"), "x"}});
    QCOMPARE(format_of("a.docx", zip), DocumentFormat::Docx);
    QCOMPARE(format_of("a.zip", zip), std::nullopt);
    // An encrypted Word document (OLE) keeps its name's format: the reader says why.
    QCOMPARE(format_of("locked.docx", "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1"), DocumentFormat::Docx);
    // No extension: HTML by its start, text when it is text, else nothing.
    QCOMPARE(format_of("page", "\xEF\xBB\xBF  <!DOCTYPE HTML><html>"), DocumentFormat::Html);
    QCOMPARE(format_of("page", "<html lang=en>"), DocumentFormat::Html);
    QCOMPARE(format_of("README", "Just words, \xC3\xA9t\xC3\xA9"), DocumentFormat::PlainText);
    QCOMPARE(format_of("README", "cut UTF-8 at the end \xC3"), DocumentFormat::PlainText);
    QCOMPARE(format_of("README", "\xFF\xFEh\0i\0"), DocumentFormat::PlainText);
    QCOMPARE(format_of("core", QByteArrayView("\x7f"
                                              "ELF\2\1\1\0\0\0",
                                              10)),
             std::nullopt);
    QCOMPARE(format_of("a.unknown", "text"), std::nullopt);
}

QTEST_GUILESS_MAIN(TestDocumentText)
