// Opening the store: checks before anything is written, setting a damaged file aside,
// connection settings, migration and crash recovery.
#include "store/store.h"

#include <cerrno>
#include <system_error>

#include <sqlite3.h>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#ifndef _WIN32
#include <unistd.h>
#endif

#include "common/log.h"
#include "common/paths.h"
#include "store/rows.h"
#include "store/schema.h"

namespace hearth::store {
namespace {

using detail::context;

auto logger() {
    return hearth::log::get("store");
}

constexpr int kSqliteHeaderSize = 100;

// What the first 100 bytes say, read with plain file I/O so that nothing (not even a
// -wal or -shm file) is created next to a file we may refuse.
struct HeaderProbe {
    bool is_sqlite = true;
    int user_version = 0;
};

Result<HeaderProbe> probe_header(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return make_error("cannot read " + path.toStdString() + ": " +
                          file.errorString().toStdString());
    const QByteArray header = file.read(kSqliteHeaderSize);
    HeaderProbe probe;
    if (header.isEmpty()) return probe;  // an empty file is a new, empty database
    static const QByteArray kMagic("SQLite format 3\0", 16);
    if (header.size() < kSqliteHeaderSize || !header.startsWith(kMagic)) {
        probe.is_sqlite = false;
        return probe;
    }
    // The user_version is a big-endian 32-bit integer at offset 60 of the header.
    const auto byte = [&](int i) {
        return static_cast<std::uint32_t>(static_cast<unsigned char>(header[i]));
    };
    const std::uint32_t v = (byte(60) << 24) | (byte(61) << 16) | (byte(62) << 8) | byte(63);
    probe.user_version = static_cast<int>(v);
    return probe;
}

// No Hearth writes a negative user_version: some other program's database.
Error unknown_version_error(const QString& path, int version) {
    return make_error(path.toStdString() + " has an unknown schema version (" +
                      std::to_string(version) +
                      ") and was not written by Hearth; it was left untouched");
}

// Why the current user cannot write `path` (a file or folder), in the system's words, or "".
std::string not_writable(const QString& path) {
#ifdef _WIN32
    return QFileInfo(path).isWritable() ? std::string() : std::string("permission denied");
#else
    // access() rather than permission bits: it knows about read-only mounts and root.
    if (::access(QFile::encodeName(path).constData(), W_OK) == 0) return {};
    return std::system_category().message(errno);
#endif
}

bool is_corruption(int code) {
    const int primary = code & 0xff;
    return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT;
}

// Moves a damaged database and its -wal/-shm aside as <name>.corrupt-<time>[-n], the
// sidecars first: a stale -wal left next to a fresh database would be replayed into it.
// Everything is renamed back when any rename fails. Nothing is ever deleted.
Result<QString> set_aside(const QString& path) {
    const QString stamp =
        QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    QString backup = path + QStringLiteral(".corrupt-") + stamp;
    for (int n = 2; QFileInfo::exists(backup) || QFileInfo::exists(backup + "-wal") ||
                    QFileInfo::exists(backup + "-shm");
         ++n)
        backup = path + QStringLiteral(".corrupt-") + stamp + "-" + QString::number(n);

    std::vector<std::pair<QString, QString>> done;
    for (const QString& suffix : {QStringLiteral("-wal"), QStringLiteral("-shm"), QString()}) {
        const QString from = path + suffix;
        if (!QFileInfo::exists(from)) continue;
        if (!QFile::rename(from, backup + suffix)) {
            for (auto it = done.rbegin(); it != done.rend(); ++it)
                QFile::rename(it->second, it->first);
            return make_error("the chat history " + path.toStdString() +
                              " is damaged and could not be moved aside (renaming " +
                              from.toStdString() + " failed); it was left as it is");
        }
        done.emplace_back(from, backup + suffix);
    }
    return backup;
}

constexpr const char* kCheckedAtKey = "store.integrity_checked_at";
constexpr std::int64_t kRecheckAfterMs = 7LL * 24 * 3600 * 1000;

// Whether this open runs PRAGMA quick_check (see OpenOptions::integrity_check).
bool wants_check(Database& db, const QString& path, const OpenOptions& options, int version,
                 bool unclean) {
    switch (options.integrity_check) {
        case OpenOptions::IntegrityCheck::Always:
            return true;
        case OpenOptions::IntegrityCheck::Never:
            return false;
        case OpenOptions::IntegrityCheck::Auto:
            break;
    }
    if (QFileInfo(path).size() < options.check_below_bytes) return true;
    if (db.read_only()) return false;
    if (unclean || version < 1) return true;
    auto stmt =
        db.prepare(std::string("SELECT value FROM settings WHERE key = '") + kCheckedAtKey + "'");
    if (!stmt) return true;
    auto row = stmt->step();
    if (!row || !*row) return true;
    return detail::now_ms() - stmt->column_text(0).toLongLong() > kRecheckAfterMs;
}

// Opens a read-write connection and checks it before anything is written. The error
// result distinguishes damage (set aside or reported) from every other failure.
struct Checked {
    std::optional<Database> db;
    std::optional<Error> corrupt;  // the file is damaged: reason
    bool integrity_checked = false;
};

Result<Checked> open_and_check(const QString& path, const OpenOptions& options, bool unclean) {
    auto db = Database::open(path, OpenMode::ReadWriteCreate);
    if (!db) return db.error();
    // Until the file is known good, closing must not checkpoint a -wal into it.
    sqlite3_db_config(db->handle(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    sqlite3_busy_timeout(db->handle(), static_cast<int>(options.busy_timeout.count()));

    Checked checked;
    const auto corrupt = [&](const Error& error) -> Result<Checked> {
        checked.corrupt = error;
        return std::move(checked);
    };
    // The version as SQLite sees it, -wal included (the header probe saw only the file).
    auto version = db->user_version();
    if (!version)
        return is_corruption(db->last_error_code()) ? corrupt(version.error())
                                                    : Result<Checked>(version.error());
    if (*version > kSchemaVersion) return newer_version_error(path, *version);
    if (*version < 0) return unknown_version_error(path, *version);
    if (wants_check(*db, path, options, *version, unclean)) {
        auto check = db->query_text("PRAGMA quick_check(1)");
        if (!check)
            return is_corruption(db->last_error_code()) ? corrupt(check.error())
                                                        : Result<Checked>(check.error());
        if (*check != QLatin1String("ok"))
            return corrupt(make_error("the integrity check found: " + check->toStdString()));
        checked.integrity_checked = true;
    } else {
        // Still parse the schema, which fails on the commonest damage.
        auto count = db->query_int("SELECT count(*) FROM sqlite_schema");
        if (!count)
            return is_corruption(db->last_error_code()) ? corrupt(count.error())
                                                        : Result<Checked>(count.error());
    }
    // SQLite quietly opens a file it may not write read-only; say so now, not at the
    // first message the user sends.
    if (sqlite3_db_readonly(db->handle(), "main") == 1)
        return make_error(path.toStdString() +
                          " cannot be written: the file or its folder is read-only (check their "
                          "permissions, or whether the disk is mounted read-only)");
    sqlite3_db_config(db->handle(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, nullptr);
    checked.db = std::move(*db);
    return checked;
}

Result<void> configure(Database& db, const OpenOptions& options) {
    auto mode = db.query_text("PRAGMA journal_mode = WAL");
    if (!mode) return context("switching to write-ahead logging", mode.error());
    // WAL needs shared memory; on file systems without it SQLite keeps its rollback journal,
    // which is slower but just as safe.
    if (mode->compare(QLatin1String("wal"), Qt::CaseInsensitive) != 0)
        logger()->warn("{}: write-ahead logging unavailable, using journal mode {}",
                       db.path().toStdString(), mode->toStdString());
    const std::string sync = options.full_sync ? "FULL" : "NORMAL";
    if (auto rc = db.exec("PRAGMA synchronous = " + sync); !rc) return rc;
    if (auto rc = db.exec("PRAGMA foreign_keys = ON"); !rc) return rc;
    // Keep the -wal from growing without bound after a large import.
    if (auto rc = db.exec("PRAGMA journal_size_limit = 8388608"); !rc) return rc;
    if (options.max_page_count > 0) {
        if (auto rc = db.exec("PRAGMA max_page_count = " + std::to_string(options.max_page_count));
            !rc)
            return rc;
    }
    auto fk = db.query_int("PRAGMA foreign_keys");
    if (!fk || *fk != 1) return make_error("internal error: foreign keys could not be enabled");
    return {};
}

Result<Database> open_read_only(const QString& path, const OpenOptions& options) {
    if (!QFileInfo::exists(path))
        return make_error("there is no chat history at " + path.toStdString() +
                          " (the file does not exist)");
    auto probe = probe_header(path);
    if (!probe) return probe.error();
    if (!probe->is_sqlite)
        return make_error(path.toStdString() +
                          " is not a Hearth chat history (not an SQLite database)");
    if (probe->user_version > kSchemaVersion) return newer_version_error(path, probe->user_version);

    const auto attempt = [&](OpenMode mode) -> Result<std::pair<Database, int>> {
        auto db = Database::open(path, mode);
        if (!db) return db.error();
        sqlite3_busy_timeout(db->handle(), static_cast<int>(options.busy_timeout.count()));
        if (auto rc = db->exec("PRAGMA query_only = ON"); !rc) return rc.error();
        auto version = db->user_version();
        if (!version) return context("reading " + path.toStdString(), version.error());
        return std::pair<Database, int>(std::move(*db), *version);
    };
    auto opened = attempt(OpenMode::ReadOnly);
    // A WAL database needs a -shm file, which a reader cannot create in a folder it may not
    // write. With no -wal there, nobody is writing (a writer would have made one), so the
    // file alone is the whole database and can be read as immutable.
    if (!opened && !QFileInfo::exists(path + "-wal") &&
        !not_writable(QFileInfo(path).absolutePath()).empty())
        opened = attempt(OpenMode::ReadOnlyImmutable);
    if (!opened) return opened.error();
    auto db = std::optional<Database>(std::move(opened->first));
    const std::optional<int> version = opened->second;
    if (*version > kSchemaVersion) return newer_version_error(path, *version);
    if (*version < 0) return unknown_version_error(path, *version);
    if (*version == 0)
        return make_error(path.toStdString() + " holds no chat history yet (an empty database)");
    if (*version < kSchemaVersion)
        return make_error(
            path.toStdString() + " was written by an older version of Hearth (schema " +
            std::to_string(*version) + "); open it once in Hearth to upgrade it, then try again");
    if (wants_check(*db, path, options, *version, false)) {
        auto check = db->query_text("PRAGMA quick_check(1)");
        if (!check) return context("checking " + path.toStdString(), check.error());
        if (*check != QLatin1String("ok"))
            return make_error(path.toStdString() + " is damaged: " + check->toStdString());
    }
    return std::move(*db);
}

}  // namespace

Store::Store(Database db, OpenOptions options, OpenReport report)
    : db_(std::move(db)), options_(std::move(options)), report_(std::move(report)) {}

Store::~Store() {
    if (!db_.handle() || replies_.empty()) return;
    if (auto rc = flush_replies(true); !rc)
        logger()->error("writing streaming replies at close failed: {}", rc.message());
}

QString Store::default_path() {
    return QDir::fromNativeSeparators(QString::fromStdString(hearth::paths::data_dir())) +
           QStringLiteral("/hearth.sqlite3");
}

std::chrono::steady_clock::time_point Store::now() const {
    return options_.clock ? options_.clock() : std::chrono::steady_clock::now();
}

Result<Store> Store::open(const QString& requested_path, OpenOptions options) {
    if (requested_path.isEmpty()) return make_error("no chat history file was given");
    // Absolute, so SQLite never reads a name like "file:..." as a URI.
    const QString path = QFileInfo(requested_path).absoluteFilePath();
    const QFileInfo info(path);
    if (info.isDir())
        return make_error(path.toStdString() + " is a folder, not a chat history file");
    OpenReport report;
    report.path = path;
    if (options.read_only) {
        auto db = open_read_only(path, options);
        if (!db) return db.error();
        return Result<Store>(Store(std::move(*db), std::move(options), std::move(report)));
    }
    if (!info.exists()) {
        if (!QDir().mkpath(info.absolutePath()))
            return make_error("cannot create the folder " + info.absolutePath().toStdString() +
                              " for the chat history: check that its parent can be written");
        // SQLite's own error for this ("unable to open database file") names no cause.
        if (const std::string why = not_writable(info.absolutePath()); !why.empty())
            return make_error(
                "cannot create the chat history in " + info.absolutePath().toStdString() + ": " +
                why + " (the folder is read-only or you lack permission; check its permissions)");
    }

    std::optional<Error> damage;
    if (info.exists()) {
        auto probe = probe_header(path);
        if (!probe) return probe.error();
        if (!probe->is_sqlite)
            damage = make_error("it is not an SQLite database");
        else if (probe->user_version > kSchemaVersion)
            return newer_version_error(path, probe->user_version);
    }
    if (!damage && info.exists()) {
        // Writing needs the file and its folder (for the -wal and -shm files).
        for (const QString& target : {path, info.absolutePath()}) {
            if (const std::string why = not_writable(target); !why.empty())
                return make_error(path.toStdString() + " cannot be written: " + why +
                                  " (the file or its folder is read-only, or you lack permission; "
                                  "check their permissions)");
        }
    }
    // A -wal left behind means the last session did not close cleanly: check it then.
    const bool unclean = QFileInfo::exists(path + "-wal") && QFileInfo(path + "-wal").size() > 0;
    std::optional<Database> db;
    if (!damage) {
        auto checked = open_and_check(path, options, unclean);
        if (!checked) return checked.error();
        if (checked->corrupt)
            damage = checked->corrupt;
        else
            db = std::move(checked->db);
        report.integrity_checked = checked->integrity_checked;
    }
    if (damage) {
        if (options.on_corrupt == OpenOptions::OnCorrupt::Fail)
            return make_error(path.toStdString() + " is damaged (" + damage->message +
                              "); it was left untouched");
        auto backup = set_aside(path);
        if (!backup) return backup.error();
        logger()->error("{} is damaged ({}); moved it to {} and started a new chat history",
                        path.toStdString(), damage->message, backup->toStdString());
        report.corrupt_backup_path = *backup;
        report.corrupt_reason = QString::fromStdString(damage->message);
        auto fresh = open_and_check(path, options, false);
        if (!fresh) return fresh.error();
        if (fresh->corrupt) return context("creating a new chat history", *fresh->corrupt);
        db = std::move(fresh->db);
        report.integrity_checked = fresh->integrity_checked;
    }

    if (auto rc = configure(*db, options); !rc)
        return context("opening " + path.toStdString(), rc.error());
    auto version = db->user_version();
    if (!version) return version.error();
    report.created = *version == 0;
    if (*version < kSchemaVersion) {
        if (*version > 0) report.migrated_from = *version;
        if (auto rc = migrate(*db); !rc) return rc.error();
    }
    // A reply still Streaming belongs to a Hearth that stopped mid-reply (one instance
    // owns the database at a time); it keeps the text written so far.
    auto stmt = db->prepare("UPDATE messages SET state = 'interrupted' WHERE state = 'streaming'");
    if (!stmt) return stmt.error();
    if (auto rc = stmt->run(); !rc) return context("recovering interrupted replies", rc.error());
    report.interrupted_replies = db->changes();
    if (report.integrity_checked) {
        auto stamp = db->prepare(
            "INSERT INTO settings (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
        if (!stamp) return stamp.error();
        stamp->bind(1, kCheckedAtKey).bind(2, std::to_string(detail::now_ms()));
        if (auto rc = stamp->run(); !rc)
            return context("recording the integrity check", rc.error());
    }
    Store store(std::move(*db), std::move(options), std::move(report));
    // Documents from before schema 11 get their passages (nothing to do after that).
    if (!store.read_only())
        if (auto rc = store.index_unchunked_documents(); !rc) return rc.error();
    if (store.report().interrupted_replies > 0)
        logger()->info("marked {} reply(ies) interrupted by an earlier stop",
                       store.report().interrupted_replies);
    return Result<Store>(std::move(store));
}

Result<QString> Store::integrity_check() {
    auto stmt = db_.prepare("PRAGMA integrity_check");
    if (!stmt) return stmt.error();
    QStringList problems;
    while (true) {
        auto row = stmt->step();
        if (!row) return row.error();
        if (!*row) break;
        problems << stmt->column_text(0);
    }
    return problems.join(QLatin1Char('\n'));
}

}  // namespace hearth::store
