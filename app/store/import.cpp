// Import of a JSON export (format in exchange_format.h). The file is untrusted: every field
// is type- and range-checked, message references must point backwards (so no cycles),
// nothing in it names a file to open or is ever run, and database ids are never taken
// from it. The whole conversation is added in one transaction or not at all.
#include <cmath>
#include <limits>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "store/exchange_format.h"
#include "store/path_check.h"
#include "store/rows.h"
#include "store/store.h"

namespace hearth::store {

using detail::context;

namespace {

Error invalid(const std::string& where, const std::string& problem) {
    return make_error("the file is not a valid Hearth conversation export: " + where + " " +
                      problem);
}

std::string at(const std::string& where, const char* key) {
    return where.empty() ? std::string(key) : where + "." + key;
}

Result<std::optional<QJsonObject>> object_field(const QJsonObject& o, const char* key,
                                                const std::string& where) {
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined() || v.isNull()) return std::optional<QJsonObject>();
    if (!v.isObject()) return invalid(at(where, key), "must be an object");
    return std::optional<QJsonObject>(v.toObject());
}

Result<QString> text_field(const QJsonObject& o, const char* key, const std::string& where,
                           bool required, qsizetype max_chars) {
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined() && !required) return QString();
    if (!v.isString()) return invalid(at(where, key), "must be a string");
    QString s = v.toString();
    if (s.size() > max_chars)
        return invalid(at(where, key),
                       "is too long (at most " + std::to_string(max_chars) + " characters)");
    return s;
}

Result<bool> flag_field(const QJsonObject& o, const char* key, const std::string& where) {
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined()) return false;
    if (!v.isBool()) return invalid(at(where, key), "must be true or false");
    return v.toBool();
}

Result<QDateTime> time_field(const QJsonObject& o, const char* key, const std::string& where,
                             const QDateTime& fallback) {
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined()) return fallback;
    const QDateTime t =
        v.isString() ? QDateTime::fromString(v.toString(), Qt::ISODateWithMs) : QDateTime();
    if (!t.isValid() || t.date().year() < 1970 || t.date().year() > 9999)
        return invalid(at(where, key), "must be a date and time like 2024-05-01T10:00:00.000Z");
    return t.toUTC();
}

Result<std::optional<double>> number_field(const QJsonObject& o, const char* key,
                                           const std::string& where) {
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined() || v.isNull()) return std::optional<double>();
    if (!v.isDouble() || !std::isfinite(v.toDouble()))
        return invalid(at(where, key), "must be a number");
    return std::optional<double>(v.toDouble());
}

// An integer within [lo, hi]; JSON has no integer type, so 3.5 is refused explicitly.
Result<std::optional<std::int64_t>> integer_field(const QJsonObject& o, const char* key,
                                                  const std::string& where, std::int64_t lo,
                                                  std::int64_t hi) {
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined() || v.isNull()) return std::optional<std::int64_t>();
    const std::string range =
        "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
    if (!v.isDouble()) return invalid(at(where, key), range);
    // Qt keeps integers that fit in 64 bits exactly; toInteger() fails on fractions.
    const double d = v.toDouble();
    constexpr std::int64_t kSentinel = std::numeric_limits<std::int64_t>::min();
    const qint64 i = v.toInteger(kSentinel);
    if (!std::isfinite(d) || (i == kSentinel && d != static_cast<double>(kSentinel)) || i < lo ||
        i > hi)
        return invalid(at(where, key), range);
    return std::optional<std::int64_t>(i);
}

constexpr std::int64_t kI32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kI32Min = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();

