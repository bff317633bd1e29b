// What the model source readers share: whether a file is a GGUF model, split models
// (llama.cpp's gguf-split names, "<prefix>-00001-of-00003.gguf") as one model, and files
// that are not models to use (partial downloads, vision projectors).
#pragma once

#include <QString>

#include <optional>

#include "models/found_model.h"

namespace hearth::models {

// The file starts with the GGUF magic.
bool is_gguf(const QString& path);

struct SplitName {
    QString prefix;  // "Qwen3-14B-Q4_K_M"
    int index = 0;   // 1-based
    int count = 0;
};
// llama.cpp names split files "%s-%05d-of-%05d.gguf" (llama_split_path in llama.cpp's
// src/llama.cpp); nullopt for any other name.
std::optional<SplitName> split_name(const QString& file_name);

// The name of part `index` of a split model: "<prefix>-00002-of-00003.gguf".
QString split_part_name(const QString& prefix, int index, int count);

// Not a chat model to open: not named .gguf (partial downloads: .part,
// .downloadInProgress), GPT4All's partial downloads ("incomplete-…"), hidden files,
// vision projectors ("mmproj"), importance matrices, draft and MTP heads.
bool is_auxiliary(const QString& file_name);

// The *.gguf files under dir, at most max_depth folders down (0: dir only), split models
// as one entry (its first part, the sizes of all parts, complete when every part is
// there). Fills path, file_name, size, modified, parts and complete; the caller names
// them. Sorted by path. Folders that cannot be read add a problem to scan.
QList<FoundModel> collect_gguf(const QString& dir, int max_depth, SourceScan& scan);

}  // namespace hearth::models
