// GPT4All's writer, version by version. Each function follows the GPT4All code it names
// (nomic-ai/gpt4all, gpt4all-chat/; commit per version as in docs/research/chat-files.md
// §1.2): the file header of ChatSaver::saveChats, Chat::serialize, ChatLLM::serialize,
// ChatModel::serialize and ChatItem::serialize / serializeSubItems, ToolCallInfo::serialize.
#include "chat_fixtures.h"

#include <QBuffer>
#include <QDataStream>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QVariant>

namespace fixtures {
namespace {

// ToolCallInfo::serialize (src/tool.cpp): name, params.size() (qsizetype), each {name,
// ToolEnums::ParamType, QVariant}, result, ToolEnums::Error, errorString.
void write_tool_call(QDataStream& out, const G4Sub& s) {
    out << s.tool_name;
    out << qint64(s.params.size());
    for (const auto& [name, value] : s.params) {
        out << name;
        out << qint32(0);  // ParamType::String
        out << QVariant(value);
    }
    out << s.tool_result;
    out << qint32(0);  // Error::NoError
    out << QString();  // errorString
}

// ChatItem::serializeSubItems (src/chatmodel.cpp, 1c89447d; Think: 007a7af1).
void write_sub(QDataStream& out, const G4Sub& s) {
    out << s.name;
    out << s.value;
    if (s.name == QLatin1String("ToolCall: ")) write_tool_call(out, s);
    if (s.name == QLatin1String("Think: ")) out << qint32(s.thinking_ms);
    out << qint64(s.children.size());
    for (const G4Sub& c : s.children) write_sub(out, c);
}

// The v3-v7 reference line (Chat::responseStopped, d1c56b8b; ChatItem::serialize's v<8
// branch at HEAD writes the same).
QString reference_line(const G4Source& info, int n) {
    QString r = QStringLiteral("%1. ").arg(n);
    if (!info.title.isEmpty()) r += QStringLiteral("\"%1\". ").arg(info.title);
    if (!info.author.isEmpty()) r += QStringLiteral("By %1. ").arg(info.author);
    if (!info.date.isEmpty()) r += QStringLiteral("Date: %1. ").arg(info.date);
    r += QStringLiteral("In %1. ").arg(info.file);
    if (info.page != -1) r += QStringLiteral("Page %1. ").arg(info.page);
    if (info.from != -1) {
        r += QStringLiteral("Lines %1").arg(info.from);
        if (info.to != -1) r += QStringLiteral("-%1").arg(info.to);
        r += QStringLiteral(". ");
    }
    return r + QStringLiteral("[Context](context://%1)").arg(n);
}

// ChatItem, per version: 3c303105 (v0-v2), b5380c9b (v3-v7), 9273b49b (v8-v9), ec4e1e48 (v10),
// 225bf6be (v11), 1c89447d / HEAD ChatItem::serialize (v12).
void write_item(QDataStream& out, const G4Item& c, int id, int v) {
    if (v < 12) out << qint32(id);
    out << c.name;
    out << c.value;
    if (v < 10) out << c.prompt;
    out << c.new_response;
    out << c.current;
    out << c.stopped;
    out << c.up;
    out << c.down;
    if (v >= 11 && c.name == QLatin1String("Response: ")) out << c.error;
    if (v >= 8) {
        out << qint64(c.sources.size());
        for (const G4Source& s : c.sources) {
            out << s.collection << s.path << s.file << s.title << s.author << s.date << s.text;
            out << qint32(s.page) << qint32(s.from) << qint32(s.to);
        }
    } else if (v >= 3) {
        QStringList references, contexts;
        int n = 1;
        for (const G4Source& s : c.sources) {
            references << reference_line(s, n++);
            contexts << s.text;
        }
        // Responses carried "\n---\n" before the list in the early 3.x writers.
        out << (references.isEmpty()
                    ? QString()
                    : QStringLiteral("\n---\n") + references.join(QLatin1Char('\n')));
        out << contexts;
    }
    if (v >= 10) {
        out << qint64(c.attachments.size());
        for (const G4Attachment& a : c.attachments) {
            out << a.url;
            out << a.content;
        }
    }
    if (v >= 12) {
        out << qint64(c.subs.size());
        for (const G4Sub& s : c.subs) write_sub(out, s);
    }
}

// ChatLLM::serialize: 3c303105 (v1, no type), 8c4b8f21 (v2+: type and state version),
// 908aec27 (v6: nothing after the token count unless serializeKV), c7ea283f (v7: n_ctx),
// ca724287 (v9: no logits); nothing from v11 on (225bf6be).
void write_chatllm(QDataStream& out, const G4Chat& chat, int v) {
    if (v > 1) {
        out << chat.model_type;
        out << qint32(0);  // internal state version
    }
    out << QStringLiteral("last response");
    out << QStringLiteral("generated name");
    out << quint32(42);  // m_promptResponseTokens
    if (v >= 6 && !chat.kv) return;
    if (v <= 3) out << qint32(0);     // responseLogits
    out << qint32(17);                // n_past
    if (v >= 7) out << qint32(2048);  // n_ctx
    if (v < 9) {
        out << quint64(chat.n_logits);
        const QByteArray logits(4 * chat.n_logits, '\x11');  // host-order floats
        out.writeRawData(logits.constData(), static_cast<int>(logits.size()));
    }
    out << quint64(chat.n_tokens);
    const QByteArray tokens(4 * chat.n_tokens, '\x22');  // host-order ints
    out.writeRawData(tokens.constData(), static_cast<int>(tokens.size()));
    out << (v == 0 ? chat.state : qCompress(chat.state));
}

}  // namespace

QByteArray gpt4all_file(const G4Chat& chat, int v) {
    QByteArray data;
    QBuffer buffer(&data);
    buffer.open(QIODevice::WriteOnly);
    QDataStream out(&buffer);
    if (v > 0) {
        // ChatSaver::saveChats (src/chatlistmodel.cpp).
        out << quint32(0xF5D553CC);
        out << qint32(v);
        out.setVersion(QDataStream::Qt_6_2);
    }
    // Chat::serialize (src/chat.cpp; 908aec27 for serializeKV in v6-v10).
    out << chat.created;
    out << chat.id;
    out << chat.name;
    out << chat.user_name;
    out << chat.model;
    if (v >= 3) out << chat.collections;
    if (v >= 6 && v <= 10) out << chat.kv;
    if (v <= 10) write_chatllm(out, chat, v);
    // ChatModel::serialize (src/chatmodel.h): int count, then the items.
    out << qint32(chat.items.size());
    int id = 0;
    for (const G4Item& item : chat.items) {
        write_item(out, item, item.name == QLatin1String("Response: ") ? id : 0, v);
        ++id;
    }
    return data;
}

bool write_text(const QString& path, const QByteArray& data) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
}

}  // namespace fixtures
