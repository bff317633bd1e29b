// tst_document_text: the suite's class (its functions are in tst_document_text*.cpp: text
// and format_of here, HTML, PDF, Word and OpenDocument in their own files) and the helpers
// they share. Every file read is written by the test into a temporary folder.
#pragma once

#include <QTemporaryDir>
#include <QTest>

#include "document_fixtures.h"
#include "documents/document_text.h"

// Fails the test with the error's message when a hearth::Result is not ok.
#define CHECK_OK(result)                                                                   \
    do {                                                                                   \
        const auto& check_ok_r_ = (result);                                                \
        QVERIFY2(check_ok_r_.ok(), check_ok_r_.ok() ? "" : check_ok_r_.message().c_str()); \
    } while (0)

// Fails unless result is an error whose message holds every one of parts.
#define CHECK_ERROR(result, ...)                                                                  \
    do {                                                                                          \
        const auto& check_error_r_ = (result);                                                    \
        QVERIFY2(!check_error_r_.ok(), "expected an error");                                      \
        const QString check_error_m_ = QString::fromStdString(check_error_r_.message());          \
        for (const char* part : {__VA_ARGS__})                                                    \
            QVERIFY2(                                                                             \
                check_error_m_.contains(QLatin1String(part)),                                     \
                qPrintable(                                                                       \
                    QStringLiteral("'%1' lacks '%2'").arg(check_error_m_, QLatin1String(part)))); \
    } while (0)

namespace document_test {

using hearth::documents::DocumentFormat;
using hearth::documents::DocumentText;
using hearth::documents::extract_document;
using hearth::documents::ExtractOptions;
using hearth::documents::format_of;

}  // namespace document_test

class TestDocumentText : public QObject {
    Q_OBJECT

  private slots:
    void init();

    // text and format_of (tst_document_text.cpp)
    void utf8_with_bom_and_crlf();
    void utf16le_with_bom();
    void text_is_normalised();
    void binary_named_txt_is_not_text();
    void a_few_stray_bytes_are_text();
    void empty_and_missing_files();
    void over_the_size_limit();
    void over_the_text_limit();
    void code_and_markdown();
    void unknown_format();
    void format_of_extensions_data();
    void format_of_extensions();
    void format_of_content();

    // HTML (tst_document_text_html.cpp)
    void html_structure();
    void html_title_as_heading();
    void html_declared_latin1();
    void html_malformed();
    void html_every_prefix();

    // PDF (tst_document_text_pdf.cpp)
    void pdf_columns_table_and_empty_page();
    void pdf_only_an_empty_page();
    void pdf_corrupt();
    void pdf_password_protected();
    void pdf_without_poppler();

    // Word and OpenDocument (tst_document_text_office.cpp)
    void docx_structure();
    void odt_structure();
    void docx_damaged();
    void docx_password_protected();
    void docx_without_document_xml();
    void docx_malformed_xml();
    void docx_zip_bomb();
    void odt_not_text();

  private:
    // Writes bytes to the temporary folder as name; its path.
    QString file(const QString& name, const QByteArray& bytes);

    std::unique_ptr<QTemporaryDir> dir_;
};
