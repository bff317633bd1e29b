// libFuzzer target: a document's text as a persona gets it, from bytes nobody checked (a
// file from the web, a damaged download): HTML, Word and OpenDocument through their
// readers (the ZIP reader, the XML, the size caps), plain text through the decoder, then
// every result normalised and cut into passages for retrieval (store/chunking.h), and a
// question about it made into a lookup query. The first byte picks the format. Every input
// gives text or an error; the passages lie inside the text, in order, apart, never empty;
// the query is quoted words joined by OR, nothing else.
#include <QByteArray>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "documents/document_formats.h"
#include "store/chunking.h"

namespace d = hearth::documents::detail;

namespace {

constexpr qint64 kMaxMember = 1 << 20;

QString zip_member_text(const QByteArray& bytes, bool odt) {
    static QTemporaryDir dir;
    const QString path = dir.filePath(odt ? QStringLiteral("f.odt") : QStringLiteral("f.docx"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size()) std::abort();
    f.close();
    auto r = odt ? d::odt_text(path, QStringLiteral("f.odt"), kMaxMember)
                 : d::docx_text(path, QStringLiteral("f.docx"), kMaxMember);
    if (!r) {
        if (r.message().empty()) std::abort();  // an error says what went wrong
        return {};
    }
    return r->text;
}

void check_passages(const QString& text) {
    int end = 0;
    for (const hearth::store::ChunkSpan& c : hearth::store::chunk_document(text)) {
        if (c.start < end || c.length <= 0 || c.start + c.length > text.size()) std::abort();
        if (text.mid(c.start, c.length).trimmed().isEmpty()) std::abort();
        end = c.start + c.length;
    }
}

void check_query(const QString& text) {
    static const QRegularExpression shape(QStringLiteral("^\"[^\" ]+\"( OR \"[^\" ]+\")*$"));
    const QString q = hearth::store::to_retrieval_query(text.left(2000));
    if (!q.isEmpty() && !shape.match(q).hasMatch()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const QByteArray bytes(reinterpret_cast<const char*>(data) + 1,
                           static_cast<qsizetype>(size - 1));
    QString raw;
    switch (data[0] % 4) {
        case 0: {
            auto html = d::decode_html(bytes, QStringLiteral("f.html"));
            if (html) raw = d::html_to_text(*html);
            break;
        }
        case 1:
            raw = zip_member_text(bytes, false);
            break;
        case 2:
            raw = zip_member_text(bytes, true);
            break;
        default: {
            auto text = d::decode_text(bytes, QStringLiteral("f.txt"));
            if (text) raw = *text;
            break;
        }
    }
    check_passages(raw);  // raw text too: chunking must not rely on normalising
    const QString text = d::normalize_text(raw);
    check_passages(text);
    check_query(text);
    return 0;
}
