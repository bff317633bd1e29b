// GPT4All .chat files, versions 0 to 12: docs/research/chat-files.md §1.2-1.4. Each step
// below names the GPT4All function (gpt4all-chat/src at cd70db29 unless a commit is given)
// whose layout it follows.
#include "imports/gpt4all_chat.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSettings>
#include <QUrl>
#include <QtEndian>

#include "imports/note_words.h"

namespace hearth::imports {
namespace {

constexpr qsizetype kMaxTextChars = 16 << 20;  // the store's longest message
constexpr qsizetype kMaxNameChars = 64 << 10;  // ids, names, titles, file names
constexpr int kMaxDepth = 32;                  // v12 sub-items nest (three levels in practice)
constexpr quint32 kNull = 0xFFFFFFFF;          // a null QString or QByteArray

// Thrown inside the reader; read_gpt4all_chat turns it into the skip reason.
struct Damaged {
    QString why;
};

// Big-endian reads (QDataStream's byte order) that check every length against what is left
// of the file before reading or allocating anything.
class Stream {
  public:
    explicit Stream(QIODevice& device) : d_(device), size_(device.size()) {}

    qint64 left() const { return size_ - d_.pos(); }
    qint64 pos() const { return d_.pos(); }
    void where(const QString& what) { where_ = what; }

    QByteArray raw(qint64 n, const char* field) {
        if (n > left())
            throw Damaged{QStringLiteral("cut short: it ends inside %1 (at byte %2)")
                              .arg(label(field))
                              .arg(size_)};
        QByteArray bytes = d_.read(n);
        if (bytes.size() != n)
            throw Damaged{QStringLiteral("cannot be read: %1").arg(d_.errorString())};
        return bytes;
    }
    quint32 u32(const char* field) { return qFromBigEndian<quint32>(raw(4, field).constData()); }
    qint32 i32(const char* field) { return qFromBigEndian<qint32>(raw(4, field).constData()); }
    qint64 i64(const char* field) { return qFromBigEndian<qint64>(raw(8, field).constData()); }
    quint64 u64(const char* field) { return qFromBigEndian<quint64>(raw(8, field).constData()); }
    bool flag(const char* field) { return raw(1, field).front() != 0; }

    void skip(quint64 n, const char* field) {
        check_length(n, field);
        if (d_.skip(static_cast<qint64>(n)) != static_cast<qint64>(n))
            throw Damaged{QStringLiteral("cannot be read: %1").arg(d_.errorString())};
    }

    // QString: quint32 byte count (0xFFFFFFFF: null) and UTF-16BE (qstring.cpp operator<<).
    QString text(const char* field, qsizetype max_chars) {
        const quint32 bytes = u32(field);
        if (bytes == kNull) return {};
        if (bytes % 2)
            throw Damaged{QStringLiteral("damaged: %1 has an odd byte count").arg(label(field))};
        check_length(bytes, field);
        if (bytes / 2 > static_cast<quint64>(max_chars))
            throw Damaged{QStringLiteral("%1 is %2 characters long, more than Hearth keeps (%3)")
                              .arg(label(field))
                              .arg(bytes / 2)
                              .arg(max_chars)};
        const QByteArray data = raw(bytes, field);
        QString s(static_cast<qsizetype>(bytes / 2), Qt::Uninitialized);
        for (qsizetype i = 0; i < s.size(); ++i)
            s[i] = QChar(qFromBigEndian<quint16>(data.constData() + 2 * i));
        return s;
    }
    void skip_text(const char* field) {
        const quint32 bytes = u32(field);
        if (bytes != kNull) skip(bytes, field);
    }
    // QByteArray: quint32 count (0xFFFFFFFF: null) and the bytes.
    QByteArray bytes(const char* field, qsizetype max_bytes) {
        const quint32 n = u32(field);
        if (n == kNull) return {};
        check_length(n, field);
        if (n > static_cast<quint64>(max_bytes))
            throw Damaged{
                QStringLiteral("%1 is longer than expected (%2 bytes)").arg(label(field)).arg(n)};
        return raw(n, field);
    }
    void skip_bytes(const char* field) {
        const quint32 n = u32(field);
        if (n != kNull) skip(n, field);
    }
    // A count of things each at least `min_bytes` long: it must fit in what is left.
    qint64 count(qint64 n, qint64 min_bytes, const char* field) {
        if (n < 0 || (min_bytes > 0 && n > left() / min_bytes))
            throw Damaged{QStringLiteral("damaged or cut short: %1 says %2 but only %3 bytes "
                                         "are left")
                              .arg(label(field))
                              .arg(n)
                              .arg(left())};
        return n;
    }

