// Finding other apps' chats, turning them into Hearth's exchange JSON, importing them once
// each, and the report. Where each app keeps its chats: docs/research/chat-files.md §1.1,
// §2.1, §3.1.
#include "imports/chat_import.h"

#include <algorithm>

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

#include "imports/gpt4all_chat.h"
#include "imports/jan_threads.h"
#include "imports/lmstudio_conversations.h"
#include "store/exchange_format.h"
#include "store/store.h"

namespace hearth::imports {
namespace {

constexpr qsizetype kMaxTitleChars = 500;    // the store's limit
constexpr int kMaxFilesPerFolder = 100'000;  // LM Studio users keep thousands

QString clean(const QString& path) {
    return QDir::cleanPath(path);
}

// A file or folder to read as one chat.
struct Found {
    ChatSource source = ChatSource::Gpt4All;
    QString path;
    QString shown;  // for the report
    bool legacy = false;
};

QString shown_path(const QString& path, const QString& root) {
    const QString rel = QDir(root).relativeFilePath(path);
    return rel.startsWith(QLatin1String("..")) || QDir::isAbsolutePath(rel) ? path : rel;
}

void list_gpt4all(const QString& folder, bool legacy, QList<Found>& out) {
    // ChatSaver::saveChats writes gpt4all-<id>.chat (through a .chat.tmp it renames).
    const QStringList names = QDir(folder).entryList({QStringLiteral("gpt4all-*.chat")},
                                                     QDir::Files | QDir::Readable, QDir::Name);
    for (const QString& name : names)
        out << Found{ChatSource::Gpt4All, clean(folder + QLatin1Char('/') + name), name, legacy};
}

void list_jan(const QString& threads, QList<Found>& out) {
    // Folders without a thread.json are not threads (getValidThreadDirs, list_threads).
    const QDir dir(threads);
    for (const QString& name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
        if (QFileInfo(dir.filePath(name + QStringLiteral("/thread.json"))).isFile())
            out << Found{ChatSource::Jan, clean(dir.filePath(name)),
                         QStringLiteral("threads/") + name, false};
}

void list_lmstudio(const QString& folder, QList<Found>& out) {
    // <home>/conversations/**/<ms>.conversation.json: user folders nest them.
    QDirIterator it(folder, {QStringLiteral("*.conversation.json")}, QDir::Files,
                    QDirIterator::Subdirectories);
    QList<Found> found;
    while (it.hasNext() && found.size() < kMaxFilesPerFolder) {
        const QString path = clean(it.next());
        found << Found{ChatSource::LmStudio, path, shown_path(path, folder), false};
    }
    std::sort(found.begin(), found.end(),
              [](const Found& a, const Found& b) { return a.shown < b.shown; });
    out << found;
}

void list_location(const ChatLocation& where, QList<Found>& out) {
    switch (where.source) {
        case ChatSource::Gpt4All:
            list_gpt4all(where.path, where.legacy, out);
            break;
        case ChatSource::Jan:
            list_jan(where.path, out);
            break;
        case ChatSource::LmStudio:
            list_lmstudio(where.path, out);
            break;
    }
}

// A path given by the user: which app's file or folder it is. Empty when none.
QList<ChatLocation> classify(const QString& path, const QList<ChatSource>& wanted,
                             QList<Found>& files) {
    const QFileInfo info(path);
    const QString p = clean(info.absoluteFilePath());
    const auto want = [&](ChatSource s) { return wanted.contains(s); };
    QList<ChatLocation> out;
    if (info.isFile()) {
        const QString name = info.fileName();
        if (want(ChatSource::LmStudio) && name.endsWith(QLatin1String(".conversation.json")))
            files << Found{ChatSource::LmStudio, p, name, false};
        else if (want(ChatSource::Jan) && name == QLatin1String("thread.json"))
            files << Found{ChatSource::Jan, info.absolutePath(),
                           QStringLiteral("threads/") + info.dir().dirName(), false};
        else if (want(ChatSource::Gpt4All) && name.endsWith(QLatin1String(".chat")))
            files << Found{ChatSource::Gpt4All, p, name, false};
        return out;
    }
    if (!info.isDir()) return out;
    const QDir dir(p);
    const auto has = [&](const char* name) { return dir.exists(QLatin1String(name)); };
    if (want(ChatSource::Jan) && has("thread.json"))
        files << Found{ChatSource::Jan, p, QStringLiteral("threads/") + dir.dirName(), false};
    else if (want(ChatSource::Jan) && QFileInfo(dir.filePath(QStringLiteral("threads"))).isDir())
        out << ChatLocation{ChatSource::Jan, dir.filePath(QStringLiteral("threads"))};
    if (want(ChatSource::Gpt4All) &&
        !dir.entryList({QStringLiteral("gpt4all-*.chat")}, QDir::Files).isEmpty())
        out << ChatLocation{ChatSource::Gpt4All, p};
    if (want(ChatSource::LmStudio) &&
        QFileInfo(dir.filePath(QStringLiteral("conversations"))).isDir())
        out << ChatLocation{ChatSource::LmStudio, dir.filePath(QStringLiteral("conversations"))};
    else if (want(ChatSource::LmStudio) && QDirIterator(p, {QStringLiteral("*.conversation.json")},
                                                        QDir::Files, QDirIterator::Subdirectories)
                                               .hasNext())
        out << ChatLocation{ChatSource::LmStudio, p};
    // A Jan threads folder: its sub-folders hold thread.json.
    if (want(ChatSource::Jan) && out.isEmpty() && files.isEmpty()) {
        QList<Found> threads;
        list_jan(p, threads);
        if (!threads.isEmpty()) out << ChatLocation{ChatSource::Jan, p};
    }
    return out;
}

QString first_line(const QString& text, qsizetype max_chars) {
    for (const QString& line : text.split(QLatin1Char('\n'))) {
        const QString t = line.simplified();
        if (t.isEmpty()) continue;
        return t.size() <= max_chars ? t : t.left(max_chars - 1) + QChar(0x2026);
    }
    return {};
}

QString iso(const QDateTime& t) {
    return t.toUTC().toString(Qt::ISODateWithMs);
}

// The model Hearth knows by one of the chat's names for it: its display name, or the file
// name (with or without extension) of its path.
std::optional<store::ModelRecord> match_model(const std::vector<store::ModelRecord>& models,
                                              const QStringList& names) {
    for (const QString& raw : names) {
        const QString name = raw.trimmed();
        if (name.isEmpty()) continue;
        const QString file = name.section(QLatin1Char('/'), -1);
        const QString stem = QFileInfo(file).completeBaseName();
        for (const store::ModelRecord& m : models) {
            const QFileInfo path(m.path);
            if (name.compare(m.display_name, Qt::CaseInsensitive) == 0 ||
                file.compare(path.fileName(), Qt::CaseInsensitive) == 0 ||
                file.compare(path.completeBaseName(), Qt::CaseInsensitive) == 0 ||
                (!stem.isEmpty() &&
                 stem.compare(path.completeBaseName(), Qt::CaseInsensitive) == 0 &&
                 file.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)))
                return m;
        }
    }
    return std::nullopt;
}

QString marker_key(const QString& origin) {
    return QStringLiteral("import.origin.") + origin;
}

// The conversation an earlier run imported from `origin`, while it still exists.
Result<std::optional<store::Id>> imported_before(store::Store& s, const QString& origin) {
    auto value = s.setting(marker_key(origin));
    if (!value) return value.error();
    if (!*value) return std::optional<store::Id>();
    const QStringList parts = (*value)->split(QLatin1Char(' '));
    bool ok_id = false, ok_ms = false;
    const store::Id id = parts.value(0).toLongLong(&ok_id);
    const qint64 ms = parts.value(1).toLongLong(&ok_ms);
    if (!ok_id || !ok_ms) return std::optional<store::Id>();
    auto c = s.conversation(id);
    // Deleted since (or its id reused by another conversation): not imported any more.
    if (!c || c->created_at.toMSecsSinceEpoch() != ms) return std::optional<store::Id>();
    return std::optional<store::Id>(id);
}

struct Reader {
    QHash<QString, QString> gpt4all_models;  // GPT4All.ini: model id -> file name

