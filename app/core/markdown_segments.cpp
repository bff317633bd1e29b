#include "core/markdown_segments.h"

#include <algorithm>

namespace {

bool is_blank_char(QChar c) {
    return c == u' ' || c == u'\t';
}

qsizetype leading_blanks(QStringView line) {
    qsizetype i = 0;
    while (i < line.size() && is_blank_char(line[i])) ++i;
    return i;
}

qsizetype run_of(QStringView line, qsizetype from, QChar c) {
    qsizetype j = from;
    while (j < line.size() && line[j] == c) ++j;
    return j - from;
}

// A list item's marker ("- ", "* ", "+ ", "1. ", "2) ") at the line's start.
bool starts_list_item(QStringView line) {
    const auto marker_end = [&](qsizetype at) {
        return at == line.size() || is_blank_char(line[at]);
    };
    if (line.isEmpty()) return false;
    if (line[0] == u'-' || line[0] == u'*' || line[0] == u'+') return marker_end(1);
    qsizetype d = 0;
    while (d < line.size() && d < 10 && line[d].isDigit()) ++d;
    return d > 0 && d <= 9 && d < line.size() && (line[d] == u'.' || line[d] == u')') &&
           marker_end(d + 1);
}

// Whether prose may be cut into two segments before `line`, which follows a blank line:
// rendered apart, the two parts look as they do together. True when the line starts a
// block of its own at the margin that cannot continue what came before: not indented
// (a list item's continuation, indented code), not a list item (a loose list's next
// item, whose numbering must go on), not a block quote's next line, not a link
// reference definition (the links that use it may be above).
bool starts_separate_block(QStringView line) {
    if (line.isEmpty() || is_blank_char(line[0])) return false;
    if (line[0] == u'>' || starts_list_item(line)) return false;
    if (line[0] == u'[' && line.contains(QLatin1String("]:"))) return false;
    return true;
}

}  // namespace

std::vector<MarkdownSegment> split_markdown(QStringView markdown) {
    MarkdownSplitter splitter;
    splitter.update(markdown.toString());
    return splitter.segments();
}

bool MarkdownSplitter::update(const QString& text) {
    if (text == source_) return false;
    if (text.size() > source_.size() && text.startsWith(source_)) {
        restore(resume_state_);
        parse_from(text, resume_);
    } else {
        segments_.clear();
        state_ = State{};
        parse_from(text, 0);
    }
    source_ = text;
    return true;
}

void MarkdownSplitter::restore(const State& s) {
    segments_.resize(s.count);
    if (!segments_.empty()) {
        segments_.back().text.truncate(s.last_len);
        if (s.in_code) segments_.back().open = true;
    }
    state_ = s;
}

void MarkdownSplitter::parse_from(QStringView text, qsizetype pos) {
    const auto snapshot = [this] {
        State s = state_;
        s.count = segments_.size();
        s.last_len = segments_.empty() ? 0 : segments_.back().text.size();
        return s;
    };
    const qsizetype n = text.size();
    while (pos < n) {
        resume_ = pos;
        resume_state_ = snapshot();
        const qsizetype nl = text.indexOf(u'\n', pos);
        const qsizetype end = nl < 0 ? n : nl;
        QStringView line = text.sliced(pos, end - pos);
        if (line.endsWith(u'\r')) line.chop(1);
        feed_line(line);
        if (nl < 0) return;  // the last line may still grow: taken up again from its start
        pos = nl + 1;
    }
    resume_ = n;
    resume_state_ = snapshot();
}

void MarkdownSplitter::add_line(QStringView line) {
    QString& t = segments_.back().text;
    if (state_.last_lines > 0) t += u'\n';
    t += line;
    ++state_.last_lines;
}

void MarkdownSplitter::feed_line(QStringView line) {
    const qsizetype i = leading_blanks(line);
    if (state_.in_code) {
        const qsizetype run = run_of(line, i, state_.fence);
        if (run >= state_.fence_len && line.sliced(i + run).trimmed().isEmpty()) {
            segments_.back().open = false;
            state_.in_code = false;
            return;
        }
        add_line(line.sliced(std::min(i, state_.indent)));
        return;
    }
    if (i < line.size() && (line[i] == u'`' || line[i] == u'~')) {
        const QChar c = line[i];
        const qsizetype run = run_of(line, i, c);
        const QStringView info = line.sliced(i + run).trimmed();
        if (run >= 3 && !(c == u'`' && info.contains(u'`'))) {
            qsizetype w = 0;
            while (w < info.size() && !info[w].isSpace()) ++w;
            MarkdownSegment code;
            code.kind = MarkdownSegment::Kind::Code;
            code.language = info.first(w).toString();
            code.open = true;
            segments_.push_back(std::move(code));
            state_.in_code = true;
            state_.fence = c;
            state_.fence_len = run;
            state_.indent = i;
            state_.last_lines = 0;
            state_.pending_blank = 0;
            return;
        }
    }
    const bool in_prose =
        !segments_.empty() && segments_.back().kind == MarkdownSegment::Kind::Text;
    if (i == line.size()) {  // a blank line: written only if more prose follows
        if (in_prose) ++state_.pending_blank;
        return;
    }
    // A new segment: after code, or a new block after a blank line (so a long message
    // is many short segments, and a reply that streams re-lays out only its last one).
    if (!in_prose || (state_.pending_blank > 0 && starts_separate_block(line))) {
        segments_.emplace_back();
        state_.last_lines = 0;
        state_.pending_blank = 0;
    }
    for (; state_.pending_blank > 0; --state_.pending_blank) add_line(QStringView());
    add_line(line);
}
