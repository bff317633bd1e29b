// PersonaListModel: the personas (by name), with create / edit / duplicate / delete and
// keep-warm. A keep-warm persona's prompt prefix (PromptBuilder::persona_prefix of its
// system prompt) is pinned in the engine's KV cache under the persona's id: the engine
// prefills it in the background and keeps it resident, so a new chat with the persona
// starts from the cache. Pins follow the personas: set again when a model loads (every
// keep-warm persona is warmed up then), when the system prompt changes, and removed when
// keep-warm goes off or the persona is deleted.
//
// Documents (persona_documents.cpp): a persona holds files whose text follows its
// instructions in the prefix (persona_prefix.h), so it is computed once, pinned and shared.
// They are read off the GUI thread (documents/document_text.h), their cost counted with the
// open model's tokenizer; where the prefix would leave the conversation less than
// conversationRoom tokens of the model's context, all of the persona's documents are
// looked up per message instead (document_lookup.h). A file that
// changed on disk since it was read is marked (watched), to be read again on request.
//
// An empty history is seeded once with the default personas in resources/personas/
// (compiled in under :/personas/); the setting "personas.seeded" records that, so
// deleting them all does not bring them back.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QFileSystemWatcher>
#include <QPointer>
#include "core/row_list_model.h"

#include <map>
#include <span>
#include <vector>

#include "core/document_files.h"
#include "core/engine_bridge.h"
#include "store/async_store.h"

