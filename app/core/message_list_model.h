// MessageListModel: the thread on screen of one conversation, and the chat actions on it.
//
// The rows are the store's active thread (AsyncStore::active_thread), reloaded after every
// change and merged into the model (RowListModel::merge_rows: unchanged rows stay, so views
// keep their place). A new reply's row is shown as soon as the store has created its
// message, before the reload brings the store's copy. A reply being generated is a
// Streaming row whose text and token ids come from the engine's events; ReplyWriter keeps
// the store's copy up to date and writes the reply's end with its statistics, the seed it
// was sampled with and why it ended (its finish reason: a reply cut at its length limit can
// be continued).
//
// Starting a reply (send, regenerate, edit and resend, continue) reads the conversation,
// plans the request (reply_planner.h: the prompt fitted to the context, sampling with a
// fresh seed unless one is fixed), submits it at once and begins the stored reply in
// parallel, so the store's write is not on the time to first token.
//
// Views are told of a streaming reply at most once a frame (kUpdateIntervalMs): token
// and prefill-progress events are folded together, except the first token of a reply,
// which is shown at once. The `segments` role (message_segments.h) splits the text into
// blocks so that a delegate lays out only the block that changed.
//
// Several conversations may generate at once: a reply keeps streaming (and being stored)
// after the model switches to another conversation, and shows again when it switches back.
// Every store callback and engine event is on the GUI thread; none is handled after the
// model is destroyed (callbacks hold a QPointer to it).
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QElapsedTimer>
#include <QPointer>
#include <QTimer>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "core/app_settings.h"
#include "core/chat_backend.h"
#include "core/message_segments.h"
#include "core/reply_planner.h"
#include "core/reply_writer.h"
#include "core/row_list_model.h"
#include "store/async_store.h"

// A message's state as the model's `state` role and replyFinished name it: "done",
// "streaming", "stopped" or "error".
QString message_state_name(hearth::store::MessageState state);

