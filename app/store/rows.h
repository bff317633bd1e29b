// Internal to the store: reading records from rows, times and shared SQL fragments.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <QDateTime>

#include "common/result.h"
#include "store/database.h"
#include "store/types.h"

namespace hearth::store::detail {

inline std::int64_t now_ms() {
    return QDateTime::currentMSecsSinceEpoch();
}
inline std::int64_t to_ms(const QDateTime& time) {
    return time.toMSecsSinceEpoch();
}
inline QDateTime from_ms(std::int64_t ms) {
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC);
}

// "what: message", for errors passed up with the action that failed.
inline Error context(std::string_view what, const Error& error) {
    return make_error(std::string(what) + ": " + error.message);
}

// Columns read by read_message, in order; `m` is the messages table alias.
inline constexpr const char* kMessageColumns =
    "m.id, m.conversation_id, m.parent_id, m.role, m.content, m.token_ids, m.token_fingerprint, "
    "m.state, m.created_at, m.updated_at, m.ttft_ms, m.tokens_per_second, "
    "m.prompt_tokens_cached, m.prompt_tokens_computed, m.generated_tokens, m.seed, "
    "m.finish_reason, m.reasoning_ms, m.error, m.messages_dropped, m.prompt_tokens_shifted, "
    "m.prompt_tokens_loaded, m.sources, m.draft_tokens, m.draft_accepted";
inline constexpr int kMessageColumnCount = 25;

Result<Message> read_message(const Statement& row, int first_column = 0);

// A reply's seed is unsigned; SQLite's INTEGER is signed: the same 64 bits either way.
inline std::optional<std::int64_t> seed_to_column(std::optional<std::uint64_t> seed) {
    return seed ? std::optional(static_cast<std::int64_t>(*seed)) : std::nullopt;
}
inline std::optional<std::uint64_t> seed_from_column(std::optional<std::int64_t> value) {
    return value ? std::optional(static_cast<std::uint64_t>(*value)) : std::nullopt;
}

// The sampling columns that conversations and personas both have, in the order that
// read_sampling and bind_sampling use, each name prefixed by `alias` ("c." or "").
inline constexpr int kSamplingColumnCount = 11;
std::string sampling_columns(std::string_view alias = {});
// "temperature = ?N, top_p = ?N+1, ...", for an UPDATE whose sampling starts at ?N.
std::string sampling_assignments(int first_index);
SamplingSettings read_sampling(const Statement& row, int first_column);
void bind_sampling(Statement& stmt, int first_index, const SamplingSettings& sampling);

// Columns read by read_conversation; `c` is the conversations table alias.
const std::string& conversation_columns();
Conversation read_conversation(const Statement& row);

// Checks shared by the API and by import: they describe what is wrong in words.
Result<void> validate_persona(const Persona& persona);
Result<void> validate_sampling(const SamplingSettings& sampling);
Result<void> validate_title(const QString& title);
inline constexpr qsizetype kMaxMessageChars = 16 << 20;
inline constexpr std::size_t kMaxMessageTokens = 4 << 20;
Result<void> validate_message(const QString& text, std::size_t token_count);
// A message's sources as its column holds them (JSON; empty: none), and back
// (retrieval.cpp); a document's passages, cut and indexed again from its text.
QString sources_to_json(const std::vector<Source>& sources);
Result<std::vector<Source>> sources_from_json(const QString& json);
Result<void> index_document(Database& db, Id document, const QString& text);

// Lower-cases a model fingerprint and checks it is hex (1..128 digits); empty stays empty.
Result<QString> normalize_fingerprint(const QString& fingerprint);

}  // namespace hearth::store::detail
