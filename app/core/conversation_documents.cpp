#include "core/conversation_documents.h"

#include <algorithm>

#include "chat/prompt_builder.h"
#include "common/log.h"
#include "core/document_files.h"
#include "core/document_lookup.h"
#include "core/persona_prefix.h"

using namespace hearth;
namespace st = hearth::store;

namespace {

struct ChatDocuments {
    std::vector<st::Document> documents;
    std::optional<st::Persona> persona;
};

hearth::Result<ChatDocuments> read_chat_documents(st::Store& s, qint64 conversation) {
    ChatDocuments out;
    auto c = s.conversation(conversation);
    if (!c) return c.error();
    if (c->persona_id)
        if (auto p = s.persona(*c->persona_id)) out.persona = std::move(*p);  // may be gone
    auto documents = s.conversation_documents(conversation);
    if (!documents) return documents.error();
    out.documents = std::move(*documents);
    return out;
}

}  // namespace

ConversationDocuments::ConversationDocuments(QObject* parent) : QObject(parent) {}

void ConversationDocuments::setBridge(EngineBridge* bridge) {
    if (bridge == bridge_) return;
    bridge_ = bridge;
    emit bridgeChanged();
    emit loaded();  // the costs change with the model
}

void ConversationDocuments::setStoreObject(QObject* store) {
    auto* s = qobject_cast<st::AsyncStore*>(store);
    if (s == store_) return;
    if (store_) store_->disconnect(this);
    store_ = s;
    if (store_) connect(store_, &st::AsyncStore::storeOpened, this, &ConversationDocuments::reload);
    emit storeChanged();
    reload();
}

void ConversationDocuments::setConversationId(qint64 id) {
    if (id == conversation_) return;
    conversation_ = id;
    documents_.clear();
    persona_.reset();
    emit conversationIdChanged();
    emit loaded();
    reload();
}

void ConversationDocuments::setConversationRoom(int tokens) {
    tokens = std::max(0, tokens);
    if (tokens == conversation_room_) return;
    conversation_room_ = tokens;
    emit conversationRoomChanged();
}

void ConversationDocuments::reload() {
    if (!store_ || !store_->isOpen() || conversation_ < 0) return;
    const int serial = ++reload_serial_;
    const qint64 conversation = conversation_;
    QPointer<ConversationDocuments> self(this);
    store_->run<ChatDocuments>(
        [conversation](st::Store& s) { return read_chat_documents(s, conversation); },
        [self, serial, conversation](Result<ChatDocuments> r) {
            if (!self || serial != self->reload_serial_ || conversation != self->conversation_)
                return;
            if (!r) {
                emit self->errorOccurred(QString::fromStdString(r.message()));
                return;
            }
            self->documents_ = std::move(r->documents);
            self->persona_ = std::move(r->persona);
            emit self->loaded();
        });
}

QVariantList ConversationDocuments::documentsOf(qint64 conversationId) const {
    QVariantList out;
    if (conversationId != conversation_) return out;
    for (const st::Document& d : documents_) out << app::document_row(d);
    return out;
}

int ConversationDocuments::prefix_tokens(const std::vector<st::Document>& own) const {
    const chat::PromptBuilder* builder =
        bridge_ && bridge_->loaded() ? bridge_->promptBuilder() : nullptr;
    if (!builder) return -1;
    const QString prefix =
        app::persona_prefix(persona_ ? persona_->system_prompt : QString(),
                            persona_ ? std::span<const st::Document>(persona_->documents)
                                     : std::span<const st::Document>(),
                            own);
    return static_cast<int>(builder->persona_prefix(prefix.toStdString()).size());
}

int ConversationDocuments::prefix_limit() const {
    if (!bridge_ || !bridge_->loaded()) return -1;
    const int context = bridge_->contextLength();
    return context - std::min(conversation_room_, context / 2);  // as a persona's
}

bool ConversationDocuments::looked_up() const {
    return std::any_of(documents_.begin(), documents_.end(),
                       [](const st::Document& d) { return d.lookup; });
}

QVariantMap ConversationDocuments::prefixCost(qint64 conversationId) const {
    if (conversationId != conversation_) return {};
    const int whole = prefix_tokens(documents_);
    if (whole < 0) return {};
    const chat::PromptBuilder* builder = bridge_->promptBuilder();
    QVariantList per_document;
    for (const st::Document& d : documents_) {
        if (d.lookup) continue;
        per_document << QVariantMap{
            {QStringLiteral("documentId"), QVariant::fromValue<qint64>(d.id)},
            {QStringLiteral("tokens"),
             static_cast<int>(
                 builder->encode_content(chat::Role::System, app::document_block(d).toStdString())
                     .size())}};
    }
    const int context = bridge_->contextLength();
    return {{QStringLiteral("tokens"), whole},
            {QStringLiteral("instructions"), prefix_tokens({})},
            {QStringLiteral("documents"), per_document},
            {QStringLiteral("context"), context},
            {QStringLiteral("room"), context - whole},
            {QStringLiteral("fits"), whole <= prefix_limit()},
            {QStringLiteral("lookup"), looked_up()}};
}

