// Messages as a tree: a thread is the path from a first message to a leaf, variants are
// siblings, and each message remembers which child was shown last (active_child_id), so
// paging back to a branch restores the choices made further down it.
#include <algorithm>

#include "store/rows.h"
#include "store/store.h"

namespace hearth::store {

using detail::context;
using detail::now_ms;

namespace detail {

Result<void> validate_message(const QString& text, std::size_t token_count) {
    if (text.size() > kMaxMessageChars)
        return make_error("a message must be at most 16 Mi characters");
    if (token_count > kMaxMessageTokens)
        return make_error("a message must have at most 4 Mi token ids");
    return {};
}

}  // namespace detail

namespace {

// Guards the walks below against a damaged tree (a cycle cannot be built through the API).
constexpr int kMaxDepth = 1'000'000;

Result<void> touch_conversation(Database& db, Id conversation_id) {
    auto stmt = db.prepare("UPDATE conversations SET updated_at = ? WHERE id = ?");
    if (!stmt) return stmt.error();
    stmt->bind(1, now_ms()).bind(2, conversation_id);
    return stmt->run();
}

}  // namespace

Result<Message> Store::message(Id id) {
    auto stmt = db_.prepare(std::string("SELECT ") + detail::kMessageColumns +
                            " FROM messages m WHERE m.id = ?");
    if (!stmt) return stmt.error();
    stmt->bind(1, id);
    auto row = stmt->step();
    if (!row) return context("reading a message", row.error());
    if (!*row) return make_error("there is no message " + std::to_string(id));
    return detail::read_message(*stmt);
}

Result<Message> Store::insert_message(Id conversation_id, std::optional<Id> parent,
                                      const MessageDraft& draft, MessageState state) {
    if (auto rc = detail::validate_message(draft.text, draft.token_ids.size()); !rc)
        return rc.error();
    auto fingerprint = detail::normalize_fingerprint(draft.token_fingerprint);
    if (!fingerprint) return fingerprint.error();
    if (parent) {
        auto p = message(*parent);
        if (!p) return p.error();
        if (p->conversation_id != conversation_id)
            return make_error("message " + std::to_string(*parent) +
                              " belongs to another conversation");
    }
    auto stmt = db_.prepare(
        "INSERT INTO messages (conversation_id, parent_id, role, content, token_ids, "
        "token_fingerprint, state, created_at, updated_at, sources) VALUES (?1, ?2, ?3, ?4, ?5, "
        "?6, ?7, ?8, ?8, ?9)");
    if (!stmt) return stmt.error();
    stmt->bind(1, conversation_id)
        .bind(2, parent)
        .bind(3, role_name(draft.role))
        .bind(4, draft.text);
    stmt->bind_blob(5, encode_token_ids(draft.token_ids)).bind(6, *fingerprint);
    stmt->bind(7, state_name(state)).bind(8, now_ms());
    if (draft.sources.empty())
        stmt->bind_null(9);
    else
        stmt->bind(9, detail::sources_to_json(draft.sources));
    if (auto rc = stmt->run(); !rc)
        return context("saving the message (does the conversation still exist?)", rc.error());
    const Id id = db_.last_insert_id();
    if (auto rc = show_leaf(conversation_id, id); !rc) return rc.error();
    if (auto rc = touch_conversation(db_, conversation_id); !rc)
        return context("saving the message", rc.error());
    return message(id);
}

Result<Message> Store::add_message(Id conversation_id, std::optional<Id> parent,
                                   const MessageDraft& draft) {
    auto tx = Transaction::begin(db_);
    if (!tx) return context("saving the message", tx.error());
    auto m = insert_message(conversation_id, parent, draft, MessageState::Complete);
    if (!m) return m.error();
    if (auto rc = tx->commit(); !rc) return context("saving the message", rc.error());
    return m;
}

Result<Message> Store::append_message(Id conversation_id, const MessageDraft& draft) {
    auto tx = Transaction::begin(db_);
    if (!tx) return context("saving the message", tx.error());
    auto parent = current_leaf(conversation_id);
    if (!parent) return parent.error();
    auto m = insert_message(conversation_id, *parent, draft, MessageState::Complete);
    if (!m) return m.error();
    if (auto rc = tx->commit(); !rc) return context("saving the message", rc.error());
    return m;
}

Result<Message> Store::edit_message(Id message_id, const MessageDraft& draft) {
    auto tx = Transaction::begin(db_);
    if (!tx) return context("saving the edit", tx.error());
    auto original = message(message_id);
    if (!original) return original.error();
    MessageDraft edited = draft;
    edited.role = original->role;  // an edit is a variant of the same speaker's message
    auto m = insert_message(original->conversation_id, original->parent_id, edited,
                            MessageState::Complete);
    if (!m) return m.error();
    if (auto rc = tx->commit(); !rc) return context("saving the edit", rc.error());
    return m;
}

Result<void> Store::delete_message(Id message_id) {
    auto tx = Transaction::begin(db_);
    if (!tx) return context("deleting the message", tx.error());
    auto m = message(message_id);
    if (!m) return m.error();
    auto stmt = db_.prepare("DELETE FROM messages WHERE id = ?");
    if (!stmt) return stmt.error();
    stmt->bind(1, message_id);
    if (auto rc = stmt->run(); !rc) return context("deleting the message", rc.error());
    // When the thread on screen lost its leaf (SET NULL), show the nearest branch left.
    auto c = conversation(m->conversation_id);
    if (!c) return c.error();
    if (!c->active_leaf_id) {
        std::optional<Id> anchor = m->parent_id;
        if (!anchor) {
            auto roots = db_.prepare(
                "SELECT max(id) FROM messages WHERE conversation_id = ? AND parent_id IS NULL");
            if (!roots) return roots.error();
            roots->bind(1, m->conversation_id);
            if (auto row = roots->step(); !row) return row.error();
            anchor = roots->column_optional_int64(0);
        }
        if (anchor) {
            auto leaf = descend(*anchor);
            if (!leaf) return leaf.error();
            if (auto rc = show_leaf(m->conversation_id, *leaf); !rc) return rc;
        }
    }
    if (auto rc = tx->commit(); !rc) return context("deleting the message", rc.error());
    // Streaming replies in the deleted branch have nowhere to go any more.
    for (auto it = replies_.begin(); it != replies_.end();)
        it = message(it->first) ? std::next(it) : replies_.erase(it);
    return {};
}

Result<Id> Store::descend(Id message_id) {
    auto stmt = db_.prepare(
        "SELECT COALESCE(m.active_child_id, (SELECT max(c.id) FROM messages c WHERE c.parent_id = "
        "m.id)) "
        "FROM messages m WHERE m.id = ?");
    if (!stmt) return stmt.error();
    Id current = message_id;
    for (int depth = 0; depth < kMaxDepth; ++depth) {
        stmt->reset();
        stmt->bind(1, current);
        auto row = stmt->step();
        if (!row) return context("reading the thread", row.error());
        if (!*row) return make_error("there is no message " + std::to_string(current));
        if (stmt->is_null(0)) return current;
        current = stmt->column_int64(0);
    }
    return make_error("the conversation's messages are damaged (a thread never ends)");
}

Result<void> Store::show_leaf(Id conversation_id, Id leaf_id) {
    // Every ancestor of the leaf must remember the child on the way to it. The thread on
    // screen already does (each call leaves it so), so the walk up from the new leaf can
    // stop at the first message known to be on it: the old leaf or its parent, which is
    // where appends, regenerations and most edits attach, making them O(1).
    auto old_leaf = db_.prepare(
        "SELECT c.active_leaf_id, m.parent_id FROM conversations c "
        "LEFT JOIN messages m ON m.id = c.active_leaf_id WHERE c.id = ?");
    if (!old_leaf) return old_leaf.error();
    old_leaf->bind(1, conversation_id);
    auto found = old_leaf->step();
    if (!found) return context("showing the thread", found.error());
    if (!*found) return make_error("there is no conversation " + std::to_string(conversation_id));
    const std::optional<Id> shown = old_leaf->column_optional_int64(0);
    const std::optional<Id> shown_parent = old_leaf->column_optional_int64(1);

    auto up = db_.prepare(
        "SELECT m.parent_id, p.active_child_id FROM messages m "
        "LEFT JOIN messages p ON p.id = m.parent_id WHERE m.id = ?");
    auto remember = db_.prepare("UPDATE messages SET active_child_id = ? WHERE id = ?");
    if (!up) return up.error();
    if (!remember) return remember.error();
    Id child = leaf_id;
    for (int depth = 0; depth < kMaxDepth; ++depth) {
        up->reset();
        up->bind(1, child);
        auto row = up->step();
        if (!row) return context("showing the thread", row.error());
        if (!*row) return make_error("there is no message " + std::to_string(child));
        if (up->is_null(0)) break;  // reached the first message
        const Id parent = up->column_int64(0);
        if (up->column_optional_int64(1) != std::optional<Id>(child)) {
            remember->reset();
            remember->bind(1, child).bind(2, parent);
            if (auto rc = remember->run(); !rc) return context("showing the thread", rc.error());
        }
        if (parent == shown || parent == shown_parent) break;  // the rest is on screen already
        child = parent;
    }
    auto leaf = db_.prepare("UPDATE conversations SET active_leaf_id = ? WHERE id = ?");
    if (!leaf) return leaf.error();
    leaf->bind(1, leaf_id).bind(2, conversation_id);
    if (auto rc = leaf->run(); !rc) return context("showing the thread", rc.error());
    return {};
}

Result<std::optional<Id>> Store::current_leaf(Id conversation_id) {
    auto c = conversation(conversation_id);
    if (!c) return c.error();
    if (c->active_leaf_id) return c->active_leaf_id;
    // No leaf recorded (an old or repaired database): the newest first message's
    // remembered branch, found without writing, so read-only stores can do it too.
    auto roots =
        db_.prepare("SELECT max(id) FROM messages WHERE conversation_id = ? AND parent_id IS NULL");
    if (!roots) return roots.error();
    roots->bind(1, conversation_id);
    if (auto row = roots->step(); !row) return row.error();
    if (roots->is_null(0)) return std::optional<Id>();
    auto found = descend(roots->column_int64(0));
    if (!found) return found.error();
    return std::optional<Id>(*found);
}

Result<std::vector<ThreadEntry>> Store::active_thread(Id conversation_id) {
    auto leaf = current_leaf(conversation_id);
    if (!leaf) return leaf.error();
    if (!*leaf) return std::vector<ThreadEntry>{};
    auto stmt = db_.prepare(std::string(R"sql(
        WITH RECURSIVE path (id, depth) AS (
          SELECT ?1, 0
          UNION ALL
          SELECT m.parent_id, p.depth + 1 FROM messages m JOIN path p ON m.id = p.id
          WHERE m.parent_id IS NOT NULL AND p.depth < ?2
        )
        SELECT )sql") + detail::kMessageColumns +
                            R"sql(,
          (SELECT count(*) FROM messages s WHERE s.conversation_id = m.conversation_id
             AND s.parent_id IS m.parent_id AND s.id < m.id),
          (SELECT count(*) FROM messages s WHERE s.conversation_id = m.conversation_id
             AND s.parent_id IS m.parent_id)
        FROM path p JOIN messages m ON m.id = p.id ORDER BY p.depth DESC)sql");
    if (!stmt) return stmt.error();
    stmt->bind(1, **leaf).bind(2, kMaxDepth);
    std::vector<ThreadEntry> out;
    while (true) {
        auto row = stmt->step();
        if (!row) return context("reading the thread", row.error());
        if (!*row) break;
        auto m = detail::read_message(*stmt);
        if (!m) return m.error();
        out.push_back({std::move(*m), stmt->column_int(detail::kMessageColumnCount),
                       stmt->column_int(detail::kMessageColumnCount + 1)});
    }
    return out;
}

Result<std::vector<Message>> Store::all_messages(Id conversation_id) {
    auto stmt = db_.prepare(std::string("SELECT ") + detail::kMessageColumns +
                            " FROM messages m WHERE m.conversation_id = ? ORDER BY m.id");
    if (!stmt) return stmt.error();
    stmt->bind(1, conversation_id);
    std::vector<Message> out;
    while (true) {
        auto row = stmt->step();
        if (!row) return context("reading messages", row.error());
        if (!*row) break;
        auto m = detail::read_message(*stmt);
        if (!m) return m.error();
        out.push_back(std::move(*m));
    }
    return out;
}

Result<std::vector<Id>> Store::variants(Id message_id) {
    auto stmt = db_.prepare(
        "SELECT s.id FROM messages m JOIN messages s ON s.conversation_id = m.conversation_id "
        "AND s.parent_id IS m.parent_id WHERE m.id = ? ORDER BY s.id");
    if (!stmt) return stmt.error();
    stmt->bind(1, message_id);
    std::vector<Id> out;
    while (true) {
        auto row = stmt->step();
        if (!row) return context("reading variants", row.error());
        if (!*row) break;
        out.push_back(stmt->column_int64(0));
    }
    if (out.empty()) return make_error("there is no message " + std::to_string(message_id));
    return out;
}

Result<Id> Store::select_message(Id message_id) {
    auto tx = Transaction::begin(db_);
    if (!tx) return context("showing the variant", tx.error());
    auto m = message(message_id);
    if (!m) return m.error();
    auto leaf = descend(message_id);
    if (!leaf) return leaf.error();
    if (auto rc = show_leaf(m->conversation_id, *leaf); !rc) return rc.error();
    if (auto rc = tx->commit(); !rc) return context("showing the variant", rc.error());
    return *leaf;
}

Result<Id> Store::page_variant(Id message_id, int delta) {
    auto ids = variants(message_id);
    if (!ids) return ids.error();
    const auto here = std::find(ids->begin(), ids->end(), message_id) - ids->begin();
    const auto target = here + delta;
    if (target < 0 || target >= static_cast<std::ptrdiff_t>(ids->size()))
        return make_error("there is no variant " + std::to_string(target + 1) + " of " +
                          std::to_string(ids->size()));
    const Id chosen = (*ids)[static_cast<std::size_t>(target)];
    if (auto rc = select_message(chosen); !rc) return rc.error();
    return chosen;
}

}  // namespace hearth::store
