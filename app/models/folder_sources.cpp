// The sources that are plain folders of GGUF files: Hearth's own models folder and the
// user's, LM Studio's (<publisher>/<repository>/<file>.gguf) and GPT4All's (the files side
// by side, partial downloads named "incomplete-<file>").
#include <QDir>
#include <QFileInfo>

#include "models/model_sources.h"
#include "models/scan_util.h"

namespace hearth::models {
namespace {

SourceScan scan_files(const QString& dir, Source source, int max_depth) {
    SourceScan scan;
    scan.source = source;
    scan.root = dir;
    scan.present = QFileInfo(dir).isDir();
    if (!scan.present) return scan;
    scan.models = collect_gguf(dir, max_depth, scan);
    for (FoundModel& m : scan.models) {
        m.source = source;
        m.root = dir;
        m.name = m.file_name;
    }
    return scan;
}

}  // namespace

SourceScan scan_folder(const QString& dir, Source source) {
    return scan_files(dir, source, 3);
}

SourceScan scan_lmstudio(const QString& models_dir) {
    SourceScan scan = scan_files(models_dir, Source::LmStudio, 3);
    const QDir root(models_dir);
    for (FoundModel& m : scan.models) {
        // <publisher>/<repository>/...: LM Studio's repositories are Hugging Face's.
        const QStringList parts = root.relativeFilePath(m.path).split(QLatin1Char('/'));
        if (parts.size() >= 3) {
            m.repo = parts[0] + QLatin1Char('/') + parts[1];
            m.name = m.repo;
        }
    }
    return scan;
}

SourceScan scan_gpt4all(const QString& models_dir) {
    // GPT4All reads its folder with subfolders (ModelList::processModelDirectory).
    return scan_files(models_dir, Source::Gpt4All, 3);
}

}  // namespace hearth::models
