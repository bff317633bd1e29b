// llama.cpp's download cache (ggml-org/llama.cpp, common/common.cpp fs_get_cache_directory
// and common/download.cpp). Until March 2026 `-hf` wrote flat files,
// "<user>_<repo>_<file>.gguf" ('/' made '_'), with "manifest=<user>=<repo>=<tag>.json"
// (Hugging Face's manifest answer: ggufFile.rfilename names the file) and, in 2024–25,
// a "<file>.json" beside each file holding the URL it came from. Since then (PR #20775)
// it keeps Hugging Face's hub layout, in $LLAMA_CACHE when that is set: both are read.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QUrl>

#include "models/model_sources.h"
#include "models/scan_util.h"

namespace hearth::models {
namespace {

constexpr qint64 kMaxJsonBytes = 1 << 20;

QJsonObject read_json(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly) || f.size() > kMaxJsonBytes) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

// "https://huggingface.co/<user>/<repo>/resolve/<revision>/<file>" → "<user>/<repo>".
QString repo_of_url(const QString& url) {
    const QStringList parts = QUrl(url).path().split(QLatin1Char('/'), Qt::SkipEmptyParts);
    if (parts.size() >= 4 && parts[2] == QLatin1String("resolve"))
        return parts[0] + QLatin1Char('/') + parts[1];
    return {};
}

}  // namespace

SourceScan scan_llamacpp(const QString& cache_dir) {
    SourceScan scan;
    scan.source = Source::LlamaCpp;
    scan.root = cache_dir;
    scan.present = QFileInfo(cache_dir).isDir();
    if (!scan.present) return scan;
    const QDir dir(cache_dir);

    // The manifests say which repository and tag each flat file came from.
    struct Origin {
        QString repo, name;
    };
    QHash<QString, Origin> origins;  // local file name → origin
    for (const QString& manifest :
         dir.entryList({QStringLiteral("manifest=*.json")}, QDir::Files, QDir::Name)) {
        const QStringList parts = manifest.chopped(5).split(QLatin1Char('='));
        if (parts.size() != 4) continue;
        const QString rfilename = read_json(dir.filePath(manifest))
                                      .value(QStringLiteral("ggufFile"))
                                      .toObject()
                                      .value(QStringLiteral("rfilename"))
                                      .toString();
        if (rfilename.isEmpty()) {
            scan.problems << QStringLiteral("%1: names no GGUF file").arg(manifest);
            continue;
        }
        const QString repo = parts[1] + QLatin1Char('/') + parts[2];
        QString local = repo + QLatin1Char('/') + rfilename;
        local.replace(QLatin1Char('/'), QLatin1Char('_'));
        origins.insert(local, {repo, repo + QLatin1Char(':') + parts[3]});
    }

    for (FoundModel m : collect_gguf(cache_dir, 0, scan)) {
        m.source = Source::LlamaCpp;
        m.root = cache_dir;
        m.name = m.file_name;
        if (const auto o = origins.constFind(m.file_name); o != origins.constEnd()) {
            m.repo = o->repo;
            m.name = o->name;
        } else if (const QString repo = repo_of_url(read_json(m.path + QStringLiteral(".json"))
                                                        .value(QStringLiteral("url"))
                                                        .toString());
                   !repo.isEmpty()) {
            m.repo = repo;
            m.name = repo;
        }
        scan.models << m;
    }

    // The hub layout, where $LLAMA_CACHE is the hub folder itself.
    SourceScan hub = scan_hf_cache(cache_dir);
    for (FoundModel& m : hub.models) {
        m.source = Source::LlamaCpp;
        scan.models << m;
    }
    scan.problems << hub.problems;
    return scan;
}

}  // namespace hearth::models
