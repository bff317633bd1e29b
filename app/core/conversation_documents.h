// ConversationDocuments: the documents one chat holds, apart from its persona's. Their
// text follows the persona's in the chat's prefix (persona_prefix.h), so the persona's
// part is still shared with its other chats and the chat's own part is computed once and
// cached with its history. Files are read off the GUI thread (document_files.h), their
// cost counted with the open model's tokenizer; documents that would leave the
// conversation less than conversationRoom tokens of the context are looked up per message
// instead (document_lookup.h), all of the chat's together, and read whole again once they
// fit. The API matches PersonaListModel's documents (ui/DocumentsEditor.qml edits either).
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QObject>
#include <QPointer>

#include <functional>
#include <optional>
#include <vector>

#include "core/document_files.h"
#include "core/engine_bridge.h"
#include "store/async_store.h"

class ConversationDocuments : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(EngineBridge* bridge READ bridge WRITE setBridge NOTIFY bridgeChanged)
    Q_PROPERTY(QObject* store READ storeObject WRITE setStoreObject NOTIFY storeChanged)
    // The chat shown (-1: none); its documents are read when it changes.
    Q_PROPERTY(qint64 conversationId READ conversationId WRITE setConversationId NOTIFY
                   conversationIdChanged)
    Q_PROPERTY(int count READ count NOTIFY loaded)
    Q_PROPERTY(int conversationRoom READ conversationRoom WRITE setConversationRoom NOTIFY
                   conversationRoomChanged)
    Q_PROPERTY(bool readingDocuments READ readingDocuments NOTIFY readingDocumentsChanged)

  public:
    explicit ConversationDocuments(QObject* parent = nullptr);

    EngineBridge* bridge() const { return bridge_; }
    void setBridge(EngineBridge* bridge);
    QObject* storeObject() const { return store_; }
    void setStoreObject(QObject* store);
    qint64 conversationId() const { return conversation_; }
    void setConversationId(qint64 id);
    int count() const { return static_cast<int>(documents_.size()); }
    int conversationRoom() const { return conversation_room_; }
    void setConversationRoom(int tokens);
    bool readingDocuments() const { return reading_ > 0; }

    // Files or folders (paths or file URLs) for the chat `conversationId` (the one shown);
    // documentsAdded says what was added, what not and why, and a switch to looking up.
    Q_INVOKABLE void addDocuments(qint64 conversationId, const QVariantList& files);
    Q_INVOKABLE void removeDocument(qint64 documentId);
    Q_INVOKABLE void refreshDocument(qint64 documentId);  // its file changed: read it again
    // The chat's documents (document_files.h's rows), for the chat shown; [] otherwise.
    Q_INVOKABLE QVariantList documentsOf(qint64 conversationId) const;
    // {tokens (the whole prefix: the persona's and the chat's), instructions (the
    // persona's part), documents: [{documentId, tokens}], context, room, fits, lookup};
    // {} with no model open or another chat.
    Q_INVOKABLE QVariantMap prefixCost(qint64 conversationId) const;
    Q_INVOKABLE void reload();

  signals:
    void bridgeChanged();
    void storeChanged();
    void conversationIdChanged();
    void conversationRoomChanged();
    void readingDocumentsChanged();
    void loaded();
    void documentsAdded(qint64 conversationId, int added, const QStringList& problems);
    void errorOccurred(const QString& message);

  private:
    int prefix_tokens(const std::vector<hearth::store::Document>& own) const;
    int prefix_limit() const;
    bool looked_up() const;
    void read_then(const QStringList& paths, int max_per_folder,
                   std::function<void(hearth::app::ReadDocuments)> done);
    void add_read(qint64 conversation, std::vector<hearth::store::Document> read,
                  QStringList problems);

    QPointer<EngineBridge> bridge_;
    QPointer<hearth::store::AsyncStore> store_;
    qint64 conversation_ = -1;
    std::vector<hearth::store::Document> documents_;
    std::optional<hearth::store::Persona> persona_;  // the chat's, with its documents
    int conversation_room_ = 2048;
    int reading_ = 0;
    int reload_serial_ = 0;
};
