// Documents read from files for a persona or a single chat (PersonaListModel,
// ConversationDocuments): the files and folders a person picked or dropped, read off the
// GUI thread (documents/document_text.h) into store records, and a record as the views
// show it.
#pragma once

#include <QStringList>
#include <QVariantMap>

#include <functional>
#include <vector>

#include "store/types.h"

namespace hearth::app {

// The most documents a folder gives (its first, by name); the rest are named as left out.
inline constexpr int kMaxFolderFiles = 2000;

struct ReadDocuments {
    std::vector<hearth::store::Document> read;  // name, file, format and text set
    QStringList problems;                       // each a sentence naming its file
};

// Each file's text, in order, or why not; a folder gives the documents in it and its
// subfolders (the formats Hearth reads, by name, hidden ones skipped), at most
// max_per_folder of them. Slow (a PDF): call it on a worker thread.
ReadDocuments read_document_files(const QStringList& paths, int max_per_folder);
// The same on a worker thread; `done` runs on `context`'s thread (not after it is gone).
void read_document_files_then(QObject* context, const QStringList& paths, int max_per_folder,
                              std::function<void(ReadDocuments)> done);

// A path from what QML hands over (a file URL, or a path), and a list of them.
QString local_path(const QVariant& file);
QStringList local_paths(const QVariantList& files);

// {documentId, name, format, sourcePath, characters, changed (the file is not as it was
// read), missing (the file is gone), lookup (looked up, not read whole)}.
QVariantMap document_row(const hearth::store::Document& document);

}  // namespace hearth::app
