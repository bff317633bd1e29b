// Where each app keeps its models on this computer: the environment variables and
// settings files that move them, else each app's default folder for this OS. Pure given
// the environment, the home folder and the OS, so every case is tested on a fake home.
#pragma once

#include <QList>
#include <QProcessEnvironment>
#include <QString>

#include "models/found_model.h"

namespace hearth::models {

enum class Os { Linux, Windows, MacOs };
Os this_os();

struct SourceRoot {
    Source source = Source::Folder;
    QString path;
};

struct RootContext {
    QString home;             // the user's home folder
    QProcessEnvironment env;  // OLLAMA_MODELS, LLAMA_CACHE, HF_HUB_CACHE, XDG_*, …
    Os os = Os::Linux;
    QString hearth_models;     // Hearth's own models folder
    QStringList user_folders;  // folders the user added
};

// The context of this process: QDir::homePath(), the system environment, this OS.
RootContext this_computer(const QString& hearth_models, const QStringList& user_folders);

// Every place to look, Hearth's folder first, then the user's, then the other apps' (a
// source may have more than one: Ollama's user and system-service folders). Folders
// need not exist; the readers say whether they do.
QList<SourceRoot> source_roots(const RootContext& context);

}  // namespace hearth::models
