// GPT4All's saved chats: one file per chat, <modelPath>/gpt4all-<uuid>.chat, a big-endian
// QDataStream (Qt_6_2) with magic 0xF5D553CC and a format version, 1 to 12 (GPT4All 2.4.1
// to 3.10), or, for chats saved between 4 and 6 May 2023, no header at all ("version 0",
// kept in the settings folder). Layout per version: docs/research/chat-files.md §1.4,
// following nomic-ai/gpt4all gpt4all-chat/src: chatlistmodel.cpp (ChatSaver::saveChats,
// ChatsRestoreThread::run), chat.cpp (Chat::serialize/deserialize), chatllm.cpp
// (ChatLLM::serialize/deserialize), chatmodel.{h,cpp} (ChatModel and ChatItem
// serialize/deserialize), tool.cpp (ToolCallInfo::serialize).
//
// The file is untrusted: every length is checked against what is left of the file before
// anything is read or allocated, texts are capped, and the model state GPT4All once saved
// (up to hundreds of megabytes) is skipped without being read.
#pragma once

#include <QHash>
#include <QIODevice>
#include <QString>

#include "imports/chat_import.h"

namespace hearth::imports {

inline constexpr quint32 kGpt4AllMagic = 0xF5D553CC;
inline constexpr qint32 kGpt4AllNewestVersion = 12;

struct Gpt4AllReadOptions {
    // The file is in GPT4All's settings folder, where chats were saved without a header.
    // Elsewhere a file without the header is still read as version 0 when it parses as one
    // completely, with a creation date in 2023 and a UUID.
    bool legacy = false;
    // GPT4All.ini's [model-<id>] filename= values, to name the model file of a chat that
    // stores a model id (version 5 and later).
    QHash<QString, QString> model_files;
    // For the report: the file's name, and its last change (the chat's last update).
    QString name;
    QDateTime modified;
};

// Reads one chat; the error says why it cannot be imported.
Result<ImportedChat> read_gpt4all_chat(QIODevice& file, const Gpt4AllReadOptions& options);
Result<ImportedChat> read_gpt4all_chat(const QString& path, Gpt4AllReadOptions options = {});

// GPT4All.ini (organisation nomic.ai, QSettings::IniFormat): ~/.config/nomic.ai/ on Linux,
// %APPDATA%\nomic.ai\ on Windows, ~/.config/gpt4all.io/ on macOS (as
// models/source_roots.cpp finds it).
QString gpt4all_settings_file(const models::RootContext& context);
// Its [model-<id>] groups' "filename" values, by id.
QHash<QString, QString> gpt4all_model_files(const QString& settings_file);

}  // namespace hearth::imports
