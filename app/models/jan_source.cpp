// Jan's models, in the three layouts its versions wrote (janhq/jan):
//  - 0.6 and newer: <data>/llamacpp/models/<id…>/model.yml, "model_path" relative to the
//    data folder (or absolute, for a file imported in place), "name", "embedding"
//    (extensions/llamacpp-extension/src/index.ts: import(), list());
//  - 0.5 (Cortex): <data>/models/<host>/<org>/<repo>/<name>.yml with "model" and "files"
//    (migrateLegacyModels in the same file);
//  - 0.4: <data>/models/<id>/model.json with "name" and the file in "sources[].filename"
//    or "settings.llama_model_path" (core/src/types/model/modelEntity.ts).
// A 0.6 migration leaves the old description beside the new one: each file is listed once.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

#include "models/model_sources.h"
#include "models/scan_util.h"

namespace hearth::models {
namespace {

constexpr qint64 kMaxDescriptionBytes = 1 << 20;

QByteArray read_small(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly) || f.size() > kMaxDescriptionBytes) return {};
    return f.readAll();
}

QString unquote(QString v) {
    v = v.trimmed();
    if (v.size() >= 2 && (v.front() == QLatin1Char('"') || v.front() == QLatin1Char('\'')) &&
        v.back() == v.front())
        v = v.mid(1, v.size() - 2);
    return v;
}

// The top-level "key: value" scalars of a flat YAML file, and the items of its block or
// flow lists ("files:\n  - a.gguf" or "files: [a.gguf]"), as Jan writes them.
struct FlatYaml {
    QHash<QString, QString> scalars;
    QHash<QString, QStringList> lists;
};

FlatYaml parse_flat_yaml(const QByteArray& bytes) {
    FlatYaml y;
    QString list_key;
    for (const QByteArray& raw : bytes.split('\n')) {
        const QString line = QString::fromUtf8(raw).remove(QLatin1Char('\r'));
        if (line.trimmed().isEmpty() || line.trimmed().startsWith(QLatin1Char('#'))) continue;
        if (line.front().isSpace()) {
            const QString item = line.trimmed();
            if (!list_key.isEmpty() && item.startsWith(QLatin1String("- ")))
                y.lists[list_key] << unquote(item.mid(2));
            continue;
        }
        list_key.clear();
        const qsizetype colon = line.indexOf(QLatin1Char(':'));
        if (colon <= 0) continue;
        const QString key = line.left(colon).trimmed();
        const QString value = line.mid(colon + 1).trimmed();
        if (value.isEmpty()) {
            list_key = key;
        } else if (value.startsWith(QLatin1Char('[')) && value.endsWith(QLatin1Char(']'))) {
            for (const QString& item : value.mid(1, value.size() - 2).split(QLatin1Char(',')))
                if (!unquote(item).isEmpty()) y.lists[key] << unquote(item);
        } else {
            y.scalars.insert(key, unquote(value));
        }
    }
    return y;
}

struct JanScan {
    SourceScan& scan;
    QDir data;
    QSet<QString> seen;  // canonical paths

    void add(const QString& described_by, const QString& file, const QString& name) {
        const QString rel = data.relativeFilePath(described_by);
        if (file.isEmpty()) {
            scan.problems << QStringLiteral("%1: names no model file").arg(rel);
            return;
        }
        const QString path = QDir::isAbsolutePath(file) ? file : data.filePath(file);
        const QFileInfo info(path);
        if (!info.isFile()) {
            scan.problems << QStringLiteral("%1: its model file %2 is missing")
                                 .arg(rel, QDir::toNativeSeparators(file));
            return;
        }
        if (is_auxiliary(info.fileName()) || seen.contains(info.canonicalFilePath())) return;
        if (!is_gguf(path)) {
            scan.problems << QStringLiteral("%1: %2 is not a GGUF file").arg(rel, info.fileName());
            return;
        }
        seen.insert(info.canonicalFilePath());
        FoundModel m;
        m.path = info.filePath();
        m.file_name = info.fileName();
        m.name = name.isEmpty() ? info.fileName() : name;
        m.source = Source::Jan;
        m.root = data.path();
        m.size = info.size();
        m.modified = info.lastModified();
        if (const auto s = split_name(m.file_name); s && s->count > 1) {
            // Jan names the first part; its siblings complete the model.
            m.parts = s->count;
            m.size = 0;
            int found = 0;
            for (int i = 1; i <= s->count; ++i) {
                const QFileInfo part(info.dir().filePath(split_part_name(s->prefix, i, s->count)));
                if (part.isFile()) {
                    m.size += part.size();
                    ++found;
                }
            }
            m.complete = found == s->count;
        }
        scan.models << m;
    }
};

