// ConversationListModel: the conversations, pinned first then newest first (the store's
// order), or, while searchText is set, the messages matching it (the store's FTS5 search)
// as rows with a highlighted snippet, grouped by conversation (best hit first). Rename, pin,
// archive, create from a persona, and delete with undo: remove() hides the row at once and deletes
// it after undoTimeoutMs unless undo() comes first (another remove() or destroying the model
// deletes it then). While holdOrder is set (the pointer is over the list), rows keep the order they
// had by last activity when it was set: a reply that ends in the background does not move the row
// the user is about to click. Pinning, new chats and removals still show at once; the order catches
// up when holdOrder is cleared.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QPointer>
#include <QTimer>
#include "core/row_list_model.h"

#include <map>
#include <optional>
#include <vector>

#include "store/async_store.h"

class ConversationListModel : public RowListModel {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QObject* store READ storeObject WRITE setStoreObject NOTIFY storeChanged)
    Q_PROPERTY(QString searchText READ searchText WRITE search NOTIFY searchTextChanged)
    Q_PROPERTY(bool searching READ searching NOTIFY searchTextChanged)
    Q_PROPERTY(bool showArchived READ showArchived WRITE setShowArchived NOTIFY showArchivedChanged)
    Q_PROPERTY(int count READ count NOTIFY countChanged)
    Q_PROPERTY(bool canUndo READ canUndo NOTIFY undoChanged)
    Q_PROPERTY(QString undoTitle READ undoTitle NOTIFY undoChanged)
    Q_PROPERTY(int undoTimeoutMs READ undoTimeoutMs WRITE setUndoTimeoutMs NOTIFY undoChanged)
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)
    Q_PROPERTY(bool holdOrder READ holdOrder WRITE setHoldOrder NOTIFY holdOrderChanged)

  public:
    enum Roles {
        ConversationIdRole = Qt::UserRole + 1,
        TitleRole,
        PersonaIdRole,  // -1: none
        PinnedRole,
        ArchivedRole,
        CreatedAtRole,
        UpdatedAtRole,
        IsSearchHitRole,
        MessageIdRole,    // the matching message (search hits), else -1
        SnippetRole,      // plain text
        HighlightsRole,   // [{start, length}] into the snippet
        SnippetHtmlRole,  // the snippet escaped, highlights in <b>
        MessageRoleRole,  // "user"/"assistant" of the hit
        ForkedRole,       // a fork of another chat ("fork from here"), while its origin exists
    };
    Q_ENUM(Roles)

    explicit ConversationListModel(QObject* parent = nullptr);
    ~ConversationListModel() override;  // a pending delete is carried out

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    QObject* storeObject() const;
    void setStoreObject(QObject* store);
    void setStore(hearth::store::AsyncStore* store);
    QString searchText() const { return search_text_; }
    bool searching() const { return !search_text_.trimmed().isEmpty(); }
    bool showArchived() const { return show_archived_; }
    void setShowArchived(bool show);
    int count() const { return static_cast<int>(rows_.size()); }
    bool canUndo() const { return pending_.has_value(); }
    QString undoTitle() const { return pending_ ? pending_->title : QString(); }
    int undoTimeoutMs() const { return undo_timeout_ms_; }
    void setUndoTimeoutMs(int ms);
    QString errorString() const { return error_; }
    bool holdOrder() const { return hold_order_; }
    void setHoldOrder(bool hold);

    // Empty text: back to the list of conversations.
    Q_INVOKABLE void search(const QString& text);
    // A new conversation (persona -1: none); conversationCreated(id) follows. Without a
    // title, an empty "New chat" with the same persona is reused if there is one.
    Q_INVOKABLE void createConversation(qint64 personaId = -1, const QString& title = QString());
    Q_INVOKABLE void rename(qint64 conversationId, const QString& title);
    Q_INVOKABLE void setPinned(qint64 conversationId, bool pinned);
    Q_INVOKABLE void setArchived(qint64 conversationId, bool archived);
    Q_INVOKABLE void remove(qint64 conversationId);
    Q_INVOKABLE void undo();
    Q_INVOKABLE void commitDelete();                     // now, without waiting for the timeout
    Q_INVOKABLE int rowOf(qint64 conversationId) const;  // first row of it
    Q_INVOKABLE QVariantMap get(int row) const;
    Q_INVOKABLE void reload();
    // Writes the conversation to a file, replacing it: format "markdown" or "json"; file
    // a file: URL or a path. exported(path) follows, or errorString says why not.
    Q_INVOKABLE void exportConversation(qint64 conversationId, const QString& format,
                                        const QString& file);
    // A new conversation holding the thread up to the message (Store::fork_conversation),
    // titled "<title> (fork)"; conversationCreated(id) follows, or errorString says why not.
    // Its next turn's prompt is the original's, so the KV cache serves it.
    Q_INVOKABLE void forkConversation(qint64 messageId);
    // Adds the conversation in a Hearth JSON export (a file: URL or a path) as a new one:
    // imported(id) follows, or errorString says why not.
    Q_INVOKABLE void importConversation(const QString& file);

  signals:
    void storeChanged();
    void searchTextChanged();
    void showArchivedChanged();
    void countChanged();
    void undoChanged();
    void errorStringChanged();
    void holdOrderChanged();
    void conversationCreated(qint64 conversationId);
    void aboutToDelete(qint64 conversationId);  // the store deletes it next (no undo now)
    void deleted(qint64 conversationId);        // the delete was carried out
    void loaded();                              // after each reload or search
    void exported(const QString& path);
    void imported(qint64 conversationId);

  private:
    struct Row {
        hearth::store::Conversation conversation;
        bool hit = false;
        hearth::store::Id message_id = -1;
        hearth::store::Role message_role = hearth::store::Role::User;
        QString snippet;
        std::vector<std::pair<int, int>> highlights;
    };

    void apply(std::vector<Row> rows);
    void set_error(const QString& error);
    void change(qint64 id, std::function<hearth::Result<void>(hearth::store::Store&)> job);
    const hearth::store::Conversation* find(qint64 id) const;

    QPointer<hearth::store::AsyncStore> store_;
    std::vector<Row> rows_;
    QString search_text_;
    bool show_archived_ = false;
    std::optional<hearth::store::Conversation> pending_;  // hidden, deleted on timeout
    QTimer undo_timer_;
    QTimer reload_timer_;  // coalesces reloads
    int undo_timeout_ms_ = 5000;
    int reload_serial_ = 0;
    QString error_;
    bool hold_order_ = false;
    std::map<qint64, QDateTime> held_activity_;  // id -> updated_at when holdOrder was set
};
