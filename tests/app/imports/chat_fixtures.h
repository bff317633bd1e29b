// Saved chats written the way GPT4All, Jan and LM Studio write them, for tst_chat_imports.
// Each writer cites the code (or, for LM Studio, the third-party evidence) whose layout it
// follows; see docs/research/chat-files.md.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>

namespace fixtures {

// ---- GPT4All (nomic-ai/gpt4all gpt4all-chat) ----

struct G4Source {  // ResultInfo (src/database.h)
    QString collection, path, file, title, author, date, text;
    int page = -1, from = -1, to = -1;
};
struct G4Attachment {  // PromptAttachment (src/chatmodel.h)
    QUrl url;
    QByteArray content;
};
struct G4Sub {     // a v12 sub-item (ChatItem::serializeSubItems)
    QString name;  // "Response: ", "Text: ", "ToolCall: ", "ToolResponse: ", "Think: "
    QString value;
    int thinking_ms = 0;                    // Think
    QString tool_name, tool_result;         // ToolCall
    QList<QPair<QString, QString>> params;  // ToolCall: String parameters
    QList<G4Sub> children;
};
struct G4Item {
    QString name;  // "Prompt: " or "Response: "
    QString value;
    QString prompt;  // v < 10, on responses
    QString new_response;
    bool current = false, stopped = false, up = false, down = false, error = false;
    QList<G4Source> sources;          // v8+; v3-v7 as reference strings
    QList<G4Attachment> attachments;  // v10+
    QList<G4Sub> subs;                // v12
};
struct G4Chat {
    qint64 created = 0;  // seconds
    QString id, name, user_name, model;
    QStringList collections;  // v3+
    bool kv = false;          // v6-v10: serializeKV (v1-v5 always have the state)
    qint32 model_type = 1;
    int n_logits = 3, n_tokens = 5;
    QByteArray state = QByteArray("model state");
    QList<G4Item> items;
};

inline G4Item item(const QString& name, const QString& value, const QString& prompt = {}) {
    G4Item i;
    i.name = name;
    i.value = value;
    i.prompt = prompt;
    return i;
}
inline G4Sub sub(const QString& name, const QString& value = {}, int thinking_ms = 0) {
    G4Sub s;
    s.name = name;
    s.value = value;
    s.thinking_ms = thinking_ms;
    return s;
}

// The whole file for format `version` (0: headerless, as f291853e wrote), written with
// QDataStream exactly as GPT4All's writer of that version did.
QByteArray gpt4all_file(const G4Chat& chat, int version);

// ---- Jan (janhq/jan) and LM Studio ----

bool write_text(const QString& path, const QByteArray& data);

}  // namespace fixtures