class MessageListModel : public RowListModel {
    Q_OBJECT
    QML_ELEMENT
    // Who answers: the local engine or a remote endpoint (chat_backend.h).
    Q_PROPERTY(ChatBackend* backend READ backend WRITE setBackend NOTIFY backendChanged)
    Q_PROPERTY(QObject* store READ storeObject WRITE setStoreObject NOTIFY storeChanged)
    // The user's reply settings (sampling defaults, longest reply); optional.
    Q_PROPERTY(AppSettings* settings READ settings WRITE setSettings NOTIFY settingsChanged)
    Q_PROPERTY(qint64 conversationId READ conversationId WRITE setConversationId NOTIFY
                   conversationIdChanged)
    Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
    // Every conversation with a reply being set up or streaming (the list's indicator).
    Q_PROPERTY(
        QVariantList busyConversations READ busyConversations NOTIFY busyConversationsChanged)
    Q_PROPERTY(bool canSend READ canSend NOTIFY canSendChanged)
    Q_PROPERTY(int count READ count NOTIFY countChanged)
    Q_PROPERTY(
        int maxReplyTokens READ maxReplyTokens WRITE setMaxReplyTokens NOTIFY settingsChanged)
    Q_PROPERTY(QString personaName READ personaName NOTIFY conversationLoaded)
    // The conversation's persona as the store has it (-1: none, or not loaded yet).
    Q_PROPERTY(qint64 personaId READ personaId NOTIFY conversationLoaded)
    Q_PROPERTY(QString title READ title NOTIFY titleChanged)
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)
    Q_PROPERTY(int droppedMessages READ droppedMessages NOTIFY contextChanged)
    // The conversation on screen has outgrown the context and its model's setting is
    // "ask": the reply waits for resolveContextFull (contextFullText says what happened).
    Q_PROPERTY(bool contextFull READ contextFull NOTIFY contextFullChanged)
    Q_PROPERTY(QString contextFullText READ contextFullText NOTIFY contextFullChanged)
    // The conversation's own reply settings (sampling_settings_map.h; {}: none), and the
    // persona's, which apply where the conversation sets nothing.
    Q_PROPERTY(QVariantMap conversationSampling READ conversationSampling NOTIFY conversationLoaded)
    Q_PROPERTY(QVariantMap personaSampling READ personaSampling NOTIFY conversationLoaded)
    // A fork's origin: {conversationId, messageId, title} of the message it was copied up
    // to, or {} (not a fork, or that message is gone).
    Q_PROPERTY(QVariantMap forkOrigin READ forkOrigin NOTIFY conversationLoaded)

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
        // The text split into prose blocks and fenced code (markdown_segments.h): a list of
        // {kind: "text"|"code", text, language, open}; split again only when the text
        // changes (a streaming reply: from its last line on).
        SegmentsRole,
        // Why a reply ended: "stop" (end of turn), "length" (its token limit: it can be
        // continued), "cancelled", "error", or "" (not known, or still streaming).
        FinishReasonRole,
        SeedRole,  // the sampling seed of a reply, as a decimal string ("" if unknown)
        // A reply's reasoning block (<think>…</think>, chat/reasoning.h): its text, ""
        // (none), "thinking" (still open) or "done", and how long it took (seconds, -1 if
        // not known; while thinking: so far). The segments and `answer` are the rest.
        ReasoningRole,
        ReasoningStateRole,
        ReasoningSecondsRole,
        AnswerRole,
        // A long chat's turn: messages that left the model's view on it (0: none), and
        // prompt tokens a context shift moved instead of computing.
        MessagesDroppedRole,
        PromptTokensShiftedRole,
        // Of the cached prompt tokens, those read back from the KV disk tier (the rest were
        // in memory); -1 when not known (a remote backend, a reply from before it was kept).
        PromptTokensLoadedRole,
        // A reply's sources: the passages of looked-up documents its message was given
        // (document_lookup.h), best first, as [{name, heading, snippet, path, url, exists}]
        // (path: the file it was read from, "" if none; exists: it is still there).
        SourcesRole,
        // Speculative decoding: draft tokens the model checked for the reply, and those it
        // kept (0 and 0: none, or not measured).
        DraftTokensRole,
        DraftAcceptedRole,
    };
    Q_ENUM(Roles)

    // Views hear of a streaming reply at most this often (a display frame) by default.
    static constexpr int kUpdateIntervalMs = 16;

    explicit MessageListModel(QObject* parent = nullptr);
    ~MessageListModel() override;

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    ChatBackend* backend() const { return backend_; }
    // Replies running on the backend being replaced end as stopped, with what they have.
    void setBackend(ChatBackend* backend);
    QObject* storeObject() const;
    void setStoreObject(QObject* store);
    hearth::store::AsyncStore* store() const { return store_; }
    void setStore(hearth::store::AsyncStore* store);
    AppSettings* settings() const { return settings_; }
    void setSettings(AppSettings* settings);
    qint64 conversationId() const { return conversation_; }
    void setConversationId(qint64 id);  // -1: none
    bool generating() const;            // the conversation on screen has a reply streaming
    QVariantList busyConversations() const;
    bool canSend() const;
    int count() const { return static_cast<int>(rows_.size()); }
    int maxReplyTokens() const;
    void setMaxReplyTokens(int n);  // overrides the settings' (tests)
    QString personaName() const { return persona_ ? persona_->name : QString(); }
    qint64 personaId() const {
        return conversation_record_ && conversation_record_->persona_id
                   ? static_cast<qint64>(*conversation_record_->persona_id)
                   : -1;
    }
    QString title() const { return conversation_record_ ? conversation_record_->title : QString(); }
    QString errorString() const { return error_; }
    int droppedMessages() const;
    bool contextFull() const { return asked_ && asked_->conversation == conversation_; }
    QString contextFullText() const { return contextFull() ? asked_->text : QString(); }
    // The answer to contextFull: "drop" or "shift" for this conversation (and, with
    // remember, the model's setting from now on), then the waiting reply starts; anything
    // else leaves it unsent.
    Q_INVOKABLE void resolveContextFull(const QString& policy, bool remember);
    QVariantMap conversationSampling() const;
    QVariantMap personaSampling() const;
    QVariantMap forkOrigin() const;
    // Stores the conversation's own reply settings (they apply from its next reply on).
    // Drops what the KV disk tier holds of a conversation that is being deleted (call it
    // before the store deletes it: ConversationListModel::aboutToDelete).
    Q_INVOKABLE void forgetKv(qint64 conversation);
    Q_INVOKABLE void setConversationSampling(const QVariantMap& settings);
    // The open chat's persona (-1: none), while it has no message yet (a chat made with
    // Ctrl+N takes the persona of the chat on screen); false once it has one.
    Q_INVOKABLE bool choosePersona(qint64 personaId);

    // Sampling used instead of the settings' defaults (the persona's and the conversation's
    // settings still apply over it; the seed is fresh per reply unless one of those fixes
    // it); tests make replies deterministic with it.
    void setDefaultSampling(const hearth::SamplingParams& params) { default_sampling_ = params; }
    void setStopAtEndOfTurn(bool stop) { stop_at_end_of_turn_ = stop; }
    // How long token updates are gathered before views hear of them (0: at the next turn
    // of the event loop); tests watch a fast model stream with 0.
    void setUpdateIntervalMs(int ms) { flush_timer_.setInterval(std::max(0, ms)); }

    // false when it cannot start now (nothing loaded, a reply still streaming, empty text).
    Q_INVOKABLE bool send(const QString& text);
    Q_INVOKABLE void stop();
    // A new variant of the last reply (or a reply to the last message when it is a user's).
    Q_INVOKABLE bool regenerate();
    // More of the last reply, when it was cut at its length limit or stopped: the new
    // tokens are appended to it (the prompt is the earlier one plus its tokens, all cached).
    Q_INVOKABLE bool continueReply(qint64 messageId);
    Q_INVOKABLE bool canContinue(qint64 messageId) const;
    // Edits a user message as a new variant (a branch) and generates a reply to it.
    Q_INVOKABLE bool editAndResend(qint64 messageId, const QString& text);
    Q_INVOKABLE void pageVariant(qint64 messageId, int delta);
    // Deletes the message and everything after it on every branch.
    Q_INVOKABLE void deleteMessage(qint64 messageId);
    Q_INVOKABLE void copyText(qint64 messageId) const;  // to the clipboard (GUI apps)
    // The code of the message's segment (a code block, without its fences) to the
    // clipboard; false when there is no such code segment or no clipboard.
    Q_INVOKABLE bool copyCode(qint64 messageId, int segment) const;
    // Brings a message into the thread on screen (switching to its branch when another
    // is shown); messageRevealed(row) follows once its row is there (a search hit).
    Q_INVOKABLE void revealMessage(qint64 messageId);
    Q_INVOKABLE int rowOf(qint64 messageId) const;
    Q_INVOKABLE QVariantMap get(int row) const;  // every role by name
    Q_INVOKABLE void reload();

  signals:
    void backendChanged();
    void storeChanged();
    void conversationIdChanged();
    void generatingChanged();
    void busyConversationsChanged();
    void canSendChanged();
    void countChanged();
    void settingsChanged();
    void conversationLoaded();
    void titleChanged();  // loaded, renamed, or named after its first message
    void errorStringChanged();
    void contextChanged();
    void contextFullChanged();
    // A reply ended (finished, stopped or failed); its statistics are in the row.
    void replyFinished(qint64 messageId, const QString& state);
    void replyStarted(qint64 messageId);
    void messageRevealed(int row);

  private:
    // A reply being generated (possibly of a conversation not on screen).
    struct Stream {
        qint64 conversation = -1;
        hearth::store::Id parent_id = 0;
        std::optional<hearth::store::Id> reply_id;  // once begin_reply returned
        QString fingerprint;                        // of the model that tokenized it
        // A continued reply: what it had before (the new tokens are appended).
        QString base_text;
        std::vector<std::int32_t> base_ids;
        std::int64_t base_tokens = 0;
        QString text;
        std::vector<std::int32_t> ids;
        std::int32_t new_tokens = 0;
        std::int32_t prefill_done = 0;  // PrefillProgress: prompt tokens in the cache so far
        std::int32_t prefill_total = 0;
        bool ended = false;             // Finished or Error arrived
        QElapsedTimer clock;            // from the first token: the reasoning block's time
        bool reasoning_closed = false;  // its </think> arrived (or it has none)
        bool begin_failed = false;
        bool continued = false;  // continues a reply on screen (not a new message)
        hearth::store::MessageState end_state = hearth::store::MessageState::Complete;
        hearth::store::GenerationStats stats;  // stats.error: why it failed
    };

    void set_error(const QString& error);
    // Selecting a conversation: its KV read back from the disk tier before the user types
    // (Engine::prefetch), for the prompt its next turn extends.
    void prefetch_kv(const ThreadSnapshot& snap);
    void refresh_record();  // the open chat's title from the store
    void apply_snapshot(const ThreadSnapshot& snapshot);
    void apply_thread(std::vector<hearth::store::ThreadEntry> thread);
    void on_event(const hearth::sched::Event& event);
    // Reads the conversation, then plans the reply to parent_id (or the continuation of
    // continue_reply) and starts it.
    void start_reply(qint64 conversation, hearth::store::Id parent_id,
                     std::optional<hearth::store::Id> continue_reply = std::nullopt);
    void reply_begun(qint64 request_id, hearth::Result<hearth::store::Id> reply);
    // A new reply's row, shown as soon as the store has created its message.
    void show_new_reply(const Stream& stream);
    void end_stream(qint64 request_id);
    const Stream* stream_for(hearth::store::Id message_id) const;
    // Tells views that the row changed now, or (later) at the next flush.
    void update_row(hearth::store::Id message_id, const QList<int>& roles = {});
    void update_row_soon(hearth::store::Id message_id, const QList<int>& roles);
    void flush_updates();
    void emit_state_changes();
    void setup_done(qint64 conversation);
    QVariantList sources_of(int row) const;  // SourcesRole
    void draft_user_message(qint64 conversation, const QString& text,
                            std::function<void(hearth::store::MessageDraft)> then);
    bool busy(qint64 conversation) const;
    bool in_context(int row) const;
    ReplyDefaults reply_defaults(qint64 conversation) const;
    void try_reveal();

    QPointer<ChatBackend> backend_;
    QPointer<hearth::store::AsyncStore> store_;
    QPointer<AppSettings> settings_;
    qint64 conversation_ = -1;
    std::optional<hearth::store::Conversation> conversation_record_;
    std::optional<hearth::store::Persona> persona_;
    std::optional<ThreadSnapshot::ForkOrigin> fork_origin_;
    std::vector<hearth::store::ThreadEntry> rows_;
    std::map<qint64, Stream> streams_;  // by backend request id
    std::map<qint64, int> dropped_;     // per conversation: rows left out
    // Per conversation: the overflow policy the user chose when asked (this session).
    std::map<qint64, hearth::chat::ContextPolicy> overflow_;
    // The reply that waits for the user's answer to a full context.
    struct Asked {
        qint64 conversation = -1;
        hearth::store::Id parent_id = 0;
        std::optional<hearth::store::Id> continue_reply;
        QString text;
    };
    std::optional<Asked> asked_;
    std::map<qint64, int> setting_up_;       // conversation -> replies being set up
    std::map<qint64, bool> stop_requested_;  // stop() during set-up
    ReplyWriter writer_;
    mutable SegmentsCache segments_;
    // Row updates waiting for the next flush: message id -> roles.
    std::map<hearth::store::Id, QList<int>> pending_updates_;
    QTimer flush_timer_;
    int reload_serial_ = 0;
    bool prefetch_pending_ = false;            // the next reload's thread is prefetched
    std::optional<hearth::store::Id> reveal_;  // revealMessage() waiting for its row
    bool reveal_selected_ = false;             // its branch was asked for
    std::optional<int> max_reply_tokens_;
    std::optional<hearth::SamplingParams> default_sampling_;
    bool stop_at_end_of_turn_ = true;
    QString error_;
    bool last_generating_ = false;
    QVariantList last_busy_;
    bool last_can_send_ = false;
};