class PersonaListModel : public RowListModel {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(EngineBridge* bridge READ bridge WRITE setBridge NOTIFY bridgeChanged)
    Q_PROPERTY(QObject* store READ storeObject WRITE setStoreObject NOTIFY storeChanged)
    Q_PROPERTY(int count READ count NOTIFY countChanged)
    Q_PROPERTY(bool seedDefaults READ seedDefaults WRITE setSeedDefaults NOTIFY seedDefaultsChanged)
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)
    Q_PROPERTY(int maxNameLength READ maxNameLength CONSTANT)
    // Tokens of the context a persona's prefix must leave to the conversation.
    Q_PROPERTY(int conversationRoom READ conversationRoom WRITE setConversationRoom NOTIFY
                   conversationRoomChanged)
    Q_PROPERTY(bool readingDocuments READ readingDocuments NOTIFY readingDocumentsChanged)

  public:
    enum Roles {
        PersonaIdRole = Qt::UserRole + 1,
        NameRole,
        SystemPromptRole,
        ColorRole,
        AvatarRole,
        KeepWarmRole,
        WarmStateRole,  // "warming", "pinned", "failed", "" (not pinned)
        SamplingRole,   // its own reply settings (sampling_settings_map.h); {} for none
        // Its documents, in order: {documentId, name, format, sourcePath, characters,
        // changed (the file is not as it was read), missing (the file is gone)}.
        DocumentsRole,
    };
    Q_ENUM(Roles)

    explicit PersonaListModel(QObject* parent = nullptr);

    // A persona's name is one line of at most this many characters (the dialog's field
    // stops there; longer names from elsewhere are cut, whitespace runs become one space).
    static constexpr int kMaxNameLength = 60;
    int maxNameLength() const { return kMaxNameLength; }
    static QString clean_name(const QString& name);

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    EngineBridge* bridge() const { return bridge_; }
    void setBridge(EngineBridge* bridge);
    QObject* storeObject() const;
    void setStoreObject(QObject* store);
    void setStore(hearth::store::AsyncStore* store);
    int count() const { return static_cast<int>(rows_.size()); }
    bool seedDefaults() const { return seed_defaults_; }
    void setSeedDefaults(bool seed);
    QString errorString() const { return error_; }

    // The personas in the resources (for the seeding and a "restore defaults" action).
    static std::vector<hearth::store::Persona> defaultPersonas();

    // personaCreated(id) follows on success.
    // sampling (optional): its own reply settings, as the sampling role has them.
    Q_INVOKABLE void create(const QString& name, const QString& systemPrompt,
                            const QString& color = QString(), const QString& avatar = QString(),
                            bool keepWarm = false, const QVariantMap& sampling = {});
    // Changes the given fields: name, systemPrompt, color, avatar, keepWarm.
    // fields: name, systemPrompt, color, avatar, keepWarm, sampling (a map, see the role).
    Q_INVOKABLE void edit(qint64 personaId, const QVariantMap& fields);
    Q_INVOKABLE void setKeepWarm(qint64 personaId, bool keepWarm);
    Q_INVOKABLE void duplicate(qint64 personaId);  // "<name> (copy)", not kept warm
    Q_INVOKABLE void remove(qint64 personaId);
    Q_INVOKABLE int rowOf(qint64 personaId) const;
    Q_INVOKABLE QVariantMap get(int row) const;
    // The colour a persona is shown with, everywhere (the sidebar, the chat header, the
    // replies): its own, else kNoColor (no persona, an unknown one, or none set).
    Q_INVOKABLE QString colorOf(qint64 personaId) const;
    static constexpr const char* kNoColor = "#9e928a";
    Q_INVOKABLE void reload();

    // ---- documents (persona_documents.cpp) ----
    static constexpr int kDefaultConversationRoom = 2048;
    int conversationRoom() const { return conversation_room_; }
    void setConversationRoom(int tokens);
    bool readingDocuments() const { return reading_ > 0; }
    // Reads files (paths or file URLs; a folder: the documents in it and its subfolders,
    // at most kMaxFolderFiles) and adds them in the order given: read whole with the
    // instructions while they leave the conversation its room, else (all of the persona's)
    // looked up per message (document_lookup.h). documentsAdded reports what was added,
    // what was not and why, and a switch to looking up.
    static constexpr int kMaxFolderFiles = hearth::app::kMaxFolderFiles;
    Q_INVOKABLE void addDocuments(qint64 personaId, const QVariantList& files);
    Q_INVOKABLE void removeDocument(qint64 documentId);
    // Reads a document's file again (it changed on disk).
    Q_INVOKABLE void refreshDocument(qint64 documentId);
    // What the persona's prefix costs with the open model: {tokens (the whole prefix),
    // instructions, documents: [{documentId, tokens}], context, room, fits, lookup (the
    // documents are looked up: not in the prefix, not counted)}; {} with no model open.
    Q_INVOKABLE QVariantMap prefixCost(qint64 personaId) const;
    // Its documents' rows (DocumentsRole), as ConversationDocuments::documentsOf.
    Q_INVOKABLE QVariantList documentsOf(qint64 personaId) const;
    // Each persona's name and prefix (its instructions and documents, persona_prefix.h).
    std::vector<std::pair<QString, QString>> prefixes() const;

  signals:
    void bridgeChanged();
    void storeChanged();
    void countChanged();
    void seedDefaultsChanged();
    void errorStringChanged();
    void personaCreated(qint64 personaId);
    void loaded();  // after each reload
    void conversationRoomChanged();
    void readingDocumentsChanged();
    // After addDocuments: how many were added, and a line per file that was not.
    void documentsAdded(qint64 personaId, int added, const QStringList& problems);

  private:
    void apply(std::vector<hearth::store::Persona> personas);
    void sync_pins();
    void set_error(const QString& error);
    void save(const hearth::store::Persona& persona);
    const hearth::store::Persona* find(qint64 id) const;
    QVariantList documents_of(const hearth::store::Persona& persona) const;
    void watch_documents();
    // The prefix's tokens with the open model (-1: none open).
    int prefix_tokens(const QString& instructions,
                      std::span<const hearth::store::Document> documents) const;
    int prefix_limit() const;  // the most tokens a prefix may take (-1: no model open)
    static bool looked_up(const hearth::store::Persona& p);  // its documents are looked up
    bool fits_without(const hearth::store::Persona& p, hearth::store::Id removed) const;
    void add_read(qint64 persona_id, std::vector<hearth::store::Document> read,
                  QStringList problems);
    template <typename Done>
    void read_then(const QStringList& paths, Done done);  // persona_documents.cpp

    QPointer<EngineBridge> bridge_;
    QPointer<hearth::store::AsyncStore> store_;
    std::vector<hearth::store::Persona> rows_;
    std::map<qint64, QString> pinned_;  // persona id -> system prompt pinned on this engine
    bool seed_defaults_ = true;
    int reload_serial_ = 0;
    QString error_;
    int conversation_room_ = kDefaultConversationRoom;
    int reading_ = 0;
    QFileSystemWatcher* watcher_ = nullptr;  // the documents' files
};
