#include "store/rows.h"

namespace hearth::store {

QString role_name(Role role) {
    switch (role) {
        case Role::System:
            return QStringLiteral("system");
        case Role::User:
            return QStringLiteral("user");
        case Role::Assistant:
            return QStringLiteral("assistant");
    }
    return {};
}

std::optional<Role> role_from_name(const QString& name) {
    if (name == QLatin1String("system")) return Role::System;
    if (name == QLatin1String("user")) return Role::User;
    if (name == QLatin1String("assistant")) return Role::Assistant;
    return std::nullopt;
}

QString state_name(MessageState state) {
    switch (state) {
        case MessageState::Complete:
            return QStringLiteral("complete");
        case MessageState::Streaming:
            return QStringLiteral("streaming");
        case MessageState::Interrupted:
            return QStringLiteral("interrupted");
        case MessageState::Failed:
            return QStringLiteral("failed");
    }
    return {};
}

std::optional<MessageState> state_from_name(const QString& name) {
    if (name == QLatin1String("complete")) return MessageState::Complete;
    if (name == QLatin1String("streaming")) return MessageState::Streaming;
    if (name == QLatin1String("interrupted")) return MessageState::Interrupted;
    if (name == QLatin1String("failed")) return MessageState::Failed;
    return std::nullopt;
}

namespace detail {

Result<Message> read_message(const Statement& row, int c) {
    Message m;
    m.id = row.column_int64(c + 0);
    m.conversation_id = row.column_int64(c + 1);
    m.parent_id = row.column_optional_int64(c + 2);
    // The schema's CHECK constraints admit only known names; anything else is damage.
    const auto role = role_from_name(row.column_text(c + 3));
    if (!role) return make_error("message " + std::to_string(m.id) + " has an unknown role");
    m.role = *role;
    m.text = row.column_text(c + 4);
    auto tokens = decode_token_ids(row.column_blob(c + 5));
    if (!tokens) return context("message " + std::to_string(m.id), tokens.error());
    m.token_ids = std::move(*tokens);
    m.token_fingerprint = row.column_text(c + 6);
    const auto state = state_from_name(row.column_text(c + 7));
    if (!state) return make_error("message " + std::to_string(m.id) + " has an unknown state");
    m.state = *state;
    m.created_at = from_ms(row.column_int64(c + 8));
    m.updated_at = from_ms(row.column_int64(c + 9));
    m.stats.ttft_ms = row.column_optional_double(c + 10);
    m.stats.tokens_per_second = row.column_optional_double(c + 11);
    m.stats.prompt_tokens_cached = row.column_optional_int64(c + 12);
    m.stats.prompt_tokens_computed = row.column_optional_int64(c + 13);
    m.stats.generated_tokens = row.column_optional_int64(c + 14);
    return m;
}

Conversation read_conversation(const Statement& row) {
    Conversation c;
    c.id = row.column_int64(0);
    c.title = row.column_text(1);
    c.persona_id = row.column_optional_int64(2);
    c.model_id = row.column_optional_int64(3);
    c.sampling.temperature = row.column_optional_double(4);
    c.sampling.top_p = row.column_optional_double(5);
    c.sampling.min_p = row.column_optional_double(6);
    if (!row.is_null(7)) c.sampling.top_k = row.column_int(7);
    c.sampling.repeat_penalty = row.column_optional_double(8);
    c.sampling.seed = row.column_optional_int64(9);
    if (!row.is_null(10)) c.sampling.max_tokens = row.column_int(10);
    c.active_leaf_id = row.column_optional_int64(11);
    c.pinned = row.column_bool(12);
    c.archived = row.column_bool(13);
    c.created_at = from_ms(row.column_int64(14));
    c.updated_at = from_ms(row.column_int64(15));
    return c;
}

}  // namespace detail
}  // namespace hearth::store
