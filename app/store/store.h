// The chat history: personas, conversations, messages (a tree of variants), models and
// settings in one SQLite database. This is the synchronous API, for tests, the CLI and
// the worker thread behind AsyncStore; a Store belongs to one thread at a time.
//
// "Acknowledged" means a call returned success: that change is committed and survives a
// crash of the process (and, with OpenOptions::full_sync, a power cut).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include <QByteArray>
#include <QString>

#include "common/result.h"
#include "store/database.h"
#include "store/types.h"

namespace hearth::store {

enum class ExportFormat { Markdown, Json };

// Whose documents: a persona's or a single conversation's.
enum class DocumentOwner { Persona, Conversation };

// What restoring a backup did (Store::restore_from).
struct RestoreReport {
    int conversations_added = 0;
    int conversations_present = 0;  // already here (same title and creation time)
    int personas_added = 0;
};

class Store {
  public:
    // Opens (creating when missing, migrating when older) the database at `path`; see
    // OpenOptions for corrupt files. Refuses a database from a newer Hearth untouched.
    static Result<Store> open(const QString& path, OpenOptions options = {});
    // <data dir>/hearth.sqlite3, the same folder as hearth::paths::data_dir().
    static QString default_path();

    Store(Store&& other) noexcept = default;
    Store& operator=(Store&& other) noexcept = default;
    ~Store();  // writes replies still pending (they stay Streaming until the next open)

    const OpenReport& report() const { return report_; }
    const QString& path() const { return db_.path(); }
    bool read_only() const { return db_.read_only(); }
    Database& database() { return db_; }
    // PRAGMA integrity_check: "ok", or SQLite's list of problems.
    Result<QString> integrity_check();

    // ---- personas (personas.cpp) ----
    Result<Persona> create_persona(const Persona& draft);  // draft's id and times are ignored
    Result<void> update_persona(const Persona& persona);
    Result<void> delete_persona(Id id);  // its conversations keep their messages
    Result<Persona> persona(Id id);
    Result<std::vector<Persona>> personas();  // by name

    // ---- documents (documents.cpp) ----
    // Adds a document after its owner's others (draft's owner, name, format, text and file;
    // its id, position and times are ignored). Errors: no owner or two, a missing owner,
    // an empty or over-long name or text.
    Result<Document> add_document(const Document& draft);
    // New text read again from its file (an edit, or the file changed).
    Result<Document> update_document_text(Id id, const QString& text,
                                          std::optional<std::int64_t> file_size,
                                          std::optional<QDateTime> file_modified);
    Result<void> delete_document(Id id);  // the others after it move up
    Result<Document> document(Id id);
    Result<std::vector<Document>> persona_documents(Id persona_id);  // in order
    Result<std::vector<Document>> conversation_documents(Id conversation_id);
    // Whether the owner's documents are looked up per message instead of read whole
    // (Document::lookup); every document of the owner changes together.
    Result<void> set_documents_lookup(DocumentOwner owner, Id id, bool lookup);
    // Adds drafts (name, format, text and file) after the owner's documents, in order,
    // then sets whether all of the owner's are looked up. Returns how many were added.
    Result<int> add_documents(DocumentOwner owner, Id id, std::vector<Document> drafts,
                              bool lookup);

    // ---- looking up passages (retrieval.cpp) ----
    // The passages of `documents` that best match `text` (bm25 over the words in it,
    // chunking.h), best first, at most `limit`. Empty when none matches.
    Result<std::vector<Source>> retrieve(std::span<const Id> documents, const QString& text,
                                         int limit);
    // The looked-up documents a conversation's messages search: its persona's and its own
    // (ids only: a collection's text is not read to find them).
    Result<std::vector<Id>> lookup_documents(Id conversation_id);
    // Cuts documents that have no passages yet into them (documents from before schema
    // 11, a fork's copies); open() calls it. Returns how many were indexed.
    Result<int> index_unchunked_documents();

    // ---- models and settings (personas.cpp) ----
    // Adds the model or, when its fingerprint is known, updates its path and name.
    Result<ModelRecord> upsert_model(const QString& path, const QString& fingerprint,
                                     const QString& display_name);
    Result<void> touch_model(Id id);  // last used: now
    Result<void> delete_model(Id id);
    Result<std::vector<ModelRecord>> models();  // most recently used first
    Result<std::optional<ModelRecord>> model_by_fingerprint(const QString& fingerprint);
    Result<std::optional<QString>> setting(const QString& key);
    Result<void> set_setting(const QString& key, const QString& value);
    Result<void> remove_setting(const QString& key);

    // ---- conversations (conversations.cpp) ----
    Result<Conversation> create_conversation(const Conversation& draft);
    Result<Conversation> conversation(Id id);
    // Pinned first, then most recently updated.
    Result<std::vector<Conversation>> conversations(const ConversationFilter& filter = {});
    // Saves title, persona, model, sampling, pinned and archived.
    Result<void> update_conversation(const Conversation& conversation);
    Result<void> rename_conversation(Id id, const QString& title);
    Result<void> set_pinned(Id id, bool pinned);
    Result<void> set_archived(Id id, bool archived);
    Result<void> delete_conversation(Id id);  // and all its messages
    Result<int> message_count(Id conversation_id);
    // A new conversation (fork.cpp) holding a copy of the thread from its first message
    // down to `message_id`, with the same persona, model and settings, marked as forked
    // from it. Empty title: the original's. Fails while that message is a reply still
    // being written.
    Result<Conversation> fork_conversation(Id message_id, const QString& title = {});

