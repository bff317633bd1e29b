// LM Studio's .conversation.json: docs/research/chat-files.md §3 (third-party evidence; the
// stop reasons are lmstudio-js's LLMPredictionStopReason, LLMPredictionStats.ts).
#include "imports/lmstudio_conversations.h"

#include <algorithm>
#include <cmath>

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "imports/note_words.h"

namespace hearth::imports {
namespace {

constexpr qint64 kMaxFileBytes = 64LL << 20;

struct Counts {
    int attachments = 0, tool_calls = 0, citations = 0, unknown = 0, unknown_roles = 0;
    int branched_messages = 0, other_versions = 0;
    QStringList attachment_names;
};

QString join_text_parts(const QJsonArray& parts, Counts& counts) {
    QString text;
    for (const QJsonValue& v : parts) {
        const QJsonObject part = v.toObject();
        const QString type = part.value(QLatin1String("type")).toString();
        if (type == QLatin1String("text")) {
            text += part.value(QLatin1String("text")).toString();
        } else if (type == QLatin1String("file")) {
            ++counts.attachments;
            QString name = part.value(QLatin1String("name")).toString();
            if (name.isEmpty()) name = part.value(QLatin1String("fileIdentifier")).toString();
            counts.attachment_names << name;
        } else if (type == QLatin1String("toolCallRequest")) {
            ++counts.tool_calls;
        } else if (type != QLatin1String("toolCallResult")) {  // counted with its request
            ++counts.unknown;
        }
    }
    return text;
}

// genInfo.stats (LLMPredictionStats) of a reply's last generation.
void read_stats(const QJsonObject& stats, ImportedMessage& m) {
    const auto number = [&](const char* key) -> std::optional<double> {
        const QJsonValue v = stats.value(QLatin1String(key));
        if (!v.isDouble() || !std::isfinite(v.toDouble()) || v.toDouble() < 0) return {};
        return v.toDouble();
    };
    m.stats.tokens_per_second = number("tokensPerSecond");
    if (const auto ttft = number("timeToFirstTokenSec")) m.stats.ttft_ms = *ttft * 1000.0;
    if (const auto n = number("predictedTokensCount"); n && *n < 9e15)
        m.stats.generated_tokens = static_cast<std::int64_t>(*n);
    const QString reason = stats.value(QLatin1String("stopReason")).toString();
    if (reason == QLatin1String("eosFound") || reason == QLatin1String("stopStringFound") ||
        reason == QLatin1String("toolCalls")) {
        m.stats.finish_reason = store::FinishReason::Stop;
    } else if (reason == QLatin1String("maxPredictedTokensReached") ||
               reason == QLatin1String("contextLengthReached")) {
        m.stats.finish_reason = store::FinishReason::Length;
    } else if (reason == QLatin1String("userStopped") || reason == QLatin1String("modelUnloaded")) {
        m.stats.finish_reason = store::FinishReason::Cancelled;
        m.state = store::MessageState::Interrupted;
    } else if (reason == QLatin1String("failed")) {
        m.stats.finish_reason = store::FinishReason::Error;
        m.stats.error = QStringLiteral("the reply failed in LM Studio");
        m.state = store::MessageState::Failed;
    }
}

// One version of a message: a user or system "singleStep", an assistant "multiStep".
std::optional<ImportedMessage> read_version(const QJsonObject& v, Counts& counts) {
    ImportedMessage m;
    const QString type = v.value(QLatin1String("type")).toString();
    const QString role = v.value(QLatin1String("role")).toString();
    if (role == QLatin1String("user")) {
        m.role = store::Role::User;
    } else if (role == QLatin1String("system")) {
        m.role = store::Role::System;
    } else if (role == QLatin1String("assistant") ||
               (role.isEmpty() && type == QLatin1String("multiStep"))) {
        m.role = store::Role::Assistant;
    } else {
        ++counts.unknown_roles;
        return std::nullopt;
    }
    if (type != QLatin1String("multiStep")) {
        m.text = join_text_parts(v.value(QLatin1String("content")).toArray(), counts);
        return m;
    }
    QStringList reasoning, answer;
    for (const QJsonValue& value : v.value(QLatin1String("steps")).toArray()) {
        const QJsonObject step = value.toObject();
        const QString kind = step.value(QLatin1String("type")).toString();
        if (kind == QLatin1String("contentBlock")) {
            const QString text =
                join_text_parts(step.value(QLatin1String("content")).toArray(), counts);
            const QString style = step.value(QLatin1String("style"))
                                      .toObject()
                                      .value(QLatin1String("type"))
                                      .toString();
            if (!text.trimmed().isEmpty())
                (style == QLatin1String("thinking") ? reasoning : answer) << text.trimmed();
            const QJsonObject info = step.value(QLatin1String("genInfo")).toObject();
            if (info.contains(QLatin1String("stats")))
                read_stats(info.value(QLatin1String("stats")).toObject(), m);
        } else if (kind == QLatin1String("citationBlock")) {
            ++counts.citations;
        } else if (kind != QLatin1String("toolStatus") && kind != QLatin1String("debugInfoBlock") &&
                   kind != QLatin1String("status")) {
            // toolStatus belongs to its request; debug timings and status lines are not
            // part of the conversation.
            ++counts.unknown;
        }
    }
    m.text = answer.join(QStringLiteral("\n\n"));
    if (!reasoning.isEmpty())
        m.text = QStringLiteral("<think>\n") + reasoning.join(QStringLiteral("\n\n")) +
                 QStringLiteral("\n</think>\n\n") + m.text;
    return m;
}

QDateTime ms_time(const QJsonValue& v) {
    if (!v.isDouble()) return {};
    const double ms = v.toDouble();
    if (!std::isfinite(ms) || ms <= 0 || ms > 253402300799000.0) return {};
    return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(std::llround(ms)), Qt::UTC);
}

}  // namespace