Result<SamplingSettings> read_sampling(const QJsonObject& o, const std::string& where) {
    SamplingSettings s;
    auto narrow = [](const std::optional<std::int64_t>& v) {
        return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
    };
    auto temperature = number_field(o, "temperature", where);
    if (!temperature) return temperature.error();
    auto top_p = number_field(o, "top_p", where);
    if (!top_p) return top_p.error();
    auto min_p = number_field(o, "min_p", where);
    if (!min_p) return min_p.error();
    auto penalty = number_field(o, "repeat_penalty", where);
    if (!penalty) return penalty.error();
    auto frequency = number_field(o, "frequency_penalty", where);
    if (!frequency) return frequency.error();
    auto presence = number_field(o, "presence_penalty", where);
    if (!presence) return presence.error();
    auto top_k = integer_field(o, "top_k", where, 0, kI32Max);
    if (!top_k) return top_k.error();
    auto seed = integer_field(o, "seed", where, kI64Min, kI64Max);
    if (!seed) return seed.error();
    auto max_tokens = integer_field(o, "max_tokens", where, 1, kI32Max);
    if (!max_tokens) return max_tokens.error();
    s.temperature = *temperature;
    s.top_p = *top_p;
    s.min_p = *min_p;
    s.repeat_penalty = *penalty;
    s.frequency_penalty = *frequency;
    s.presence_penalty = *presence;
    s.top_k = narrow(*top_k);
    s.seed = *seed;
    s.max_tokens = narrow(*max_tokens);
    const QJsonValue thinking = o.value(QLatin1String("thinking"));
    if (thinking.isBool())
        s.thinking = thinking.toBool();
    else if (!thinking.isUndefined() && !thinking.isNull())
        return invalid(at(where, "thinking"), "must be true or false");
    const QJsonValue stop = o.value(QLatin1String("stop"));
    if (stop.isArray()) {
        std::vector<QString> texts;
        for (const QJsonValue& v : stop.toArray()) {
            if (!v.isString()) return invalid(at(where, "stop"), "must be a list of texts");
            texts.push_back(v.toString());
        }
        s.stop = std::move(texts);
    } else if (!stop.isUndefined() && !stop.isNull()) {
        return invalid(at(where, "stop"), "must be a list of texts");
    }
    if (auto rc = detail::validate_sampling(s); !rc) return invalid(where, rc.message());
    return s;
}

Result<GenerationStats> read_stats(const QJsonObject& o, const std::string& where) {
    GenerationStats s;
    auto ttft = number_field(o, "ttft_ms", where);
    if (!ttft) return ttft.error();
    auto speed = number_field(o, "tokens_per_second", where);
    if (!speed) return speed.error();
    if ((*ttft && **ttft < 0) || (*speed && **speed < 0))
        return invalid(where, "has a negative time or speed");
    auto cached = integer_field(o, "prompt_tokens_cached", where, 0, kI64Max);
    if (!cached) return cached.error();
    auto computed = integer_field(o, "prompt_tokens_computed", where, 0, kI64Max);
    if (!computed) return computed.error();
    auto generated = integer_field(o, "generated_tokens", where, 0, kI64Max);
    if (!generated) return generated.error();
    s.ttft_ms = *ttft;
    s.tokens_per_second = *speed;
    s.prompt_tokens_cached = *cached;
    s.prompt_tokens_computed = *computed;
    s.generated_tokens = *generated;
    auto dropped = integer_field(o, "messages_dropped", where, 0, kI64Max);
    if (!dropped) return dropped.error();
    auto shifted = integer_field(o, "prompt_tokens_shifted", where, 0, kI64Max);
    if (!shifted) return shifted.error();
    auto loaded = integer_field(o, "prompt_tokens_loaded", where, 0, kI64Max);
    if (!loaded) return loaded.error();
    s.messages_dropped = *dropped;
    s.prompt_tokens_shifted = *shifted;
    s.prompt_tokens_loaded = *loaded;
    auto drafted = integer_field(o, "draft_tokens", where, 0, kI64Max);
    if (!drafted) return drafted.error();
    auto accepted = integer_field(o, "draft_accepted", where, 0, kI64Max);
    if (!accepted) return accepted.error();
    if (*drafted && *accepted && *accepted > *drafted)
        return invalid(at(where, "draft_accepted"), "exceeds draft_tokens");
    s.draft_tokens = *drafted;
    s.draft_accepted = *accepted;
    // Exported as a decimal string (64 unsigned bits); a plain whole number is taken too.
    const QJsonValue seed = o.value(QLatin1String("seed"));
    if (seed.isString()) {
        bool ok = false;
        const QString digits = seed.toString();
        const qulonglong value = digits.toULongLong(&ok);
        if (!ok || digits.isEmpty() || !digits.front().isDigit())
            return invalid(at(where, "seed"), "must be a whole number from 0 to 2^64 - 1");
        s.seed = value;
    } else {
        auto number = integer_field(o, "seed", where, 0, kI64Max);
        if (!number) return number.error();
        if (*number) s.seed = static_cast<std::uint64_t>(**number);
    }
    auto reasoning = number_field(o, "reasoning_ms", where);
    if (!reasoning) return reasoning.error();
    if (*reasoning && **reasoning < 0) return invalid(where, "has a negative time or speed");
    s.reasoning_ms = *reasoning;
    auto reason = text_field(o, "finish_reason", where, false, 16);
    if (!reason) return reason.error();
    if (!reason->isEmpty()) {
        s.finish_reason = finish_reason_from_name(*reason);
        if (!s.finish_reason)
            return invalid(at(where, "finish_reason"),
                           "must be \"stop\", \"length\", \"cancelled\" or \"error\"");
    }
    if (o.contains(QLatin1String("error"))) {
        auto error = text_field(o, "error", where, true, 4096);
        if (!error) return error.error();
        s.error = *error;
    }
    return s;
}

