// Documents: a persona's or a single conversation's, in order. Their text is part of the
// prompt's prefix (core/persona_prefix.h lays it out), so the order is kept dense
// (0, 1, 2, ...) and changes only when the user adds or removes one.
#include "store/rows.h"
#include "store/store.h"

namespace hearth::store {

using detail::context;
using detail::from_ms;
using detail::now_ms;

namespace {

constexpr const char* kColumns =
    "id, persona_id, conversation_id, position, name, source_path, format, language, content, "
    "file_size, file_modified, added_at, updated_at, lookup";

Document read_document(const Statement& row) {
    Document d;
    d.id = row.column_int64(0);
    if (!row.is_null(1)) d.persona_id = row.column_int64(1);
    if (!row.is_null(2)) d.conversation_id = row.column_int64(2);
    d.position = row.column_int(3);
    d.name = row.column_text(4);
    d.source_path = row.column_text(5);
    d.format = row.column_text(6);
    d.language = row.column_text(7);
    d.text = row.column_text(8);
    d.file_size = row.column_optional_int64(9);
    if (const auto ms = row.column_optional_int64(10)) d.file_modified = from_ms(*ms);
    d.added_at = from_ms(row.column_int64(11));
    d.updated_at = from_ms(row.column_int64(12));
    d.lookup = row.column_bool(13);
    return d;
}

Result<void> validate_text(const QString& text) {
    if (text.trimmed().isEmpty()) return make_error("a document needs some text");
    if (text.size() > kMaxDocumentChars)
        return make_error("a document's text must be at most " + std::to_string(kMaxDocumentChars) +
                          " characters (this one has " + std::to_string(text.size()) + ")");
    return {};
}

Result<void> validate(const Document& d) {
    if (d.persona_id.has_value() == d.conversation_id.has_value())
        return make_error("a document belongs to a persona or to a conversation");
    if (d.name.trimmed().isEmpty()) return make_error("a document needs a name");
    if (d.name.size() > kMaxDocumentName)
        return make_error("a document's name must be at most " + std::to_string(kMaxDocumentName) +
                          " characters");
    if (d.format.isEmpty() || d.format.size() > 16)
        return make_error("a document needs its format (text, markdown, pdf, ...)");
    if (d.language.size() > 32) return make_error("a document's language name is too long");
    if (d.source_path.size() > 4096) return make_error("a document's file path is too long");
    return validate_text(d.text);
}

// The owner's column and id, for the queries that keep its order.
std::pair<const char*, Id> owner_of(const Document& d) {
    return d.persona_id ? std::pair{"persona_id", *d.persona_id}
                        : std::pair{"conversation_id", *d.conversation_id};
}

Result<std::vector<Document>> read_all(Database& db, const char* owner_column, Id owner) {
    auto stmt = db.prepare(std::string("SELECT ") + kColumns + " FROM documents WHERE " +
                           owner_column + " = ? ORDER BY position, id");
    if (!stmt) return stmt.error();
    stmt->bind(1, owner);
    std::vector<Document> out;
    while (true) {
        auto row = stmt->step();
        if (!row) return context("reading documents", row.error());
        if (!*row) break;
        out.push_back(read_document(*stmt));
    }
    return out;
}

}  // namespace

Result<Document> Store::add_document(const Document& draft) {
    if (auto rc = validate(draft); !rc) return rc.error();
    auto tx = Transaction::begin(db_);
    if (!tx) return context("saving the document", tx.error());
    const auto [column, owner] = owner_of(draft);
    {  // The owner is there (a foreign key would say so less clearly).
        auto check =
            db_.prepare(std::string("SELECT 1 FROM ") +
                        (draft.persona_id ? "personas" : "conversations") + " WHERE id = ?");
        if (!check) return check.error();
        check->bind(1, owner);
        auto row = check->step();
        if (!row) return context("saving the document", row.error());
        if (!*row)
            return make_error(std::string("there is no ") +
                              (draft.persona_id ? "persona " : "conversation ") +
                              std::to_string(owner));
    }
    auto stmt = db_.prepare(
        std::string("INSERT INTO documents (persona_id, conversation_id, position, name, "
                    "source_path, format, language, content, file_size, file_modified, "
                    "added_at, updated_at, lookup) VALUES (?1, ?2, (SELECT COALESCE(MAX(position) "
                    "+ 1, 0) FROM documents WHERE ") +
        column + " = ?3), ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12)");
    if (!stmt) return stmt.error();
    stmt->bind(1, draft.persona_id).bind(2, draft.conversation_id).bind(3, owner);
    stmt->bind(4, draft.name.trimmed()).bind(5, draft.source_path).bind(6, draft.format);
    stmt->bind(7, draft.language).bind(8, draft.text).bind(9, draft.file_size);
    if (draft.file_modified)
        stmt->bind(10, static_cast<std::int64_t>(draft.file_modified->toMSecsSinceEpoch()));
    else
        stmt->bind_null(10);
    stmt->bind(11, now_ms()).bind(12, draft.lookup);
    if (auto rc = stmt->run(); !rc) return context("saving the document", rc.error());
    const Id id = db_.last_insert_id();
    if (auto rc = detail::index_document(db_, id, draft.text); !rc)
        return context("indexing the document", rc.error());
    if (auto rc = tx->commit(); !rc) return context("saving the document", rc.error());
    return document(id);
}

Result<Document> Store::update_document_text(Id id, const QString& text,
                                             std::optional<std::int64_t> file_size,
                                             std::optional<QDateTime> file_modified) {
    if (auto rc = validate_text(text); !rc) return rc.error();
    auto stmt = db_.prepare(
        "UPDATE documents SET content = ?1, file_size = ?2, file_modified = ?3, "
        "updated_at = ?4 WHERE id = ?5");
    if (!stmt) return stmt.error();
    stmt->bind(1, text).bind(2, file_size);
    if (file_modified)
        stmt->bind(3, static_cast<std::int64_t>(file_modified->toMSecsSinceEpoch()));
    else
        stmt->bind_null(3);
    stmt->bind(4, now_ms()).bind(5, id);
    auto tx = Transaction::begin(db_);
    if (!tx) return context("saving the document", tx.error());
    if (auto rc = stmt->run(); !rc) return context("saving the document", rc.error());
    if (db_.changes() == 0) return make_error("there is no document " + std::to_string(id));
    if (auto rc = detail::index_document(db_, id, text); !rc)
        return context("indexing the document", rc.error());
    if (auto rc = tx->commit(); !rc) return context("saving the document", rc.error());
    return document(id);
}

Result<void> Store::delete_document(Id id) {
    auto found = document(id);
    if (!found) return found.error();
    auto tx = Transaction::begin(db_);
    if (!tx) return context("deleting the document", tx.error());
    const auto [column, owner] = owner_of(*found);
    auto del = db_.prepare("DELETE FROM documents WHERE id = ?");
    if (!del) return del.error();
    del->bind(1, id);
    if (auto rc = del->run(); !rc) return context("deleting the document", rc.error());
    auto shift = db_.prepare(std::string("UPDATE documents SET position = position - 1 WHERE ") +
                             column + " = ?1 AND position > ?2");
    if (!shift) return shift.error();
    shift->bind(1, owner).bind(2, found->position);
    if (auto rc = shift->run(); !rc) return context("deleting the document", rc.error());
    if (auto rc = tx->commit(); !rc) return context("deleting the document", rc.error());
    return {};
}

Result<Document> Store::document(Id id) {
    auto stmt = db_.prepare(std::string("SELECT ") + kColumns + " FROM documents WHERE id = ?");
    if (!stmt) return stmt.error();
    stmt->bind(1, id);
    auto row = stmt->step();
    if (!row) return context("reading a document", row.error());
    if (!*row) return make_error("there is no document " + std::to_string(id));
    return read_document(*stmt);
}

Result<std::vector<Document>> Store::persona_documents(Id persona_id) {
    return read_all(db_, "persona_id", persona_id);
}

Result<std::vector<Document>> Store::conversation_documents(Id conversation_id) {
    return read_all(db_, "conversation_id", conversation_id);
}

}  // namespace hearth::store
