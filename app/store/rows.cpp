#include "store/rows.h"

#include <QJsonArray>
#include <QJsonDocument>

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

QString finish_reason_name(FinishReason reason) {
    switch (reason) {
        case FinishReason::Stop:
            return QStringLiteral("stop");
        case FinishReason::Length:
            return QStringLiteral("length");
        case FinishReason::Cancelled:
            return QStringLiteral("cancelled");
        case FinishReason::Error:
            return QStringLiteral("error");
    }
    return {};
}

std::optional<FinishReason> finish_reason_from_name(const QString& name) {
    if (name == QLatin1String("stop")) return FinishReason::Stop;
    if (name == QLatin1String("length")) return FinishReason::Length;
    if (name == QLatin1String("cancelled")) return FinishReason::Cancelled;
    if (name == QLatin1String("error")) return FinishReason::Error;
    return std::nullopt;
}

namespace detail {

namespace {

constexpr const char* kSamplingNames[kSamplingColumnCount] = {"temperature",
                                                              "top_p",
                                                              "min_p",
                                                              "top_k",
                                                              "repeat_penalty",
                                                              "frequency_penalty",
                                                              "presence_penalty",
                                                              "seed",
                                                              "max_tokens",
                                                              "thinking",
                                                              "stop"};

std::optional<int> optional_int(const Statement& row, int column) {
    return row.is_null(column) ? std::nullopt : std::optional(row.column_int(column));
}

}  // namespace

std::string sampling_columns(std::string_view alias) {
    std::string out;
    for (const char* name : kSamplingNames) {
        if (!out.empty()) out += ", ";
        out += alias;
        out += name;
    }
    return out;
}

std::string sampling_assignments(int first_index) {
    std::string out;
    int index = first_index;
    for (const char* name : kSamplingNames) {
        if (!out.empty()) out += ", ";
        out += std::string(name) + " = ?" + std::to_string(index++);
    }
    return out;
}

SamplingSettings read_sampling(const Statement& row, int c) {
    SamplingSettings s;
    s.temperature = row.column_optional_double(c + 0);
    s.top_p = row.column_optional_double(c + 1);
    s.min_p = row.column_optional_double(c + 2);
    s.top_k = optional_int(row, c + 3);
    s.repeat_penalty = row.column_optional_double(c + 4);
    s.frequency_penalty = row.column_optional_double(c + 5);
    s.presence_penalty = row.column_optional_double(c + 6);
    s.seed = row.column_optional_int64(c + 7);
    s.max_tokens = optional_int(row, c + 8);
    if (!row.is_null(c + 9)) s.thinking = row.column_bool(c + 9);
    if (!row.is_null(c + 10)) {
        // A JSON array of strings, as bind_sampling wrote it; anything else reads as unset.
        const QJsonDocument doc = QJsonDocument::fromJson(row.column_text(c + 10).toUtf8());
        if (doc.isArray()) {
            std::vector<QString> stop;
            for (const QJsonValue& v : doc.array())
                if (v.isString()) stop.push_back(v.toString());
            s.stop = std::move(stop);
        }
    }
    return s;
}

void bind_sampling(Statement& stmt, int i, const SamplingSettings& s) {
    stmt.bind(i + 0, s.temperature).bind(i + 1, s.top_p).bind(i + 2, s.min_p);
    stmt.bind(i + 3, s.top_k).bind(i + 4, s.repeat_penalty).bind(i + 5, s.frequency_penalty);
    stmt.bind(i + 6, s.presence_penalty).bind(i + 7, s.seed).bind(i + 8, s.max_tokens);
    stmt.bind(i + 9, s.thinking);
    if (s.stop) {
        QJsonArray array;
        for (const QString& text : *s.stop) array.append(text);
        stmt.bind(i + 10, QString::fromUtf8(QJsonDocument(array).toJson(QJsonDocument::Compact)));
    } else {
        stmt.bind_null(i + 10);
    }
}

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
    m.stats.seed = seed_from_column(row.column_optional_int64(c + 15));
    if (!row.is_null(c + 16)) {
        m.stats.finish_reason = finish_reason_from_name(row.column_text(c + 16));
        if (!m.stats.finish_reason)
            return make_error("message " + std::to_string(m.id) + " has an unknown finish reason");
    }
    m.stats.reasoning_ms = row.column_optional_double(c + 17);
    if (!row.is_null(c + 18)) m.stats.error = row.column_text(c + 18);
    m.stats.messages_dropped = row.column_optional_int64(c + 19);
    m.stats.prompt_tokens_shifted = row.column_optional_int64(c + 20);
    m.stats.prompt_tokens_loaded = row.column_optional_int64(c + 21);
    if (!row.is_null(c + 22)) {
        auto sources = sources_from_json(row.column_text(c + 22));
        if (!sources) return context("message " + std::to_string(m.id), sources.error());
        m.sources = std::move(*sources);
    }
    m.stats.draft_tokens = row.column_optional_int64(c + 23);
    m.stats.draft_accepted = row.column_optional_int64(c + 24);
    return m;
}

const std::string& conversation_columns() {
    static const std::string columns =
        "c.id, c.title, c.persona_id, c.model_id, c.active_leaf_id, c.pinned, c.archived, "
        "c.created_at, c.updated_at, c.forked_from, " +
        sampling_columns("c.");
    return columns;
}

Conversation read_conversation(const Statement& row) {
    Conversation c;
    c.id = row.column_int64(0);
    c.title = row.column_text(1);
    c.persona_id = row.column_optional_int64(2);
    c.model_id = row.column_optional_int64(3);
    c.active_leaf_id = row.column_optional_int64(4);
    c.pinned = row.column_bool(5);
    c.archived = row.column_bool(6);
    c.created_at = from_ms(row.column_int64(7));
    c.updated_at = from_ms(row.column_int64(8));
    c.forked_from = row.column_optional_int64(9);
    c.sampling = read_sampling(row, 10);
    return c;
}

}  // namespace detail
}  // namespace hearth::store
