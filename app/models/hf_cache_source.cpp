// Hugging Face's hub cache (huggingface_hub's cache system: "models--<owner>--<repo>"
// folders holding blobs/<hash>, refs/<revision> (a file naming a commit) and
// snapshots/<commit>/<files>, each file a link to its blob, or a copy where links are
// not available, as on Windows without developer mode).
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSet>

#include "models/model_sources.h"
#include "models/scan_util.h"

namespace hearth::models {

SourceScan scan_hf_cache(const QString& hub_dir) {
    SourceScan scan;
    scan.source = Source::HuggingFace;
    scan.root = hub_dir;
    scan.present = QFileInfo(hub_dir).isDir();
    if (!scan.present) return scan;

    const QDir hub(hub_dir);
    const QStringList repos =
        hub.entryList({QStringLiteral("models--*")}, QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
    for (const QString& folder : repos) {
        // "models--bartowski--Llama-3.2-1B-Instruct-GGUF": repository names cannot hold "--".
        const QStringList parts = folder.mid(8).split(QStringLiteral("--"));
        if (parts.size() != 2 || parts[0].isEmpty() || parts[1].isEmpty()) {
            scan.problems << QStringLiteral("%1: not a repository folder").arg(folder);
            continue;
        }
        const QString repo = parts[0] + QLatin1Char('/') + parts[1];
        const QDir repo_dir(hub.filePath(folder));

        // refs/main's commit first, then any other snapshot (newest first): a file kept
        // from an older revision is still a model on disk.
        QString main_commit;
        if (QFile ref(repo_dir.filePath(QStringLiteral("refs/main")));
            ref.open(QIODevice::ReadOnly))
            main_commit = QString::fromLatin1(ref.read(128)).trimmed();
        const QDir snapshots(repo_dir.filePath(QStringLiteral("snapshots")));
        QStringList commits = snapshots.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Time);
        if (commits.removeAll(main_commit) > 0) commits.prepend(main_commit);

        QSet<QString> seen;  // a file's path inside the repository
        for (const QString& commit : commits) {
            const QString snapshot = snapshots.filePath(commit);
            for (FoundModel m : collect_gguf(snapshot, 4, scan)) {
                const QString rel = QDir(snapshot).relativeFilePath(m.path);
                if (seen.contains(rel)) continue;
                seen.insert(rel);
                m.source = Source::HuggingFace;
                m.root = hub_dir;
                m.repo = repo;
                m.name = repo;
                scan.models << m;
            }
        }
    }
    return scan;
}

}  // namespace hearth::models
