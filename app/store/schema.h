// The database schema and its migration ladder (PRAGMA user_version).
#pragma once

#include "common/result.h"
#include "store/database.h"

namespace hearth::store {

// The schema version this build writes. A database with a higher user_version was written
// by a newer Hearth and is refused (never modified).
inline constexpr int kSchemaVersion = 12;

// Upgrades the database step by step from its user_version to `target` (tests stop at
// earlier versions to build old databases). Each step runs in one transaction together
// with its user_version bump, so a failed step leaves the previous version intact.
Result<void> migrate(Database& db, int target = kSchemaVersion);

// The message for a database written by a newer version of Hearth.
Error newer_version_error(const QString& path, int version);

}  // namespace hearth::store