struct ImportedMessage {
    std::optional<int> parent;  // index into the file's messages
    Message message;            // ids unset
};

Result<ImportedMessage> read_message(const QJsonValue& value, int index, const QDateTime& now) {
    const std::string where = "messages[" + std::to_string(index) + "]";
    if (!value.isObject()) return invalid(where, "must be an object");
    const QJsonObject o = value.toObject();
    ImportedMessage out;
    Message& m = out.message;
    auto parent = integer_field(o, "parent", where, 0, index - 1);
    if (!parent)
        return invalid(at(where, "parent"), "must be null or the index of an earlier message");
    if (*parent) out.parent = static_cast<int>(**parent);
    auto role_text = text_field(o, "role", where, true, 16);
    if (!role_text) return role_text.error();
    const auto role = role_from_name(*role_text);
    if (!role) return invalid(at(where, "role"), "must be \"system\", \"user\" or \"assistant\"");
    m.role = *role;
    auto state_text = text_field(o, "state", where, false, 16);
    if (!state_text) return state_text.error();
    const auto state = state_text->isEmpty() ? std::optional(MessageState::Complete)
                                             : state_from_name(*state_text);
    if (!state)
        return invalid(at(where, "state"),
                       "must be \"complete\", \"interrupted\", \"failed\" or \"streaming\"");
    // Nothing streams into an imported message.
    m.state = *state == MessageState::Streaming ? MessageState::Interrupted : *state;
    auto text = text_field(o, "text", where, true, detail::kMaxMessageChars);
    if (!text) return text.error();
    m.text = std::move(*text);
    auto created = time_field(o, "created_at", where, now);
    if (!created) return created.error();
    auto updated = time_field(o, "updated_at", where, *created);
    if (!updated) return updated.error();
    m.created_at = *created;
    m.updated_at = *updated;

    auto tokens = object_field(o, "tokens", where);
    if (!tokens) return tokens.error();
    if (*tokens) {
        const std::string tw = at(where, "tokens");
        auto fp = text_field(**tokens, "fingerprint", tw, false, 128);
        if (!fp) return fp.error();
        auto normalized = detail::normalize_fingerprint(*fp);
        if (!normalized) return invalid(at(tw, "fingerprint"), normalized.message());
        m.token_fingerprint = *normalized;
        const QJsonValue ids = (*tokens)->value(QLatin1String("ids"));
        if (!ids.isUndefined()) {
            if (!ids.isArray()) return invalid(at(tw, "ids"), "must be an array of token ids");
            const QJsonArray array = ids.toArray();
            if (static_cast<std::size_t>(array.size()) > detail::kMaxMessageTokens)
                return invalid(at(tw, "ids"), "has too many token ids");
            m.token_ids.reserve(static_cast<std::size_t>(array.size()));
            for (const QJsonValue& id : array) {
                const double d = id.toDouble(std::nan(""));
                if (!id.isDouble() || d != std::floor(d) || d < static_cast<double>(kI32Min) ||
                    d > static_cast<double>(kI32Max))
                    return invalid(at(tw, "ids"), "must hold whole numbers that fit in 32 bits");
                m.token_ids.push_back(static_cast<std::int32_t>(d));
            }
        }
    }
    auto stats = object_field(o, "stats", where);
    if (!stats) return stats.error();
    if (*stats) {
        auto s = read_stats(**stats, at(where, "stats"));
        if (!s) return s.error();
        m.stats = *s;
    }
    const QJsonValue sources = o.value(QLatin1String("sources"));
    if (!sources.isUndefined() && !sources.isNull()) {
        if (!sources.isArray()) return invalid(at(where, "sources"), "must be a list of passages");
        auto read = detail::sources_from_json(
            QString::fromUtf8(QJsonDocument(sources.toArray()).toJson(QJsonDocument::Compact)));
        if (!read) return invalid(at(where, "sources"), read.message());
        for (Source& s : *read) s.document_id = 0;  // another history's documents
        m.sources = std::move(*read);
    }
    return out;
}

}  // namespace

