// A model file found on this computer: in Hearth's own models folder, a folder the user
// added, or another app's models (Ollama, LM Studio, GPT4All, Jan, llama.cpp's download
// cache, Hugging Face's hub cache). Each source has its own small reader
// (model_sources.h); the Model page lists what they find, used in place, never copied.
#pragma once

#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>

namespace hearth::models {

enum class Source { Hearth, Folder, Ollama, LmStudio, Gpt4All, Jan, LlamaCpp, HuggingFace };

// "hearth", "folder", "ollama", "lmstudio", "gpt4all", "jan", "llamacpp", "huggingface".
QString source_id(Source source);
// What people call it: "Hearth", "Your folder", "Ollama", "LM Studio", "GPT4All", "Jan",
// "llama.cpp", "Hugging Face".
QString source_label(Source source);

struct FoundModel {
    QString path;  // the file to open (a split model: its first part)
    // What its app calls it: "llama3.2:latest" (Ollama), "bartowski/Llama-3.2-1B-Instruct-GGUF"
    // (a repository), else the file name.
    QString name;
    QStringList aliases;  // other names for the same file (Ollama tags of one blob)
    QString file_name;    // the file's own name (an Ollama blob: its digest)
    QString repo;         // the Hugging Face repository, where the source records it
    Source source = Source::Folder;
    QString root;     // the folder it was found under
    qint64 size = 0;  // bytes, all parts of a split model together
    QDateTime modified;
    int parts = 1;         // a split model (name-00001-of-00003.gguf): its number of files
    bool complete = true;  // false: a split model with parts missing
};

struct SourceScan {
    Source source = Source::Folder;
    QString root;
    bool present = false;  // the folder exists
    QList<FoundModel> models;
    // What was passed over and why ("manifests/…/latest: not JSON"), for the log and the
    // page's details; partial downloads and non-model files are not problems.
    QStringList problems;
};

}  // namespace hearth::models
