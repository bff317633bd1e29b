// Full-text search helpers, exposed for tests and for callers that show snippets.
#pragma once

#include <utility>
#include <vector>

#include <QString>

namespace hearth::store {

// Turns what a person typed into an FTS5 query that can never be a syntax error and never
// uses FTS5 operators by accident: each word becomes a quoted term, "quoted text" a phrase
// and word* a prefix (from two letters; a* is the word "a"); terms without a letter or
// digit are dropped. All terms must match.
// Returns an empty string when nothing searchable is left.
QString to_fts_query(const QString& typed);

// A snippet and its highlighted ranges, from text marked with kHighlightOpen/Close.
struct MarkedSnippet {
    QString text;
    std::vector<std::pair<int, int>> highlights;  // (start, length) in text
};
inline constexpr char16_t kHighlightOpen = u'\uE000';  // private-use: never shown
inline constexpr char16_t kHighlightClose = u'\uE001';
MarkedSnippet parse_marked_snippet(const QString& marked);

// The snippet with each highlight wrapped in open/close (e.g. "[" "]" or ANSI bold).
QString mark_highlights(const QString& text, const std::vector<std::pair<int, int>>& highlights,
                        const QString& open, const QString& close);

}  // namespace hearth::store
