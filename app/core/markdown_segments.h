// Markdown split into prose and fenced code blocks, for the chat's per-block rendering
// (MessageListModel's `segments` role, ui/MessageDelegate.qml).
//
// A fence is a line of three or more backticks or tildes (any indentation: fences inside
// list items are indented), with an optional info string whose first word is the block's
// language (a backtick fence's info string has no backticks, so ```x``` on one line is
// inline code). The block ends at a line of the same character, at least as long, and
// nothing else; without one it runs to the end of the text and is `open` (a reply still
// streaming). Line endings (LF or CRLF) come out as '\n'. A code segment's text is its
// lines without the fences, each with up to the opening fence's indentation removed.
// Prose keeps its Markdown as written, without blank lines at either end; prose that is
// only blank lines is left out. Indented code blocks stay in the prose. Prose is cut into
// blocks at blank lines where the two sides render the same apart as together (the next
// line starts at the margin and is not a list item, a quote or a link definition), so a
// long message is many short segments that a view lays out once each.
#pragma once

#include <QString>
#include <QStringView>

#include <vector>

struct MarkdownSegment {
    enum class Kind { Text, Code };
    Kind kind = Kind::Text;
    QString text;
    QString language;   // code: the first word of the info string (may be empty)
    bool open = false;  // code: no closing fence (yet)

    friend bool operator==(const MarkdownSegment&, const MarkdownSegment&) = default;
};

// The segments of markdown, in order.
std::vector<MarkdownSegment> split_markdown(QStringView markdown);

// split_markdown with a memory: when the text extends the text of the previous update
// (a reply streaming), only its last line on is split again, so a token costs the length
// of the tail (and of the last segment's text), not of the whole text.
class MarkdownSplitter {
  public:
    // false when text is the text of the previous update (the segments are unchanged).
    bool update(const QString& text);
    const std::vector<MarkdownSegment>& segments() const { return segments_; }

  private:
    // The parse at a line's start: enough to take it up again from there.
    struct State {
        size_t count = 0;        // segments
        qsizetype last_len = 0;  // the text length of the last one
        int last_lines = 0;      // and its lines (code: all; prose: those written)
        int pending_blank = 0;   // prose: blank lines not written yet (none at the end)
        bool in_code = false;
        QChar fence;
        qsizetype fence_len = 0;
        qsizetype indent = 0;
    };

    void restore(const State& s);
    void parse_from(QStringView text, qsizetype pos);
    void feed_line(QStringView line);
    void add_line(QStringView line);

    std::vector<MarkdownSegment> segments_;
    State state_;
    QString source_;        // the text of the last update
    qsizetype resume_ = 0;  // where its last line begins (or its end after a line break)
    State resume_state_;    // the state there
};
