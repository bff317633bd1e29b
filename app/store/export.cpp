// Export of one conversation: Markdown (the thread on screen, for reading and sharing) and
// JSON (every variant, statistics and token ids, for import; format in exchange_format.h).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <unordered_map>

#include "store/exchange_format.h"
#include "store/path_check.h"
#include "store/rows.h"
#include "store/store.h"

namespace hearth::store {

using detail::context;

namespace {

QString iso(const QDateTime& time) {
    return time.toUTC().toString(Qt::ISODateWithMs);
}

template <typename T>
void put(QJsonObject& object, const char* key, const std::optional<T>& value) {
    if (value) object.insert(QLatin1String(key), QJsonValue(*value));
}

QJsonObject sampling_json(const SamplingSettings& s) {
    QJsonObject o;
    put(o, "temperature", s.temperature);
    put(o, "top_p", s.top_p);
    put(o, "min_p", s.min_p);
    put(o, "top_k", s.top_k);
    put(o, "repeat_penalty", s.repeat_penalty);
    put(o, "frequency_penalty", s.frequency_penalty);
    put(o, "presence_penalty", s.presence_penalty);
    if (s.seed) o.insert(QLatin1String("seed"), QJsonValue(static_cast<qint64>(*s.seed)));
    put(o, "max_tokens", s.max_tokens);
    put(o, "thinking", s.thinking);
    if (s.stop) {
        QJsonArray stop;
        for (const QString& text : *s.stop) stop.append(text);
        o.insert(QLatin1String("stop"), stop);
    }
    return o;
}

QJsonObject stats_json(const GenerationStats& s) {
    QJsonObject o;
    put(o, "ttft_ms", s.ttft_ms);
    put(o, "tokens_per_second", s.tokens_per_second);
    const auto put64 = [&](const char* key, const std::optional<std::int64_t>& v) {
        if (v) o.insert(QLatin1String(key), QJsonValue(static_cast<qint64>(*v)));
    };
    put64("prompt_tokens_cached", s.prompt_tokens_cached);
    put64("prompt_tokens_computed", s.prompt_tokens_computed);
    put64("generated_tokens", s.generated_tokens);
    put64("messages_dropped", s.messages_dropped);
    put64("prompt_tokens_shifted", s.prompt_tokens_shifted);
    put64("prompt_tokens_loaded", s.prompt_tokens_loaded);
    put64("draft_tokens", s.draft_tokens);
    put64("draft_accepted", s.draft_accepted);
    // A string: an unsigned 64-bit seed may be past what JSON numbers hold exactly.
    if (s.seed) o.insert(QLatin1String("seed"), QString::number(*s.seed));
    if (s.finish_reason)
        o.insert(QLatin1String("finish_reason"), finish_reason_name(*s.finish_reason));
    put(o, "reasoning_ms", s.reasoning_ms);
    if (s.error) o.insert(QLatin1String("error"), *s.error);
    return o;
}

struct Gathered {
    Conversation conversation;
    std::optional<Persona> persona;
    std::optional<ModelRecord> model;
};

QString speaker(Role role, const std::optional<Persona>& persona) {
    switch (role) {
        case Role::System:
            return QStringLiteral("System");
        case Role::User:
            return QStringLiteral("You");
        case Role::Assistant:
            return persona ? persona->name : QStringLiteral("Assistant");
    }
    return {};
}

QByteArray markdown(const Gathered& g, const std::vector<ThreadEntry>& thread) {
    QString out;
    const QString title = g.conversation.title.isEmpty() ? QStringLiteral("Untitled conversation")
                                                         : g.conversation.title;
    out += QStringLiteral("# ") + title + QStringLiteral("\n\n");
    QStringList meta;
    meta << QStringLiteral("Started ") + g.conversation.created_at.toUTC().toString(
                                             QStringLiteral("yyyy-MM-dd HH:mm 'UTC'"));
    if (g.persona) meta << QStringLiteral("Persona: ") + g.persona->name;
    if (g.model)
        meta << QStringLiteral("Model: ") + (g.model->display_name.isEmpty()
                                                 ? g.model->fingerprint.left(12)
                                                 : g.model->display_name);
    out += QStringLiteral("*") + meta.join(QStringLiteral(" · ")) + QStringLiteral("*\n\n");
    if (g.persona && !g.persona->system_prompt.isEmpty()) {
        out += QStringLiteral("> **System prompt**\n>\n");
        for (const QString& line : g.persona->system_prompt.split(QLatin1Char('\n')))
            out += QStringLiteral("> ") + line + QLatin1Char('\n');
        out += QLatin1Char('\n');
    }
    for (const ThreadEntry& entry : thread) {
        const Message& m = entry.message;
        out += QStringLiteral("---\n\n### ") + speaker(m.role, g.persona) + QStringLiteral(" · ") +
               m.created_at.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm 'UTC'"));
        if (entry.variant_count > 1)
            out += QStringLiteral(" · variant %1 of %2")
                       .arg(entry.variant_index + 1)
                       .arg(entry.variant_count);
        if (m.stats.tokens_per_second)
            out += QStringLiteral(" · %1 tokens/s").arg(*m.stats.tokens_per_second, 0, 'f', 1);
        out += QStringLiteral("\n\n") + m.text + QLatin1Char('\n');
        if (m.state == MessageState::Interrupted)
            out += QStringLiteral("\n*(reply interrupted)*\n");
        if (m.state == MessageState::Failed) out += QStringLiteral("\n*(reply failed)*\n");
        out += QLatin1Char('\n');
    }
    return out.toUtf8();
}

QByteArray json(const Gathered& g, const std::vector<Message>& messages) {
    QJsonObject root;
    root.insert(QLatin1String("format"), QLatin1String(kExchangeFormat));
    root.insert(QLatin1String("version"), kExchangeVersion);
    root.insert(QLatin1String("exported_at"), iso(QDateTime::currentDateTimeUtc()));

    const Conversation& c = g.conversation;
    QJsonObject conv;
    conv.insert(QLatin1String("title"), c.title);
    conv.insert(QLatin1String("created_at"), iso(c.created_at));
    conv.insert(QLatin1String("updated_at"), iso(c.updated_at));
    conv.insert(QLatin1String("pinned"), c.pinned);
    conv.insert(QLatin1String("archived"), c.archived);
    conv.insert(QLatin1String("sampling"), sampling_json(c.sampling));
    root.insert(QLatin1String("conversation"), conv);

    if (g.persona) {
        QJsonObject p;
        p.insert(QLatin1String("name"), g.persona->name);
        p.insert(QLatin1String("system_prompt"), g.persona->system_prompt);
        p.insert(QLatin1String("keep_warm"), g.persona->keep_warm);
        p.insert(QLatin1String("color"), g.persona->color);
        p.insert(QLatin1String("avatar"), g.persona->avatar);
        p.insert(QLatin1String("sampling"), sampling_json(g.persona->sampling));
        root.insert(QLatin1String("persona"), p);
    } else {
        root.insert(QLatin1String("persona"), QJsonValue::Null);
    }
    if (g.model) {
        QJsonObject m;
        m.insert(QLatin1String("fingerprint"), g.model->fingerprint);
        m.insert(QLatin1String("display_name"), g.model->display_name);
        root.insert(QLatin1String("model"), m);  // never the path: it means nothing elsewhere
    } else {
        root.insert(QLatin1String("model"), QJsonValue::Null);
    }

    // Messages are referred to by their index in the file; parents come first because a
    // message's id is always greater than its parent's.
    std::unordered_map<Id, int> index;
    QJsonArray list;
    for (const Message& m : messages) {
        QJsonObject o;
        o.insert(QLatin1String("parent"),
                 m.parent_id ? QJsonValue(index.at(*m.parent_id)) : QJsonValue::Null);
        o.insert(QLatin1String("role"), role_name(m.role));
        o.insert(QLatin1String("state"), state_name(m.state));
        o.insert(QLatin1String("text"), m.text);
        o.insert(QLatin1String("created_at"), iso(m.created_at));
        o.insert(QLatin1String("updated_at"), iso(m.updated_at));
        if (!m.token_fingerprint.isEmpty() || !m.token_ids.empty()) {
            QJsonArray ids;
            for (std::int32_t id : m.token_ids) ids.append(id);
            QJsonObject tokens;
            tokens.insert(QLatin1String("fingerprint"), m.token_fingerprint);
            tokens.insert(QLatin1String("ids"), ids);
            o.insert(QLatin1String("tokens"), tokens);
        }
        const QJsonObject stats = stats_json(m.stats);
        if (!stats.isEmpty()) o.insert(QLatin1String("stats"), stats);
        if (!m.sources.empty()) {  // the passages it was given (document ids stay here)
            std::vector<Source> sources = m.sources;
            for (Source& s : sources) s.document_id = 0;
            o.insert(QLatin1String("sources"),
                     QJsonDocument::fromJson(detail::sources_to_json(sources).toUtf8()).array());
        }
        index.emplace(m.id, static_cast<int>(list.size()));
        list.append(o);
    }
    root.insert(QLatin1String("messages"), list);
    const auto leaf = c.active_leaf_id ? index.find(*c.active_leaf_id) : index.end();
    root.insert(QLatin1String("active_leaf"),
                leaf != index.end() ? QJsonValue(leaf->second) : QJsonValue::Null);
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

}  // namespace

Result<QByteArray> Store::export_conversation(Id conversation_id, ExportFormat format) {
    Gathered g;
    auto c = conversation(conversation_id);
    if (!c) return c.error();
    g.conversation = std::move(*c);
    if (g.conversation.persona_id) {
        auto p = persona(*g.conversation.persona_id);
        if (!p) return p.error();
        g.persona = std::move(*p);
    }
    if (g.conversation.model_id) {
        auto all = models();
        if (!all) return all.error();
        for (ModelRecord& m : *all)
            if (m.id == *g.conversation.model_id) g.model = std::move(m);
    }
    if (format == ExportFormat::Markdown) {
        auto thread = active_thread(conversation_id);
        if (!thread) return thread.error();
        return markdown(g, *thread);
    }
    auto messages = all_messages(conversation_id);
    if (!messages) return messages.error();
    return json(g, *messages);
}

Result<void> Store::export_to_file(Id conversation_id, ExportFormat format, const QString& path,
                                   bool overwrite) {
    auto target = validate_export_path(path, this->path(), overwrite);
    if (!target) return target.error();
    auto data = export_conversation(conversation_id, format);
    if (!data) return data.error();
    // QSaveFile writes a temporary file and renames it over the target on commit, so a
    // failure (a full disk) never leaves a half-written export or destroys the old one.
    QSaveFile file(*target);
    if (!file.open(QIODevice::WriteOnly))
        return make_error("cannot write " + target->toStdString() + ": " +
                          file.errorString().toStdString());
    if (file.write(*data) != data->size() || !file.commit())
        return make_error("writing " + target->toStdString() +
                          " failed: " + file.errorString().toStdString());
    return {};
}

}  // namespace hearth::store