    Result<ImportedChat> read(const Found& f) const {
        switch (f.source) {
            case ChatSource::Gpt4All: {
                Gpt4AllReadOptions o;
                o.legacy = f.legacy;
                o.model_files = gpt4all_models;
                return read_gpt4all_chat(f.path, o);
            }
            case ChatSource::Jan:
                return read_jan_thread(f.path);
            case ChatSource::LmStudio:
                return read_lmstudio_conversation(f.path);
        }
        return make_error("unknown source");
    }
};

// Title, persona and model as Hearth will keep them, with notes for what does not fit.
void settle(ImportedChat& chat, ChatSource source, const std::vector<store::ModelRecord>& models,
            bool know_models, QString& fingerprint, QString& model_name) {
    chat.title = chat.title.trimmed();
    if (chat.title.isEmpty())
        for (const ImportedMessage& m : chat.messages)
            if (m.role == store::Role::User && !(chat.title = first_line(m.text, 60)).isEmpty())
                break;
    if (chat.title.isEmpty()) chat.title = source_label(source) + QStringLiteral(" chat");
    if (chat.title.size() > kMaxTitleChars) {
        chat.title = chat.title.left(kMaxTitleChars);
        chat.notes
            << QStringLiteral("its title was shortened to %1 characters").arg(kMaxTitleChars);
    }
    chat.persona_name = chat.persona_name.trimmed().left(200);
    if (chat.persona_name.isEmpty()) chat.persona_name = source_label(source);
    if (chat.system_prompt.size() > (1 << 20)) {
        chat.notes << QStringLiteral(
                          "its system prompt (%1 characters) is longer than Hearth "
                          "keeps and was not imported")
                          .arg(chat.system_prompt.size());
        chat.system_prompt.clear();
    }
    if (!chat.model_names.isEmpty() && know_models) {
        if (const auto m = match_model(models, chat.model_names)) {
            fingerprint = m->fingerprint;
            model_name = m->display_name;
        } else {
            chat.notes << QStringLiteral(
                              "its model \"%1\" is not one of Hearth's models, so the "
                              "conversation has none set")
                              .arg(chat.model_names.front());
        }
    }
}

}  // namespace

QString source_label(ChatSource source) {
    switch (source) {
        case ChatSource::Gpt4All:
            return QStringLiteral("GPT4All");
        case ChatSource::Jan:
            return QStringLiteral("Jan");
        case ChatSource::LmStudio:
            return QStringLiteral("LM Studio");
    }
    return {};
}

QString source_id(ChatSource source) {
    switch (source) {
        case ChatSource::Gpt4All:
            return QStringLiteral("gpt4all");
        case ChatSource::Jan:
            return QStringLiteral("jan");
        case ChatSource::LmStudio:
            return QStringLiteral("lmstudio");
    }
    return {};
}

std::optional<ChatSource> source_from_id(const QString& id) {
    for (ChatSource s : {ChatSource::Gpt4All, ChatSource::Jan, ChatSource::LmStudio})
        if (id.compare(source_id(s), Qt::CaseInsensitive) == 0) return s;
    return std::nullopt;
}

int SourceReport::count(Outcome outcome) const {
    return static_cast<int>(std::count_if(
        chats.begin(), chats.end(), [&](const ChatOutcome& c) { return c.outcome == outcome; }));
}

int SourceReport::partly_imported() const {
    return static_cast<int>(std::count_if(chats.begin(), chats.end(), [](const ChatOutcome& c) {
        return c.outcome == Outcome::Imported && !c.notes.isEmpty();
    }));
}

QList<ChatLocation> chat_locations(const models::RootContext& context,
                                   const QList<ChatSource>& sources) {
    QList<ChatLocation> out;
    const QList<models::SourceRoot> roots = models::source_roots(context);
    for (const ChatSource source : sources) {
        switch (source) {
            case ChatSource::Gpt4All:
                // Chats are saved in the model folder (modelPath), headerless ones of May 2023
                // beside GPT4All.ini (ChatsRestoreThread::run).
                for (const models::SourceRoot& r : roots)
                    if (r.source == models::Source::Gpt4All) out << ChatLocation{source, r.path};
                out << ChatLocation{source,
                                    QFileInfo(gpt4all_settings_file(context)).absolutePath(), true};
                break;
            case ChatSource::Jan:
                for (const models::SourceRoot& r : roots)
                    if (r.source == models::Source::Jan)
                        out << ChatLocation{source, clean(r.path + QStringLiteral("/threads"))};
                break;
            case ChatSource::LmStudio: {
                // ~/.lmstudio-home-pointer names a moved home (lmstudio-bug-tracker#553).
                QStringList homes;
                if (QFile pointer(context.home + QStringLiteral("/.lmstudio-home-pointer"));
                    pointer.open(QIODevice::ReadOnly))
                    homes << QString::fromUtf8(pointer.read(4096)).trimmed();
                homes << context.home + QStringLiteral("/.lmstudio")
                      << context.home + QStringLiteral("/.cache/lm-studio");
                for (const QString& home : homes)
                    if (!home.isEmpty())
                        out << ChatLocation{source, clean(home + QStringLiteral("/conversations"))};
                break;
            }
        }
    }
    // The same folder reached twice (a pointer to the default home, a settings file naming
    // the default data folder) is read once.
    QList<ChatLocation> unique;
    QSet<QString> seen;
    for (const ChatLocation& l : out) {
        const QString canonical = QFileInfo(l.path).canonicalFilePath();
        const QString key = source_id(l.source) + (canonical.isEmpty() ? l.path : canonical);
        if (!seen.contains(key)) {
            seen.insert(key);
            unique << l;
        }
    }
    return unique;
}

QByteArray to_exchange_json(const ImportedChat& chat, const QString& model_fingerprint,
                            const QString& model_name) {
    const QDateTime created =
        chat.created_at.isValid() ? chat.created_at : QDateTime::currentDateTimeUtc();
    const QDateTime updated =
        chat.updated_at.isValid() && chat.updated_at > created ? chat.updated_at : created;
    QJsonObject conversation{{QStringLiteral("title"), chat.title},
                             {QStringLiteral("created_at"), iso(created)},
                             {QStringLiteral("updated_at"), iso(updated)},
                             {QStringLiteral("pinned"), chat.pinned}};
    QJsonObject root{{QStringLiteral("format"), QLatin1String(store::kExchangeFormat)},
                     {QStringLiteral("version"), store::kExchangeVersion},
                     {QStringLiteral("exported_at"), iso(QDateTime::currentDateTimeUtc())},
                     {QStringLiteral("conversation"), conversation}};
    if (!chat.system_prompt.trimmed().isEmpty() && !chat.persona_name.isEmpty())
        root.insert(QStringLiteral("persona"),
                    QJsonObject{{QStringLiteral("name"), chat.persona_name},
                                {QStringLiteral("system_prompt"), chat.system_prompt}});
    if (!model_fingerprint.isEmpty())
        root.insert(QStringLiteral("model"),
                    QJsonObject{{QStringLiteral("fingerprint"), model_fingerprint},
                                {QStringLiteral("display_name"), model_name}});
    QJsonArray messages;
    for (std::size_t i = 0; i < chat.messages.size(); ++i) {
        const ImportedMessage& m = chat.messages[i];
        const QDateTime at = m.created_at.isValid() ? m.created_at : created;
        const QDateTime changed = m.updated_at.isValid() && m.updated_at > at ? m.updated_at : at;
        QJsonObject o{{QStringLiteral("role"), store::role_name(m.role)},
                      {QStringLiteral("state"), store::state_name(m.state)},
                      {QStringLiteral("text"), m.text},
                      {QStringLiteral("created_at"), iso(at)},
                      {QStringLiteral("updated_at"), iso(changed)}};
        o.insert(QStringLiteral("parent"), m.parent >= 0 && static_cast<std::size_t>(m.parent) < i
                                               ? QJsonValue(m.parent)
                                               : QJsonValue());
        QJsonObject stats;
        const store::GenerationStats& s = m.stats;
        if (s.ttft_ms) stats.insert(QStringLiteral("ttft_ms"), *s.ttft_ms);
        if (s.tokens_per_second)
            stats.insert(QStringLiteral("tokens_per_second"), *s.tokens_per_second);
        if (s.generated_tokens)
            stats.insert(QStringLiteral("generated_tokens"),
                         static_cast<qint64>(*s.generated_tokens));
        if (s.reasoning_ms) stats.insert(QStringLiteral("reasoning_ms"), *s.reasoning_ms);
        if (s.finish_reason)
            stats.insert(QStringLiteral("finish_reason"),
                         store::finish_reason_name(*s.finish_reason));
        if (s.error) stats.insert(QStringLiteral("error"), s.error->left(4096));
        if (!stats.isEmpty()) o.insert(QStringLiteral("stats"), stats);
        messages.append(o);
    }
    root.insert(QStringLiteral("messages"), messages);
    const int leaf =
        chat.active_leaf >= 0 ? chat.active_leaf : static_cast<int>(chat.messages.size()) - 1;
    root.insert(QStringLiteral("active_leaf"),
                leaf >= 0 && static_cast<std::size_t>(leaf) < chat.messages.size()
                    ? QJsonValue(leaf)
                    : QJsonValue());
    return QJsonDocument(root).toJson(QJsonDocument::Compact);
}

ImportReport import_chats(store::Store* store, const ImportOptions& options) {
    ImportReport report;
    report.dry_run = options.dry_run;
    Reader reader;
    reader.gpt4all_models = gpt4all_model_files(gpt4all_settings_file(options.context));
    std::vector<store::ModelRecord> models;
    if (store) {
        auto known = store->models();
        if (!known) {
            report.errors << QString::fromStdString(known.message());
            return report;
        }
        models = std::move(*known);
    }

    // Each source's chats: the given paths, else each app's own folders.
    QMap<ChatSource, SourceReport> by_source;
    QMap<ChatSource, QList<Found>> found;
    for (const ChatSource s : options.sources) by_source[s].source = s;
    QList<ChatLocation> locations;
    if (options.paths.isEmpty()) {
        locations = chat_locations(options.context, options.sources);
    } else {
        for (const QString& path : options.paths) {
            QList<Found> files;
            const QList<ChatLocation> here = classify(path, options.sources, files);
            for (const Found& f : files) {
                found[f.source] << f;
                by_source[f.source].folders << QFileInfo(path).absoluteFilePath();
            }
            locations << here;
            if (here.isEmpty() && files.isEmpty() && !options.sources.isEmpty()) {
                const bool one = options.sources.size() == 1;
                const QString what =
                    !QFileInfo::exists(path)
                        ? QStringLiteral("no such file or folder")
                        : QStringLiteral("not a chat file or folder of %1")
                              .arg(one ? source_label(options.sources.front())
                                       : QStringLiteral("GPT4All, Jan or LM Studio"));
                by_source[options.sources.front()].problems << path + QStringLiteral(": ") + what;
            }
        }
    }
    for (const ChatLocation& l : locations) {
        by_source[l.source].folders << l.path;
        list_location(l, found[l.source]);
    }

    QHash<QString, store::Id> this_run;  // origins met in this run
    for (const ChatSource source : options.sources) {
        SourceReport& sr = by_source[source];
        for (const Found& f : found.value(source)) {
            ChatOutcome out;
            out.file = f.shown;
            auto chat = reader.read(f);
            if (!chat) {
                out.reason = QString::fromStdString(chat.message());
                sr.chats << out;
                continue;
            }
            out.title = chat->title;
            if (chat->messages.empty()) {
                out.reason = QStringLiteral("it has no messages");
                sr.chats << out;
                continue;
            }
            if (chat->messages.size() > static_cast<std::size_t>(store::kMaxImportMessages)) {
                out.reason = QStringLiteral("it has %1 messages, more than Hearth imports (%2)")
                                 .arg(chat->messages.size())
                                 .arg(store::kMaxImportMessages);
                sr.chats << out;
                continue;
            }
            if (this_run.contains(chat->origin)) {
                out.outcome = Outcome::AlreadyImported;
                out.conversation_id = this_run.value(chat->origin);
                out.reason = QStringLiteral("the same chat was found in another folder");
                sr.chats << out;
                continue;
            }
            if (store) {
                auto before = imported_before(*store, chat->origin);
                if (!before) {
                    report.errors << QString::fromStdString(before.message());
                    report.sources = by_source.values();
                    return report;
                }
                if (*before) {
                    out.outcome = Outcome::AlreadyImported;
                    out.conversation_id = **before;
                    this_run.insert(chat->origin, **before);
                    sr.chats << out;
                    continue;
                }
            }
            QString fingerprint, model_name;
            settle(*chat, source, models, store != nullptr, fingerprint, model_name);
            out.title = chat->title;
            out.notes = chat->notes;
            if (options.dry_run || !store) {
                out.outcome = Outcome::Imported;
                this_run.insert(chat->origin, 0);
                sr.chats << out;
                continue;
            }
            auto id = store->import_json(to_exchange_json(*chat, fingerprint, model_name));
            if (!id) {
                out.reason = QStringLiteral("Hearth could not import it: %1")
                                 .arg(QString::fromStdString(id.message()));
                sr.chats << out;
                continue;
            }
            auto imported = store->conversation(*id);
            auto marked = imported
                              ? store->set_setting(marker_key(chat->origin),
                                                   QStringLiteral("%1 %2").arg(*id).arg(
                                                       imported->created_at.toMSecsSinceEpoch()))
                              : Result<void>(imported.error());
            if (!marked) {
                // Unmarked, it would be imported again next time: take it back.
                (void)store->delete_conversation(*id);
                report.errors << QString::fromStdString(marked.message());
                report.sources = by_source.values();
                return report;
            }
            out.outcome = Outcome::Imported;
            out.conversation_id = *id;
            this_run.insert(chat->origin, *id);
            sr.chats << out;
        }
    }
    for (const ChatSource s : options.sources) report.sources << by_source[s];
    return report;
}

QString ImportReport::text() const {
    QString t;
    if (dry_run) t += QStringLiteral("Dry run: nothing was written.\n");
    for (const SourceReport& s : sources) {
        const QString label = source_label(s.source);
        QStringList folders = s.folders;
        folders.removeDuplicates();
        if (folders.isEmpty() && s.chats.isEmpty() && s.problems.isEmpty())
            continue;  // none of the paths given is this app's
        if (s.chats.isEmpty()) {
            t += QStringLiteral("%1: no chats found (looked in %2)\n")
                     .arg(label, folders.isEmpty() ? QStringLiteral("nothing")
                                                   : folders.join(QStringLiteral(", ")));
        } else {
            t += QStringLiteral("%1: %2 found, %3 %4, %5 already imported, %6 skipped\n")
                     .arg(label)
                     .arg(s.found())
                     .arg(s.count(Outcome::Imported))
                     .arg(dry_run ? QStringLiteral("to import") : QStringLiteral("imported"))
                     .arg(s.count(Outcome::AlreadyImported))
                     .arg(s.count(Outcome::Skipped));
            t += QStringLiteral("  looked in %1\n").arg(folders.join(QStringLiteral(", ")));
        }
        for (const QString& p : s.problems) t += QStringLiteral("  %1\n").arg(p);
        for (const ChatOutcome& c : s.chats) {
            if (c.outcome == Outcome::Skipped)
                t += QStringLiteral("  skipped %1: %2\n").arg(c.file, c.reason);
            else if (c.outcome == Outcome::Imported && !c.notes.isEmpty())
                t += QStringLiteral("  partly imported %1 (\"%2\"):\n    - %3\n")
                         .arg(c.file, c.title, c.notes.join(QStringLiteral("\n    - ")));
        }
    }
    for (const QString& e : errors) t += QStringLiteral("error: %1\n").arg(e);
    return t;
}

}  // namespace hearth::imports
