// Validation of paths a person chooses for export and import. The store writes only
// where these allow, and reads only regular files of a bounded size.
#pragma once

#include <QString>

#include "common/result.h"

namespace hearth::store {

inline constexpr qint64 kMaxImportBytes = 64LL << 20;

// A file to write an export to. Relative paths are taken from the current folder. Refused:
// an empty path, a folder, a missing parent folder, anything that is not a regular file
// (a device, a pipe), the chat database itself or its -wal/-shm/-journal, and an existing
// file unless `overwrite`. Returns the absolute path.
Result<QString> validate_export_path(const QString& path, const QString& database_path,
                                     bool overwrite);

// A file to import: it must exist, be a regular readable file of at most kMaxImportBytes
// and not be the chat database. Returns the absolute path.
Result<QString> validate_import_path(const QString& path, const QString& database_path);

}  // namespace hearth::store
