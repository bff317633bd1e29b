// PersonaListModel: the documents a persona holds (persona_list_model.h). Files are read
// on a worker thread; what they cost is counted with the open model's tokenizer on this
// one (a 6,000-token handbook takes a few milliseconds); documents that would leave the
// conversation too little of the context are looked up per message instead.
#include <QFileInfo>

#include <algorithm>

#include "chat/prompt_builder.h"
#include "common/log.h"
#include "core/document_files.h"
#include "core/document_lookup.h"
#include "core/persona_list_model.h"
#include "core/persona_prefix.h"

using namespace hearth;
namespace st = hearth::store;

void PersonaListModel::setConversationRoom(int tokens) {
    tokens = std::max(0, tokens);
    if (tokens == conversation_room_) return;
    conversation_room_ = tokens;
    emit conversationRoomChanged();
}

QVariantList PersonaListModel::documentsOf(qint64 personaId) const {
    const st::Persona* p = find(personaId);
    return p ? documents_of(*p) : QVariantList();
}

QVariantList PersonaListModel::documents_of(const st::Persona& p) const {
    QVariantList out;
    for (const st::Document& d : p.documents) out << app::document_row(d);
    return out;
}

void PersonaListModel::watch_documents() {
    QStringList want;
    for (const st::Persona& p : rows_)
        for (const st::Document& d : p.documents)
            if (!d.source_path.isEmpty() && QFileInfo::exists(d.source_path)) want << d.source_path;
    want.removeDuplicates();
    if (!watcher_) {
        if (want.isEmpty()) return;
        watcher_ = new QFileSystemWatcher(this);
        // A file written again: its persona's row says it changed (documents_of looks).
        connect(watcher_, &QFileSystemWatcher::fileChanged, this, [this](const QString& path) {
            for (size_t i = 0; i < rows_.size(); ++i)
                for (const st::Document& d : rows_[i].documents)
                    if (d.source_path == path) {
                        const QModelIndex at = index(static_cast<int>(i));
                        emit dataChanged(at, at, {DocumentsRole});
                        break;
                    }
            // Editors replace a file (write a new one, rename it over): watch it again.
            if (QFileInfo::exists(path) && !watcher_->files().contains(path))
                watcher_->addPath(path);
        });
    }
    const QStringList now = watcher_->files();
    QStringList gone;
    for (const QString& f : now)
        if (!want.contains(f)) gone << f;
    if (!gone.isEmpty()) watcher_->removePaths(gone);
    QStringList added;
    for (const QString& f : want)
        if (!now.contains(f)) added << f;
    if (!added.isEmpty()) watcher_->addPaths(added);
}

int PersonaListModel::prefix_tokens(const QString& instructions,
                                    std::span<const st::Document> documents) const {
    const chat::PromptBuilder* builder =
        bridge_ && bridge_->loaded() ? bridge_->promptBuilder() : nullptr;
    if (!builder) return -1;
    const QString prefix = app::persona_prefix(instructions, documents);
    return static_cast<int>(builder->persona_prefix(prefix.toStdString()).size());
}

int PersonaListModel::prefix_limit() const {
    if (!bridge_ || !bridge_->loaded()) return -1;
    const int context = bridge_->contextLength();
    // A small context keeps at least half of it for the conversation.
    return context - std::min(conversation_room_, context / 2);
}

QVariantMap PersonaListModel::prefixCost(qint64 personaId) const {
    const st::Persona* p = find(personaId);
    const int whole = p ? prefix_tokens(p->system_prompt, p->documents) : -1;
    if (whole < 0) return {};
    QVariantList per_document;
    const chat::PromptBuilder* builder = bridge_->promptBuilder();
    const bool lookup = looked_up(*p);
    for (const st::Document& d : p->documents) {
        if (d.lookup) continue;  // not in the prefix (and maybe long: not counted)
        const auto ids =
            builder->encode_content(chat::Role::System, app::document_block(d).toStdString());
        per_document << QVariantMap{
            {QStringLiteral("documentId"), QVariant::fromValue<qint64>(d.id)},
            {QStringLiteral("tokens"), static_cast<int>(ids.size())}};
    }
    const int context = bridge_->contextLength();
    return {{QStringLiteral("tokens"), whole},
            {QStringLiteral("instructions"), prefix_tokens(p->system_prompt, {})},
            {QStringLiteral("documents"), per_document},
            {QStringLiteral("context"), context},
            {QStringLiteral("room"), context - whole},
            {QStringLiteral("fits"), whole <= prefix_limit()},
            {QStringLiteral("lookup"), lookup}};
}

std::vector<std::pair<QString, QString>> PersonaListModel::prefixes() const {
    std::vector<std::pair<QString, QString>> out;
    for (const st::Persona& p : rows_)
        out.emplace_back(p.name, app::persona_prefix(p.system_prompt, p.documents));
    return out;
}

// Reads the files on a worker thread; done(result) runs on this one. readingDocuments is
// true meanwhile.
template <typename Done>
void PersonaListModel::read_then(const QStringList& paths, Done done) {
    ++reading_;
    emit readingDocumentsChanged();
    app::read_document_files_then(this, paths, kMaxFolderFiles, [this, done](app::ReadDocuments r) {
        --reading_;
        emit readingDocumentsChanged();
        done(std::move(r));
    });
}

