// HTML to text: a small scanner, not a parser. It walks tags and text once, left to right,
// keeping a few counters (inside a list, a table cell, <pre>, a dropped element) rather
// than a tree, so unclosed, stray or misnested tags cost nothing and no input can make it
// loop: every step moves forward. What a browser would not show (script, style, template,
// comments, the head but its title) is dropped; block elements end lines; headings, list
// items and table rows get the Markdown a language model reads ("# ", "- ", " | ").
#include <QStringList>

#include <algorithm>
#include <array>
#include <cctype>

#include "documents/document_formats.h"

namespace hearth::documents::detail {

namespace {

struct Entity {
    const char* name;
    char16_t code;
};
constexpr std::array kEntities{
    Entity{"amp", u'&'},     Entity{"lt", u'<'},      Entity{"gt", u'>'},
    Entity{"quot", u'"'},    Entity{"apos", u'\''},   Entity{"nbsp", 0xA0},
    Entity{"mdash", 0x2014}, Entity{"ndash", 0x2013}, Entity{"hellip", 0x2026},
    Entity{"copy", 0xA9},    Entity{"reg", 0xAE},     Entity{"trade", 0x2122},
    Entity{"lsquo", 0x2018}, Entity{"rsquo", 0x2019}, Entity{"ldquo", 0x201C},
    Entity{"rdquo", 0x201D}, Entity{"laquo", 0xAB},   Entity{"raquo", 0xBB},
    Entity{"bull", 0x2022},  Entity{"middot", 0xB7},  Entity{"times", 0xD7},
    Entity{"euro", 0x20AC},  Entity{"deg", 0xB0},     Entity{"shy", 0xAD},
};

// windows-1252's 0x80..0x9F (where it differs from Latin-1); 0: unassigned.
constexpr std::array<char16_t, 32> kCp1252High{
    0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0,      0x017D, 0,      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};

bool is_html_space(QChar c) {
    return c == u' ' || c == u'\t' || c == u'\n' || c == u'\r' || c == u'\f';
}

bool is_name_char(QChar c) {
    return c.isLetterOrNumber() || c == u'-' || c == u':' || c == u'_';
}

void append_code_point(QString& out, qint64 cp) {
    if (cp <= 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        out += QChar(QChar::ReplacementCharacter);
    else
        out += QString::fromUcs4(reinterpret_cast<const char32_t*>(&cp), 1);
}

QString decode_entities(QStringView s) {
    QString out;
    out.reserve(s.size());
    for (qsizetype i = 0; i < s.size(); ++i) {
        if (s[i] != u'&') {
            out += s[i];
            continue;
        }
        qsizetype j = i + 1;
        if (j < s.size() && s[j] == u'#') {
            ++j;
            const bool hex = j < s.size() && (s[j] == u'x' || s[j] == u'X');
            if (hex) ++j;
            qint64 cp = 0;
            const qsizetype digits_at = j;
            for (; j < s.size() && j - digits_at < 8; ++j) {
                const char16_t u = s[j].unicode();
                int d = -1;
                if (u >= u'0' && u <= u'9')
                    d = u - u'0';
                else if (hex && u >= u'a' && u <= u'f')
                    d = u - u'a' + 10;
                else if (hex && u >= u'A' && u <= u'F')
                    d = u - u'A' + 10;
                if (d < 0) break;
                cp = cp * (hex ? 16 : 10) + d;
            }
            if (j == digits_at) {  // "&#" without digits: literal
                out += u'&';
                continue;
            }
            append_code_point(out, cp);
            if (j < s.size() && s[j] == u';') ++j;
            i = j - 1;
            continue;
        }
        while (j < s.size() && j - i <= 10 && s[j].isLetterOrNumber()) ++j;
        bool found = false;
        if (j < s.size() && s[j] == u';') {
            const QStringView name = s.sliced(i + 1, j - i - 1);
            for (const Entity& e : kEntities) {
                if (name == QLatin1String(e.name)) {
                    out += QChar(e.code);
                    i = j;
                    found = true;
                    break;
                }
            }
        }
        if (!found) out += u'&';  // unknown or unterminated: kept as written
    }
    return out;
}

// The text being written: lines, breaks that wait for the next text (so nothing trails),
// a prefix ("# ", "- ") written before a line's first text.
class Writer {
  public:
    void text(QStringView s) {
        for (QChar c : s) {
            if (is_html_space(c)) {
                space_ = true;
                continue;
            }
            start_text();
            out_ += c == QChar(0xA0) ? QChar(u' ') : c;
        }
    }
    // <pre>: whitespace kept.
    void pre_text(QStringView s) {
        for (QChar c : s) {
            if (c == u'\n') {
                start_text();
                out_ += c;
                line_has_text_ = false;
                continue;
            }
            start_text();
            out_ += c;
        }
    }
    void line_break() { pending_ = std::max(pending_, 1); }
    void paragraph_break() { pending_ = 2; }
    void extra_break() { pending_ = std::min(pending_ + 1, 2); }
    void space() { space_ = true; }
    void cell_separator() {
        space_ = false;  // the whitespace between two cells
        start_text();
        out_ += QStringLiteral(" |");
        space_ = true;
    }
    void set_prefix(QString prefix) { prefix_ = std::move(prefix); }
    void clear_prefix() { prefix_.clear(); }
    QString take() { return std::move(out_); }

  private:
    void start_text() {
        if (pending_ > 0 && !out_.isEmpty()) {
            out_ += QString(pending_, u'\n');
            line_has_text_ = false;
        }
        pending_ = 0;
        if (!line_has_text_) {
            out_ += prefix_;
            prefix_.clear();
            space_ = false;
            line_has_text_ = true;
        } else if (space_) {
            out_ += u' ';
        }
        space_ = false;
    }

    QString out_;
    QString prefix_;
    int pending_ = 0;
    bool space_ = false;
    bool line_has_text_ = false;
};

bool one_of(QStringView name, std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(),
                       [&](const char* n) { return name == QLatin1String(n); });
}

// Elements whose text is kept but which start lines of their own.
bool is_line_block(QStringView n) {
    return one_of(
        n, {"div",     "section",    "article", "header", "footer", "nav",   "main",     "aside",
            "figure",  "figcaption", "address", "dt",     "dd",     "form",  "fieldset", "details",
            "summary", "caption",    "hr",      "center", "legend", "option"});
}
bool is_paragraph_block(QStringView n) {
    return one_of(n, {"p", "blockquote", "table", "dl"});
}
// Elements whose content is not shown (parsed as HTML, but its text dropped).
bool is_dropped(QStringView n) {
    return one_of(n, {"template", "noscript", "svg", "iframe", "object", "canvas", "audio", "video",
                      "map", "datalist"});
}
// Elements whose content is raw text up to their end tag.
bool is_raw_text(QStringView n) {
    return one_of(n, {"script", "style", "title", "textarea", "xmp", "noembed", "noframes"});
}
bool is_head_element(QStringView n) {
    return one_of(
        n, {"head", "meta", "link", "base", "title", "style", "script", "noscript", "template"});
}
int heading_level(QStringView n) {
    if (n.size() == 2 && n[0] == u'h' && n[1] >= u'1' && n[1] <= u'6') return n[1].unicode() - '0';
    return 0;
}

// The scan: one pass over the text, the writer and the state counters.
class Converter {
  public:
    explicit Converter(QStringView html) : s_(html) {}

