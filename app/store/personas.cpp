// Personas, models and settings: the small tables.
#include <QRegularExpression>

#include "store/rows.h"
#include "store/store.h"

namespace hearth::store {

using detail::context;
using detail::from_ms;
using detail::now_ms;

namespace detail {

Result<void> validate_persona(const Persona& p) {
    if (p.name.trimmed().isEmpty()) return make_error("a persona needs a name");
    if (p.name.size() > 200) return make_error("a persona's name must be at most 200 characters");
    if (p.system_prompt.size() > (1 << 20))
        return make_error("a persona's system prompt must be at most 1 MiB of text");
    static const QRegularExpression kColor(QStringLiteral("^#[0-9a-fA-F]{6}$"));
    if (!p.color.isEmpty() && !kColor.match(p.color).hasMatch())
        return make_error("a persona's colour must look like #12ab9f");
    // The avatar is a glyph, never a path: nothing the store keeps names a file to open.
    if (p.avatar.size() > 32 || p.avatar.contains(QLatin1Char('/')) ||
        p.avatar.contains(QLatin1Char('\\')))
        return make_error("a persona's avatar must be a short text (an emoji or initials)");
    if (auto rc = validate_sampling(p.sampling); !rc)
        return make_error("in the persona's sampling settings, " + rc.message());
    return {};
}

Result<QString> normalize_fingerprint(const QString& fingerprint) {
    static const QRegularExpression kHex(QStringLiteral("^[0-9a-f]{1,128}$"));
    const QString lower = fingerprint.toLower();
    if (!lower.isEmpty() && !kHex.match(lower).hasMatch())
        return make_error("a model fingerprint must be 1 to 128 hexadecimal digits");
    return lower;
}

}  // namespace detail

namespace {

// The sampling columns come last, from column 8.
const std::string& persona_columns() {
    static const std::string columns =
        "id, name, system_prompt, keep_warm, color, avatar, created_at, updated_at, " +
        detail::sampling_columns();
    return columns;
}

Persona read_persona(const Statement& row) {
    Persona p;
    p.id = row.column_int64(0);
    p.name = row.column_text(1);
    p.system_prompt = row.column_text(2);
    p.keep_warm = row.column_bool(3);
    p.color = row.column_text(4);
    p.avatar = row.column_text(5);
    p.created_at = from_ms(row.column_int64(6));
    p.updated_at = from_ms(row.column_int64(7));
    p.sampling = detail::read_sampling(row, 8);
    return p;
}

constexpr const char* kModelColumns = "id, path, fingerprint, display_name, added_at, last_used_at";

ModelRecord read_model(const Statement& row) {
    ModelRecord m;
    m.id = row.column_int64(0);
    m.path = row.column_text(1);
    m.fingerprint = row.column_text(2);
    m.display_name = row.column_text(3);
    m.added_at = from_ms(row.column_int64(4));
    if (!row.is_null(5)) m.last_used_at = from_ms(row.column_int64(5));
    return m;
}

// Runs a one-row change and fails with `missing` when no row matched.
Result<void> change_one(Database& db, Statement& stmt, std::string_view what,
                        const std::string& missing) {
    if (auto rc = stmt.run(); !rc) return context(what, rc.error());
    if (db.changes() == 0) return make_error(missing);
    return {};
}

}  // namespace

Result<Persona> Store::create_persona(const Persona& draft) {
    if (auto rc = detail::validate_persona(draft); !rc) return rc.error();
    auto stmt = db_.prepare(
        "INSERT INTO personas (name, system_prompt, keep_warm, color, avatar, created_at, "
        "updated_at, " +
        detail::sampling_columns() +
        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
        "?17)");
    if (!stmt) return stmt.error();
    stmt->bind(1, draft.name.trimmed()).bind(2, draft.system_prompt).bind(3, draft.keep_warm);
    stmt->bind(4, draft.color.toLower()).bind(5, draft.avatar).bind(6, now_ms());
    detail::bind_sampling(*stmt, 7, draft.sampling);
    if (auto rc = stmt->run(); !rc) return context("saving the persona", rc.error());
    return persona(db_.last_insert_id());
}

Result<void> Store::update_persona(const Persona& p) {
    if (auto rc = detail::validate_persona(p); !rc) return rc;
    auto stmt = db_.prepare(
        "UPDATE personas SET name = ?1, system_prompt = ?2, keep_warm = ?3, color = ?4, "
        "avatar = ?5, updated_at = ?6, " +
        detail::sampling_assignments(7) + " WHERE id = ?18");
    if (!stmt) return stmt.error();
    stmt->bind(1, p.name.trimmed()).bind(2, p.system_prompt).bind(3, p.keep_warm);
    stmt->bind(4, p.color.toLower()).bind(5, p.avatar).bind(6, now_ms());
    detail::bind_sampling(*stmt, 7, p.sampling);
    stmt->bind(18, p.id);
    return change_one(db_, *stmt, "saving the persona",
                      "there is no persona " + std::to_string(p.id));
}

Result<void> Store::delete_persona(Id id) {
    auto stmt = db_.prepare("DELETE FROM personas WHERE id = ?");
    if (!stmt) return stmt.error();
    stmt->bind(1, id);
    return change_one(db_, *stmt, "deleting the persona",
                      "there is no persona " + std::to_string(id));
}

Result<Persona> Store::persona(Id id) {
    auto stmt = db_.prepare("SELECT " + persona_columns() + " FROM personas WHERE id = ?");
    if (!stmt) return stmt.error();
    stmt->bind(1, id);
    auto row = stmt->step();
    if (!row) return context("reading a persona", row.error());
    if (!*row) return make_error("there is no persona " + std::to_string(id));
    Persona p = read_persona(*stmt);
    auto documents = persona_documents(id);
    if (!documents) return documents.error();
    p.documents = std::move(*documents);
    return p;
}

Result<std::vector<Persona>> Store::personas() {
    auto stmt = db_.prepare("SELECT " + persona_columns() +
                            " FROM personas ORDER BY name COLLATE NOCASE, id");
    if (!stmt) return stmt.error();
    std::vector<Persona> out;
    while (true) {
        auto row = stmt->step();
        if (!row) return context("reading personas", row.error());
        if (!*row) break;
        out.push_back(read_persona(*stmt));
    }
    for (Persona& p : out) {  // (a handful of personas: one query each)
        auto documents = persona_documents(p.id);
        if (!documents) return documents.error();
        p.documents = std::move(*documents);
    }
    return out;
}

Result<ModelRecord> Store::upsert_model(const QString& path, const QString& fingerprint,
                                        const QString& display_name) {
    auto fp = detail::normalize_fingerprint(fingerprint);
    if (!fp) return fp.error();
    if (fp->isEmpty()) return make_error("a model needs a fingerprint");
    if (path.isEmpty()) return make_error("a model needs a file path");
    auto stmt = db_.prepare(
        "INSERT INTO models (path, fingerprint, display_name, added_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (fingerprint) DO UPDATE SET path = excluded.path, "
        "display_name = excluded.display_name");
    if (!stmt) return stmt.error();
    stmt->bind(1, path).bind(2, *fp).bind(3, display_name).bind(4, now_ms());
    if (auto rc = stmt->run(); !rc) return context("saving the model", rc.error());
    auto found = model_by_fingerprint(*fp);
    if (!found) return found.error();
    if (!*found) return make_error("internal error: the saved model is missing");
    return **found;
}

Result<void> Store::touch_model(Id id) {
    auto stmt = db_.prepare("UPDATE models SET last_used_at = ? WHERE id = ?");
    if (!stmt) return stmt.error();
    stmt->bind(1, now_ms()).bind(2, id);
    return change_one(db_, *stmt, "saving the model", "there is no model " + std::to_string(id));
}

Result<void> Store::delete_model(Id id) {
    auto stmt = db_.prepare("DELETE FROM models WHERE id = ?");
    if (!stmt) return stmt.error();
    stmt->bind(1, id);
    return change_one(db_, *stmt, "removing the model", "there is no model " + std::to_string(id));
}

Result<std::vector<ModelRecord>> Store::models() {
    // Never-used models last (NULLs sort first in ascending order, so sort on IS NULL).
    auto stmt = db_.prepare(std::string("SELECT ") + kModelColumns +
                            " FROM models ORDER BY last_used_at IS NULL, last_used_at DESC, id");
    if (!stmt) return stmt.error();
    std::vector<ModelRecord> out;
    while (true) {
        auto row = stmt->step();
        if (!row) return context("reading models", row.error());
        if (!*row) break;
        out.push_back(read_model(*stmt));
    }
    return out;
}

Result<std::optional<ModelRecord>> Store::model_by_fingerprint(const QString& fingerprint) {
    auto stmt =
        db_.prepare(std::string("SELECT ") + kModelColumns + " FROM models WHERE fingerprint = ?");
    if (!stmt) return stmt.error();
    stmt->bind(1, fingerprint.toLower());
    auto row = stmt->step();
    if (!row) return context("reading models", row.error());
    if (!*row) return std::optional<ModelRecord>();
    return std::optional<ModelRecord>(read_model(*stmt));
}

Result<std::optional<QString>> Store::setting(const QString& key) {
    auto stmt = db_.prepare("SELECT value FROM settings WHERE key = ?");
    if (!stmt) return stmt.error();
    stmt->bind(1, key);
    auto row = stmt->step();
    if (!row) return context("reading settings", row.error());
    if (!*row) return std::optional<QString>();
    return std::optional<QString>(stmt->column_text(0));
}

Result<void> Store::set_setting(const QString& key, const QString& value) {
    if (key.isEmpty()) return make_error("a setting needs a name");
    auto stmt = db_.prepare(
        "INSERT INTO settings (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
    if (!stmt) return stmt.error();
    stmt->bind(1, key).bind(2, value);
    if (auto rc = stmt->run(); !rc) return context("saving the setting", rc.error());
    return {};
}

Result<void> Store::remove_setting(const QString& key) {
    auto stmt = db_.prepare("DELETE FROM settings WHERE key = ?");
    if (!stmt) return stmt.error();
    stmt->bind(1, key);
    if (auto rc = stmt->run(); !rc) return context("removing the setting", rc.error());
    return {};
}

}  // namespace hearth::store
