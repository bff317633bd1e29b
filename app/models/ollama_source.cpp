// Ollama's models folder. Layout (ollama/ollama, server/modelpath.go and
// server/images.go): manifests/<host>/<namespace>/<model>/<tag> is a Docker-style
// manifest (JSON: schemaVersion, mediaType, config, layers[] of {mediaType, digest, size});
// the layer with mediaType "application/vnd.ollama.image.model" is the GGUF weights,
// stored as blobs/sha256-<hex> (older versions wrote "sha256:<hex>", which Windows cannot
// name). The other layers (template, system, params, license, projector, adapter) are not
// weights and are left alone.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include "models/model_sources.h"
#include "models/scan_util.h"

namespace hearth::models {
namespace {

constexpr qint64 kMaxManifestBytes = 1 << 20;
const QLatin1String kDefaultHost("registry.ollama.ai");
const QLatin1String kDefaultNamespace("library");

// `ollama list`'s name for a manifest path host/namespace/model/tag.
QString ollama_name(const QStringList& parts) {
    const QString& host = parts[0];
    const QString& ns = parts[1];
    const QString tail = parts[2] + QLatin1Char(':') + parts[3];
    if (host == kDefaultHost) return ns == kDefaultNamespace ? tail : ns + QLatin1Char('/') + tail;
    return host + QLatin1Char('/') + ns + QLatin1Char('/') + tail;
}

}  // namespace

SourceScan scan_ollama(const QString& models_dir) {
    SourceScan scan;
    scan.source = Source::Ollama;
    scan.root = models_dir;
    const QDir root(models_dir);
    const QString manifests = root.filePath(QStringLiteral("manifests"));
    scan.present = QFileInfo(manifests).isDir();
    if (!scan.present) return scan;

    QHash<QString, int> by_blob;  // blob path → index in scan.models
    static const QRegularExpression digest_re(QStringLiteral("^sha256[:-]([0-9a-f]{64})$"));
    QDirIterator it(manifests, QDir::Files, QDirIterator::Subdirectories);
    QStringList files;
    while (it.hasNext()) files << it.next();
    files.sort();
    for (const QString& path : files) {
        const QString rel = QDir(manifests).relativeFilePath(path);
        const QStringList parts = rel.split(QLatin1Char('/'));
        if (parts.size() != 4) continue;  // not host/namespace/model/tag
        const auto problem = [&](const QString& why) {
            scan.problems << QStringLiteral("manifests/%1: %2").arg(rel, why);
        };
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            problem(QStringLiteral("cannot be read"));
            continue;
        }
        if (file.size() > kMaxManifestBytes) {
            problem(QStringLiteral("too large for a manifest"));
            continue;
        }
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
        if (!doc.isObject()) {
            problem(QStringLiteral("not a JSON manifest (%1)").arg(error.errorString()));
            continue;
        }
        QJsonObject model_layer;
        for (const QJsonValue& layer : doc.object().value(QStringLiteral("layers")).toArray()) {
            if (layer.toObject().value(QStringLiteral("mediaType")).toString() ==
                QLatin1String("application/vnd.ollama.image.model")) {
                model_layer = layer.toObject();
                break;
            }
        }
        if (model_layer.isEmpty()) {
            problem(QStringLiteral("no model layer"));
            continue;
        }
        const auto digest = digest_re.match(model_layer.value(QStringLiteral("digest")).toString());
        if (!digest.hasMatch()) {
            problem(QStringLiteral("the model layer's digest is not a SHA-256"));
            continue;
        }
        QString blob = root.filePath(QStringLiteral("blobs/sha256-") + digest.captured(1));
        if (!QFileInfo::exists(blob)) {
            const QString old = root.filePath(QStringLiteral("blobs/sha256:") + digest.captured(1));
            if (QFileInfo::exists(old)) blob = old;
        }
        const QFileInfo info(blob);
        if (!info.isFile()) {
            problem(QStringLiteral("its model blob is missing"));
            continue;
        }
        const qint64 expected = model_layer.value(QStringLiteral("size")).toInteger(-1);
        if (expected >= 0 && info.size() != expected) {
            problem(QStringLiteral("its model blob is %1 bytes, the manifest says %2")
                        .arg(info.size())
                        .arg(expected));
            continue;
        }
        if (!is_gguf(blob)) {
            problem(QStringLiteral("its model blob is not a GGUF file"));
            continue;
        }
        const QString name = ollama_name(parts);
        if (const auto seen = by_blob.constFind(blob); seen != by_blob.constEnd()) {
            FoundModel& m = scan.models[*seen];
            // "latest" names a model best when a blob has several tags.
            if (parts[3] == QLatin1String("latest")) {
                m.aliases << m.name;
                m.name = name;
            } else {
                m.aliases << name;
            }
            continue;
        }
        FoundModel m;
        m.path = blob;
        m.name = name;
        m.file_name = info.fileName();
        m.source = Source::Ollama;
        m.root = models_dir;
        m.size = info.size();
        m.modified = QFileInfo(path).lastModified();
        by_blob.insert(blob, static_cast<int>(scan.models.size()));
        scan.models << m;
    }
    return scan;
}

}  // namespace hearth::models
