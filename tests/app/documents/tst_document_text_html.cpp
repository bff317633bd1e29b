// HTML: structure to Markdown-ish lines, what is dropped, entities, <pre>, the title, a
// declared charset, and malformed input read without hanging.
#include "tst_document_text.h"

using namespace document_test;

namespace {

const QByteArray kPage = R"(<!DOCTYPE html>
<html><head><title>Ignored title</title><style>body { color: red }</style>
<script>var x = "<p>not text</p>";</script></head>
<body>
<h1>Main   heading</h1>
<p>First paragraph with <b>bold</b> and
   <a href="x?a=1&amp;b=2" title='a > b'>a link</a>.</p>
<!-- a comment <p>hidden</p> -->
<h2>Lists</h2>
<ul><li>one</li><li>two<ul><li>two a</li></ul></li></ul>
<ol><li>first</li></ol>
<table><tr><th>Name</th> <th>Qty</th></tr>
<tr><td>Apples</td> <td>3</td></tr><tr><td></td><td>none</td></tr></table>
<p>Entities: &amp; &lt;tag&gt; &quot;q&quot; &apos;a&apos; x&nbsp;y &mdash; &ndash; &hellip; &copy; &reg; &#65;&#x42; &unknown; AT&T</p>
<pre>
  indented
    more</pre>
<template><p>template text</p></template>
<div>Line one<br>Line two</div>
</body></html>
)";

}  // namespace

void TestDocumentText::html_structure() {
    const auto r = extract_document(file("page.html", kPage));
    CHECK_OK(r);
    QCOMPARE(r->format, DocumentFormat::Html);
    QCOMPARE(r->text, QStringLiteral("# Main heading\n"
                                     "\n"
                                     "First paragraph with bold and a link.\n"
                                     "\n"
                                     "## Lists\n"
                                     "\n"
                                     "- one\n"
                                     "- two\n"
                                     "  - two a\n"
                                     "\n"
                                     "- first\n"
                                     "\n"
                                     "Name | Qty\n"
                                     "Apples | 3\n"
                                     " | none\n"
                                     "\n"
                                     "Entities: & <tag> \"q\" 'a' x y \u2014 \u2013 \u2026 \u00a9 "
                                     "\u00ae AB &unknown; AT&T\n"
                                     "\n"
                                     "  indented\n"
                                     "    more\n"
                                     "\n"
                                     "Line one\n"
                                     "Line two"));
}

void TestDocumentText::html_title_as_heading() {
    const auto r = extract_document(
        file("t.htm",
             "<html><head><title>The &amp; Title</title></head><body><p>Body text.</p>"
             "<h2>Part</h2></body></html>"));
    CHECK_OK(r);
    QCOMPARE(r->text, QStringLiteral("# The & Title\n\nBody text.\n\n## Part"));
    // Nothing in the body but the title: the title is the text.
    const auto only = extract_document(file("only.html", "<title>Just this</title>"));
    CHECK_OK(only);
    QCOMPARE(only->text, QStringLiteral("# Just this"));
    CHECK_ERROR(extract_document(file("none.html", "<html><script>x()</script></html>")),
                "none.html", "has no text");
}

void TestDocumentText::html_declared_latin1() {
    const auto r =
        extract_document(file("old.html",
                              "<meta http-equiv=\"Content-Type\" content=\"text/html; "
                              "charset=windows-1252\"><p>caf\xE9 \x93quoted\x94 \x80</p>"));
    CHECK_OK(r);
    QCOMPARE(r->text, QStringLiteral("caf\u00e9 \u201cquoted\u201d \u20ac"));
    // Undeclared, the same bytes are not guessed.
    CHECK_ERROR(extract_document(file("undeclared.html", "<p>caf\xE9 \x93q\x94 \x80\xE9\xE9</p>")),
                "is not text");
}

void TestDocumentText::html_malformed() {
    const auto r = extract_document(
        file("bad.html",
             "<p>Unclosed <b>bold <i>italic\n<div>a < b, 3 <4 and <= 5 </ p></div>"
             "</li></ul></table></pre></h3><td>cell<p>x <!-- never closed <p>gone"));
    CHECK_OK(r);
    QVERIFY2(r->text.startsWith(QStringLiteral("Unclosed bold italic\na < b, 3 <4 and <= 5")),
             qPrintable(r->text));
    QVERIFY2(r->text.endsWith(QStringLiteral("x")), qPrintable(r->text));
    QVERIFY(!r->text.contains(QStringLiteral("gone")));
    // A tag, a quoted attribute, a script cut by the end of the file.
    for (const char* bytes :
         {"<p>kept</p><a href=\"never", "<p>kept</p><img alt='x", "<p>kept</p><script>x(",
          "<p>kept</p><![CDATA[", "<p>kept</p><!doctype", "<p>kept</p></", "<p>kept</p><"}) {
        const auto cut = extract_document(file("cut.html", bytes));
        CHECK_OK(cut);
        QCOMPARE(cut->text.left(4), QStringLiteral("kept"));
    }
}

// Every prefix of a page (a file cut anywhere) is read, with no error but "no text", and
// no hang: the scanner only moves forward.
void TestDocumentText::html_every_prefix() {
    for (qsizetype n = 1; n <= kPage.size(); ++n) {
        const auto r = extract_document(file("prefix.html", kPage.first(n)));
        if (!r.ok())
            QVERIFY2(r.message().find("has no text") != std::string::npos, r.message().c_str());
    }
}
