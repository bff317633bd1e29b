#include "store/path_check.h"

#include <QDir>
#include <QFileInfo>

namespace hearth::store {
namespace {

std::string quote(const QString& path) {
    return "\"" + path.toStdString() + "\"";
}

// The path with symbolic links resolved as far as they exist, so a link to the database
// is recognised as the database.
QString resolved(const QString& path) {
    const QFileInfo info(path);
    if (info.exists()) return info.canonicalFilePath();
    const QString dir = QFileInfo(info.absolutePath()).canonicalFilePath();
    return dir.isEmpty() ? info.absoluteFilePath() : dir + QLatin1Char('/') + info.fileName();
}

bool is_database_file(const QString& candidate, const QString& database_path) {
    if (database_path.isEmpty()) return false;
    const QString target = resolved(candidate);
    const QString db = resolved(database_path);
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        if (target == db + QLatin1String(suffix)) return true;
    return false;
}

Result<QString> common_checks(const QString& path) {
    if (path.trimmed().isEmpty()) return make_error("no file was chosen");
    if (path.contains(QChar(u'\0'))) return make_error("the file name contains a NUL character");
    return QDir::cleanPath(QFileInfo(path).absoluteFilePath());
}

}  // namespace

Result<QString> validate_export_path(const QString& path, const QString& database_path,
                                     bool overwrite) {
    auto absolute = common_checks(path);
    if (!absolute) return absolute;
    const QFileInfo info(*absolute);
    if (info.isDir())
        return make_error(quote(*absolute) + " is a folder; choose a file name inside it");
    const QFileInfo parent(info.absolutePath());
    if (!parent.isDir())
        return make_error("the folder " + quote(info.absolutePath()) + " does not exist");
    if (is_database_file(*absolute, database_path))
        return make_error(quote(*absolute) +
                          " is the chat history database itself; choose another file");
    if (info.exists() || info.isSymLink()) {
        if (!info.isFile())
            return make_error(quote(*absolute) + " is not a regular file; choose another name");
        if (!overwrite)
            return make_error(quote(*absolute) +
                              " already exists; choose another name or allow replacing it");
    }
    return absolute;
}

Result<QString> validate_import_path(const QString& path, const QString& database_path) {
    auto absolute = common_checks(path);
    if (!absolute) return absolute;
    const QFileInfo info(*absolute);
    if (!info.exists()) return make_error(quote(*absolute) + " does not exist");
    if (!info.isFile()) return make_error(quote(*absolute) + " is not a regular file");
    if (is_database_file(*absolute, database_path))
        return make_error(quote(*absolute) + " is the chat history database itself, not an export");
    if (info.size() > kMaxImportBytes)
        return make_error(quote(*absolute) + " is too large for a conversation export (over " +
                          std::to_string(kMaxImportBytes >> 20) + " MiB)");
    return absolute;
}

}  // namespace hearth::store
