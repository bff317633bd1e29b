#include "models/scan_util.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QRegularExpression>

#include <algorithm>

namespace hearth::models {

QString source_id(Source source) {
    switch (source) {
        case Source::Hearth:
            return QStringLiteral("hearth");
        case Source::Folder:
            return QStringLiteral("folder");
        case Source::Ollama:
            return QStringLiteral("ollama");
        case Source::LmStudio:
            return QStringLiteral("lmstudio");
        case Source::Gpt4All:
            return QStringLiteral("gpt4all");
        case Source::Jan:
            return QStringLiteral("jan");
        case Source::LlamaCpp:
            return QStringLiteral("llamacpp");
        case Source::HuggingFace:
            return QStringLiteral("huggingface");
    }
    return {};
}

QString source_label(Source source) {
    switch (source) {
        case Source::Hearth:
            return QStringLiteral("Hearth");
        case Source::Folder:
            return QStringLiteral("Your folder");
        case Source::Ollama:
            return QStringLiteral("Ollama");
        case Source::LmStudio:
            return QStringLiteral("LM Studio");
        case Source::Gpt4All:
            return QStringLiteral("GPT4All");
        case Source::Jan:
            return QStringLiteral("Jan");
        case Source::LlamaCpp:
            return QStringLiteral("llama.cpp");
        case Source::HuggingFace:
            return QStringLiteral("Hugging Face");
    }
    return {};
}

bool is_gguf(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return false;
    return file.read(4) == "GGUF";
}

std::optional<SplitName> split_name(const QString& file_name) {
    static const QRegularExpression re(QStringLiteral(R"(^(.+)-(\d{5})-of-(\d{5})\.gguf$)"),
                                       QRegularExpression::CaseInsensitiveOption);
    const auto m = re.match(file_name);
    if (!m.hasMatch()) return std::nullopt;
    SplitName s{m.captured(1), m.captured(2).toInt(), m.captured(3).toInt()};
    if (s.count < 1 || s.index < 1 || s.index > s.count) return std::nullopt;
    return s;
}

QString split_part_name(const QString& prefix, int index, int count) {
    return QStringLiteral("%1-%2-of-%3.gguf")
        .arg(prefix)
        .arg(index, 5, 10, QLatin1Char('0'))
        .arg(count, 5, 10, QLatin1Char('0'));
}

bool is_auxiliary(const QString& file_name) {
    const QString lower = file_name.toLower();
    if (!lower.endsWith(QLatin1String(".gguf")) || lower.startsWith(QLatin1Char('.')) ||
        lower.startsWith(QLatin1String("incomplete")))
        return true;
    // What llama.cpp's cache listing leaves out as not a model (gguf_filename_is_model in
    // its common/download.cpp): projectors, importance matrices, draft and MTP heads.
    for (const char* mark : {"mmproj", "imatrix", "mtp-", "eagle3-", "dflash-", "dspark-"})
        if (lower.contains(QLatin1String(mark))) return true;
    return false;
}

QList<FoundModel> collect_gguf(const QString& dir, int max_depth, SourceScan& scan) {
    QList<FoundModel> out;
    struct Split {
        FoundModel first;
        qint64 size = 0;
        int seen = 0;
        int count = 0;
        QDateTime newest;
    };
    QHash<QString, Split> splits;  // key: folder + prefix + count

    const QDir root(dir);
    const auto walk = [&](const auto& self, const QString& folder, int depth) -> void {
        const QDir d(folder);
        if (!d.isReadable()) {
            scan.problems
                << QStringLiteral("%1: cannot be read").arg(QDir::toNativeSeparators(folder));
            return;
        }
        const QFileInfoList entries = d.entryInfoList(
            QDir::Files | QDir::Dirs | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
        for (const QFileInfo& info : entries) {
            if (info.isDir()) {
                if (depth < max_depth && !info.isSymLink()) self(self, info.filePath(), depth + 1);
                continue;
            }
            const QString name = info.fileName();
            if (is_auxiliary(name)) continue;
            FoundModel m;
            m.path = info.filePath();
            m.file_name = name;
            m.size = info.size();
            m.modified = info.lastModified();
            if (const auto s = split_name(name)) {
                Split& group = splits[folder + QLatin1Char('/') + s->prefix + QLatin1Char('#') +
                                      QString::number(s->count)];
                group.count = s->count;
                group.size += m.size;
                ++group.seen;
                if (!group.newest.isValid() || m.modified > group.newest) group.newest = m.modified;
                if (s->index == 1) group.first = m;
                continue;
            }
            if (!info.exists()) {  // a link to nothing (an interrupted download)
                scan.problems << QStringLiteral("%1: a link to a missing file")
                                     .arg(QDir::toNativeSeparators(root.relativeFilePath(m.path)));
                continue;
            }
            out << m;
        }
    };
    walk(walk, dir, 0);

    for (auto it = splits.cbegin(); it != splits.cend(); ++it) {
        const Split& g = it.value();
        if (g.first.path.isEmpty()) {
            scan.problems << QStringLiteral("%1: the first part of a split model is missing")
                                 .arg(QDir::toNativeSeparators(
                                     it.key().section(QLatin1Char('#'), 0, 0)));
            continue;
        }
        FoundModel m = g.first;
        m.size = g.size;
        m.modified = g.newest;
        m.parts = g.count;
        m.complete = g.seen == g.count;
        out << m;
    }
    std::sort(out.begin(), out.end(),
              [](const FoundModel& a, const FoundModel& b) { return a.path < b.path; });
    return out;
}

}  // namespace hearth::models
