// MessageListModel: the thread on screen of one conversation, and the chat actions on it.
//
// The rows are the store's active thread (AsyncStore::active_thread), reloaded after every
// change and merged into the model row by row (unchanged rows stay, so views keep their
// place). A reply being generated is a Streaming row whose text and token ids come from
// the engine's events; they are written to the store (update_reply, coalesced there) and
// finished with the reply's statistics (finish_reply).
//
// send(): append the user message (with its token ids), build the prompt of the thread
// with fit_to_context (room left for the reply; the oldest turns drop out, inContext
// false), submit to the engine at once and begin_reply in parallel, so the store's write
// is not on the time to first token. The full prompt is sent every turn; assistant
// replies carry their sampled ids, so it extends the previous prompt exactly and the
// engine serves it from the KV cache.
//
// Several conversations may generate at once: a reply keeps streaming (and being stored)
// after the model switches to another conversation, and shows again when it switches back.
// Every store callback and engine event is on the GUI thread; none is handled after the
// model is destroyed (callbacks hold a QPointer to it).
#pragma once

#include <QAbstractListModel>
#include <QElapsedTimer>
#include <QPointer>
#include <QtQml/qqmlregistration.h>

#include <map>
#include <optional>
#include <vector>

#include "core/engine_bridge.h"
#include "core/markdown_segments.h"
#include "store/async_store.h"

class MessageListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(EngineBridge* bridge READ bridge WRITE setBridge NOTIFY bridgeChanged)
    Q_PROPERTY(QObject* store READ storeObject WRITE setStoreObject NOTIFY storeChanged)
    Q_PROPERTY(qint64 conversationId READ conversationId WRITE setConversationId NOTIFY conversationIdChanged)
    Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
    Q_PROPERTY(bool canSend READ canSend NOTIFY canSendChanged)
    Q_PROPERTY(int count READ count NOTIFY countChanged)
    Q_PROPERTY(int maxReplyTokens READ maxReplyTokens WRITE setMaxReplyTokens NOTIFY settingsChanged)
    Q_PROPERTY(QString personaName READ personaName NOTIFY conversationLoaded)
    // The conversation's persona as the store has it (-1: none, or not loaded yet).
    Q_PROPERTY(qint64 personaId READ personaId NOTIFY conversationLoaded)
    Q_PROPERTY(QString title READ title NOTIFY conversationLoaded)
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)
    Q_PROPERTY(int droppedMessages READ droppedMessages NOTIFY contextChanged)

  public:
    enum Roles {
        MessageIdRole = Qt::UserRole + 1,
        RoleRole,  // "user", "assistant", "system"
        TextRole,
        StateRole,  // "done", "streaming", "stopped", "error"
        VariantIndexRole,
        VariantCountRole,
        TtftMsRole,  // -1 when not measured
        TokensPerSecondRole,
        PromptTokensCachedRole,
        PromptTokensComputedRole,
        GeneratedTokensRole,
        InContextRole,
        ErrorRole,  // why a reply failed
        CreatedAtRole,
        ParentIdRole,         // -1 for the first message
        PrefillProgressRole,  // 0..1 while the prompt of a streaming reply is evaluated, else -1
        // The text split into prose and fenced code (markdown_segments.h): a list of
        // {kind: "text"|"code", text, language, open}; split again only when the text
        // changes (a streaming reply: from its last line on).
        SegmentsRole,
    };
    Q_ENUM(Roles)

    explicit MessageListModel(QObject* parent = nullptr);
    ~MessageListModel() override;

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    EngineBridge* bridge() const { return bridge_; }
    void setBridge(EngineBridge* bridge);
    QObject* storeObject() const;
    void setStoreObject(QObject* store);
    hearth::store::AsyncStore* store() const { return store_; }
    void setStore(hearth::store::AsyncStore* store);
    qint64 conversationId() const { return conversation_; }
    void setConversationId(qint64 id);  // -1: none
    bool generating() const;  // the conversation on screen has a reply streaming
    bool canSend() const;
    int count() const { return static_cast<int>(rows_.size()); }
    int maxReplyTokens() const { return max_reply_tokens_; }
    void setMaxReplyTokens(int n);
    QString personaName() const { return persona_ ? persona_->name : QString(); }
    qint64 personaId() const {
        return conversation_record_ && conversation_record_->persona_id
                   ? static_cast<qint64>(*conversation_record_->persona_id)
                   : -1;
    }
    QString title() const { return conversation_record_ ? conversation_record_->title : QString(); }
    QString errorString() const { return error_; }
    int droppedMessages() const;

    // Sampling used where the conversation has no override of its own (and the reply's
    // stop rules); tests make replies deterministic with it.
    void setDefaultSampling(const hearth::SamplingParams& params) { default_sampling_ = params; }
    void setStopAtEndOfTurn(bool stop) { stop_at_end_of_turn_ = stop; }

    // false when it cannot start now (nothing loaded, a reply still streaming, empty text).
    Q_INVOKABLE bool send(const QString& text);
    Q_INVOKABLE void stop();
    // A new variant of the last reply (or a reply to the last message when it is a user's).
    Q_INVOKABLE bool regenerate();
    // Edits a user message as a new variant (a branch) and generates a reply to it.
    Q_INVOKABLE bool editAndResend(qint64 messageId, const QString& text);
    Q_INVOKABLE void pageVariant(qint64 messageId, int delta);
    // Deletes the message and everything after it on every branch.
    Q_INVOKABLE void deleteMessage(qint64 messageId);
    Q_INVOKABLE void copyText(qint64 messageId) const;  // to the clipboard (GUI apps)
    // The code of the message's segment (a code block, without its fences) to the
    // clipboard; false when there is no such code segment or no clipboard.
    Q_INVOKABLE bool copyCode(qint64 messageId, int segment) const;
    Q_INVOKABLE int rowOf(qint64 messageId) const;
    Q_INVOKABLE QVariantMap get(int row) const;  // every role by name
    Q_INVOKABLE void reload();

  signals:
    void bridgeChanged();
    void storeChanged();
    void conversationIdChanged();
    void generatingChanged();
    void canSendChanged();
    void countChanged();
    void settingsChanged();
    void conversationLoaded();
    void errorStringChanged();
    void contextChanged();
    // A reply ended (finished, stopped or failed); its statistics are in the row.
    void replyFinished(qint64 messageId, const QString& state);
    void replyStarted(qint64 messageId);

  private:
    // A reply being generated (possibly of a conversation not on screen).
    struct Stream {
        qint64 conversation = -1;
        hearth::store::Id parent_id = 0;
        std::optional<hearth::store::Id> reply_id;  // once begin_reply returned
        QString text;
        std::vector<std::int32_t> ids;
        std::int32_t prefill_done = 0;  // PrefillProgress: prompt tokens in the cache so far
        std::int32_t prefill_total = 0;
        QElapsedTimer last_write;
        bool ended = false;  // Finished or Error arrived
        bool begin_failed = false;
        hearth::store::MessageState end_state = hearth::store::MessageState::Complete;
        hearth::store::GenerationStats stats;
        QString error;
    };
    struct Snapshot;  // a conversation, its persona and its thread, read together

    void set_error(const QString& error);
    void apply_snapshot(const Snapshot& snapshot);
    void apply_thread(std::vector<hearth::store::ThreadEntry> thread);
    void on_event(const hearth::sched::Event& event);
    // Reads the conversation, then builds the prompt of its thread up to parent_id and
    // starts a reply after it.
    void start_reply(qint64 conversation, hearth::store::Id parent_id);
    void reply_begun(qint64 request_id, hearth::Result<hearth::store::Id> reply);
    void end_stream(qint64 request_id);
    void write_stream(Stream& s, bool force);
    const Stream* stream_for(hearth::store::Id message_id) const;
    void update_row(hearth::store::Id message_id, const QList<int>& roles = {});
    void emit_state_changes();
    void setup_done(qint64 conversation);
    bool busy(qint64 conversation) const;
    bool in_context(int row) const;
    const QVariantList& segments_of(const hearth::store::Message& m, const QString& text) const;

    QPointer<EngineBridge> bridge_;
    QPointer<hearth::store::AsyncStore> store_;
    qint64 conversation_ = -1;
    std::optional<hearth::store::Conversation> conversation_record_;
    std::optional<hearth::store::Persona> persona_;
    std::vector<hearth::store::ThreadEntry> rows_;
    std::map<qint64, Stream> streams_;               // by bridge request id
    std::map<qint64, int> dropped_;                  // per conversation: rows left out
    std::map<qint64, int> setting_up_;               // conversation -> replies being set up
    std::map<qint64, bool> stop_requested_;          // stop() during set-up
    std::map<hearth::store::Id, QString> errors_;    // why a reply failed (this session)
    // Replies that ended here whose finish_reply is not yet acknowledged by the store: a
    // snapshot read before that write still says "streaming" and must not bring the row
    // back to it (see apply_thread). Dropped once the write's callback has run (every
    // snapshot read before it has been delivered by then: the store is FIFO).
    struct Ended {
        QString text;
        std::vector<std::int32_t> ids;
        hearth::store::MessageState state = hearth::store::MessageState::Complete;
        hearth::store::GenerationStats stats;
    };
    std::map<hearth::store::Id, Ended> ended_;
    // The segments role, by message id (rows on screen only).
    struct Segments {
        MarkdownSplitter splitter;
        QVariantList value;
    };
    mutable std::map<hearth::store::Id, Segments> segments_;
    int reload_serial_ = 0;
    int max_reply_tokens_ = 512;
    std::optional<hearth::SamplingParams> default_sampling_;
    bool stop_at_end_of_turn_ = true;
    QString error_;
    bool last_generating_ = false;
    bool last_can_send_ = false;
};
