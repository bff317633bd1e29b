#include "store/chunking.h"

#include <QSet>
#include <QStringList>

#include <algorithm>

namespace hearth::store {

namespace {

struct Paragraph {
    int start = 0;
    int end = 0;    // past its last character (trailing spaces left out)
    int level = 0;  // a heading's (1..6), else 0
    QString title;  // a heading's text
};

constexpr qsizetype kTitleMax = 100;

bool blank(QStringView line) {
    return line.trimmed().isEmpty();
}

bool fence(QStringView line) {
    const QStringView t = line.trimmed();
    return t.startsWith(u"```") || t.startsWith(u"~~~");
}

// "## Refunds" → level 2, "Refunds"; anything else → 0.
int heading_level(QStringView line, QString& title) {
    int level = 0;
    while (level < line.size() && line[level] == u'#') ++level;
    if (level == 0 || level > 6 || level >= line.size() || !line[level].isSpace()) return 0;
    title = line.mid(level).trimmed().toString();
    while (title.endsWith(QLatin1Char('#'))) title.chop(1);  // "## Refunds ##"
    title = title.trimmed();
    return title.isEmpty() ? 0 : level;
}

int trimmed_end(const QString& text, int start, int end) {
    while (end > start && text[end - 1].isSpace()) --end;
    return end;
}

// The text's paragraphs: runs of non-blank lines, a fenced code block whole (its blank
// lines too), each heading line on its own.
std::vector<Paragraph> paragraphs(const QString& text) {
    std::vector<Paragraph> out;
    const int n = static_cast<int>(text.size());
    int open = -1;  // the paragraph being gathered starts here
    bool in_fence = false;
    const auto close = [&](int end) {
        if (open < 0) return;
        const int e = trimmed_end(text, open, end);
        if (e > open) out.push_back({open, e, 0, {}});
        open = -1;
    };
    for (int at = 0; at < n;) {
        int eol = static_cast<int>(text.indexOf(QLatin1Char('\n'), at));
        if (eol < 0) eol = n;
        const QStringView line = QStringView(text).mid(at, eol - at);
        if (in_fence) {
            if (fence(line)) in_fence = false;
        } else if (fence(line)) {
            if (open < 0) open = at;
            in_fence = true;
        } else if (blank(line)) {
            close(at);
        } else if (QString title; const int level = heading_level(line.trimmed(), title)) {
            close(at);
            out.push_back({at, trimmed_end(text, at, eol), level, title});
        } else if (open < 0) {
            open = at;
        }
        at = eol + 1;
    }
    close(n);
    // A first line on its own, short and not a sentence, is the document's title (a text
    // file's, a PDF's first line): a heading over all of it, as "# Title" would be.
    if (!out.empty() && out.front().level == 0) {
        Paragraph& first = out.front();
        const QStringView line = QStringView(text).mid(first.start, first.end - first.start);
        const QChar last = line.isEmpty() ? QChar() : line.back();
        if (out.size() > 1 && !line.contains(u'\n') && line.size() <= kTitleMax && last != u'.' &&
            last != u':' && last != u',' && last != u';') {
            first.level = 1;
            first.title = line.trimmed().toString();
        }
    }
    return out;
}

// Where to cut a long paragraph at most `max` characters after `start`: after a
// sentence's end in its second half, else at its last space, else at `max`.
int cut_point(const QString& text, int start, int end, int max) {
    const int limit = std::min(end, start + max);
    if (limit == end) return end;
    for (int i = limit - 1; i > start + max / 2; --i) {
        const QChar c = text[i];
        if ((c == u'.' || c == u'?' || c == u'!' || c == u'\n') && text[i + 1].isSpace())
            return i + 1;
    }
    for (int i = limit - 1; i > start + max / 4; --i)
        if (text[i].isSpace()) return i + 1;
    return limit;
}

const QSet<QString>& stop_words() {
    static const QSet<QString> words = [] {
        const QStringList list =
            QStringLiteral(
                "a about above after again all am an and any are as at be because been before "
                "being "
                "below between both but by can could did do does doing down during each few for "
                "from further had has have having he her here hers him his how i if in into is it "
                "its itself just me more most my no nor not now of off on once only or other our "
                "ours out over own same she should so some such than that the their theirs them "
                "then there these they this those through to too under until up very was we were "
                "what when where which while who whom why will with would you your yours tell "
                "please know says said")
                .split(QLatin1Char(' '));
        return QSet<QString>(list.begin(), list.end());
    }();
    return words;
}

}  // namespace

std::vector<ChunkSpan> chunk_document(const QString& text) {
    std::vector<ChunkSpan> out;
    std::vector<std::pair<int, QString>> headings;  // the open ones: (level, title)
    const auto heading_path = [&] {
        QStringList parts;
        for (const auto& [level, title] : headings) parts << title;
        return parts.join(QStringLiteral(" \u203A "));
    };
    int open = -1, open_end = -1;
    bool has_body = false;  // the open chunk holds more than a heading
    QString open_heading;
    const auto flush = [&] {
        if (open >= 0) out.push_back({open_heading, open, open_end - open});
        open = -1;
        has_body = false;
    };
    const auto begin = [&](int start) {
        open = start;
        open_heading = heading_path();
    };
    for (const Paragraph& p : paragraphs(text)) {
        if (p.level > 0) {
            flush();
            while (!headings.empty() && headings.back().first >= p.level) headings.pop_back();
            headings.emplace_back(p.level, p.title);
            begin(p.start);
            open_end = p.end;
            continue;
        }
        if (open >= 0 && has_body && p.end - open > kChunkTarget) flush();
        if (p.end - (open >= 0 ? open : p.start) <= kChunkMax) {
            if (open < 0) begin(p.start);
            open_end = p.end;
            has_body = true;
            continue;
        }
        // Too long for one chunk: its pieces (the first after a heading keeps it).
        int at = p.start;
        if (open >= 0 && has_body) flush();
        while (at < p.end) {
            const int from = open >= 0 ? open : at;
            if (open < 0) begin(at);
            const int cut = std::max(cut_point(text, from, p.end, kChunkMax), at + 1);
            open_end = trimmed_end(text, from, cut);
            has_body = true;
            at = cut;
            while (at < p.end && text[at].isSpace()) ++at;
            if (at < p.end) flush();
        }
    }
    flush();
    return out;
}

QString to_retrieval_query(const QString& text) {
    QStringList terms;
    QSet<QString> seen;
    const int n = static_cast<int>(text.size());
    for (int i = 0; i < n && terms.size() < 32;) {
        if (!text[i].isLetterOrNumber()) {
            ++i;
            continue;
        }
        int j = i;
        while (j < n && text[j].isLetterOrNumber()) ++j;
        const QString word = text.mid(i, j - i).toLower();
        i = j;
        if (word.size() < 2 || stop_words().contains(word) || seen.contains(word)) continue;
        seen.insert(word);
        terms << QLatin1Char('"') + word + QLatin1Char('"');
    }
    return terms.join(QStringLiteral(" OR "));
}

}  // namespace hearth::store
