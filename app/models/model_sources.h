// One reader per place models live, each given the folder to read (source_roots.h says
// where each app keeps it on this computer). A reader lists what is usable in place and
// notes what it passed over; it never writes. Each is tested on a folder laid out as its
// app lays it out (tests/app/library/tst_model_sources.cpp, which cites the apps' source).
#pragma once

#include <QString>

#include "models/found_model.h"

namespace hearth::models {

// Any folder of GGUF files (Hearth's own models folder, a folder the user added): every
// *.gguf up to three folders down, named by file.
SourceScan scan_folder(const QString& dir, Source source);

// Ollama's models folder ($OLLAMA_MODELS): manifests/<registry>/<namespace>/<model>/<tag>
// name a blob (blobs/sha256-<hex>) whose layer is "application/vnd.ollama.image.model".
// The blob is a GGUF file, used as it is under the model's Ollama name ("llama3.2:latest";
// the default registry and its "library" namespace left out, as `ollama list` does).
SourceScan scan_ollama(const QString& models_dir);

// LM Studio's models folder: <publisher>/<repository>/<file>.gguf, named by repository.
SourceScan scan_lmstudio(const QString& models_dir);

// GPT4All's model folder: its *.gguf files (subfolders too), beside its chats.
SourceScan scan_gpt4all(const QString& models_dir);

// Jan's data folder: models/<id>/model.json (Jan 0.5 and older: the file named in
// "sources") and llamacpp/models/<id>/model.yml (Jan 0.6 and newer: "model_path").
SourceScan scan_jan(const QString& data_dir);

// llama.cpp's download cache ($LLAMA_CACHE): the files `llama-cli -hf` fetched, named
// "<owner>_<repository>_<file>.gguf", with the link they came from in a .json beside them.
SourceScan scan_llamacpp(const QString& cache_dir);

// Hugging Face's hub cache ($HF_HUB_CACHE): models--<owner>--<repo>/snapshots/<commit>/…,
// files that link to blobs/ (copies on Windows); the revision refs/main names first.
SourceScan scan_hf_cache(const QString& hub_dir);

}  // namespace hearth::models
