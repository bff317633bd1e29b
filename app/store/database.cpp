#include "store/database.h"

#include <cstring>
#include <system_error>
#include <utility>

#include <sqlite3.h>
#include <QFile>
#include <QUrl>

#include "common/log.h"

namespace hearth::store {
namespace {

QByteArray native_path(const QString& path) {
#ifdef _WIN32
    return path.toUtf8();  // SQLite's Windows VFS takes UTF-8
#else
    return QFile::encodeName(path);  // the bytes open(2) should see
#endif
}

// Advice for the result codes a user can cause or fix, so errors say what to do.
std::string advice(int code, int system_errno, const QString& path) {
    const std::string file = path.toStdString();
    switch (code & 0xff) {
        case SQLITE_FULL:
            return "the disk holding " + file +
                   " is full (or the database reached its size limit); free some space and "
                   "try again";
        case SQLITE_READONLY:
            return file +
                   " cannot be written: the file or its folder is read-only (check the "
                   "permissions, or whether the disk is mounted read-only)";
        case SQLITE_CANTOPEN:
        case SQLITE_PERM:
            if (system_errno == EACCES || system_errno == EPERM || system_errno == EROFS)
                return "cannot open " + file + ": " + std::system_category().message(system_errno) +
                       " (the folder is read-only or you lack permission; check its permissions)";
            return "cannot open " + file + ": check that its folder exists and can be written";
        case SQLITE_NOTADB:
        case SQLITE_CORRUPT:
            return file + " is not a Hearth database or it is damaged";
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return "the database is in use by another program (perhaps another copy of "
                   "Hearth); close it and try again";
        case SQLITE_IOERR:
            if (system_errno == ENOSPC)
                return "the disk holding " + file + " is full; free some space and try again";
            if (system_errno != 0)
                return "reading or writing " + file +
                       " failed: " + std::system_category().message(system_errno);
            return "reading or writing " + file + " failed (a disk error)";
        case SQLITE_NOMEM:
            return "the computer ran out of memory";
        default:
            return {};
    }
}

}  // namespace

// ---- Database ------------------------------------------------------------------------

Result<Database> Database::open(const QString& path, OpenMode mode) {
    int flags = SQLITE_OPEN_EXRESCODE;
    switch (mode) {
        case OpenMode::ReadWriteCreate:
            flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
            break;
        case OpenMode::ReadWrite:
            flags |= SQLITE_OPEN_READWRITE;
            break;
        case OpenMode::ReadOnly:
            flags |= SQLITE_OPEN_READONLY;
            break;
        case OpenMode::ReadOnlyImmutable:
            flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
            break;
    }
    QByteArray name = native_path(path);
    if (mode == OpenMode::ReadOnlyImmutable)
        name = QUrl::fromLocalFile(path).toEncoded() + "?immutable=1";
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(name.constData(), &raw, flags, nullptr);
    Database db(raw, path, mode == OpenMode::ReadOnly || mode == OpenMode::ReadOnlyImmutable);
    if (rc != SQLITE_OK) {
        if (!raw) return make_error("cannot open " + path.toStdString() + ": out of memory");
        return db.error("opening " + path.toStdString());
    }
    sqlite3_extended_result_codes(raw, 1);
    return db;
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      read_only_(other.read_only_) {}

Database& Database::operator=(Database&& other) noexcept {
    if (this != &other) {
        close();
        db_ = std::exchange(other.db_, nullptr);
        path_ = std::move(other.path_);
        read_only_ = other.read_only_;
    }
    return *this;
}

Database::~Database() {
    close();
}

void Database::close() {
    if (!db_) return;
    // close_v2 defers the close until outstanding statements are finalized, so a
    // Statement outliving its Database cannot crash; every wrapper finalizes anyway.
    const int rc = sqlite3_close_v2(db_);
    if (rc != SQLITE_OK)
        hearth::log::get("store")->warn("closing {} failed: {}", path_.toStdString(),
                                        sqlite3_errstr(rc));
    db_ = nullptr;
}

Result<void> Database::exec(std::string_view sql) {
    // sqlite3_exec needs a NUL-terminated string.
    const std::string text(sql);
    char* message = nullptr;
    const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
    sqlite3_free(message);  // the same text is available from sqlite3_errmsg
    if (rc != SQLITE_OK) return error({});
    return {};
}

Result<Statement> Database::prepare(std::string_view sql) {
    sqlite3_stmt* stmt = nullptr;
    const int rc =
        sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(stmt);
        hearth::log::get("store")->debug("prepare failed for: {}", sql);
        return error({});
    }
    return Statement(this, stmt);
}

Result<std::int64_t> Database::query_int(std::string_view sql) {
    auto stmt = prepare(sql);
    if (!stmt) return stmt.error();
    auto row = stmt->step();
    if (!row) return row.error();
    if (!*row) return make_error("internal error: the query returned no row");
    return stmt->column_int64(0);
}

Result<QString> Database::query_text(std::string_view sql) {
    auto stmt = prepare(sql);
    if (!stmt) return stmt.error();
    auto row = stmt->step();
    if (!row) return row.error();
    if (!*row) return make_error("internal error: the query returned no row");
    return stmt->column_text(0);
}

Result<int> Database::user_version() {
    auto value = query_int("PRAGMA user_version");
    if (!value) return value.error();
    return static_cast<int>(*value);
}

Result<void> Database::set_user_version(int version) {
    // PRAGMA takes no bound parameters; the value is an int we format ourselves.
    return exec("PRAGMA user_version = " + std::to_string(version));
}

std::int64_t Database::last_insert_id() const {
    return sqlite3_last_insert_rowid(db_);
}

int Database::changes() const {
    return sqlite3_changes(db_);
}

int Database::last_error_code() const {
    return db_ ? sqlite3_extended_errcode(db_) : SQLITE_MISUSE;
}

Error Database::error(std::string_view what) const {
    const int code = last_error_code();
    const int sys = db_ ? sqlite3_system_errno(db_) : 0;
    std::string message;
    if (!what.empty()) message = std::string(what) + ": ";
    const std::string hint = advice(code, sys, path_);
    const char* sqlite_text = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(code);
    if (hint.empty()) {
        message += sqlite_text;
    } else {
        message += hint;
        message += " (SQLite: ";
        message += sqlite_text;
        message += ")";
    }
    return make_error(std::move(message));
}

// ---- Statement -----------------------------------------------------------------------

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      bind_error_(other.bind_error_),
      bind_error_index_(other.bind_error_index_) {}

Statement& Statement::operator=(Statement&& other) noexcept {
    if (this != &other) {
        sqlite3_finalize(stmt_);
        db_ = other.db_;
        stmt_ = std::exchange(other.stmt_, nullptr);
        bind_error_ = other.bind_error_;
        bind_error_index_ = other.bind_error_index_;
    }
    return *this;
}

Statement::~Statement() {
    sqlite3_finalize(stmt_);
}

void Statement::remember_bind_error(int rc, int index) {
    if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) {
        bind_error_ = rc;
        bind_error_index_ = index;
    }
}

