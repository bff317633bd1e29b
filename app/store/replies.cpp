// Streaming replies. The engine calls update_reply for every token; writing each one
// would cost a WAL commit (and an fsync with full_sync) per token, so updates are kept in
// memory and written once reply_flush_interval has passed since the oldest unwritten one.
// A crash therefore loses at most that interval of a reply, and never a finished one.
#include "common/log.h"
#include "store/rows.h"
#include "store/store.h"

namespace hearth::store {

using detail::context;
using detail::now_ms;

Result<Id> Store::begin_reply(Id conversation_id, std::optional<Id> parent,
                              const QString& token_fingerprint) {
    auto tx = Transaction::begin(db_);
    if (!tx) return context("starting the reply", tx.error());
    MessageDraft draft;
    draft.role = Role::Assistant;
    draft.token_fingerprint = token_fingerprint;
    auto m = insert_message(conversation_id, parent, draft, MessageState::Streaming);
    if (!m) return m.error();
    if (auto rc = tx->commit(); !rc) return context("starting the reply", rc.error());
    replies_[m->id] = PendingReply{};
    return m->id;
}

Result<bool> Store::update_reply(Id message_id, const QString& text,
                                 std::span<const std::int32_t> token_ids) {
    auto it = replies_.find(message_id);
    if (it == replies_.end())
        return make_error("message " + std::to_string(message_id) +
                          " is not a reply being streamed");
    if (auto rc = detail::validate_message(text, token_ids.size()); !rc) return rc.error();
    PendingReply& reply = it->second;
    reply.text = text;
    reply.token_ids.assign(token_ids.begin(), token_ids.end());
    const auto t = now();
    if (!reply.dirty) {
        reply.dirty = true;
        reply.dirty_since = t;
    }
    if (t - reply.dirty_since < options_.reply_flush_interval) return false;
    if (auto rc = write_reply(message_id, reply); !rc) return rc.error();
    return true;
}

Result<void> Store::write_reply(Id id, PendingReply& reply) {
    auto stmt = db_.prepare(
        "UPDATE messages SET content = ?, token_ids = ?, updated_at = ? "
        "WHERE id = ? AND state = 'streaming'");
    if (!stmt) return stmt.error();
    stmt->bind(1, reply.text).bind_blob(2, encode_token_ids(reply.token_ids));
    stmt->bind(3, now_ms()).bind(4, id);
    if (auto rc = stmt->run(); !rc) {
        // Retry one interval later rather than on every token (a full disk stays full).
        reply.dirty_since = now();
        return context("saving the reply", rc.error());
    }
    if (db_.changes() == 0) {
        replies_.erase(id);  // deleted, or finished by someone else: stop tracking it
        return make_error("message " + std::to_string(id) + " is no longer a reply being streamed");
    }
    reply.dirty = false;
    return {};
}

Result<void> Store::reopen_reply(Id message_id) {
    auto m = message(message_id);
    if (!m) return context("continuing the reply", m.error());
    const std::string which = "message " + std::to_string(message_id);
    if (m->role != Role::Assistant)
        return make_error(which + " is not a reply: only replies can be continued");
    if (m->state == MessageState::Failed)
        return make_error(which + " failed: regenerate it instead of continuing it");
    if (m->state == MessageState::Streaming && replies_.contains(message_id))
        return {};  // still streaming here: nothing to reopen
    if (m->state != MessageState::Streaming) {
        auto stmt =
            db_.prepare("UPDATE messages SET state = 'streaming', updated_at = ?1 WHERE id = ?2");
        if (!stmt) return stmt.error();
        stmt->bind(1, now_ms()).bind(2, message_id);
        if (auto rc = stmt->run(); !rc) return context("continuing the reply", rc.error());
    }
    // update_reply and finish_reply work on the replies this store streams; this one
    // starts from the text and token ids it has.
    PendingReply reply;
    reply.text = m->text;
    reply.token_ids = m->token_ids;
    replies_[message_id] = std::move(reply);
    return {};
}

Result<void> Store::finish_reply(Id message_id, const GenerationStats& stats,
                                 MessageState end_state) {
    if (end_state == MessageState::Streaming)
        return make_error("internal error: a finished reply cannot still be streaming");
    auto it = replies_.find(message_id);
    auto tx = Transaction::begin(db_);
    if (!tx) return context("saving the reply", tx.error());
    auto m = message(message_id);
    if (!m) return m.error();
    if (m->state != MessageState::Streaming && m->state != MessageState::Interrupted)
        return make_error("message " + std::to_string(message_id) +
                          " is not a reply being streamed");
    // A reply begun before a restart (now Interrupted) keeps the text it had.
    const bool have_text = it != replies_.end();
    auto stmt = db_.prepare(
        "UPDATE messages SET content = CASE WHEN ?1 THEN ?2 ELSE content END, "
        "token_ids = CASE WHEN ?1 THEN ?3 ELSE token_ids END, state = ?4, updated_at = ?5, "
        "ttft_ms = ?6, tokens_per_second = ?7, prompt_tokens_cached = ?8, "
        "prompt_tokens_computed = ?9, generated_tokens = ?10, seed = ?12, finish_reason = ?13, "
        "reasoning_ms = ?14, error = ?15, messages_dropped = ?16, prompt_tokens_shifted = ?17, "
        "prompt_tokens_loaded = ?18, draft_tokens = ?19, draft_accepted = ?20 WHERE id = ?11");
    if (!stmt) return stmt.error();
    stmt->bind(1, have_text);
    if (have_text)
        stmt->bind(2, it->second.text).bind_blob(3, encode_token_ids(it->second.token_ids));
    else
        stmt->bind_null(2).bind_null(3);
    stmt->bind(4, state_name(end_state)).bind(5, now_ms());
    stmt->bind(6, stats.ttft_ms)
        .bind(7, stats.tokens_per_second)
        .bind(8, stats.prompt_tokens_cached);
    stmt->bind(9, stats.prompt_tokens_computed)
        .bind(10, stats.generated_tokens)
        .bind(11, message_id);
    stmt->bind(12, detail::seed_to_column(stats.seed));
    if (stats.finish_reason)
        stmt->bind(13, finish_reason_name(*stats.finish_reason));
    else
        stmt->bind_null(13);
    stmt->bind(14, stats.reasoning_ms);
    if (stats.error)
        stmt->bind(15, *stats.error);
    else
        stmt->bind_null(15);
    stmt->bind(16, stats.messages_dropped).bind(17, stats.prompt_tokens_shifted);
    stmt->bind(18, stats.prompt_tokens_loaded);
    stmt->bind(19, stats.draft_tokens).bind(20, stats.draft_accepted);
    if (auto rc = stmt->run(); !rc) return context("saving the reply", rc.error());
    auto touch = db_.prepare("UPDATE conversations SET updated_at = ? WHERE id = ?");
    if (!touch) return touch.error();
    touch->bind(1, now_ms()).bind(2, m->conversation_id);
    if (auto rc = touch->run(); !rc) return context("saving the reply", rc.error());
    if (auto rc = tx->commit(); !rc) return context("saving the reply", rc.error());
    if (have_text) replies_.erase(it);
    return {};
}

Result<int> Store::flush_replies(bool all) {
    int written = 0;
    std::optional<Error> first_error;
    const auto t = now();
    // Collect first: write_reply may erase entries.
    std::vector<Id> due;
    for (const auto& [id, reply] : replies_)
        if (reply.dirty && (all || t - reply.dirty_since >= options_.reply_flush_interval))
            due.push_back(id);
    for (Id id : due) {
        auto it = replies_.find(id);
        if (it == replies_.end()) continue;
        if (auto rc = write_reply(id, it->second); !rc) {
            if (!first_error) first_error = rc.error();
        } else {
            ++written;
        }
    }
    if (first_error) return *first_error;
    return written;
}

bool Store::has_pending_replies() const {
    for (const auto& entry : replies_)
        if (entry.second.dirty) return true;
    return false;
}

}  // namespace hearth::store
