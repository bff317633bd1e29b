// Small RAII wrappers over SQLite's C API, in the style of SQLiteCpp: a Database owns a
// connection, a Statement owns a prepared statement with typed binds and columns, and a
// Transaction rolls back unless it was committed. Every failure comes back as a
// hearth::Error whose message says what happened in words a person can act on.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <QString>

#include "common/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace hearth::store {

// How a connection is opened.
enum class OpenMode {
    ReadWriteCreate,  // create the file when it does not exist
    ReadWrite,        // the file must exist
    ReadOnly,         // never writes, not even a journal
    // Read-only, and the file is promised not to change: no -shm or -wal is used. Only
    // for a WAL database in a folder nobody can write (so no writer can exist).
    ReadOnlyImmutable,
};

class Statement;

class Database {
  public:
    static Result<Database> open(const QString& path, OpenMode mode);

    Database(Database&& other) noexcept;
    Database& operator=(Database&& other) noexcept;
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    // Runs one or more statements that return no rows.
    Result<void> exec(std::string_view sql);
    Result<Statement> prepare(std::string_view sql);

    // Convenience for single-value pragmas and aggregates: the first column of the first
    // row as an integer or text.
    Result<std::int64_t> query_int(std::string_view sql);
    Result<QString> query_text(std::string_view sql);

    Result<int> user_version();
    Result<void> set_user_version(int version);

    std::int64_t last_insert_id() const;
    int changes() const;  // rows changed by the last INSERT/UPDATE/DELETE

    // The error SQLite reports for the last call on this connection, with `what` (the
    // action that failed) in front and advice for the common causes.
    Error error(std::string_view what) const;
    // The raw (extended) result code of the last failure, for callers that branch on it.
    int last_error_code() const;

    const QString& path() const { return path_; }
    bool read_only() const { return read_only_; }
    sqlite3* handle() const { return db_; }

  private:
    Database(sqlite3* db, QString path, bool read_only)
        : db_(db), path_(std::move(path)), read_only_(read_only) {}
    void close();

    sqlite3* db_ = nullptr;
    QString path_;
    bool read_only_ = false;
};

// A prepared statement. Binds are 1-based and chainable; a failing bind is remembered and
// reported by the next step(), so call sites stay linear. Columns are 0-based.
class Statement {
  public:
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&& other) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement();

    Statement& bind(int index, std::int64_t value);
    Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
    Statement& bind(int index, bool value) { return bind(index, value ? 1 : 0); }
    Statement& bind(int index, double value);
    Statement& bind(int index, const QString& value);  // stored as UTF-8 TEXT
    Statement& bind(int index, std::string_view utf8);
    Statement& bind(int index, const char* utf8) { return bind(index, std::string_view(utf8)); }
    Statement& bind_blob(int index, std::span<const std::byte> bytes);
    Statement& bind_null(int index);
    template <typename T>
    Statement& bind(int index, const std::optional<T>& value) {
        return value ? bind(index, *value) : bind_null(index);
    }

    // Advances: true when a row is available, false when the statement is done.
    Result<bool> step();
    // Steps a statement that returns no rows (INSERT/UPDATE/DELETE/DDL).
    Result<void> run();
    // Makes the statement ready to run again; binds are cleared.
    void reset();
    // The largest parameter index in the SQL (?N), for statements built from parts.
    int parameter_count() const;

    bool is_null(int column) const;
    std::int64_t column_int64(int column) const;
    int column_int(int column) const;
    bool column_bool(int column) const { return column_int64(column) != 0; }
    double column_double(int column) const;
    QString column_text(int column) const;
    std::string column_utf8(int column) const;
    std::vector<std::byte> column_blob(int column) const;
    std::optional<std::int64_t> column_optional_int64(int column) const;
    std::optional<double> column_optional_double(int column) const;

  private:
    friend class Database;
    Statement(const Database* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
    void remember_bind_error(int rc, int index);

    const Database* db_ = nullptr;
    sqlite3_stmt* stmt_ = nullptr;
    int bind_error_ = 0;  // first failing bind's result code (SQLITE_OK when none)
    int bind_error_index_ = 0;
};

// BEGIN IMMEDIATE ... COMMIT. IMMEDIATE takes the write lock up front, so a transaction
// that reads and then writes cannot fail half-way with SQLITE_BUSY (the busy timeout
// applies to the BEGIN instead). Destroying an uncommitted transaction rolls it back.
class Transaction {
  public:
    static Result<Transaction> begin(Database& db);

    Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
    Transaction& operator=(Transaction&&) = delete;
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction();

    Result<void> commit();

  private:
    explicit Transaction(Database* db) : db_(db) {}
    Database* db_ = nullptr;  // null once committed or rolled back
};

// Token ids as a compact BLOB of little-endian int32 (4 bytes each, no header), so they
// round-trip exactly whatever the host's byte order.
std::vector<std::byte> encode_token_ids(std::span<const std::int32_t> ids);
// Fails when the blob's size is not a multiple of 4 (a damaged row).
Result<std::vector<std::int32_t>> decode_token_ids(std::span<const std::byte> blob);

}  // namespace hearth::store
