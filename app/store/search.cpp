// Full-text search over messages with an FTS5 index (see schema.cpp, v2).
#include "store/search.h"

#include <algorithm>
#include <map>

#include "store/rows.h"
#include "store/store.h"

namespace hearth::store {

using detail::context;

namespace {

bool searchable(const QString& term) {
    for (QChar ch : term)
        if (ch.isLetterOrNumber()) return true;
    return false;
}

// Letters and digits at the end of the term: the part a prefix search extends.
int last_word_length(const QString& term) {
    int n = 0;
    for (qsizetype i = term.size(); i > 0 && term[i - 1].isLetterOrNumber(); --i) ++n;
    return n;
}

QString quoted(QString term) {
    term.replace(QLatin1Char('"'), QLatin1String("\"\""));
    return QLatin1Char('"') + term + QLatin1Char('"');
}

}  // namespace

QString to_fts_query(const QString& typed) {
    QStringList terms;
    const qsizetype n = typed.size();
    qsizetype i = 0;
    while (i < n) {
        if (typed[i].isSpace()) {
            ++i;
            continue;
        }
        QString term;
        bool phrase = false;
        if (typed[i] == QLatin1Char('"')) {
            // A phrase runs to the closing quote, or to the end when there is none.
            const qsizetype close = typed.indexOf(QLatin1Char('"'), i + 1);
            const qsizetype end = close < 0 ? n : close;
            term = typed.mid(i + 1, end - i - 1);
            i = close < 0 ? n : close + 1;
            phrase = true;
        } else {
            const qsizetype start = i;
            while (i < n && !typed[i].isSpace() && typed[i] != QLatin1Char('"')) ++i;
            term = typed.mid(start, i - start);
        }
        bool prefix = false;
        // word* (or "a phrase"*) asks for a prefix match on the last word.
        if (!phrase && term.endsWith(QLatin1Char('*'))) {
            while (term.endsWith(QLatin1Char('*'))) term.chop(1);
            prefix = true;
        } else if (phrase && i < n && typed[i] == QLatin1Char('*')) {
            ++i;
            prefix = true;
        }
        term.remove(QLatin1Char('*'));  // FTS5 reads * only after a closing quote
        if (!searchable(term)) continue;
        // A one-letter prefix would merge the lists of nearly every word; match the word.
        if (prefix && last_word_length(term) < 2) prefix = false;
        terms << quoted(term) + (prefix ? QStringLiteral("*") : QString());
    }
    return terms.join(QLatin1Char(' '));
}

MarkedSnippet parse_marked_snippet(const QString& marked) {
    MarkedSnippet out;
    out.text.reserve(marked.size());
    int open_at = -1;
    for (QChar ch : marked) {
        if (ch == QChar(kHighlightOpen)) {
            if (open_at < 0) open_at = static_cast<int>(out.text.size());
        } else if (ch == QChar(kHighlightClose)) {
            if (open_at >= 0 && out.text.size() > open_at)
                out.highlights.emplace_back(open_at, static_cast<int>(out.text.size()) - open_at);
            open_at = -1;
        } else {
            out.text += ch;
        }
    }
    return out;
}

QString mark_highlights(const QString& text, const std::vector<std::pair<int, int>>& highlights,
                        const QString& open, const QString& close) {
    QString out;
    int at = 0;
    for (const auto& [start, length] : highlights) {
        if (start < at || start + length > text.size()) continue;  // malformed: skip it
        out += text.mid(at, start - at) + open + text.mid(start, length) + close;
        at = start + length;
    }
    return out + text.mid(at);
}

Result<std::vector<SearchHit>> Store::search(const QString& typed, const SearchOptions& options) {
    const QString query = to_fts_query(typed);
    if (query.isEmpty() || options.limit == 0) return std::vector<SearchHit>{};
    const int limit = options.limit < 0 ? 1000 : options.limit;

    // Step 1: which messages. Ranking costs time in proportion to the matches: bm25 needs
    // each phrase's count over the whole index, and a word found in most messages has
    // ~100,000 of them, while bm25 hardly tells such matches apart. So when there are at
    // most options.rank_at_most matches they are ranked by bm25, and beyond that the newest
    // come first, which FTS5 yields cheaply by walking its lists newest first and stopping.
    const int rank_at_most = std::max(0, options.rank_at_most);
    std::string from = " FROM messages_fts f";
    // CROSS JOIN keeps the full-text index as the outer loop.
    if (options.conversation_id || !options.include_archived)
        from += " CROSS JOIN messages m ON m.id = f.rowid";
    if (!options.include_archived)
        from += " CROSS JOIN conversations c ON c.id = m.conversation_id";
    from += " WHERE messages_fts MATCH ?1";
    if (options.conversation_id) from += " AND m.conversation_id = ?4";
    if (!options.include_archived) from += " AND c.archived = 0";
    const auto prepare = [&](const std::string& sql) -> Result<Statement> {
        auto stmt = db_.prepare(sql);
        if (!stmt) return stmt.error();
        // Each statement uses some of ?1..?4; binding one it lacks would be an error.
        const int n = stmt->parameter_count();
        stmt->bind(1, query);
        if (n >= 2) stmt->bind(2, rank_at_most + 1);
        if (n >= 3) stmt->bind(3, limit);
        if (options.conversation_id) stmt->bind(4, *options.conversation_id);
        return stmt;
    };
    auto probe = prepare("SELECT count(*) FROM (SELECT 1" + from + " LIMIT ?2)");
    if (!probe) return probe.error();
    if (auto row = probe->step(); !row) return context("searching messages", row.error());
    const bool ranked = probe->column_int64(0) <= rank_at_most;
    auto rank = prepare(ranked ? "SELECT f.rowid, bm25(messages_fts) AS score" + from +
                                     " ORDER BY score, f.rowid DESC LIMIT ?3"
                               : "SELECT f.rowid, 0.0" + from + " ORDER BY f.rowid DESC LIMIT ?3");
    if (!rank) return rank.error();
    std::vector<SearchHit> hits;
    std::map<Id, std::size_t> position;
    while (true) {
        auto row = rank->step();
        if (!row) return context("searching messages", row.error());
        if (!*row) break;
        SearchHit hit;
        hit.message_id = rank->column_int64(0);
        hit.score = rank->column_double(1);
        position.emplace(hit.message_id, hits.size());
        hits.push_back(std::move(hit));
    }
    if (hits.empty()) return hits;

    // Step 2: snippets and details for the results only (snippet() needs the match).
    // FTS5 walks the matches between the lowest and highest result id, and the +IN test
    // (the + keeps it from becoming 50 separate index lookups, each re-running the match)
    // lets snippet() run for the results alone.
    Id lowest = hits.front().message_id, highest = lowest;
    for (const SearchHit& hit : hits) {
        lowest = std::min(lowest, hit.message_id);
        highest = std::max(highest, hit.message_id);
    }
    std::string details =
        "SELECT f.rowid, snippet(messages_fts, 0, ?2, ?3, ?4, 16), m.conversation_id, m.role, "
        "m.created_at, c.title FROM messages_fts f CROSS JOIN messages m ON m.id = f.rowid "
        "CROSS JOIN conversations c ON c.id = m.conversation_id "
        "WHERE messages_fts MATCH ?1 AND f.rowid BETWEEN ?5 AND ?6 AND +f.rowid IN (";
    for (std::size_t i = 0; i < hits.size(); ++i)
        details += (i ? ", ?" : "?") + std::to_string(7 + i);
    details += ")";
    auto stmt = db_.prepare(details);
    if (!stmt) return stmt.error();
    stmt->bind(1, query)
        .bind(2, QString(QChar(kHighlightOpen)))
        .bind(3, QString(QChar(kHighlightClose)));
    stmt->bind(4, QStringLiteral("\u2026")).bind(5, lowest).bind(6, highest);
    for (std::size_t i = 0; i < hits.size(); ++i)
        stmt->bind(static_cast<int>(7 + i), hits[i].message_id);
    while (true) {
        auto row = stmt->step();
        if (!row) return context("searching messages", row.error());
        if (!*row) break;
        SearchHit& hit = hits[position.at(stmt->column_int64(0))];
        MarkedSnippet snippet = parse_marked_snippet(stmt->column_text(1));
        hit.snippet = std::move(snippet.text);
        hit.highlights = std::move(snippet.highlights);
        hit.conversation_id = stmt->column_int64(2);
        hit.role = role_from_name(stmt->column_text(3)).value_or(Role::User);
        hit.created_at = detail::from_ms(stmt->column_int64(4));
        hit.conversation_title = stmt->column_text(5);
    }
    // A message deleted by another connection between the two steps has no details.
    std::erase_if(hits, [](const SearchHit& hit) { return hit.conversation_id == 0; });
    return hits;
}

}  // namespace hearth::store
