// The records the chat store keeps. Text is QString (UTF-8 in the database), times are
// UTC QDateTime (milliseconds since the epoch in the database), ids are int64 rowids.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <QDateTime>
#include <QString>

namespace hearth::store {

using Id = std::int64_t;

enum class Role { System, User, Assistant };

// Where a message stands. Streaming: a reply being generated. Interrupted: a reply cut
// short (the user stopped it, or Hearth closed or crashed while it was streaming).
enum class MessageState { Complete, Streaming, Interrupted, Failed };

QString role_name(Role role);  // "system", "user", "assistant"
std::optional<Role> role_from_name(const QString& name);
QString state_name(MessageState state);  // "complete", "streaming", ...
std::optional<MessageState> state_from_name(const QString& name);

// The most stop strings a persona or conversation keeps, and the longest one.
inline constexpr std::size_t kMaxStopStrings = 8;
inline constexpr qsizetype kMaxStopChars = 200;

// Per-conversation sampling overrides; an empty optional means "the app's default".
struct SamplingSettings {
    std::optional<double> temperature;
    std::optional<double> top_p;
    std::optional<double> min_p;
    std::optional<int> top_k;
    std::optional<double> repeat_penalty;
    std::optional<double> frequency_penalty;
    std::optional<double> presence_penalty;
    std::optional<std::int64_t> seed;
    std::optional<int> max_tokens;
    // Reasoning on or off, for models whose template has a switch (Qwen3); unset: on.
    std::optional<bool> thinking;
    // Texts that end a reply where they appear (they are not shown). Unset: the level
    // below's (app → persona → conversation); an empty list turns them off here.
    std::optional<std::vector<QString>> stop;
    bool operator==(const SamplingSettings&) const = default;
};

// Why a reply ended: its end-of-turn (or a stop string), its token limit, the user, or an
// error.
enum class FinishReason { Stop, Length, Cancelled, Error };

QString finish_reason_name(FinishReason reason);  // "stop", "length", "cancelled", "error"
std::optional<FinishReason> finish_reason_from_name(const QString& name);

// How a reply was generated; fields are empty when not measured.
struct GenerationStats {
    std::optional<double> ttft_ms;                       // time to first token
    std::optional<double> tokens_per_second;             // decode speed
    std::optional<std::int64_t> prompt_tokens_cached;    // reused from the KV prefix cache
    std::optional<std::int64_t> prompt_tokens_computed;  // evaluated for this reply
    std::optional<std::int64_t> prompt_tokens_loaded;    // of the cached: read from disk
    std::optional<std::int64_t> generated_tokens;
    std::optional<std::uint64_t> seed;  // the sampling seed (all 64 bits are kept)
    std::optional<FinishReason> finish_reason;
    std::optional<double> reasoning_ms;  // how long the reply's reasoning block took
    std::optional<QString> error;        // why the reply failed (finish_reason error)
    // A long chat's turn: messages that left the model's view on it (its context window's
    // step), and prompt tokens a context shift moved instead of computing.
    std::optional<std::int64_t> messages_dropped;
    std::optional<std::int64_t> prompt_tokens_shifted;
    // Speculative decoding: draft tokens the model checked, and how many of them it kept.
    std::optional<std::int64_t> draft_tokens;
    std::optional<std::int64_t> draft_accepted;
    bool operator==(const GenerationStats&) const = default;
};

// A document a persona or a single conversation holds (documents.cpp): its text goes
// into the prompt's prefix, after the persona's instructions, in `position` order.
struct Document {
    Id id = 0;
    // Its owner: exactly one of them.
    std::optional<Id> persona_id;
    std::optional<Id> conversation_id;
    int position = 0;     // its place among its owner's (0, 1, ...)
    QString name;         // shown, and its name in the prefix ("handbook.pdf")
    QString source_path;  // the file it was read from (empty: text given as it is)
    QString format;       // "text", "markdown", "code", "html", "pdf", "docx", "odt"
    QString language;     // code's ("cpp"), else empty
    QString text;         // what the model reads
    // Looked up rather than read whole: its owner's documents are too long for the
    // context together, so each message is given the passages it needs (retrieval.cpp).
    bool lookup = false;
    // The file as it was when read (size, modification time), to notice that it changed.
    std::optional<std::int64_t> file_size;
    std::optional<QDateTime> file_modified;
    QDateTime added_at;
    QDateTime updated_at;
};

// The longest document text kept (characters), and the longest name.
inline constexpr qsizetype kMaxDocumentChars = 4'000'000;
inline constexpr qsizetype kMaxDocumentName = 200;

struct Persona {
    Id id = 0;
    QString name;
    QString system_prompt;
    bool keep_warm = false;     // keep this persona's model and prompt loaded
    QString color;              // "#rrggbb" or empty
    QString avatar;             // a short glyph (emoji, initials) or empty
    SamplingSettings sampling;  // this persona's replies (over the app's defaults)
    QDateTime created_at;
    QDateTime updated_at;
    // Read with the persona, in order; update_persona leaves them (documents.cpp edits them).
    std::vector<Document> documents;
};

struct ModelRecord {
    Id id = 0;
    QString path;
    QString fingerprint;  // lower-case hex, identifies the weights and tokenizer
    QString display_name;
    QDateTime added_at;
    std::optional<QDateTime> last_used_at;
};

struct Conversation {
    Id id = 0;
    QString title;
    std::optional<Id> persona_id;
    std::optional<Id> model_id;
    SamplingSettings sampling;
    std::optional<Id> active_leaf_id;  // the last message of the thread on screen
    // A fork ("fork from here"): the message of another conversation it was copied up to.
    // Empty for any other conversation, and once that message is deleted.
    std::optional<Id> forked_from;
    bool pinned = false;
    bool archived = false;
    QDateTime created_at;
    QDateTime updated_at;  // changes with every new message
};

// A passage of a document given to the model with a message (retrieval.cpp), kept with
// the message as it was given: a regenerated reply, a restart and the next turns give
// the model the same text, whatever became of the document since.
struct Source {
    Id document_id = 0;  // 0 once unknown (a message imported from elsewhere)
    QString name;        // the document's ("handbook.pdf")
    QString heading;     // the headings it sits under, or empty
    QString path;        // the file it was read from, or empty
    int start = 0;       // where the passage begins in the document's text
    QString text;
    bool operator==(const Source&) const = default;
};

struct Message {
    Id id = 0;
    Id conversation_id = 0;
    std::optional<Id> parent_id;  // previous message in the thread; empty for the first
    Role role = Role::User;
    QString text;
    // Token ids as the engine produced or consumed them, and the fingerprint of the model
    // whose tokenizer they belong to; reused verbatim to hit the KV prefix cache.
    std::vector<std::int32_t> token_ids;
    QString token_fingerprint;
    MessageState state = MessageState::Complete;
    QDateTime created_at;
    QDateTime updated_at;
    GenerationStats stats;
    // A user message: the passages looked up for it, given to the model with it.
    std::vector<Source> sources;
};

// What to add: the store fills in ids and times.
struct MessageDraft {
    Role role = Role::User;
    QString text;
    std::vector<std::int32_t> token_ids;
    QString token_fingerprint;
    std::vector<Source> sources;
};

// One message of the active thread, with its place among its variants (siblings share
// a parent: edits of a user message, regenerations of a reply).
struct ThreadEntry {
    Message message;
    int variant_index = 0;  // 0-based, oldest first
    int variant_count = 1;
};

struct ConversationFilter {
    enum class Archived { Exclude, Include, Only };
    Archived archived = Archived::Exclude;
    int limit = -1;  // -1: all
    int offset = 0;
};

struct SearchOptions {
    int limit = 50;
    // A query matching at most this many messages lists the best matches (bm25) first;
    // one matching more lists the newest first (ranking them all would take too long).
    int rank_at_most = 2000;
    std::optional<Id> conversation_id;  // search one conversation only
    bool include_archived = true;
};

// A search result. The snippet is plain text; highlights are [start, start+length)
// ranges into it (QString indices), so the UI decides how to show them and message text
// never needs escaping.
struct SearchHit {
    Id message_id = 0;
    Id conversation_id = 0;
    QString conversation_title;
    Role role = Role::User;
    QDateTime created_at;
    QString snippet;
    std::vector<std::pair<int, int>> highlights;
    double score = 0;  // bm25, lower is better; 0 when the newest came first (see search)
};

// Settings for opening a store.
struct OpenOptions {
    enum class OnCorrupt { SetAside, Fail };
    // A damaged or non-SQLite file is renamed to <name>.corrupt-<time> (with its -wal and
    // -shm) and a fresh database is created; Fail leaves it and reports an error.
    OnCorrupt on_corrupt = OnCorrupt::SetAside;
    bool read_only = false;  // never write: no migration, no recovery, no journal
    // PRAGMA quick_check finds damaged pages but reads the whole file (about 0.4 s per
    // 100 MiB). Auto runs it when the file is under check_below_bytes, when the last
    // session did not close cleanly (its -wal is still there), or when the last check is
    // over a week old; a read-only open under Auto checks small files only. Never still
    // parses the schema, which catches the commonest damage.
    enum class IntegrityCheck { Always, Auto, Never };
    IntegrityCheck integrity_check = IntegrityCheck::Auto;
    std::int64_t check_below_bytes = 32LL << 20;
    // synchronous=FULL (default) fsyncs the WAL at every commit, so an acknowledged message
    // survives a power cut too; NORMAL survives process crashes only (faster bulk writes).
    bool full_sync = true;
    std::chrono::milliseconds busy_timeout{5000};
    // A streaming reply is written at most this often (and at its end).
    std::chrono::milliseconds reply_flush_interval{1000};
    // Caps the database at this many pages (4 KiB each); SQLite then fails writes with
    // SQLITE_FULL exactly as on a full disk. 0: no cap. Used to test that path.
    std::int64_t max_page_count = 0;
    // The clock that paces reply writes; tests substitute their own.
    std::function<std::chrono::steady_clock::time_point()> clock;
};

// What open() found and did, for the UI to tell the user.
struct OpenReport {
    QString path;
    bool created = false;         // no database was there
    int migrated_from = -1;       // schema version before migration; -1 when none ran
    QString corrupt_backup_path;  // where a damaged file was moved; empty when none
    QString corrupt_reason;
    int interrupted_replies = 0;     // replies left streaming by a crash, now Interrupted
    bool integrity_checked = false;  // quick_check ran (and passed) at this open
};

}  // namespace hearth::store