QStringList files_named(const QString& dir, const QStringList& patterns) {
    QStringList out;
    if (!QFileInfo(dir).isDir()) return out;
    QDirIterator it(dir, patterns, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) out << it.next();
    out.sort();
    return out;
}

}  // namespace

SourceScan scan_jan(const QString& data_dir) {
    SourceScan scan;
    scan.source = Source::Jan;
    scan.root = data_dir;
    scan.present = QFileInfo(data_dir).isDir();
    if (!scan.present) return scan;
    JanScan jan{scan, QDir(data_dir), {}};

    // 0.6+: model.yml per model.
    for (const QString& yml : files_named(jan.data.filePath(QStringLiteral("llamacpp/models")),
                                          {QStringLiteral("model.yml")})) {
        const FlatYaml y = parse_flat_yaml(read_small(yml));
        if (y.scalars.value(QStringLiteral("embedding")) == QLatin1String("true")) continue;
        const QString id = QDir(jan.data.filePath(QStringLiteral("llamacpp/models")))
                               .relativeFilePath(QFileInfo(yml).path());
        const QString name = y.scalars.value(QStringLiteral("name"));
        jan.add(yml, y.scalars.value(QStringLiteral("model_path")), name.isEmpty() ? id : name);
    }

    const QString legacy = jan.data.filePath(QStringLiteral("models"));
    // 0.4: model.json per model; the file is beside it.
    for (const QString& json : files_named(legacy, {QStringLiteral("model.json")})) {
        const QJsonObject o = QJsonDocument::fromJson(read_small(json)).object();
        if (o.isEmpty()) {
            scan.problems << QStringLiteral("%1: not a JSON model description")
                                 .arg(jan.data.relativeFilePath(json));
            continue;
        }
        QString file = o.value(QStringLiteral("settings"))
                           .toObject()
                           .value(QStringLiteral("llama_model_path"))
                           .toString();
        if (file.isEmpty())
            file = o.value(QStringLiteral("sources"))
                       .toArray()
                       .at(0)
                       .toObject()
                       .value(QStringLiteral("filename"))
                       .toString();
        if (file.isEmpty()) continue;  // a catalog entry never downloaded
        const QString folder = QFileInfo(json).path();
        const QString path = QDir::isAbsolutePath(file) ? file : QDir(folder).filePath(file);
        if (!QFileInfo::exists(path)) continue;  // listed by Jan's catalog, not downloaded
        jan.add(json, path, o.value(QStringLiteral("name")).toString());
    }
    // 0.5: <name>.yml beside (or naming) its file, paths relative to the data folder.
    for (const QString& yml :
         files_named(legacy, {QStringLiteral("*.yml"), QStringLiteral("*.yaml")})) {
        const FlatYaml y = parse_flat_yaml(read_small(yml));
        const QStringList files = y.lists.value(QStringLiteral("files"));
        if (files.isEmpty()) continue;
        QString file = files.front();
        if (!QDir::isAbsolutePath(file) && !QFileInfo::exists(jan.data.filePath(file)))
            file = QDir(QFileInfo(yml).path()).filePath(file);  // relative to the .yml
        jan.add(yml, file, y.scalars.value(QStringLiteral("model")));
    }
    return scan;
}

}  // namespace hearth::models
