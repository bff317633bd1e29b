// Plain text: decoding (BOMs, UTF-8, UTF-16; what counts as binary) and the normal form
// every format's text ends in (document_text.h).
#include <QStringDecoder>

#include <algorithm>

#include "documents/document_formats.h"

namespace hearth::documents::detail {

namespace {

// A text file may hold a few stray bytes (one Latin-1 "é" pasted into a UTF-8 log); more
// than this, or one per 10 kB, and it is binary or in an encoding not read.
constexpr qsizetype kInvalidAllowed = 4;
constexpr qsizetype kInvalidPerBytes = 10'000;

hearth::Error not_text(const QString& name) {
    return file_error(name,
                      QStringLiteral("is not text: it holds binary data, or text in an encoding "
                                     "other than UTF-8 and UTF-16"));
}

// Decoded replacement characters that were not in the bytes (EF BF BD is a valid U+FFFD).
qsizetype invalid_sequences(QByteArrayView bytes, QStringView decoded) {
    const qsizetype decoded_fffd = decoded.count(QChar(QChar::ReplacementCharacter));
    qsizetype real_fffd = 0;
    for (qsizetype at = bytes.indexOf("\xEF\xBF\xBD"); at >= 0;
         at = bytes.indexOf("\xEF\xBF\xBD", at + 3))
        ++real_fffd;
    return std::max<qsizetype>(0, decoded_fffd - real_fffd);
}

bool is_line_break(char16_t u) {
    return u == '\f' || u == '\v' || u == 0x85 || u == 0x2028 || u == 0x2029;
}

}  // namespace

hearth::Error file_error(const QString& name, const QString& rest) {
    return hearth::make_error((name + QLatin1Char(' ') + rest).toStdString());
}

QString size_text(qint64 bytes) {
    if (bytes < 1024) return QStringLiteral("%1 bytes").arg(bytes);
    if (bytes < (1 << 20))
        return QStringLiteral("%1 KB").arg(static_cast<double>(bytes) / 1024.0, 0, 'f', 1);
    return QStringLiteral("%1 MB").arg(static_cast<double>(bytes) / (1 << 20), 0, 'f', 1);
}

hearth::Result<QString> decode_text(QByteArrayView bytes, const QString& name) {
    const bool le = bytes.startsWith("\xFF\xFE"), be = bytes.startsWith("\xFE\xFF");
    if (le || be) {
        QStringDecoder decoder(le ? QStringDecoder::Utf16LE : QStringDecoder::Utf16BE,
                               QStringDecoder::Flag::Stateless);
        QString text = decoder(bytes.sliced(2));
        if (decoder.hasError() || text.contains(QChar(0))) return not_text(name);
        return text;
    }
    if (bytes.startsWith("\xEF\xBB\xBF")) bytes = bytes.sliced(3);
    // UTF-16 without a BOM, and nearly every binary format, hold NULs; text never does.
    if (bytes.contains('\0')) return not_text(name);
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    QString text = decoder(bytes);
    const qsizetype invalid = invalid_sequences(bytes, text);
    if (invalid > std::max(kInvalidAllowed, bytes.size() / kInvalidPerBytes)) return not_text(name);
    return text;
}

bool looks_like_text(QByteArrayView head) {
    if (head.startsWith("\xFF\xFE") || head.startsWith("\xFE\xFF")) return true;
    if (head.contains('\0')) return false;
    // A multi-byte sequence may be cut by the end of the head: drop up to 3 bytes of it.
    qsizetype end = head.size();
    for (qsizetype back = 1; back <= 3 && back <= head.size(); ++back) {
        const auto b = static_cast<unsigned char>(head[head.size() - back]);
        if ((b & 0xC0) == 0xC0) {  // a lead byte: cut before it
            end = head.size() - back;
            break;
        }
        if ((b & 0x80) == 0) break;  // ASCII: nothing is cut
    }
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QByteArrayView body = head.first(end);
    const QString text = decoder(body);
    return invalid_sequences(body, text) <= kInvalidAllowed;
}

QString normalize_text(QStringView text) {
    // Characters first: line ends become '\n', control characters go.
    QString chars;
    chars.reserve(text.size());
    for (qsizetype i = 0; i < text.size(); ++i) {
        const char16_t u = text[i].unicode();
        if (u == '\r') {
            chars += QLatin1Char('\n');
            if (i + 1 < text.size() && text[i + 1] == QLatin1Char('\n')) ++i;
        } else if (u == '\n' || u == '\t') {
            chars += QChar(u);
        } else if (is_line_break(u)) {
            chars += QLatin1Char('\n');
        } else if (u < 0x20 || (u >= 0x7f && u < 0xa0) || u == 0xFEFF) {
            continue;  // C0 and C1 controls, DEL, a BOM (or zero-width no-break space)
        } else {
            chars += QChar(u);
        }
    }
    // Then lines: trailing whitespace goes, runs of blank lines shrink to 2 at most.
    QString out;
    out.reserve(chars.size());
    int blank_run = 0;
    bool started = false;
    for (QStringView line : QStringView(chars).split(QLatin1Char('\n'))) {
        qsizetype end = line.size();
        while (end > 0 && line[end - 1].isSpace()) --end;
        line = line.first(end);
        if (line.isEmpty()) {
            ++blank_run;
            continue;
        }
        if (started) {
            out += QLatin1Char('\n');
            for (int b = 0; b < std::min(blank_run, 2); ++b) out += QLatin1Char('\n');
        }
        out += line;
        started = true;
        blank_run = 0;
    }
    return out;
}

}  // namespace hearth::documents::detail