void ConversationDocuments::addDocuments(qint64 conversationId, const QVariantList& files) {
    if (!store_ || conversationId != conversation_ || conversation_ < 0) return;
    const QStringList paths = app::local_paths(files);
    if (paths.isEmpty()) return;
    read_then(paths, app::kMaxFolderFiles, [this, conversationId](app::ReadDocuments r) {
        add_read(conversationId, std::move(r.read), std::move(r.problems));
    });
}

// Adds what was read: read whole while the prefix leaves the conversation its room,
// else the chat's documents are all looked up from then on.
void ConversationDocuments::add_read(qint64 conversation, std::vector<st::Document> read,
                                     QStringList problems) {
    if (!store_ || read.empty() || conversation != conversation_) {
        emit documentsAdded(conversation, 0, problems);
        return;
    }
    bool lookup = looked_up();
    const int limit = prefix_limit();
    if (!lookup && limit >= 0) {
        std::vector<st::Document> all = documents_;
        qsizetype chars = 0;
        for (const st::Document& d : read) chars += d.text.size();
        all.insert(all.end(), read.begin(), read.end());
        // A token is rarely more than 8 characters: past that many it cannot fit, and a
        // collection is not tokenized whole on this thread to find that out.
        const int tokens =
            chars > static_cast<qsizetype>(limit) * 8 ? limit + 1 : prefix_tokens(all);
        if (tokens > limit) {
            lookup = true;
            problems << QStringLiteral(
                            "Together the chat's documents are too long to read whole: they "
                            "would take more than %1 of the model's %2 tokens of context, "
                            "which must leave %3 for the conversation. From now on each "
                            "message is given the passages of them that it needs (up to %4).")
                            .arg(limit)
                            .arg(bridge_->contextLength())
                            .arg(bridge_->contextLength() - limit)
                            .arg(app::kPassagesPerMessage);
        }
    }
    const int added = static_cast<int>(read.size());
    QPointer<ConversationDocuments> self(this);
    store_->run<int>(
        [read = std::move(read), conversation, lookup](st::Store& s) {
            return s.add_documents(st::DocumentOwner::Conversation, conversation, read, lookup);
        },
        [self, conversation, added, problems](Result<int> r) mutable {
            if (!self) return;
            if (!r) problems << QString::fromStdString(r.message());
            log::get("app")->info("chat {}: {} documents added", conversation, r ? *r : 0);
            self->reload();
            emit self->documentsAdded(conversation, r ? added : 0, problems);
        });
}

void ConversationDocuments::removeDocument(qint64 documentId) {
    if (!store_) return;
    // Looked up: do the others fit again without it? Then they are read whole again.
    bool fits_again = false;
    if (looked_up() && prefix_limit() >= 0) {
        std::vector<st::Document> rest;
        qsizetype chars = 0;
        for (const st::Document& d : documents_)
            if (d.id != documentId) {
                rest.push_back(d);
                rest.back().lookup = false;
                chars += d.text.size();
            }
        fits_again = chars <= static_cast<qsizetype>(prefix_limit()) * 8 &&
                     prefix_tokens(rest) <= prefix_limit();
    }
    const qint64 conversation = conversation_;
    QPointer<ConversationDocuments> self(this);
    store_->run<void>(
        [documentId, fits_again, conversation](st::Store& s) -> Result<void> {
            if (auto rc = s.delete_document(documentId); !rc) return rc;
            if (fits_again)
                return s.set_documents_lookup(st::DocumentOwner::Conversation, conversation, false);
            return {};
        },
        [self](Result<void> r) {
            if (!self) return;
            if (!r) emit self->errorOccurred(QString::fromStdString(r.message()));
            self->reload();
        });
}

void ConversationDocuments::refreshDocument(qint64 documentId) {
    if (!store_) return;
    const auto it = std::find_if(documents_.begin(), documents_.end(),
                                 [&](const st::Document& d) { return d.id == documentId; });
    if (it == documents_.end() || it->source_path.isEmpty()) return;
    read_then({it->source_path}, 1, [this, documentId](app::ReadDocuments r) {
        if (r.read.empty()) {
            emit errorOccurred(r.problems.join(QLatin1Char('\n')));
            return;
        }
        st::Document d = std::move(r.read.front());
        QPointer<ConversationDocuments> self(this);
        store_->run<st::Document>(
            [documentId, d](st::Store& s) {
                return s.update_document_text(documentId, d.text, d.file_size, d.file_modified);
            },
            [self](Result<st::Document> done) {
                if (!self) return;
                if (!done) emit self->errorOccurred(QString::fromStdString(done.message()));
                self->reload();
            });
    });
}

// Reads on a worker thread; readingDocuments is true meanwhile.
void ConversationDocuments::read_then(const QStringList& paths, int max_per_folder,
                                      std::function<void(hearth::app::ReadDocuments)> done) {
    ++reading_;
    emit readingDocumentsChanged();
    app::read_document_files_then(this, paths, max_per_folder,
                                  [this, done = std::move(done)](app::ReadDocuments r) {
                                      --reading_;
                                      emit readingDocumentsChanged();
                                      done(std::move(r));
                                  });
}
