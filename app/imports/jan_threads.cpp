// Jan's thread folders in all three generations: docs/research/chat-files.md §2.2-2.5.
#include "imports/jan_threads.h"

#include <algorithm>
#include <cmath>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QUrl>

#include "imports/note_words.h"

namespace hearth::imports {
namespace {

constexpr qint64 kMaxThreadBytes = 16 << 20;
constexpr qint64 kMaxMessagesBytes = 256LL << 20;

struct Failed {
    QString why;
};

QByteArray read_file(const QString& path, const char* name, qint64 max_bytes) {
    QFile f(path);
    if (!f.exists()) throw Failed{QStringLiteral("%1 is missing").arg(QLatin1String(name))};
    if (!f.open(QIODevice::ReadOnly))
        throw Failed{
            QStringLiteral("%1 cannot be read: %2").arg(QLatin1String(name), f.errorString())};
    if (f.size() > max_bytes)
        throw Failed{QStringLiteral("%1 is too large to import (%2 MB)")
                         .arg(QLatin1String(name))
                         .arg(f.size() >> 20)};
    return f.readAll();
}

QJsonObject parse_object(const QByteArray& data, const QString& what) {
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(data, &error);
    if (error.error != QJsonParseError::NoError)
        throw Failed{QStringLiteral("%1 is not valid JSON (at byte %2: %3)")
                         .arg(what)
                         .arg(error.offset)
                         .arg(error.errorString())};
    if (!doc.isObject()) throw Failed{QStringLiteral("%1 is not a JSON object").arg(what)};
    return doc.object();
}

// Jan's times: milliseconds (0.4 "created", 0.6 messages' "created_at") or seconds, maybe
// fractional (cortex "created_at", 0.6 threads' "created"); over 1e12 is milliseconds.
QDateTime time_of(const QJsonValue& v) {
    double ms = 0;
    if (v.isDouble()) {
        const double x = v.toDouble();
        if (!std::isfinite(x) || x <= 0) return {};
        ms = x > 1e12 ? x : x * 1000.0;
    } else if (v.isString()) {
        const QDateTime t = QDateTime::fromString(v.toString(), Qt::ISODateWithMs);
        return t.isValid() ? t.toUTC() : QDateTime();
    } else {
        return {};
    }
    if (ms > 253402300799000.0) return {};  // after 9999
    return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(std::llround(ms)), Qt::UTC);
}

QDateTime first_time(const QJsonObject& o, std::initializer_list<const char*> keys) {
    for (const char* key : keys)
        if (QDateTime t = time_of(o.value(QLatin1String(key))); t.isValid()) return t;
    return {};
}

QString text_value(const QJsonValue& text) {
    if (text.isString()) return text.toString();
    return text.toObject().value(QLatin1String("value")).toString();
}

struct Counts {
    int attachments = 0, tool_calls = 0, tool_messages = 0, unknown_roles = 0, unknown_parts = 0;
    QStringList attachment_names;
};

struct Parsed {
    ImportedMessage message;
    bool timed = false;
};

// One line of messages.jsonl (ThreadMessage: core/src/types/message/messageEntity.ts;
// cortex Message::ToJson; web-app lib/completion.ts newUserThreadContent,
// newAssistantThreadContent, postMessageProcessing).
std::optional<Parsed> read_message(const QJsonObject& o, Counts& counts) {
    const QString role = o.value(QLatin1String("role")).toString();
    Parsed p;
    ImportedMessage& m = p.message;
    if (role == QLatin1String("user")) {
        m.role = store::Role::User;
    } else if (role == QLatin1String("assistant")) {
        m.role = store::Role::Assistant;
    } else if (role == QLatin1String("system")) {
        m.role = store::Role::System;
    } else if (role == QLatin1String("tool")) {
        ++counts.tool_messages;
        return std::nullopt;
    } else {
        ++counts.unknown_roles;
        return std::nullopt;
    }
    QStringList texts;
    QString reasoning;
    const QJsonValue content = o.value(QLatin1String("content"));
    if (content.isString()) texts << content.toString();
    for (const QJsonValue& v : content.toArray()) {
        const QJsonObject part = v.toObject();
        const QString type = part.value(QLatin1String("type")).toString();
        if (type == QLatin1String("text")) {
            texts << text_value(part.value(QLatin1String("text")));
        } else if (type == QLatin1String("image") || type == QLatin1String("pdf")) {
            // 0.4/0.5: the prompt, with the file at annotations[0] (storeImage, storeFile).
            const QJsonObject text = part.value(QLatin1String("text")).toObject();
            texts << text.value(QLatin1String("value")).toString();
            QString name = text.value(QLatin1String("name")).toString();
            if (name.isEmpty())
                name =
                    QFileInfo(text.value(QLatin1String("annotations")).toArray().at(0).toString())
                        .fileName();
            ++counts.attachments;
            counts.attachment_names << (name.isEmpty() ? type : name);
        } else if (type == QLatin1String("image_url")) {
            ++counts.attachments;
            const QString url = part.value(QLatin1String("image_url"))
                                    .toObject()
                                    .value(QLatin1String("url"))
                                    .toString();
            counts.attachment_names
                << (url.startsWith(QLatin1String("data:")) ? QStringLiteral("an image")
                                                           : QUrl(url).fileName());
        } else if (type == QLatin1String("reasoning")) {
            if (!reasoning.isEmpty()) reasoning += QStringLiteral("\n\n");
            reasoning += text_value(part.value(QLatin1String("text"))).trimmed();
        } else if (type == QLatin1String("tool_call")) {
            ++counts.tool_calls;
        } else {
            ++counts.unknown_parts;
        }
    }
    texts.removeAll(QString());
    m.text = texts.join(QStringLiteral("\n\n"));
    if (!reasoning.isEmpty())
        m.text =
            QStringLiteral("<think>\n") + reasoning + QStringLiteral("\n</think>\n\n") + m.text;
    const QJsonObject metadata = o.value(QLatin1String("metadata")).toObject();
    counts.tool_calls +=
        static_cast<int>(metadata.value(QLatin1String("tool_calls")).toArray().size());
    for (const QJsonValue& f : metadata.value(QLatin1String("inline_file_contents")).toArray()) {
        ++counts.attachments;
        counts.attachment_names << f.toObject().value(QLatin1String("name")).toString();
    }
    // MessageStatus: ready|pending|error|stopped (0.4, 0.6); cortex in_progress|incomplete|
    // completed (engine/common/message_status.h).
    const QString status = o.value(QLatin1String("status")).toString();
    if (status == QLatin1String("error")) {
        m.state = store::MessageState::Failed;
        m.stats.finish_reason = store::FinishReason::Error;
        QString why = metadata.value(QLatin1String("error")).toString();
        if (why.isEmpty()) why = o.value(QLatin1String("error_code")).toString();
        if (why.isEmpty()) why = QStringLiteral("the reply failed in Jan");
        m.stats.error = why.left(4096);
    } else if (m.role == store::Role::Assistant &&
               (status == QLatin1String("stopped") || status == QLatin1String("pending") ||
                status == QLatin1String("in_progress") || status == QLatin1String("incomplete"))) {
        m.state = store::MessageState::Interrupted;
    }
    m.created_at = first_time(o, {"created_at", "created"});
    p.timed = m.created_at.isValid();
    m.updated_at = first_time(o, {"completed_at", "updated"});
    if (m.updated_at.isValid() && m.created_at.isValid() && m.updated_at < m.created_at)
        m.updated_at = {};
    return p;
}

ImportedChat read_thread(const QString& folder) {
    const QDir dir(folder);
    const QJsonObject thread = parse_object(
        read_file(dir.filePath(QStringLiteral("thread.json")), "thread.json", kMaxThreadBytes),
        QStringLiteral("thread.json"));
    const QByteArray lines = read_file(dir.filePath(QStringLiteral("messages.jsonl")),
                                       "messages.jsonl", kMaxMessagesBytes);
    ImportedChat chat;
    QString id = thread.value(QLatin1String("id")).toString();
    if (id.isEmpty()) id = dir.dirName();
    chat.origin = QStringLiteral("jan:") + id;
    const QJsonObject metadata = thread.value(QLatin1String("metadata")).toObject();
    chat.title = thread.value(QLatin1String("title")).toString();
    // 0.6: metadata.is_favorite (web-app types/threads.d.ts); isFavorite in some builds.
    chat.pinned = metadata.value(QLatin1String("is_favorite")).toBool() ||
                  thread.value(QLatin1String("isFavorite")).toBool();
    if (chat.title.isEmpty()) chat.title = metadata.value(QLatin1String("title")).toString();
    // The assistant of the thread: its instructions are the system prompt, its model the
    // thread's (0.6 fetchThreads: "Model is always stored in assistants[0].model").
    const QJsonObject assistant =
        thread.value(QLatin1String("assistants")).toArray().at(0).toObject();
    chat.system_prompt = assistant.value(QLatin1String("instructions")).toString();
    chat.persona_name = assistant.value(QLatin1String("assistant_name")).toString();
    if (chat.persona_name.isEmpty())
        chat.persona_name = assistant.value(QLatin1String("name")).toString();
    if (chat.persona_name.trimmed().isEmpty()) chat.persona_name = QStringLiteral("Jan");
    for (const QJsonValue& model :
         {assistant.value(QLatin1String("model")), thread.value(QLatin1String("model"))}) {
        // An object {id, engine, ...}; cortex's JanAssistant keeps a plain string.
        const QString model_id = model.isString()
                                     ? model.toString()
                                     : model.toObject().value(QLatin1String("id")).toString();
        if (!model_id.isEmpty() && model_id != QLatin1String("*") &&
            !chat.model_names.contains(model_id))
            chat.model_names << model_id;
    }

    Counts counts;
    std::vector<Parsed> parsed;
    bool all_timed = true;
    int line_number = 0;
    for (const QByteArray& raw : lines.split('\n')) {
        ++line_number;
        if (raw.trimmed().isEmpty()) continue;
        const QJsonObject o =
            parse_object(raw, QStringLiteral("messages.jsonl line %1").arg(line_number));
        if (auto p = read_message(o, counts)) {
            all_timed = all_timed && p->timed;
            parsed.push_back(std::move(*p));
        }
    }
    // Jan lists messages by time (0.4 and cortex append; 0.6 may rewrite the file).
    if (all_timed)
        std::stable_sort(parsed.begin(), parsed.end(), [](const Parsed& a, const Parsed& b) {
            return a.message.created_at < b.message.created_at;
        });
    for (Parsed& p : parsed) {
        p.message.parent = static_cast<int>(chat.messages.size()) - 1;
        chat.messages.push_back(std::move(p.message));
    }
    // 0.6's updateThread resets "created" to now: the first message may be older.
    chat.created_at = first_time(thread, {"created_at", "created"});
    chat.updated_at = first_time(thread, {"updated", "updated_at"});
    if (!chat.updated_at.isValid())
        chat.updated_at = time_of(metadata.value(QLatin1String("updated_at")));
    for (const ImportedMessage& m : chat.messages) {
        if (m.created_at.isValid() &&
            (!chat.created_at.isValid() || m.created_at < chat.created_at))
            chat.created_at = m.created_at;
        const QDateTime last = m.updated_at.isValid() ? m.updated_at : m.created_at;
        if (last.isValid() && (!chat.updated_at.isValid() || last > chat.updated_at))
            chat.updated_at = last;
    }
    if (!chat.created_at.isValid())
        chat.created_at =
            QFileInfo(dir.filePath(QStringLiteral("thread.json"))).birthTime().toUTC();
    if (!chat.created_at.isValid())
        chat.created_at =
            QFileInfo(dir.filePath(QStringLiteral("thread.json"))).lastModified().toUTC();
    if (chat.updated_at.isValid() && chat.updated_at < chat.created_at) chat.updated_at = {};

    if (counts.attachments) {
        counts.attachment_names.removeAll(QString());
        chat.notes << QStringLiteral("%1%2 %3 not imported")
                          .arg(plural(counts.attachments, "attachment", "attachments"),
                               counts.attachment_names.isEmpty()
                                   ? QString()
                                   : QStringLiteral(" (%1)").arg(
                                         counts.attachment_names.join(QStringLiteral(", "))),
                               QLatin1String(counts.attachments == 1 ? "was" : "were"));
    }
    QStringList tools;
    if (counts.tool_calls) tools << plural(counts.tool_calls, "tool call", "tool calls");
    if (counts.tool_messages)
        tools << plural(counts.tool_messages, "tool result message", "tool result messages");
    if (!tools.isEmpty())
        chat.notes << QStringLiteral("%1 %2 not imported")
                          .arg(tools.join(QStringLiteral(" and ")),
                               QLatin1String(
                                   counts.tool_calls + counts.tool_messages == 1 ? "was" : "were"));
    if (counts.unknown_roles)
        chat.notes << QStringLiteral("%1 with a role Hearth does not know %2 not imported")
                          .arg(plural(counts.unknown_roles, "message", "messages"),
                               QLatin1String(counts.unknown_roles == 1 ? "was" : "were"));
    if (counts.unknown_parts)
        chat.notes << QStringLiteral("%1 of a kind Hearth does not know %2 not imported")
                          .arg(plural(counts.unknown_parts, "message part", "message parts"),
                               QLatin1String(counts.unknown_parts == 1 ? "was" : "were"));
    return chat;
}

}  // namespace

Result<ImportedChat> read_jan_thread(const QString& thread_folder) {
    try {
        return read_thread(thread_folder);
    } catch (const Failed& f) {
        return make_error(f.why.toStdString());
    }
}

}  // namespace hearth::imports