void PersonaListModel::addDocuments(qint64 personaId, const QVariantList& files) {
    if (!store_ || !find(personaId)) return;
    const QStringList paths = app::local_paths(files);
    if (paths.isEmpty()) return;
    read_then(paths, [this, personaId](app::ReadDocuments r) {
        add_read(personaId, std::move(r.read), std::move(r.problems));
    });
}

// Adds what was read, in order. While the prefix with them leaves the conversation its
// room they are read whole; past that, all the persona's documents are looked up from
// then on (document_lookup.h): each message is given the passages it needs.
void PersonaListModel::add_read(qint64 persona_id, std::vector<st::Document> read,
                                QStringList problems) {
    const st::Persona* p = find(persona_id);
    if (!p || !store_ || read.empty()) {
        emit documentsAdded(persona_id, 0, problems);
        return;
    }
    bool lookup = looked_up(*p);
    const int limit = prefix_limit();
    const chat::PromptBuilder* builder = limit >= 0 ? bridge_->promptBuilder() : nullptr;
    if (!lookup && builder) {
        // The prefix as it is, counted once; each new document then adds its own block's
        // tokens (and the documents' heading, for the first), so a folder of 200 files is
        // not the whole prefix tokenized 200 times. A join may differ from the whole
        // prefix's count by a token or two; the editor shows the exact count (prefixCost).
        int tokens = prefix_tokens(p->system_prompt, p->documents);
        bool first = p->documents.empty();
        for (const st::Document& d : read) {
            tokens += static_cast<int>(
                builder
                    ->encode_content(chat::Role::System,
                                     app::appended_document(d, first).toStdString())
                    .size());
            first = false;
            if (tokens > limit) break;
        }
        if (tokens > limit) {
            lookup = true;
            const int context = bridge_->contextLength();
            problems << QStringLiteral(
                            "Together the documents are too long to read whole: they would "
                            "take more than %1 of the model's %2 tokens of context, which "
                            "must leave %3 for the conversation. From now on each message is "
                            "given the passages of them that it needs (up to %4).")
                            .arg(limit)
                            .arg(context)
                            .arg(context - limit)
                            .arg(app::kPassagesPerMessage);
        }
    }
    const int added = static_cast<int>(read.size());
    QPointer<PersonaListModel> self(this);
    store_->run<int>(
        [read = std::move(read), persona_id, lookup](st::Store& s) {
            return s.add_documents(st::DocumentOwner::Persona, persona_id, read, lookup);
        },
        [self, persona_id, added, problems](Result<int> r) mutable {
            if (!self) return;
            if (!r) problems << QString::fromStdString(r.message());
            log::get("app")->info("persona {}: {} documents added", persona_id, r ? *r : 0);
            self->reload();
            emit self->documentsAdded(persona_id, r ? added : 0, problems);
        });
}

bool PersonaListModel::looked_up(const st::Persona& p) {
    return std::any_of(p.documents.begin(), p.documents.end(),
                       [](const st::Document& d) { return d.lookup; });
}

// Whether the persona's documents, without `removed`, fit in its prefix again (read
// whole once more); only counted when their text could fit at all.
bool PersonaListModel::fits_without(const st::Persona& p, st::Id removed) const {
    const int limit = prefix_limit();
    if (limit < 0) return false;
    std::vector<st::Document> rest;
    qsizetype chars = 0;
    for (const st::Document& d : p.documents)
        if (d.id != removed) {
            chars += d.text.size();
            rest.push_back(d);
            rest.back().lookup = false;
        }
    // A token is rarely more than 8 characters: past that many, it cannot fit.
    if (chars > static_cast<qsizetype>(limit) * 8) return false;
    return prefix_tokens(p.system_prompt, rest) <= limit;
}

void PersonaListModel::removeDocument(qint64 documentId) {
    if (!store_) return;
    // A looked-up persona whose documents fit again reads them whole again.
    std::optional<st::Id> fits_again;
    for (const st::Persona& p : rows_)
        for (const st::Document& d : p.documents)
            if (d.id == documentId && d.lookup && fits_without(p, documentId)) fits_again = p.id;
    QPointer<PersonaListModel> self(this);
    store_->run<void>(
        [documentId, fits_again](st::Store& s) -> Result<void> {
            if (auto rc = s.delete_document(documentId); !rc) return rc;
            if (fits_again)
                return s.set_documents_lookup(st::DocumentOwner::Persona, *fits_again, false);
            return {};
        },
        [self](Result<void> r) {
            if (!self) return;
            if (!r) self->set_error(QString::fromStdString(r.message()));
            self->reload();  // and the pin follows the new prefix
        });
}

void PersonaListModel::refreshDocument(qint64 documentId) {
    if (!store_) return;
    const st::Document* found = nullptr;
    for (const st::Persona& p : rows_)
        for (const st::Document& d : p.documents)
            if (d.id == documentId) found = &d;
    if (!found || found->source_path.isEmpty()) return;
    const QString path = found->source_path;
    read_then({path}, [this, documentId](app::ReadDocuments r) {
        if (r.read.empty()) {
            set_error(r.problems.join(QLatin1Char('\n')));
            return;
        }
        st::Document d = std::move(r.read.front());
        QPointer<PersonaListModel> self(this);
        // Only the text from the first changed block on is computed again: the prefix
        // cache keeps every block before it.
        store_->run<st::Document>(
            [documentId, d](st::Store& s) {
                return s.update_document_text(documentId, d.text, d.file_size, d.file_modified);
            },
            [self](Result<st::Document> done) {
                if (!self) return;
                if (!done) self->set_error(QString::fromStdString(done.message()));
                self->reload();
            });
    });
}