Statement& Statement::bind(int index, std::int64_t value) {
    remember_bind_error(sqlite3_bind_int64(stmt_, index, value), index);
    return *this;
}

Statement& Statement::bind(int index, double value) {
    remember_bind_error(sqlite3_bind_double(stmt_, index, value), index);
    return *this;
}

Statement& Statement::bind(int index, const QString& value) {
    const QByteArray utf8 = value.toUtf8();
    remember_bind_error(sqlite3_bind_text64(stmt_, index, utf8.constData(),
                                            static_cast<sqlite3_uint64>(utf8.size()),
                                            SQLITE_TRANSIENT, SQLITE_UTF8),
                        index);
    return *this;
}

Statement& Statement::bind(int index, std::string_view utf8) {
    remember_bind_error(
        sqlite3_bind_text64(stmt_, index, utf8.data(), utf8.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
        index);
    return *this;
}

Statement& Statement::bind_blob(int index, std::span<const std::byte> bytes) {
    // A zero-length blob (not NULL) for an empty span: "no tokens" differs from "unknown".
    remember_bind_error(bytes.empty() ? sqlite3_bind_zeroblob(stmt_, index, 0)
                                      : sqlite3_bind_blob64(stmt_, index, bytes.data(),
                                                            bytes.size(), SQLITE_TRANSIENT),
                        index);
    return *this;
}

Statement& Statement::bind_null(int index) {
    remember_bind_error(sqlite3_bind_null(stmt_, index), index);
    return *this;
}

Result<bool> Statement::step() {
    if (bind_error_ != SQLITE_OK) {
        return make_error("internal error: binding parameter " + std::to_string(bind_error_index_) +
                          " failed: " + sqlite3_errstr(bind_error_));
    }
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    hearth::log::get("store")->debug("step failed ({}) for: {}", rc, sqlite3_sql(stmt_));
    Error err = db_->error({});
    // Leave the statement reusable after a failure.
    sqlite3_reset(stmt_);
    return err;
}

Result<void> Statement::run() {
    auto rc = step();
    if (!rc) return rc.error();
    return {};
}

void Statement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    bind_error_ = SQLITE_OK;
}