  private:
    QString label(const char* field) const {
        return where_.isEmpty() ? QString::fromLatin1(field)
                                : where_ + QLatin1Char(' ') + QString::fromLatin1(field);
    }
    void check_length(quint64 n, const char* field) {
        if (n > static_cast<quint64>(left()))
            throw Damaged{QStringLiteral("damaged or cut short: %1 claims %2 bytes but only %3 "
                                         "are left")
                              .arg(label(field))
                              .arg(n)
                              .arg(left())};
    }

    QIODevice& d_;
    qint64 size_;
    QString where_;
};

// What a v12 response's sub-items hold (chatmodel.h: splitThinking, endThinking,
// splitToolCall; ChatItem::childItems and content show Text leaves, then the value).
struct ReplyParts {
    QString text;
    QString reasoning;
    qint64 thinking_ms = 0;
    int tool_calls = 0;
};

// QVariant::save (qvariant.cpp): quint32 type id, qint8 null flag, the value. GPT4All only
// writes QString parameters (chat.cpp Chat::processToolCall); plain scalars are skipped too.
void skip_variant(Stream& s) {
    const quint32 type = s.u32("tool parameter type");
    s.raw(1, "tool parameter null flag");
    switch (type) {
        case 0:   // invalid: nothing follows
        case 51:  // std::nullptr_t
            return;
        case 1:   // bool
        case 34:  // char
        case 37:  // uchar
        case 40:  // schar
            s.skip(1, "tool parameter");
            return;
        case 7:   // QChar
        case 33:  // short
        case 36:  // ushort
            s.skip(2, "tool parameter");
            return;
        case 2:  // int
        case 3:  // uint
            s.skip(4, "tool parameter");
            return;
        case 4:   // qlonglong
        case 5:   // qulonglong
        case 6:   // double
        case 38:  // float, written as a double (QDataStream::DoublePrecision)
            s.skip(8, "tool parameter");
            return;
        case 10:  // QString
            s.skip_text("tool parameter");
            return;
        case 12:  // QByteArray
            s.skip_bytes("tool parameter");
            return;
        default:
            throw Damaged{QStringLiteral("a tool call has a parameter of a kind GPT4All does not "
                                         "write (type %1)")
                              .arg(type)};
    }
}

// ToolCallInfo::serialize (tool.cpp): name, params (qsizetype count; name, int type,
// QVariant value), result, int error, errorString.
void skip_tool_call_info(Stream& s) {
    s.skip_text("tool name");
    const qint64 params = s.count(s.i64("tool parameter count"), 9, "tool parameter count");
    for (qint64 i = 0; i < params; ++i) {
        s.skip_text("tool parameter name");
        s.i32("tool parameter kind");
        skip_variant(s);
    }
    s.skip_text("tool result");
    s.i32("tool error");
    s.skip_text("tool error text");
}

// ChatItem::deserializeSubItems (chatmodel.cpp): name, value, [ToolCallInfo | thinking
// time], qsizetype child count, children.
void read_sub_items(Stream& s, ReplyParts& parts, int depth) {
    if (depth > kMaxDepth) throw Damaged{QStringLiteral("damaged: its replies nest too deeply")};
    const qint64 n = s.count(s.i64("sub-item count"), 12, "sub-item count");
    for (qint64 i = 0; i < n; ++i) {
        const QString name = s.text("sub-item name", 64);
        const QString value = s.text("sub-item text", kMaxTextChars);
        if (name == QLatin1String("Text: ")) {
            parts.text += value;
        } else if (name == QLatin1String("Think: ")) {
            QString thought = value.trimmed();
            if (thought.startsWith(QLatin1String("<think>"))) thought.remove(0, 7);
            if (thought.endsWith(QLatin1String("</think>"))) thought.chop(8);
            if (!parts.reasoning.isEmpty()) parts.reasoning += QStringLiteral("\n\n");
            parts.reasoning += thought.trimmed();
            parts.thinking_ms += s.i32("thinking time");
        } else if (name == QLatin1String("ToolCall: ")) {
            ++parts.tool_calls;
            skip_tool_call_info(s);
        } else if (name != QLatin1String("ToolResponse: ") && name != QLatin1String("Response: ")) {
            throw Damaged{
                QStringLiteral("damaged: a reply part of unknown kind \"%1\"").arg(name.left(40))};
        }
        read_sub_items(s, parts, depth + 1);
    }
}

struct Counts {
    int rated = 0, sourced = 0, attachments = 0, tool_calls = 0, rewritten = 0;
    QStringList attachment_names;
};

// One item of ChatModel (ChatItem::deserialize; v0-v2 3c303105 chatmodel.h, v3-v7
// b5380c9b, v8-v9 9273b49b, v10 ec4e1e48, v11 225bf6be, v12 HEAD).
void read_item(Stream& s, int v, ImportedChat& chat, Counts& counts, int& last) {
    if (v < 12) s.i32("id");
    const QString name = s.text("kind", 64);
    const bool prompt = name == QLatin1String("Prompt: ");
    if (!prompt && name != QLatin1String("Response: "))
        throw Damaged{QStringLiteral("damaged: %1 is of unknown kind \"%2\"")
                          .arg(QStringLiteral("an item"), name.left(40))};
    QString value = s.text("text", kMaxTextChars);
    if (v < 10) s.skip_text("prompt");  // the prompt again, on replies
    const QString better = s.text("edited answer", kMaxTextChars);
    s.flag("current-response flag");
    const bool stopped = s.flag("stopped flag");
    const bool up = s.flag("thumbs-up flag");
    const bool down = s.flag("thumbs-down flag");
    const bool error = v >= 11 && !prompt && s.flag("error flag");
    bool sourced = false;
    if (v >= 8) {
        // ResultInfo (database.h): 7 QStrings and 3 ints each.
        const qint64 n = s.count(s.i64("source count"), 40, "source count");
        for (qint64 i = 0; i < n; ++i) {
            for (int f = 0; f < 7; ++f) s.skip_text("source");
            s.skip(12, "source");
        }
        sourced = n > 0;
    } else if (v >= 3) {
        s.skip_text("references");
        const qint64 n = s.count(s.u32("reference count"), 4, "reference count");
        for (qint64 i = 0; i < n; ++i) s.skip_text("reference excerpt");
        sourced = n > 0;
    }
    if (v >= 10) {
        // PromptAttachment: QUrl (as toEncoded() bytes) and the file's bytes.
        const qint64 n = s.count(s.i64("attachment count"), 8, "attachment count");
        for (qint64 i = 0; i < n; ++i) {
            const QByteArray url = s.bytes("attachment name", kMaxNameChars);
            s.skip_bytes("attachment");
            counts.attachment_names << QUrl::fromEncoded(url).fileName();
        }
        counts.attachments += static_cast<int>(n);
    }
    ReplyParts parts;
    if (v >= 12) read_sub_items(s, parts, 0);
    counts.rated += (up || down) ? 1 : 0;
    counts.sourced += sourced ? 1 : 0;
    counts.tool_calls += parts.tool_calls;

    ImportedMessage m;
    m.parent = last;
    m.role = prompt ? store::Role::User : store::Role::Assistant;
    m.text = parts.text + value;
    if (!parts.reasoning.isEmpty()) {
        m.text = QStringLiteral("<think>\n") + parts.reasoning + QStringLiteral("\n</think>\n\n") +
                 m.text;
        if (parts.thinking_ms > 0) m.stats.reasoning_ms = static_cast<double>(parts.thinking_ms);
    }
    if (error) {
        m.state = store::MessageState::Failed;
        m.stats.finish_reason = store::FinishReason::Error;
        m.stats.error = value.left(4096);
    } else if (stopped && !prompt) {
        m.state = store::MessageState::Interrupted;
        m.stats.finish_reason = store::FinishReason::Cancelled;
    }
    chat.messages.push_back(m);
    last = static_cast<int>(chat.messages.size()) - 1;
    // A better answer the user wrote for GPT4All's data lake: another version of the reply.
    if (!prompt && !better.isEmpty()) {
        ImportedMessage alt;
        alt.parent = m.parent;
        alt.role = store::Role::Assistant;
        alt.text = better;
        chat.messages.push_back(alt);
        ++counts.rewritten;
    }
}

bool looks_like_uuid(const QString& id) {
    static const QRegularExpression kUuid(
        QStringLiteral("^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                       "[0-9a-fA-F]{12}$"));
    return kUuid.match(id).hasMatch();
}

// The file after its header: Chat::deserialize, ChatLLM::deserialize (v < 11),
// ChatModel::deserialize; nothing may follow (ChatsRestoreThread::run, "extra data").
ImportedChat read_body(Stream& s, int v, const Gpt4AllReadOptions& o) {
    ImportedChat chat;
    s.where(QStringLiteral("the chat's"));
    const qint64 secs = s.i64("creation date");
    const QString id = s.text("id", kMaxNameChars);
    const QString name = s.text("name", kMaxNameChars);
    const QString user_name = s.text("user-given name", kMaxNameChars);
    const QString model = s.text("model", kMaxNameChars);
    if (v == 0 && !o.legacy && (!looks_like_uuid(id) || secs < 1672531200 || secs > 1704067200))
        throw Damaged{
            QStringLiteral("not a GPT4All chat file: it lacks GPT4All's chat header "
                           "(magic number F5D553CC)")};
    QStringList collections;
    if (v >= 3) {
        const qint64 n = s.count(s.u32("LocalDocs collection count"), 4, "collection count");
        for (qint64 i = 0; i < n; ++i) collections << s.text("collection", kMaxNameChars);
    }
    if (v <= 10) {
        // Chat::serialize (908aec27) writes serializeKV before ChatLLM's section (v6-v10).
        const bool kv = v < 6 || s.flag("model-state flag");
        s.where(QStringLiteral("the saved model state:"));
        if (v >= 2) {
            s.i32("model type");  // LLModelTypeV0/V1; any value is accepted
            s.i32("state version");
        }
        s.skip_text("last response");
        s.skip_text("generated name");
        s.u32("prompt and response token count");
        if (kv) {
            if (v < 4) s.u32("response logits");
            s.i32("n_past");
            if (v >= 7) s.i32("n_ctx");
            if (v < 9) {
                const qint64 logits = s.count(s.i64("logit count"), 4, "logit count");
                s.skip(4 * static_cast<quint64>(logits), "logits");
            }
            const qint64 tokens = s.count(s.i64("token cache count"), 4, "token cache count");
            s.skip(4 * static_cast<quint64>(tokens), "token cache");
            s.skip_bytes("KV state");
        }
    }
    s.where(QStringLiteral("the chat's"));
    // ChatModel::serialize: int count (v11+: int(m_chatItems.size())).
    const qint64 n = s.count(s.i32("item count"), 20, "item count");
    Counts counts;
    int last = -1;
    for (qint64 i = 0; i < n; ++i) {
        s.where(QStringLiteral("item %1's").arg(i + 1));
        read_item(s, v, chat, counts, last);
    }
    if (s.left() > 0)
        throw Damaged{QStringLiteral("damaged: %1 bytes of extra data follow the chat (at byte "
                                     "%2)")
                          .arg(s.left())
                          .arg(s.pos())};

    chat.origin = QStringLiteral("gpt4all:") + (id.isEmpty() ? o.name : id);
    chat.title = user_name.isEmpty() ? name : user_name;
    chat.created_at = QDateTime::fromSecsSinceEpoch(secs, Qt::UTC);
    if (!chat.created_at.isValid() || chat.created_at.date().year() < 1970 ||
        chat.created_at.date().year() > 9999)
        chat.created_at = o.modified.isValid() ? o.modified : QDateTime::currentDateTimeUtc();
    if (o.modified.isValid() && o.modified > chat.created_at) chat.updated_at = o.modified;
    // v0-v4: the model file's base name without "ggml-" (chatllm.cpp 0cfe2255 modelFilePath);
    // v5+: ModelInfo::id(), whose file is GPT4All.ini's [model-<id>] filename.
    if (!model.isEmpty()) {
        chat.model_names << model;
        if (v >= 5 && o.model_files.contains(model)) chat.model_names << o.model_files[model];
        if (v < 5) chat.model_names << QStringLiteral("ggml-") + model;
    }
    chat.active_leaf = last;
    if (!collections.isEmpty())
        chat.notes << QStringLiteral("the LocalDocs collections it searched (%1) were not imported")
                          .arg(collections.join(QStringLiteral(", ")));
    if (counts.sourced)
        chat.notes << QStringLiteral("the LocalDocs sources cited by %1 were not imported")
                          .arg(plural(counts.sourced, "message", "messages"));
    if (counts.attachments)
        chat.notes << QStringLiteral("%1 (%2) %3 not imported")
                          .arg(plural(counts.attachments, "attachment", "attachments"),
                               counts.attachment_names.join(QStringLiteral(", ")),
                               was(counts.attachments));
    if (counts.tool_calls) chat.notes << tool_calls_note(counts.tool_calls);
    if (counts.rated)
        chat.notes << QStringLiteral("the thumbs-up/down ratings of %1 were not imported")
                          .arg(plural(counts.rated, "answer", "answers"));
    if (counts.rewritten)
        chat.notes << QStringLiteral(
                          "%1 written by the user for GPT4All's data lake %2 kept as "
                          "another version (a branch) of the reply")
                          .arg(plural(counts.rewritten, "better answer", "better answers"),
                               was(counts.rewritten));
    return chat;
}

}  // namespace

Result<ImportedChat> read_gpt4all_chat(QIODevice& file, const Gpt4AllReadOptions& options) {
    try {
        if (file.size() >= 8) {
            // ChatSaver::saveChats: quint32 magic, qint32 version, then Qt_6_2 data. (A
            // headerless file starts with its creation date, whose first 4 bytes are 0.)
            Stream s(file);
            if (s.u32("magic") == kGpt4AllMagic) {
                const qint32 version = s.i32("format version");
                // Version 100 (eb7b61a7) was version 1 before 3c303105 renumbered it.
                const int v = version == 100 ? 1 : version;
                if (v > kGpt4AllNewestVersion)
                    throw Damaged{QStringLiteral("format version %1 is newer than this Hearth "
                                                 "reads (up to %2); update Hearth")
                                      .arg(version)
                                      .arg(kGpt4AllNewestVersion)};
                if (v < 1)
                    throw Damaged{
                        QStringLiteral("format version %1 is not one GPT4All writes").arg(version)};
                return read_body(s, v, options);
            }
            if (!file.seek(0)) throw Damaged{file.errorString()};
        } else if (!options.legacy) {
            throw Damaged{QStringLiteral("not a GPT4All chat file: it is only %1 bytes long")
                              .arg(file.size())};
        }
        // No header: in the settings folder, a chat of May 2023 (version 0); elsewhere one
        // only if it reads as one completely.
        Stream s(file);
        if (options.legacy) return read_body(s, 0, options);
        try {
            return read_body(s, 0, options);
        } catch (const Damaged&) {
            throw Damaged{
                QStringLiteral("not a GPT4All chat file: it lacks GPT4All's chat header "
                               "(magic number F5D553CC)")};
        }
    } catch (const Damaged& d) {
        return make_error(d.why.toStdString());
    }
}

Result<ImportedChat> read_gpt4all_chat(const QString& path, Gpt4AllReadOptions options) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return make_error("cannot be read: " + file.errorString().toStdString());
    const QFileInfo info(path);
    if (options.name.isEmpty()) options.name = info.completeBaseName();
    if (!options.modified.isValid()) options.modified = info.lastModified().toUTC();
    return read_gpt4all_chat(file, options);
}

QString gpt4all_settings_file(const models::RootContext& c) {
    const auto env = [&](const char* name) { return c.env.value(QLatin1String(name)).trimmed(); };
    switch (c.os) {
        case models::Os::Windows: {
            const QString appdata = env("APPDATA");
            return QDir::cleanPath(
                (appdata.isEmpty() ? c.home + QStringLiteral("/AppData/Roaming") : appdata) +
                QStringLiteral("/nomic.ai/GPT4All.ini"));
        }
        case models::Os::MacOs:
            return QDir::cleanPath(c.home + QStringLiteral("/.config/gpt4all.io/GPT4All.ini"));
        case models::Os::Linux:
            break;
    }
    const QString xdg = env("XDG_CONFIG_HOME");
    return QDir::cleanPath((xdg.isEmpty() ? c.home + QStringLiteral("/.config") : xdg) +
                           QStringLiteral("/nomic.ai/GPT4All.ini"));
}

QHash<QString, QString> gpt4all_model_files(const QString& settings_file) {
    QHash<QString, QString> out;
    if (!QFileInfo(settings_file).isFile()) return out;
    QSettings settings(settings_file, QSettings::IniFormat);
    // mysettings.cpp: modelSettingName(info) = "model-" + info.id(); key "filename".
    for (const QString& group : settings.childGroups()) {
        if (!group.startsWith(QLatin1String("model-"))) continue;
        const QString file =
            settings.value(group + QStringLiteral("/filename")).toString().trimmed();
        if (!file.isEmpty()) out.insert(group.mid(6), file);
    }
    return out;
}

}  // namespace hearth::imports