    QString run() {
        qsizetype text_start = 0;
        while (i_ < s_.size()) {
            if (s_[i_] != u'<') {
                ++i_;
                continue;
            }
            // The text before the '<' first: the markup may change how text is written.
            const qsizetype lt = i_;
            emit_text(s_.sliced(text_start, lt - text_start));
            text_start = lt;
            const qsizetype after = markup(lt);
            if (after < 0) {  // not markup: a stray '<' stays in the text
                ++i_;
                continue;
            }
            i_ = after;
            if (!raw_end_.isEmpty()) raw_text();
            text_start = i_;
        }
        emit_text(s_.sliced(std::min(text_start, s_.size())));
        QString text = w_.take();
        if (!saw_h1_ && !title_.isEmpty()) {
            text = QStringLiteral("# ") + title_ +
                   (text.isEmpty() ? QString() : QStringLiteral("\n\n")) + text;
        }
        return text;
    }

  private:
    void emit_text(QStringView raw) {
        if (raw.isEmpty() || in_head_ || drop_depth_ > 0) return;
        const QString text = decode_entities(raw);
        if (pre_depth_ > 0) {
            QStringView t(text);
            if (skip_pre_newline_ && t.startsWith(u'\n')) t = t.sliced(1);
            skip_pre_newline_ = false;
            w_.pre_text(t);
        } else {
            w_.text(text);
        }
    }