Result<Id> Store::import_json(const QByteArray& data) {
    if (data.size() > kMaxImportBytes)
        return make_error("the file is too large for a conversation export");
    QJsonParseError parse_error{};
    const QJsonDocument doc = QJsonDocument::fromJson(data, &parse_error);
    if (parse_error.error != QJsonParseError::NoError)
        return make_error("the file is not valid JSON (at byte " +
                          std::to_string(parse_error.offset) + ": " +
                          parse_error.errorString().toStdString() + ")");
    if (!doc.isObject()) return invalid("the top level", "must be an object");
    const QJsonObject root = doc.object();
    if (root.value(QLatin1String("format")).toString() != QLatin1String(kExchangeFormat))
        return make_error("the file is not a Hearth conversation export (its \"format\" is not \"" +
                          std::string(kExchangeFormat) + "\")");
    auto version = integer_field(root, "version", {}, 1, std::numeric_limits<int>::max());
    if (!version || !*version) return invalid("version", "must be a positive whole number");
    if (**version > kExchangeVersion)
        return make_error("the file was exported by a newer version of Hearth (format version " +
                          std::to_string(**version) + "); update Hearth to import it");
    const QDateTime now = QDateTime::currentDateTimeUtc();

    auto conv_json = object_field(root, "conversation", {});
    if (!conv_json) return conv_json.error();
    if (!*conv_json) return invalid("conversation", "is missing");
    const QJsonObject& cj = **conv_json;
    Conversation conv;
    auto title = text_field(cj, "title", "conversation", false, 500);
    if (!title) return title.error();
    conv.title = *title;
    auto created = time_field(cj, "created_at", "conversation", now);
    if (!created) return created.error();
    auto updated = time_field(cj, "updated_at", "conversation", *created);
    if (!updated) return updated.error();
    auto pinned = flag_field(cj, "pinned", "conversation");
    if (!pinned) return pinned.error();
    auto archived = flag_field(cj, "archived", "conversation");
    if (!archived) return archived.error();
    conv.pinned = *pinned;
    conv.archived = *archived;
    auto sampling_json = object_field(cj, "sampling", "conversation");
    if (!sampling_json) return sampling_json.error();
    if (*sampling_json) {
        auto s = read_sampling(**sampling_json, "conversation.sampling");
        if (!s) return s.error();
        conv.sampling = *s;
    }

    std::optional<Persona> persona_in;
    auto pj = object_field(root, "persona", {});
    if (!pj) return pj.error();
    if (*pj) {
        Persona p;
        auto name = text_field(**pj, "name", "persona", true, 200);
        if (!name) return name.error();
        auto prompt = text_field(**pj, "system_prompt", "persona", false, 1 << 20);
        if (!prompt) return prompt.error();
        auto warm = flag_field(**pj, "keep_warm", "persona");
        if (!warm) return warm.error();
        auto color = text_field(**pj, "color", "persona", false, 7);
        if (!color) return color.error();
        auto avatar = text_field(**pj, "avatar", "persona", false, 32);
        if (!avatar) return avatar.error();
        p.name = *name;
        p.system_prompt = *prompt;
        p.keep_warm = *warm;
        p.color = *color;
        p.avatar = *avatar;
        auto sampling = object_field(**pj, "sampling", "persona");
        if (!sampling) return sampling.error();
        if (*sampling) {
            auto s = read_sampling(**sampling, "persona.sampling");
            if (!s) return s.error();
            p.sampling = *s;
        }
        if (auto rc = detail::validate_persona(p); !rc) return invalid("persona", rc.message());
        persona_in = std::move(p);
    }
    QString model_fingerprint;
    auto mj = object_field(root, "model", {});
    if (!mj) return mj.error();
    if (*mj) {
        auto fp = text_field(**mj, "fingerprint", "model", true, 128);
        if (!fp) return fp.error();
        auto normalized = detail::normalize_fingerprint(*fp);
        if (!normalized) return invalid("model.fingerprint", normalized.message());
        model_fingerprint = *normalized;
    }

    const QJsonValue list = root.value(QLatin1String("messages"));
    if (!list.isArray()) return invalid("messages", "must be an array");
    const QJsonArray array = list.toArray();
    if (array.size() > kMaxImportMessages) return invalid("messages", "has too many messages");
    std::vector<ImportedMessage> messages;
    messages.reserve(static_cast<std::size_t>(array.size()));
    for (int i = 0; i < array.size(); ++i) {
        auto m = read_message(array[i], i, now);
        if (!m) return m.error();
        messages.push_back(std::move(*m));
    }
    auto leaf =
        integer_field(root, "active_leaf", {}, 0, static_cast<std::int64_t>(messages.size()) - 1);
    if (!leaf) return invalid("active_leaf", "must be null or the index of a message");

    // Everything is valid: write it in one transaction.
    auto tx = Transaction::begin(db_);
    if (!tx) return context("importing the conversation", tx.error());
    if (persona_in) {
        // Reuse an identical persona rather than adding a duplicate for every import (the
        // same name and prompt: sampling settings tuned here since the export are kept).
        auto existing = personas();
        if (!existing) return existing.error();
        for (const Persona& p : *existing)
            if (p.name == persona_in->name.trimmed() &&
                p.system_prompt == persona_in->system_prompt)
                conv.persona_id = p.id;
        if (!conv.persona_id) {
            auto created_persona = create_persona(*persona_in);
            if (!created_persona) return created_persona.error();
            conv.persona_id = created_persona->id;
        }
    }
    if (!model_fingerprint.isEmpty()) {
        // Only a model this machine already knows; a path from elsewhere is never stored.
        auto known = model_by_fingerprint(model_fingerprint);
        if (!known) return known.error();
        if (*known) conv.model_id = (*known)->id;
    }
    auto inserted = create_conversation(conv);
    if (!inserted) return inserted.error();
    const Id conversation_id = inserted->id;
    auto times =
        db_.prepare("UPDATE conversations SET created_at = ?, updated_at = ? WHERE id = ?");
    if (!times) return times.error();
    times->bind(1, detail::to_ms(*created))
        .bind(2, detail::to_ms(*updated))
        .bind(3, conversation_id);
    if (auto rc = times->run(); !rc) return context("importing the conversation", rc.error());

    auto stmt = db_.prepare(
        "INSERT INTO messages (conversation_id, parent_id, role, content, token_ids, "
        "token_fingerprint, state, created_at, updated_at, ttft_ms, tokens_per_second, "
        "prompt_tokens_cached, prompt_tokens_computed, generated_tokens, seed, finish_reason, "
        "reasoning_ms, error, messages_dropped, prompt_tokens_shifted, prompt_tokens_loaded, "
        "sources, draft_tokens, draft_accepted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    if (!stmt) return stmt.error();
    std::vector<Id> ids;
    ids.reserve(messages.size());
    for (const ImportedMessage& im : messages) {
        const Message& m = im.message;
        stmt->reset();
        stmt->bind(1, conversation_id);
        if (im.parent)
            stmt->bind(2, ids[static_cast<std::size_t>(*im.parent)]);
        else
            stmt->bind_null(2);
        stmt->bind(3, role_name(m.role))
            .bind(4, m.text)
            .bind_blob(5, encode_token_ids(m.token_ids));
        stmt->bind(6, m.token_fingerprint).bind(7, state_name(m.state));
        stmt->bind(8, detail::to_ms(m.created_at)).bind(9, detail::to_ms(m.updated_at));
        stmt->bind(10, m.stats.ttft_ms).bind(11, m.stats.tokens_per_second);
        stmt->bind(12, m.stats.prompt_tokens_cached).bind(13, m.stats.prompt_tokens_computed);
        stmt->bind(14, m.stats.generated_tokens).bind(15, detail::seed_to_column(m.stats.seed));
        if (m.stats.finish_reason)
            stmt->bind(16, finish_reason_name(*m.stats.finish_reason));
        else
            stmt->bind_null(16);
        stmt->bind(17, m.stats.reasoning_ms);
        if (m.stats.error)
            stmt->bind(18, *m.stats.error);
        else
            stmt->bind_null(18);
        stmt->bind(19, m.stats.messages_dropped).bind(20, m.stats.prompt_tokens_shifted);
        stmt->bind(21, m.stats.prompt_tokens_loaded);
        if (m.sources.empty())
            stmt->bind_null(22);
        else
            stmt->bind(22, detail::sources_to_json(m.sources));
        stmt->bind(23, m.stats.draft_tokens).bind(24, m.stats.draft_accepted);
        if (auto rc = stmt->run(); !rc) return context("importing the conversation", rc.error());
        ids.push_back(db_.last_insert_id());
    }
    // The leaf shown is the end of the branch through the file's active message (or the
    // newest first message), so a leaf that is not a leaf cannot cut the thread short.
    std::optional<Id> anchor;
    if (*leaf) anchor = ids[static_cast<std::size_t>(**leaf)];
    for (std::size_t i = messages.size(); !anchor && i > 0; --i)
        if (!messages[i - 1].parent) anchor = ids[i - 1];
    if (anchor) {
        auto end = descend(*anchor);
        if (!end) return end.error();
        if (auto rc = show_leaf(conversation_id, *end); !rc) return rc.error();
    }
    if (auto rc = tx->commit(); !rc) return context("importing the conversation", rc.error());
    return conversation_id;
}

Result<Id> Store::import_file(const QString& path) {
    auto source = validate_import_path(path, this->path());
    if (!source) return source.error();
    QFile file(*source);
    if (!file.open(QIODevice::ReadOnly))
        return make_error("cannot read " + source->toStdString() + ": " +
                          file.errorString().toStdString());
    // Read at most one byte past the limit, whatever the file grew to since the check.
    const QByteArray data = file.read(kMaxImportBytes + 1);
    if (data.size() > kMaxImportBytes)
        return make_error(source->toStdString() + " is too large to import");
    auto id = import_json(data);
    if (!id) return context("importing " + source->toStdString(), id.error());
    return id;
}

}  // namespace hearth::store
