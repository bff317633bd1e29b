#include "core/document_files.h"

#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QUrl>
#include <QtConcurrent/QtConcurrentRun>

#include "documents/document_text.h"

namespace hearth::app {

namespace st = hearth::store;
namespace docs = hearth::documents;

namespace {

QString store_format(docs::DocumentFormat f) {
    switch (f) {
        case docs::DocumentFormat::PlainText:
            return QStringLiteral("text");
        case docs::DocumentFormat::Markdown:
            return QStringLiteral("markdown");
        case docs::DocumentFormat::Code:
            return QStringLiteral("code");
        case docs::DocumentFormat::Html:
            return QStringLiteral("html");
        case docs::DocumentFormat::Pdf:
            return QStringLiteral("pdf");
        case docs::DocumentFormat::Docx:
            return QStringLiteral("docx");
        case docs::DocumentFormat::Odt:
            return QStringLiteral("odt");
    }
    return QStringLiteral("text");
}

}  // namespace

QString local_path(const QVariant& file) {
    const QUrl url = file.toUrl();
    if (url.isLocalFile()) return url.toLocalFile();
    const QString text = file.toString();
    return text.startsWith(QLatin1String("file:")) ? QUrl(text).toLocalFile() : text;
}

QStringList local_paths(const QVariantList& files) {
    QStringList out;
    for (const QVariant& f : files)
        if (const QString path = local_path(f); !path.isEmpty()) out << path;
    return out;
}

namespace {

// The files to read: each file given, and a folder's documents (the formats Hearth reads,
// in name order, hidden ones skipped), at most max_per_folder per folder.
QStringList expand(const QStringList& paths, int max_per_folder, QStringList& problems) {
    QStringList out;
    for (const QString& path : paths) {
        const QFileInfo info(path);
        if (!info.isDir()) {
            out << path;
            continue;
        }
        QStringList found;
        QDirIterator it(path, QDir::Files | QDir::Readable, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString file = it.next();
            if (QFileInfo(file).fileName().startsWith(QLatin1Char('.'))) continue;
            if (docs::format_of(file, {})) found << file;
        }
        found.sort();
        if (found.size() > max_per_folder) {
            problems << QStringLiteral("%1: only its first %2 documents were read (it has %3)")
                            .arg(QDir::toNativeSeparators(path))
                            .arg(max_per_folder)
                            .arg(found.size());
            found = found.mid(0, max_per_folder);
        }
        if (found.isEmpty())
            problems << QStringLiteral("%1 holds no documents Hearth reads")
                            .arg(QDir::toNativeSeparators(path));
        out << found;
    }
    return out;
}

}  // namespace

ReadDocuments read_document_files(const QStringList& paths, int max_per_folder) {
    ReadDocuments r;
    for (const QString& path : expand(paths, max_per_folder, r.problems)) {
        auto text = docs::extract_document(path);
        if (!text) {
            r.problems << QString::fromStdString(text.message());
            continue;
        }
        const QFileInfo info(path);
        st::Document d;
        d.name = info.fileName().left(st::kMaxDocumentName);
        d.source_path = info.absoluteFilePath();
        d.format = store_format(text->format);
        d.language = text->language;
        d.text = std::move(text->text);
        d.file_size = info.size();
        d.file_modified = info.lastModified();
        for (const QString& note : text->notes)
            r.problems << QStringLiteral("%1: %2").arg(info.fileName(), note);
        r.read.push_back(std::move(d));
    }
    return r;
}

void read_document_files_then(QObject* context, const QStringList& paths, int max_per_folder,
                              std::function<void(ReadDocuments)> done) {
    auto* watch = new QFutureWatcher<ReadDocuments>(context);
    QObject::connect(watch, &QFutureWatcher<ReadDocuments>::finished, context,
                     [watch, done = std::move(done)] {
                         ReadDocuments r = watch->result();
                         watch->deleteLater();
                         done(std::move(r));
                     });
    watch->setFuture(QtConcurrent::run(read_document_files, paths, max_per_folder));
}

QVariantMap document_row(const st::Document& d) {
    const QFileInfo file(d.source_path);
    const bool missing = !d.source_path.isEmpty() && !file.exists();
    const bool changed = !d.source_path.isEmpty() && !missing &&
                         ((d.file_size && file.size() != *d.file_size) ||
                          (d.file_modified && file.lastModified().toMSecsSinceEpoch() !=
                                                  d.file_modified->toMSecsSinceEpoch()));
    return {{QStringLiteral("documentId"), QVariant::fromValue<qint64>(d.id)},
            {QStringLiteral("name"), d.name},
            {QStringLiteral("format"), d.format},
            {QStringLiteral("sourcePath"), d.source_path},
            {QStringLiteral("characters"), static_cast<int>(d.text.size())},
            {QStringLiteral("changed"), changed},
            {QStringLiteral("missing"), missing},
            {QStringLiteral("lookup"), d.lookup}};
}

}  // namespace hearth::app
