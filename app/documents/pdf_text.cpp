// PDF text through poppler's C++ API. The layout mode "non-raw, non-physical" gives the
// reading order poppler works out from the text's blocks: a two-column page reads its
// left column before its right, where raw order would interleave their lines (a table
// whose cells stand far apart is taken for columns too, and read column by column). Pages
// without text (scanned images: Hearth does no OCR) are named in a note; a document with
// no text at all is an error. Without poppler (the Windows cross-build) a PDF is an error
// saying so, and the rest of the library works.
#include <QStringList>

#include "documents/document_formats.h"

#ifdef HEARTH_WITH_POPPLER
#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>

#include <climits>
#include <memory>
#include <mutex>
#endif

namespace hearth::documents::detail {

#ifdef HEARTH_WITH_POPPLER

namespace {

// Pages named one by one in a note, at most; the rest are counted.
constexpr int kPagesNamed = 10;

// "2", "3 and 7", "2, 5 and 9", "1, 2, ... and 40 more" (1-based page numbers).
QString page_list(const QList<int>& pages) {
    QStringList named;
    for (qsizetype i = 0; i < pages.size() && i < kPagesNamed; ++i)
        named.append(QString::number(pages[i]));
    if (pages.size() > kPagesNamed)
        return named.join(QStringLiteral(", ")) +
               QStringLiteral(" and %1 more").arg(pages.size() - kPagesNamed);
    if (named.size() == 1) return named.first();
    const QString last = named.takeLast();
    return named.join(QStringLiteral(", ")) + QStringLiteral(" and ") + last;
}

// Poppler prints what it finds wrong in a damaged file to stderr; the error value says
// what the user needs, so its messages are dropped.
void quiet_poppler() {
    static std::once_flag once;
    std::call_once(
        once, [] { poppler::set_debug_error_function([](const std::string&, void*) {}, nullptr); });
}

}  // namespace

bool pdf_supported() {
    return true;
}

hearth::Result<Extracted> pdf_text(const QByteArray& bytes, const QString& name) {
    quiet_poppler();
    if (bytes.size() > INT_MAX)
        return file_error(name, QStringLiteral("is too large for the PDF reader"));
    // The bytes outlive the document: load_from_raw_data does not copy them.
    const std::unique_ptr<poppler::document> doc(
        poppler::document::load_from_raw_data(bytes.constData(), static_cast<int>(bytes.size())));
    if (!doc)
        return file_error(name, QStringLiteral("is damaged: it is not a PDF that can be opened"));
    if (doc->is_locked())
        return file_error(name, QStringLiteral("is password-protected; Hearth does not read "
                                               "locked PDFs (save a copy without the password "
                                               "and add that)"));
    const int count = doc->pages();
    if (count <= 0) return file_error(name, QStringLiteral("is damaged: it has no pages"));

    Extracted out;
    QList<int> empty_pages;
    for (int i = 0; i < count; ++i) {
        const std::unique_ptr<poppler::page> page(doc->create_page(i));
        QString text;
        if (page) {
            const poppler::byte_array utf8 =
                page->text(poppler::rectf(), poppler::page::non_raw_non_physical_layout).to_utf8();
            text = QString::fromUtf8(utf8.data(), static_cast<qsizetype>(utf8.size()));
        }
        // TextOutputDev ends a page with a form feed.
        text.replace(QLatin1Char('\f'), QLatin1Char('\n'));
        if (text.trimmed().isEmpty()) {
            empty_pages.append(i + 1);
            continue;
        }
        if (!out.text.isEmpty()) out.text += QStringLiteral("\n\n");
        out.text += text.trimmed();
    }
    if (empty_pages.size() == count)
        return file_error(name, QStringLiteral("has no text: its pages are images (scanned); "
                                               "Hearth does not read text from images"));
    if (empty_pages.size() == 1)
        out.notes.append(QStringLiteral("page %1 has no text (scanned images are not read)")
                             .arg(empty_pages.first()));
    else if (!empty_pages.isEmpty())
        out.notes.append(QStringLiteral("pages %1 have no text (scanned images are not read)")
                             .arg(page_list(empty_pages)));
    return out;
}

#else

bool pdf_supported() {
    return false;
}

hearth::Result<Extracted> pdf_text(const QByteArray&, const QString& name) {
    return file_error(name, QStringLiteral("is a PDF, and PDF files cannot be read by this "
                                           "build of Hearth (it was built without poppler)"));
}

#endif

}  // namespace hearth::documents::detail
