// Retrieval: documents too long to be read whole are cut into passages (chunking.h),
// indexed with FTS5 next to the documents, and looked up per message with BM25. A
// message keeps the passages it was given (messages.sources, JSON), so the prompt they
// became part of never changes and stays in the KV cache.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "common/log.h"
#include "store/chunking.h"
#include "store/rows.h"
#include "store/store.h"

namespace hearth::store {

using detail::context;

namespace detail {

Result<void> index_document(Database& db, Id document, const QString& text) {
    auto clear = db.prepare("DELETE FROM document_chunks WHERE document_id = ?");
    if (!clear) return clear.error();
    clear->bind(1, document);
    if (auto rc = clear->run(); !rc) return rc;
    auto insert = db.prepare(
        "INSERT INTO document_chunks (document_id, position, heading, start, length, content) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (!insert) return insert.error();
    int position = 0;
    for (const ChunkSpan& c : chunk_document(text)) {
        insert->reset();
        insert->bind(1, document).bind(2, position++).bind(3, c.heading).bind(4, c.start);
        insert->bind(5, c.length).bind(6, text.mid(c.start, c.length));
        if (auto rc = insert->run(); !rc) return rc;
    }
    return {};
}

QString sources_to_json(const std::vector<Source>& sources) {
    if (sources.empty()) return {};
    QJsonArray out;
    for (const Source& s : sources) {
        QJsonObject o{{QStringLiteral("name"), s.name},
                      {QStringLiteral("start"), s.start},
                      {QStringLiteral("text"), s.text}};
        if (s.document_id) o.insert(QStringLiteral("document"), static_cast<qint64>(s.document_id));
        if (!s.heading.isEmpty()) o.insert(QStringLiteral("heading"), s.heading);
        if (!s.path.isEmpty()) o.insert(QStringLiteral("path"), s.path);
        out.append(o);
    }
    return QString::fromUtf8(QJsonDocument(out).toJson(QJsonDocument::Compact));
}

Result<std::vector<Source>> sources_from_json(const QString& json) {
    std::vector<Source> out;
    if (json.isEmpty()) return out;
    const QJsonDocument doc = QJsonDocument::fromJson(json.toUtf8());
    if (!doc.isArray()) return make_error("its sources are not a list");
    for (const QJsonValue& v : doc.array()) {
        const QJsonObject o = v.toObject();
        if (!o.value(QStringLiteral("text")).isString() ||
            !o.value(QStringLiteral("name")).isString())
            return make_error("a source has no name or text");
        Source s;
        s.document_id = o.value(QStringLiteral("document")).toInteger();
        s.name = o.value(QStringLiteral("name")).toString();
        s.heading = o.value(QStringLiteral("heading")).toString();
        s.path = o.value(QStringLiteral("path")).toString();
        s.start = o.value(QStringLiteral("start")).toInt();
        s.text = o.value(QStringLiteral("text")).toString();
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace detail

Result<int> Store::index_unchunked_documents() {
    auto find = db_.prepare(
        "SELECT id, content FROM documents d WHERE NOT EXISTS "
        "(SELECT 1 FROM document_chunks c WHERE c.document_id = d.id)");
    if (!find) return find.error();
    std::vector<std::pair<Id, QString>> todo;
    while (true) {
        auto row = find->step();
        if (!row) return context("indexing documents", row.error());
        if (!*row) break;
        todo.emplace_back(find->column_int64(0), find->column_text(1));
    }
    if (todo.empty()) return 0;
    auto tx = Transaction::begin(db_);
    if (!tx) return context("indexing documents", tx.error());
    for (const auto& [id, text] : todo)
        if (auto rc = detail::index_document(db_, id, text); !rc)
            return context("indexing documents", rc.error());
    if (auto rc = tx->commit(); !rc) return context("indexing documents", rc.error());
    log::get("store")->info("indexed {} document(s) for looking up", todo.size());
    return static_cast<int>(todo.size());
}

Result<void> Store::set_documents_lookup(DocumentOwner owner, Id id, bool lookup) {
    auto stmt = db_.prepare(std::string("UPDATE documents SET lookup = ?1 WHERE ") +
                            (owner == DocumentOwner::Persona ? "persona_id" : "conversation_id") +
                            " = ?2 AND lookup <> ?1");
    if (!stmt) return stmt.error();
    stmt->bind(1, lookup).bind(2, id);
    if (auto rc = stmt->run(); !rc) return context("saving how documents are read", rc.error());
    return {};
}

Result<int> Store::add_documents(DocumentOwner owner, Id id, std::vector<Document> drafts,
                                 bool lookup) {
    for (Document& d : drafts) {
        d.persona_id = owner == DocumentOwner::Persona ? std::optional<Id>(id) : std::nullopt;
        d.conversation_id =
            owner == DocumentOwner::Conversation ? std::optional<Id>(id) : std::nullopt;
        d.lookup = lookup;
        if (auto rc = add_document(d); !rc) return rc.error();
    }
    if (auto rc = set_documents_lookup(owner, id, lookup); !rc) return rc.error();
    return static_cast<int>(drafts.size());
}

Result<std::vector<Id>> Store::lookup_documents(Id conversation_id) {
    auto stmt = db_.prepare(
        "SELECT d.id FROM documents d JOIN conversations c ON c.id = ?1 WHERE d.lookup = 1 AND "
        "(d.persona_id = c.persona_id OR d.conversation_id = c.id) "
        "ORDER BY d.persona_id IS NULL, d.position");
    if (!stmt) return stmt.error();
    stmt->bind(1, conversation_id);
    std::vector<Id> out;
    while (true) {
        auto row = stmt->step();
        if (!row) return context("reading the documents to look up", row.error());
        if (!*row) break;
        out.push_back(stmt->column_int64(0));
    }
    return out;
}

Result<std::vector<Source>> Store::retrieve(std::span<const Id> documents, const QString& text,
                                            int limit) {
    std::vector<Source> out;
    const QString query = to_retrieval_query(text);
    if (documents.empty() || query.isEmpty() || limit <= 0) return out;
    QStringList ids;
    for (Id id : documents) ids << QString::number(id);
    // Headings weigh twice a passage's words: a question naming a section finds it.
    auto stmt = db_.prepare(
        "SELECT c.document_id, d.name, c.heading, d.source_path, c.start, c.content "
        "FROM document_chunks_fts f JOIN document_chunks c ON c.id = f.rowid "
        "JOIN documents d ON d.id = c.document_id "
        "WHERE document_chunks_fts MATCH ?1 AND c.document_id IN (" +
        ids.join(QLatin1Char(',')).toStdString() +
        ") ORDER BY bm25(document_chunks_fts, 2.0, 1.0), c.document_id, c.position LIMIT ?2");
    if (!stmt) return stmt.error();
    stmt->bind(1, query).bind(2, limit);
    while (true) {
        auto row = stmt->step();
        if (!row) return context("looking up passages", row.error());
        if (!*row) break;
        Source s;
        s.document_id = stmt->column_int64(0);
        s.name = stmt->column_text(1);
        s.heading = stmt->column_text(2);
        s.path = stmt->column_text(3);
        s.start = stmt->column_int(4);
        s.text = stmt->column_text(5);
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace hearth::store