    // The markup at lt, handled; the index after it, or -1 when '<' starts no markup.
    qsizetype markup(qsizetype lt) {
        const QStringView rest = s_.sliced(lt);
        if (rest.startsWith(u"<!--")) {
            const qsizetype end = s_.indexOf(u"-->", lt + 4);
            return end < 0 ? s_.size() : end + 3;
        }
        if (rest.startsWith(u"<![CDATA[")) {
            const qsizetype end = s_.indexOf(u"]]>", lt + 9);
            const qsizetype stop = end < 0 ? s_.size() : end;
            if (!in_head_ && drop_depth_ == 0) w_.text(s_.sliced(lt + 9, stop - lt - 9));
            return end < 0 ? s_.size() : end + 3;
        }
        if (rest.startsWith(u"<!") || rest.startsWith(u"<?")) {  // doctype, processing
            const qsizetype end = s_.indexOf(u'>', lt);
            return end < 0 ? s_.size() : end + 1;
        }
        const bool closing = rest.startsWith(u"</");
        qsizetype j = lt + (closing ? 2 : 1);
        if (j >= s_.size() || !s_[j].isLetter()) return -1;
        const qsizetype name_start = j;
        while (j < s_.size() && is_name_char(s_[j])) ++j;
        const QString name = s_.sliced(name_start, j - name_start).toString().toLower();
        const qsizetype end = tag_end(j);
        if (end < 0) return s_.size();  // a tag cut by the end of the file: dropped
        if (closing)
            end_tag(name);
        else
            start_tag(name, end);
        return end;
    }

    // The index after the '>' that ends a tag whose attributes start at j; quoted values
    // may hold '>'. An unclosed quote falls back to the first '>'.
    qsizetype tag_end(qsizetype j) const {
        const qsizetype attributes = j;
        while (j < s_.size()) {
            const QChar c = s_[j];
            if (c == u'>') return j + 1;
            if (c == u'=') {
                qsizetype k = j + 1;
                while (k < s_.size() && is_html_space(s_[k])) ++k;
                if (k < s_.size() && (s_[k] == u'"' || s_[k] == u'\'')) {
                    const qsizetype close = s_.indexOf(s_[k], k + 1);
                    if (close < 0) break;
                    j = close + 1;
                    continue;
                }
            }
            ++j;
        }
        const qsizetype gt = s_.indexOf(u'>', attributes);
        return gt < 0 ? -1 : gt + 1;
    }

    void start_tag(const QString& n, qsizetype end) {
        if (in_head_ && !is_head_element(n)) in_head_ = false;  // the body began, unannounced
        if (n == u"head") {
            in_head_ = true;
        } else if (n == u"body") {
            in_head_ = false;
        } else if (is_raw_text(n)) {
            raw_end_ = QStringLiteral("</") + n;
            raw_name_ = n;
        } else if (is_dropped(n)) {
            // A self-closing <svg/> has no content to drop.
            if (!s_.sliced(0, end).endsWith(u"/>")) ++drop_depth_;
        } else if (const int level = heading_level(n)) {
            w_.paragraph_break();
            if (cell_depth_ == 0) w_.set_prefix(QString(level, u'#') + u' ');
            saw_h1_ = saw_h1_ || level == 1;
        } else if (n == u"br") {
            cell_depth_ > 0 ? w_.space() : w_.extra_break();
        } else if (n == u"ul" || n == u"ol" || n == u"menu") {
            list_depth_ == 0 && cell_depth_ == 0 ? w_.paragraph_break() : w_.line_break();
            ++list_depth_;
        } else if (n == u"li") {
            if (cell_depth_ > 0) {
                w_.space();
            } else {
                w_.line_break();
                w_.set_prefix(QString(2 * std::max(0, list_depth_ - 1), u' ') +
                              QStringLiteral("- "));
            }
        } else if (n == u"tr") {
            w_.line_break();
            cells_in_row_ = 0;
            cell_depth_ = 0;
        } else if (n == u"td" || n == u"th") {
            if (cells_in_row_++ > 0) w_.cell_separator();
            cell_depth_ = 1;
        } else if (n == u"pre" || n == u"listing") {
            w_.paragraph_break();
            ++pre_depth_;
            skip_pre_newline_ = true;
        } else if (cell_depth_ > 0 && (is_paragraph_block(n) || is_line_block(n))) {
            if (n == u"table") cells_in_row_ = 0;
            w_.space();
        } else if (is_paragraph_block(n)) {
            list_depth_ > 0 ? w_.line_break() : w_.paragraph_break();
        } else if (is_line_block(n)) {
            w_.line_break();
        }
    }