int Statement::parameter_count() const {
    return sqlite3_bind_parameter_count(stmt_);
}

bool Statement::is_null(int column) const {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::column_int64(int column) const {
    return sqlite3_column_int64(stmt_, column);
}

int Statement::column_int(int column) const {
    return sqlite3_column_int(stmt_, column);
}

double Statement::column_double(int column) const {
    return sqlite3_column_double(stmt_, column);
}

QString Statement::column_text(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    const int size = sqlite3_column_bytes(stmt_, column);
    return text ? QString::fromUtf8(text, size) : QString();
}

std::string Statement::column_utf8(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    const int size = sqlite3_column_bytes(stmt_, column);
    return text ? std::string(text, static_cast<std::size_t>(size)) : std::string();
}

std::vector<std::byte> Statement::column_blob(int column) const {
    const auto* data = static_cast<const std::byte*>(sqlite3_column_blob(stmt_, column));
    const int size = sqlite3_column_bytes(stmt_, column);
    if (!data || size <= 0) return {};
    return std::vector<std::byte>(data, data + size);
}

std::optional<std::int64_t> Statement::column_optional_int64(int column) const {
    if (is_null(column)) return std::nullopt;
    return column_int64(column);
}

std::optional<double> Statement::column_optional_double(int column) const {
    if (is_null(column)) return std::nullopt;
    return column_double(column);
}

// ---- Transaction ---------------------------------------------------------------------

Result<Transaction> Transaction::begin(Database& db) {
    if (auto rc = db.exec("BEGIN IMMEDIATE"); !rc) return rc.error();
    return Transaction(&db);
}

Transaction::~Transaction() {
    if (!db_) return;
    // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) make SQLite roll back on its own;
    // a second ROLLBACK would only fail, so check first.
    if (!sqlite3_get_autocommit(db_->handle())) {
        if (auto rc = db_->exec("ROLLBACK"); !rc)
            hearth::log::get("store")->error("rollback failed: {}", rc.message());
    }
}

Result<void> Transaction::commit() {
    if (!db_) return make_error("internal error: the transaction is no longer active");
    auto rc = db_->exec("COMMIT");
    if (!rc) return rc.error();  // still active: the destructor rolls back
    db_ = nullptr;
    return {};
}

// ---- Token ids -----------------------------------------------------------------------

std::vector<std::byte> encode_token_ids(std::span<const std::int32_t> ids) {
    std::vector<std::byte> out(ids.size() * 4);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const auto v = static_cast<std::uint32_t>(ids[i]);
        out[4 * i + 0] = static_cast<std::byte>(v & 0xffu);
        out[4 * i + 1] = static_cast<std::byte>((v >> 8) & 0xffu);
        out[4 * i + 2] = static_cast<std::byte>((v >> 16) & 0xffu);
        out[4 * i + 3] = static_cast<std::byte>((v >> 24) & 0xffu);
    }
    return out;
}

Result<std::vector<std::int32_t>> decode_token_ids(std::span<const std::byte> blob) {
    if (blob.size() % 4 != 0)
        return make_error("stored token ids are damaged (" + std::to_string(blob.size()) +
                          " bytes is not a whole number of 4-byte ids)");
    std::vector<std::int32_t> ids(blob.size() / 4);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const std::uint32_t v = std::to_integer<std::uint32_t>(blob[4 * i]) |
                                (std::to_integer<std::uint32_t>(blob[4 * i + 1]) << 8) |
                                (std::to_integer<std::uint32_t>(blob[4 * i + 2]) << 16) |
                                (std::to_integer<std::uint32_t>(blob[4 * i + 3]) << 24);
        ids[i] = static_cast<std::int32_t>(v);
    }
    return ids;
}

}  // namespace hearth::store
