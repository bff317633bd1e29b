// Conversations: the list, their settings, flags and deletion.
#include <cmath>

#include "store/rows.h"
#include "store/store.h"

namespace hearth::store {

using detail::context;
using detail::now_ms;

namespace detail {

Result<void> validate_sampling(const SamplingSettings& s) {
    const auto in_range = [](const std::optional<double>& v, double lo, double hi) {
        return !v || (std::isfinite(*v) && *v >= lo && *v <= hi);
    };
    if (!in_range(s.temperature, 0.0, 10.0))
        return make_error("temperature must be between 0 and 10");
    if (!in_range(s.top_p, 0.0, 1.0)) return make_error("top-p must be between 0 and 1");
    if (!in_range(s.min_p, 0.0, 1.0)) return make_error("min-p must be between 0 and 1");
    if (!in_range(s.repeat_penalty, 0.0, 10.0))
        return make_error("the repeat penalty must be between 0 and 10");
    if (!in_range(s.frequency_penalty, -2.0, 2.0))
        return make_error("the frequency penalty must be between -2 and 2");
    if (!in_range(s.presence_penalty, -2.0, 2.0))
        return make_error("the presence penalty must be between -2 and 2");
    if (s.top_k && *s.top_k < 0) return make_error("top-k must not be negative");
    if (s.max_tokens && *s.max_tokens <= 0)
        return make_error("the reply length limit must be positive");
    if (s.stop) {
        if (s.stop->size() > kMaxStopStrings)
            return make_error("at most " + std::to_string(kMaxStopStrings) +
                              " stop strings are allowed");
        for (const QString& text : *s.stop) {
            if (text.isEmpty()) return make_error("a stop string must not be empty");
            if (text.size() > kMaxStopChars)
                return make_error("a stop string must be at most " + std::to_string(kMaxStopChars) +
                                  " characters");
        }
    }
    return {};
}

Result<void> validate_title(const QString& title) {
    if (title.size() > 500)
        return make_error("a conversation title must be at most 500 characters");
    return {};
}

}  // namespace detail

namespace {

// Binds title, persona, model and sampling to parameters 1..14 (shared by INSERT and UPDATE).
void bind_settings(Statement& stmt, const Conversation& c) {
    stmt.bind(1, c.title).bind(2, c.persona_id).bind(3, c.model_id);
    detail::bind_sampling(stmt, 4, c.sampling);
}

Result<void> validate(const Conversation& c) {
    if (auto rc = detail::validate_title(c.title); !rc) return rc;
    return detail::validate_sampling(c.sampling);
}

}  // namespace

Result<Conversation> Store::create_conversation(const Conversation& draft) {
    if (auto rc = validate(draft); !rc) return rc.error();
    auto stmt = db_.prepare(
        "INSERT INTO conversations (title, persona_id, model_id, " + detail::sampling_columns() +
        ", pinned, archived, created_at, updated_at, forked_from) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?17, "
        "?18)");
    if (!stmt) return stmt.error();
    bind_settings(*stmt, draft);
    stmt->bind(15, draft.pinned).bind(16, draft.archived).bind(17, now_ms());
    stmt->bind(18, draft.forked_from);
    if (auto rc = stmt->run(); !rc)
        return context("creating the conversation (does its persona or model still exist?)",
                       rc.error());
    return conversation(db_.last_insert_id());
}

Result<Conversation> Store::conversation(Id id) {
    auto stmt = db_.prepare("SELECT " + detail::conversation_columns() +
                            " FROM conversations c WHERE c.id = ?");
    if (!stmt) return stmt.error();
    stmt->bind(1, id);
    auto row = stmt->step();
    if (!row) return context("reading a conversation", row.error());
    if (!*row) return make_error("there is no conversation " + std::to_string(id));
    return detail::read_conversation(*stmt);
}

Result<std::vector<Conversation>> Store::conversations(const ConversationFilter& filter) {
    std::string sql = "SELECT " + detail::conversation_columns() + " FROM conversations c";
    switch (filter.archived) {
        case ConversationFilter::Archived::Exclude:
            sql += " WHERE c.archived = 0";
            break;
        case ConversationFilter::Archived::Only:
            sql += " WHERE c.archived = 1";
            break;
        case ConversationFilter::Archived::Include:
            break;
    }
    sql += " ORDER BY c.pinned DESC, c.updated_at DESC, c.id DESC LIMIT ? OFFSET ?";
    auto stmt = db_.prepare(sql);
    if (!stmt) return stmt.error();
    stmt->bind(1, filter.limit < 0 ? std::int64_t{-1} : std::int64_t{filter.limit});
    stmt->bind(2, std::max(0, filter.offset));
    std::vector<Conversation> out;
    while (true) {
        auto row = stmt->step();
        if (!row) return context("reading conversations", row.error());
        if (!*row) break;
        out.push_back(detail::read_conversation(*stmt));
    }
    return out;
}

Result<void> Store::update_conversation(const Conversation& c) {
    if (auto rc = validate(c); !rc) return rc;
    auto stmt = db_.prepare(
        "UPDATE conversations SET title = ?1, persona_id = ?2, model_id = ?3, " +
        detail::sampling_assignments(4) + ", pinned = ?15, archived = ?16 WHERE id = ?17");
    if (!stmt) return stmt.error();
    bind_settings(*stmt, c);
    stmt->bind(15, c.pinned).bind(16, c.archived).bind(17, c.id);
    if (auto rc = stmt->run(); !rc)
        return context("saving the conversation (does its persona or model still exist?)",
                       rc.error());
    if (db_.changes() == 0) return make_error("there is no conversation " + std::to_string(c.id));
    return {};
}

Result<void> Store::rename_conversation(Id id, const QString& title) {
    auto c = conversation(id);
    if (!c) return c.error();
    c->title = title;
    return update_conversation(*c);
}

Result<void> Store::set_pinned(Id id, bool pinned) {
    auto c = conversation(id);
    if (!c) return c.error();
    c->pinned = pinned;
    return update_conversation(*c);
}

Result<void> Store::set_archived(Id id, bool archived) {
    auto c = conversation(id);
    if (!c) return c.error();
    c->archived = archived;
    return update_conversation(*c);
}

Result<void> Store::delete_conversation(Id id) {
    // Replies streaming into it have nowhere to go any more.
    for (auto it = replies_.begin(); it != replies_.end();) {
        auto m = message(it->first);
        it = (!m || m->conversation_id == id) ? replies_.erase(it) : std::next(it);
    }
    auto stmt = db_.prepare("DELETE FROM conversations WHERE id = ?");
    if (!stmt) return stmt.error();
    stmt->bind(1, id);
    if (auto rc = stmt->run(); !rc) return context("deleting the conversation", rc.error());
    if (db_.changes() == 0) return make_error("there is no conversation " + std::to_string(id));
    return {};
}

Result<int> Store::message_count(Id conversation_id) {
    auto stmt = db_.prepare("SELECT count(*) FROM messages WHERE conversation_id = ?");
    if (!stmt) return stmt.error();
    stmt->bind(1, conversation_id);
    auto row = stmt->step();
    if (!row) return context("counting messages", row.error());
    return stmt->column_int(0);
}

}  // namespace hearth::store