    void end_tag(const QString& n) {
        if (n == u"head") {
            in_head_ = false;
        } else if (is_dropped(n)) {
            drop_depth_ = std::max(0, drop_depth_ - 1);
        } else if (heading_level(n)) {
            w_.clear_prefix();
            w_.paragraph_break();
        } else if (n == u"ul" || n == u"ol" || n == u"menu") {
            list_depth_ = std::max(0, list_depth_ - 1);
            list_depth_ == 0 && cell_depth_ == 0 ? w_.paragraph_break() : w_.line_break();
        } else if (n == u"li") {
            w_.clear_prefix();
            if (cell_depth_ == 0) w_.line_break();
        } else if (n == u"tr") {
            w_.line_break();
            cell_depth_ = 0;
        } else if (n == u"td" || n == u"th") {
            cell_depth_ = 0;
        } else if (n == u"table") {
            cell_depth_ = 0;
            w_.paragraph_break();
        } else if (n == u"pre" || n == u"listing") {
            pre_depth_ = std::max(0, pre_depth_ - 1);
            w_.paragraph_break();
        } else if (cell_depth_ > 0 && (is_paragraph_block(n) || is_line_block(n))) {
            w_.space();
        } else if (is_paragraph_block(n)) {
            list_depth_ > 0 ? w_.line_break() : w_.paragraph_break();
        } else if (is_line_block(n)) {
            w_.line_break();
        }
    }

    // The content of a raw-text element (script, style, title, textarea), up to its end
    // tag or the end of the file; i_ moves past it.
    void raw_text() {
        const qsizetype close = s_.indexOf(raw_end_, i_, Qt::CaseInsensitive);
        const qsizetype stop = close < 0 ? s_.size() : close;
        const QStringView content = s_.sliced(i_, stop - i_);
        if (raw_name_ == u"title") {
            if (title_.isEmpty() && drop_depth_ == 0)
                title_ = decode_entities(content).simplified();
        } else if (raw_name_ == u"textarea" || raw_name_ == u"xmp") {
            if (!in_head_ && drop_depth_ == 0) w_.text(decode_entities(content));
        }
        if (close < 0) {
            i_ = s_.size();
        } else {
            const qsizetype gt = s_.indexOf(u'>', close);
            i_ = gt < 0 ? s_.size() : gt + 1;
        }
        raw_end_.clear();
        raw_name_.clear();
    }

    QStringView s_;
    qsizetype i_ = 0;
    Writer w_;
    QString raw_end_, raw_name_;  // inside a raw-text element: "</script" and "script"
    QString title_;
    bool saw_h1_ = false;
    bool in_head_ = false;
    bool skip_pre_newline_ = false;  // a newline right after <pre> is not content
    int drop_depth_ = 0, list_depth_ = 0, pre_depth_ = 0, cell_depth_ = 0;
    int cells_in_row_ = 0;
};

// The charset an HTML file declares in its first kB, lower-case; empty when none.
QByteArray declared_charset(QByteArrayView bytes) {
    const QByteArray head =
        bytes.first(std::min<qsizetype>(bytes.size(), 2048)).toByteArray().toLower();
    const qsizetype at = head.indexOf("charset=");
    if (at < 0) return {};
    qsizetype j = at + 8;
    while (j < head.size() && (head[j] == '"' || head[j] == '\'' || head[j] == ' ')) ++j;
    const qsizetype start = j;
    while (j < head.size() &&
           (std::isalnum(static_cast<unsigned char>(head[j])) || head[j] == '-' || head[j] == '_'))
        ++j;
    return head.sliced(start, j - start);
}

}  // namespace

hearth::Result<QString> decode_html(QByteArrayView bytes, const QString& name) {
    const bool bom = bytes.startsWith("\xEF\xBB\xBF") || bytes.startsWith("\xFF\xFE") ||
                     bytes.startsWith("\xFE\xFF");
    const QByteArray charset = bom ? QByteArray() : declared_charset(bytes);
    // A declared single-byte charset is not a guess: Latin-1 and windows-1252 are read.
    if (charset == "iso-8859-1" || charset == "latin1" || charset == "latin-1" ||
        charset == "windows-1252" || charset == "cp1252") {
        if (bytes.contains('\0')) return decode_text(bytes, name);  // the error it gives
        QString text = QString::fromLatin1(bytes);
        for (QChar& c : text) {
            const char16_t u = c.unicode();
            if (u >= 0x80 && u < 0xA0 && kCp1252High[u - 0x80] != 0)
                c = QChar(kCp1252High[u - 0x80]);
        }
        return text;
    }
    return decode_text(bytes, name);
}

QString html_to_text(QStringView html) {
    return Converter(html).run();
}

}  // namespace hearth::documents::detail
