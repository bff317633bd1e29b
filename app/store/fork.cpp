// Forks: a new conversation holding a copy of one thread up to a chosen message. The copy
// keeps every message's text, token ids and statistics as they are, so the fork's next turn
// asks for exactly the prompt the original would have: the KV prefix cache (and its disk
// tier) serves it, and a fork starts with nothing to compute.
#include "store/rows.h"
#include "store/store.h"

namespace hearth::store {

using detail::context;
using detail::now_ms;

namespace {

constexpr int kMaxDepth = 1'000'000;  // as messages.cpp: a damaged tree cannot loop us

}  // namespace

Result<Conversation> Store::fork_conversation(Id message_id, const QString& title) {
    if (auto rc = detail::validate_title(title); !rc) return rc.error();
    auto tx = Transaction::begin(db_);
    if (!tx) return context("forking the conversation", tx.error());
    auto last = message(message_id);
    if (!last) return last.error();
    if (last->state == MessageState::Streaming)
        return make_error("that reply is still being written: fork it once it has ended");
    auto source = conversation(last->conversation_id);
    if (!source) return source.error();

    // The thread from its first message down to message_id.
    std::vector<Id> path{message_id};
    for (std::optional<Id> parent = last->parent_id; parent;) {
        if (path.size() > static_cast<std::size_t>(kMaxDepth))
            return make_error("the conversation's messages form a loop (the file is damaged)");
        path.push_back(*parent);
        auto m = message(*parent);
        if (!m) return m.error();
        parent = m->parent_id;
    }

    Conversation draft = *source;
    draft.title = title.trimmed().isEmpty() ? source->title : title.trimmed();
    draft.forked_from = message_id;
    draft.pinned = false;
    draft.archived = false;
    auto fork = create_conversation(draft);
    if (!fork) return context("forking the conversation", fork.error());

    // Each message is copied whole (the columns the schema has, whatever their number).
    auto copy = db_.prepare(
        "INSERT INTO messages (conversation_id, parent_id, role, content, token_ids, "
        "token_fingerprint, state, created_at, updated_at, ttft_ms, tokens_per_second, "
        "prompt_tokens_cached, prompt_tokens_computed, generated_tokens, seed, finish_reason, "
        "reasoning_ms, error, messages_dropped, prompt_tokens_shifted, prompt_tokens_loaded, "
        "sources, draft_tokens, draft_accepted) SELECT ?1, ?2, role, content, token_ids, "
        "token_fingerprint, state, created_at, updated_at, ttft_ms, tokens_per_second, "
        "prompt_tokens_cached, prompt_tokens_computed, generated_tokens, seed, finish_reason, "
        "reasoning_ms, error, messages_dropped, prompt_tokens_shifted, prompt_tokens_loaded, "
        "sources, draft_tokens, draft_accepted FROM messages WHERE id = ?3");
    if (!copy) return copy.error();
    std::optional<Id> parent;
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
        copy->reset();
        copy->bind(1, fork->id).bind(2, parent).bind(3, *it);
        if (auto rc = copy->run(); !rc) return context("forking the conversation", rc.error());
        parent = db_.last_insert_id();
    }
    if (auto rc = show_leaf(fork->id, *parent); !rc) return rc.error();
    // Its documents too: the fork's prompt is the original's (and so is its cached prefix).
    auto documents = db_.prepare(
        "INSERT INTO documents (conversation_id, position, name, source_path, format, language, "
        "content, file_size, file_modified, added_at, updated_at, lookup) SELECT ?1, position, "
        "name, source_path, format, language, content, file_size, file_modified, added_at, "
        "updated_at, lookup FROM documents WHERE conversation_id = ?2");
    if (!documents) return documents.error();
    documents->bind(1, fork->id).bind(2, source->id);
    if (auto rc = documents->run(); !rc) return context("forking the conversation", rc.error());
    if (auto rc = tx->commit(); !rc) return context("forking the conversation", rc.error());
    if (auto rc = index_unchunked_documents(); !rc) return rc.error();  // the copies' passages
    return conversation(fork->id);
}

}  // namespace hearth::store