Result<ImportedChat> read_lmstudio_conversation(const QByteArray& json, const QString& file_name,
                                                const QDateTime& modified) {
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError)
        return make_error(QStringLiteral("not valid JSON (at byte %1: %2)")
                              .arg(error.offset)
                              .arg(error.errorString())
                              .toStdString());
    const QJsonObject root = doc.object();
    if (!doc.isObject() || !root.value(QLatin1String("messages")).isArray())
        return make_error("not an LM Studio conversation (it has no \"messages\" list)");

    ImportedChat chat;
    QString stem = file_name;
    if (stem.endsWith(QLatin1String(".conversation.json"), Qt::CaseInsensitive)) stem.chop(18);
    chat.title = root.value(QLatin1String("name")).toString().trimmed();
    chat.pinned = root.value(QLatin1String("pinned")).toBool();
    chat.created_at = ms_time(root.value(QLatin1String("createdAt")));
    if (!chat.created_at.isValid()) {
        bool ok = false;
        const qint64 ms = stem.toLongLong(&ok);
        if (ok) chat.created_at = ms_time(QJsonValue(static_cast<double>(ms)));
    }
    if (!chat.created_at.isValid())
        chat.created_at = modified.isValid() ? modified.toUTC() : QDateTime::currentDateTimeUtc();
    chat.origin =
        QStringLiteral("lmstudio:%1:%2").arg(file_name).arg(chat.created_at.toMSecsSinceEpoch());
    for (const char* key : {"userLastMessagedAt", "assistantLastMessagedAt"}) {
        const QDateTime t = ms_time(root.value(QLatin1String(key)));
        if (t.isValid() && t > chat.created_at &&
            (!chat.updated_at.isValid() || t > chat.updated_at))
            chat.updated_at = t;
    }
    // The chat's system prompt: perChatPredictionConfig's llm.prediction.systemPrompt in
    // newer files, else the older top-level systemPrompt.
    for (const QJsonValue& f : root.value(QLatin1String("perChatPredictionConfig"))
                                   .toObject()
                                   .value(QLatin1String("fields"))
                                   .toArray())
        if (f.toObject().value(QLatin1String("key")).toString() ==
            QLatin1String("llm.prediction.systemPrompt"))
            chat.system_prompt = f.toObject().value(QLatin1String("value")).toString();
    if (chat.system_prompt.trimmed().isEmpty())
        chat.system_prompt = root.value(QLatin1String("systemPrompt")).toString();
    chat.persona_name = QStringLiteral("LM Studio");
    const QJsonObject model = root.value(QLatin1String("lastUsedModel")).toObject();
    for (const char* key : {"identifier", "indexedModelIdentifier"}) {
        const QString name = model.value(QLatin1String(key)).toString();
        if (!name.isEmpty() && !chat.model_names.contains(name)) chat.model_names << name;
    }

    Counts counts;
    int previous = -1;  // the selected version of the message before
    for (const QJsonValue& value : root.value(QLatin1String("messages")).toArray()) {
        const QJsonObject message = value.toObject();
        const QJsonArray versions = message.value(QLatin1String("versions")).toArray();
        if (versions.isEmpty()) continue;
        const int selected = std::clamp(message.value(QLatin1String("currentlySelected")).toInt(0),
                                        0, static_cast<int>(versions.size()) - 1);
        int shown = -1, others = 0;
        for (int i = 0; i < versions.size(); ++i) {
            auto m = read_version(versions[i].toObject(), counts);
            if (!m) continue;
            m->parent = previous;
            if (m->role == store::Role::Assistant && chat.model_names.isEmpty()) {
                const QString sender = versions[i]
                                           .toObject()
                                           .value(QLatin1String("senderInfo"))
                                           .toObject()
                                           .value(QLatin1String("senderName"))
                                           .toString();
                if (!sender.isEmpty()) chat.model_names << sender;
            }
            chat.messages.push_back(std::move(*m));
            if (i == selected || (shown < 0 && i == versions.size() - 1))
                shown = static_cast<int>(chat.messages.size()) - 1;
            else
                ++others;
        }
        if (shown < 0) continue;
        if (others) {
            ++counts.branched_messages;
            counts.other_versions += others;
        }
        previous = shown;
    }
    chat.active_leaf = previous;

    if (counts.other_versions)
        chat.notes << QStringLiteral("%1 of %2 (regenerated or edited) %3 kept as branches")
                          .arg(plural(counts.other_versions, "other version", "other versions"),
                               plural(counts.branched_messages, "message", "messages"),
                               was(counts.other_versions));
    if (counts.attachments) {
        counts.attachment_names.removeAll(QString());
        chat.notes << QStringLiteral("%1 (%2) %3 not imported")
                          .arg(plural(counts.attachments, "attached file", "attached files"),
                               counts.attachment_names.join(QStringLiteral(", ")),
                               was(counts.attachments));
    }
    if (counts.tool_calls) chat.notes << tool_calls_note(counts.tool_calls);
    if (counts.citations)
        chat.notes << QStringLiteral("the document citations of %1 %2 not imported")
                          .arg(plural(counts.citations, "reply", "replies"), was(counts.citations));
    if (counts.unknown_roles)
        chat.notes << QStringLiteral("%1 with a role Hearth does not know %2 not imported")
                          .arg(plural(counts.unknown_roles, "message", "messages"),
                               was(counts.unknown_roles));
    if (counts.unknown)
        chat.notes << QStringLiteral("%1 of a kind Hearth does not know %2 not imported")
                          .arg(plural(counts.unknown, "message part", "message parts"),
                               was(counts.unknown));
    return chat;
}

Result<ImportedChat> read_lmstudio_conversation(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return make_error("cannot be read: " + file.errorString().toStdString());
    if (file.size() > kMaxFileBytes)
        return make_error("too large to import (" + std::to_string(file.size() >> 20) + " MB)");
    const QFileInfo info(path);
    return read_lmstudio_conversation(file.readAll(), info.fileName(), info.lastModified().toUTC());
}

}  // namespace hearth::imports