    // ---- messages and variants (messages.cpp) ----
    // Adds a message after `parent` (empty: as a first message) and shows its branch.
    Result<Message> add_message(Id conversation_id, std::optional<Id> parent,
                                const MessageDraft& draft);
    // Adds a message at the end of the thread on screen.
    Result<Message> append_message(Id conversation_id, const MessageDraft& draft);
    // Edits a message by adding a variant (a sibling with the same parent), shown at once.
    Result<Message> edit_message(Id message_id, const MessageDraft& draft);
    Result<void> delete_message(Id message_id);  // and every message after it on any branch
    Result<Message> message(Id id);
    // The thread on screen, first message first, each with its place among its variants.
    Result<std::vector<ThreadEntry>> active_thread(Id conversation_id);
    // Every message of the conversation, all branches, oldest first.
    Result<std::vector<Message>> all_messages(Id conversation_id);
    // The variants of a message (its siblings and itself), oldest first.
    Result<std::vector<Id>> variants(Id message_id);
    // Shows the branch through `message_id`, restoring the choices last made below it.
    // Returns the new active leaf.
    Result<Id> select_message(Id message_id);
    // Shows the variant `delta` places from `message_id` (-1: previous, +1: next) and
    // returns its id; fails past either end.
    Result<Id> page_variant(Id message_id, int delta);

    // ---- streaming replies (replies.cpp) ----
    // Adds an empty assistant message (state Streaming) after `parent` and shows it.
    // Regenerating a reply is begin_reply with that reply's parent: a new variant.
    Result<Id> begin_reply(Id conversation_id, std::optional<Id> parent,
                           const QString& token_fingerprint);
    // Replaces the reply's text and token ids so far. Cheap: it is written only when
    // OpenOptions::reply_flush_interval has passed since the oldest unwritten update.
    // Returns true when this call wrote (that state is then acknowledged).
    Result<bool> update_reply(Id message_id, const QString& text,
                              std::span<const std::int32_t> token_ids);
    // Writes the final text (the last update), the statistics (seed and finish reason
    // included) and the end state.
    Result<void> finish_reply(Id message_id, const GenerationStats& stats,
                              MessageState end_state = MessageState::Complete);
    // Turns a finished reply (complete or interrupted) back into one being streamed, so
    // that more can be appended to it ("Continue"): update_reply then takes the whole text
    // and token ids so far (the old ones and what follows) and finish_reply ends it again
    // with the new statistics. A reply still streaming here is left as it is. Fails for
    // a user or system message, a failed reply (regenerate it) and an unknown id.
    Result<void> reopen_reply(Id message_id);
    // Writes pending updates that are due (or all of them); returns how many were written.
    // AsyncStore calls this on a timer so a stalled stream is still written within ~1 s.
    Result<int> flush_replies(bool all = false);
    bool has_pending_replies() const;

    // ---- search (search.cpp) ----
    // Words are matched (any form of accents and case), "quoted phrases" as phrases and
    // word* as a prefix (of two letters or more); all terms must occur. Up to
    // SearchOptions::rank_at_most matches are ranked, best match (bm25) first; a query
    // matching more (a word found in most messages) lists the newest first, which keeps it
    // as fast as any other (see docs/benchmarks.md). Each hit has a highlighted snippet.
    Result<std::vector<SearchHit>> search(const QString& query, const SearchOptions& options = {});

    // ---- export and import (exchange.cpp) ----
    Result<QByteArray> export_conversation(Id conversation_id, ExportFormat format);
    // Validates `path` (see path_check.h) and writes atomically.
    Result<void> export_to_file(Id conversation_id, ExportFormat format, const QString& path,
                                bool overwrite);
    // Adds the conversation in a JSON export as a new conversation; returns its id.
    Result<Id> import_json(const QByteArray& json);
    Result<Id> import_file(const QString& path);

    // ---- the whole history (backup.cpp) ----
    // Writes a copy of the whole database to `path` (validated as an export path), consistent
    // and compact; a failure leaves an existing file there as it was.
    Result<void> backup_to(const QString& path, bool overwrite);
    // Adds what a backup holds and this history lacks: its personas (by name and prompt)
    // and its conversations (by title and creation time), every branch, pinned and archived
    // as they were. Nothing here is changed or removed; the backup file is only read (a
    // backup from an older Hearth is upgraded in a copy). Errors: not a Hearth database,
    // damaged, from a newer Hearth; a failure part way keeps the chats restored before it.
    Result<RestoreReport> restore_from(const QString& path);

  private:
    struct PendingReply {
        QString text;
        std::vector<std::int32_t> token_ids;
        bool dirty = false;
        std::chrono::steady_clock::time_point dirty_since;
    };

    Store(Database db, OpenOptions options, OpenReport report);
    std::chrono::steady_clock::time_point now() const;
    Result<void> write_reply(Id id, PendingReply& reply);
    Result<void> show_leaf(Id conversation_id, Id leaf_id);  // caller holds a transaction
    Result<Id> descend(Id message_id);  // the leaf below message_id on remembered choices
    Result<std::optional<Id>> current_leaf(Id conversation_id);  // end of the thread on screen
    Result<Message> insert_message(Id conversation_id, std::optional<Id> parent,
                                   const MessageDraft& draft, MessageState state);

    Database db_;
    OpenOptions options_;
    OpenReport report_;
    std::map<Id, PendingReply> replies_;  // begun here and not finished yet
};

}  // namespace hearth::store
