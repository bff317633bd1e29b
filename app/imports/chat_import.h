// Chats saved by other local-LLM apps (GPT4All, Jan, LM Studio), brought into Hearth's
// history. Each app has a small reader (gpt4all_chat.h, jan_threads.h,
// lmstudio_conversations.h) that turns one saved conversation into an ImportedChat; this
// file finds each app's chats on this computer, writes every chat as Hearth's exchange JSON
// (store/exchange_format.h), imports it through Store::import_json and reports what
// happened to each one. Layouts and their sources: docs/research/chat-files.md.
//
// Nothing is lost silently: a chat that cannot be read is skipped with the reason, and
// whatever a chat holds that Hearth does not keep (attachments, ratings, tool calls, its
// model when Hearth does not know it...) is named in the chat's notes.
//
// Re-running an import adds nothing twice: each imported chat's origin ("gpt4all:<chat
// id>", "jan:<thread id>", "lmstudio:<file name>:<createdAt>") is kept in the store's
// settings table ("import.origin.<origin>" = "<conversation id> <created_at ms>"); a chat
// whose recorded conversation still exists is "already imported". One deleted since is
// imported again.
#pragma once

#include <optional>
#include <vector>

#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>

#include "common/result.h"
#include "models/source_roots.h"
#include "store/types.h"

namespace hearth::store {
class Store;
}

namespace hearth::imports {

enum class ChatSource { Gpt4All, Jan, LmStudio };

QString source_label(ChatSource source);  // "GPT4All", "Jan", "LM Studio"
QString source_id(ChatSource source);     // "gpt4all", "jan", "lmstudio"
std::optional<ChatSource> source_from_id(const QString& id);

// One message of a chat read from another app. `parent` is the index of an earlier message
// (-1: a first message); siblings are versions of the same turn (regenerations, edits).
struct ImportedMessage {
    int parent = -1;
    store::Role role = store::Role::User;
    store::MessageState state = store::MessageState::Complete;
    QString text;          // a reply's reasoning, if any, leads it as "<think>…</think>"
    QDateTime created_at;  // invalid: the chat's creation time
    QDateTime updated_at;  // invalid: created_at
    store::GenerationStats stats;
};

// One conversation read from another app, before it becomes Hearth's exchange JSON.
struct ImportedChat {
    QString origin;  // stable across runs: "gpt4all:<id>", "jan:<id>", "lmstudio:<name>:<ms>"
    QString title;   // empty: the start of the first user message
    QDateTime created_at;
    QDateTime updated_at;  // invalid: created_at
    bool pinned = false;   // a favourite (Jan) or pinned (LM Studio) chat
    QString persona_name;  // with a non-empty system prompt: the persona to use or add
    QString system_prompt;
    // The names its app gave the model (an id, a file name, "publisher/repo/file.gguf"),
    // best first; matched against the models Hearth knows.
    QStringList model_names;
    std::vector<ImportedMessage> messages;
    int active_leaf = -1;  // the last message of the thread its app showed; -1: the last
    QStringList notes;     // what was not carried over, in words
};

// What happened to one chat.
enum class Outcome { Imported, AlreadyImported, Skipped };

struct ChatOutcome {
    QString file;  // as shown: relative to the folder searched where it is inside it
    QString title;
    Outcome outcome = Outcome::Skipped;
    QString reason;                 // Skipped: why
    QStringList notes;              // Imported: what was not carried over
    store::Id conversation_id = 0;  // Imported (not in a dry run) or AlreadyImported
};

struct SourceReport {
    ChatSource source = ChatSource::Gpt4All;
    QStringList folders;   // where it looked (existing or not)
    QStringList problems;  // folders or paths that could not be read, in words
    QList<ChatOutcome> chats;
    int found() const { return static_cast<int>(chats.size()); }
    int count(Outcome outcome) const;
    int partly_imported() const;  // imported, with notes
};

struct ImportReport {
    bool dry_run = false;
    QList<SourceReport> sources;
    QStringList errors;  // the history could not be written (the import stopped)
    // The report in words, one section per source (see import_chats_command.cpp).
    QString text() const;
};

struct ImportOptions {
    QList<ChatSource> sources{ChatSource::Gpt4All, ChatSource::Jan, ChatSource::LmStudio};
    bool dry_run = false;  // read and report, write nothing
    // Files or folders to read instead of each app's own: a GPT4All .chat file or folder,
    // a Jan data, threads or thread folder (or its thread.json), an LM Studio home or
    // conversations folder or .conversation.json file.
    QStringList paths;
    models::RootContext context;  // home folder, environment, OS
};

// One folder (or file) to read for a source.
struct ChatLocation {
    ChatSource source = ChatSource::Gpt4All;
    QString path;
    bool legacy = false;  // GPT4All's settings folder: its chats there are headerless (v0)
};

// Where each app keeps its chats on this computer (folders need not exist):
// GPT4All: GPT4All.ini's "modelPath" or its default data folder, and the folder of
// GPT4All.ini (headerless chats of May 2023); Jan: <data folder>/threads for each data folder
// models::source_roots knows; LM Studio: <home>/conversations for ~/.lmstudio-home-pointer's
// home, ~/.lmstudio and ~/.cache/lm-studio.
QList<ChatLocation> chat_locations(const models::RootContext& context,
                                   const QList<ChatSource>& sources);

// The exchange JSON of one chat (store/exchange_format.h). `model_fingerprint` and
// `model_name`: a model Hearth knows, or empty.
QByteArray to_exchange_json(const ImportedChat& chat, const QString& model_fingerprint = {},
                            const QString& model_name = {});

// Reads every chat of `options` and imports each into `store` (null: read and report only,
// as a dry run does). A store error stops the import and is in ImportReport::errors.
ImportReport import_chats(store::Store* store, const ImportOptions& options);

}  // namespace hearth::imports
