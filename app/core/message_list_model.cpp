// MessageListModel: its properties and the rows QML sees (the thread on screen, with the
// streaming replies' live state over them). Loading a thread from the store:
// message_list_loading.cpp; the replies being generated: message_list_streams.cpp; the
// user's actions: message_list_actions.cpp.
#include "core/message_list_model.h"

#include <QFileInfo>
#include <QUrl>

#include <algorithm>
#include <utility>

#include "common/log.h"
#include "core/error_text.h"
#include "core/sampling_settings_map.h"

using namespace hearth;
namespace st = hearth::store;

namespace {

QString finish_text(const std::optional<st::FinishReason>& r) {
    if (!r) return QString();
    switch (*r) {
        case st::FinishReason::Stop:
            return QStringLiteral("stop");
        case st::FinishReason::Length:
            return QStringLiteral("length");
        case st::FinishReason::Cancelled:
            return QStringLiteral("cancelled");
        case st::FinishReason::Error:
            return QStringLiteral("error");
    }
    return QString();
}

}  // namespace

QString message_state_name(st::MessageState s) {
    switch (s) {
        case st::MessageState::Complete:
            return QStringLiteral("done");
        case st::MessageState::Streaming:
            return QStringLiteral("streaming");
        case st::MessageState::Interrupted:
            return QStringLiteral("stopped");
        case st::MessageState::Failed:
            return QStringLiteral("error");
    }
    return QString();
}

MessageListModel::MessageListModel(QObject* parent) : RowListModel(parent) {
    flush_timer_.setSingleShot(true);
    flush_timer_.setInterval(kUpdateIntervalMs);
    connect(&flush_timer_, &QTimer::timeout, this, &MessageListModel::flush_updates);
}

MessageListModel::~MessageListModel() {
    // Replies still streaming keep their text in the store: stop them, and write what
    // they have as interrupted (the store finishes the writes when it closes).
    for (auto& [id, s] : streams_) {
        if (backend_) backend_->cancel(id);
        if (s.reply_id && !s.ended) {
            s.stats.finish_reason = st::FinishReason::Cancelled;
            writer_.finish(*s.reply_id, {s.text, s.ids, st::MessageState::Interrupted, s.stats});
        }
    }
}

// ---- properties ------------------------------------------------------------------------

void MessageListModel::setBackend(ChatBackend* backend) {
    if (backend == backend_) return;
    if (backend_) {
        backend_->disconnect(this);
        // The old backend's replies end here, as stopped with what they have: their later
        // events are no longer heard, and the new backend's ids may be the same numbers.
        std::vector<qint64> running;
        for (const auto& [id, s] : streams_)
            if (!s.ended) running.push_back(id);
        for (qint64 id : running) {
            backend_->cancel(id);
            const Stream& s = streams_.at(id);
            sched::Event e;
            e.kind = sched::EventKind::Finished;
            e.request = id;
            e.stop = StopReason::Cancelled;
            e.text = s.text.mid(s.base_text.size()).toStdString();
            e.tokens.assign(s.ids.begin() + static_cast<std::ptrdiff_t>(s.base_ids.size()),
                            s.ids.end());
            on_event(e);
        }
    }
    backend_ = backend;
    if (backend_) {
        connect(backend_, &ChatBackend::requestEvent, this, &MessageListModel::on_event);
        connect(backend_, &ChatBackend::readyChanged, this, &MessageListModel::emit_state_changes);
        // A model opened under an open conversation (the app's start): read its KV back.
        connect(backend_, &ChatBackend::readyChanged, this, [this] {
            if (!backend_->ready() || conversation_ < 0) return;
            prefetch_pending_ = true;
            reload();
        });
    }
    emit backendChanged();
    emit_state_changes();
}

QObject* MessageListModel::storeObject() const {
    return store_;
}
void MessageListModel::setStoreObject(QObject* store) {
    setStore(qobject_cast<st::AsyncStore*>(store));
}

void MessageListModel::setStore(st::AsyncStore* store) {
    if (store == store_) return;
    if (store_) store_->disconnect(this);
    store_ = store;
    writer_.set_store(store);
    if (store_) {
        connect(store_, &st::AsyncStore::threadChanged, this, [this](qint64 conversation) {
            if (conversation == conversation_) reload();
        });
        connect(store_, &st::AsyncStore::storeOpened, this, &MessageListModel::reload);
        // A rename (or the first message's title) elsewhere: the open chat's record again.
        connect(store_, &st::AsyncStore::conversationsChanged, this,
                &MessageListModel::refresh_record);
    }
    emit storeChanged();
    reload();
    emit_state_changes();
}

void MessageListModel::setSettings(AppSettings* settings) {
    if (settings == settings_) return;
    if (settings_) settings_->disconnect(this);
    settings_ = settings;
    if (settings_)
        connect(settings_, &AppSettings::maxReplyTokensChanged, this,
                &MessageListModel::settingsChanged);
    emit settingsChanged();
}

void MessageListModel::setConversationId(qint64 id) {
    if (id < 0) id = -1;
    if (id == conversation_) return;
    conversation_ = id;
    beginResetModel();
    rows_.clear();
    segments_.clear();
    pending_updates_.clear();
    endResetModel();
    conversation_record_.reset();
    persona_.reset();
    fork_origin_.reset();
    emit conversationIdChanged();
    emit countChanged();
    emit conversationLoaded();
    emit titleChanged();
    emit contextChanged();
    emit_state_changes();
    prefetch_pending_ = true;
    reload();
}

int MessageListModel::maxReplyTokens() const {
    if (max_reply_tokens_) return *max_reply_tokens_;
    return settings_ ? settings_->maxReplyTokens() : AppSettings::kMaxReplyTokensDefault;
}

void MessageListModel::setMaxReplyTokens(int n) {
    n = std::max(1, n);
    if (max_reply_tokens_ == n) return;
    max_reply_tokens_ = n;
    emit settingsChanged();
}

ReplyDefaults MessageListModel::reply_defaults(qint64 conversation) const {
    ReplyDefaults d;
    if (settings_) {
        d.overflow = settings_->overflowPolicy();
        d.keep = settings_->contextKeep();
        d.speculate = settings_->speculate();
    }
    if (const auto it = overflow_.find(conversation); it != overflow_.end())
        d.overflow = it->second;
    d.sampling = default_sampling_ ? *default_sampling_
                 : settings_       ? settings_->samplingParams()
                                   : SamplingParams{};
    d.max_tokens = maxReplyTokens();
    d.stop_at_end_of_turn = stop_at_end_of_turn_;
    // The open model's own defaults: a local model's (a server's model is not that file).
    if (settings_ && backend_ && !backend_->remote()) d.model = settings_->modelSamplingSettings();
    return d;
}

bool MessageListModel::busy(qint64 conversation) const {
    if (setting_up_.count(conversation)) return true;
    for (const auto& [id, s] : streams_)
        if (s.conversation == conversation && !s.ended) return true;
    return false;
}

QVariantList MessageListModel::busyConversations() const {
    std::set<qint64> ids;
    for (const auto& [conversation, n] : setting_up_) ids.insert(conversation);
    for (const auto& [id, s] : streams_)
        if (!s.ended) ids.insert(s.conversation);
    QVariantList out;
    for (qint64 id : ids) out.append(id);
    return out;
}

bool MessageListModel::generating() const {
    return conversation_ >= 0 && busy(conversation_);
}

bool MessageListModel::canSend() const {
    return conversation_ >= 0 && store_ && backend_ && backend_->ready() && conversation_record_ &&
           !busy(conversation_);
}

QVariantMap MessageListModel::conversationSampling() const {
    return conversation_record_ ? to_variant_map(conversation_record_->sampling) : QVariantMap();
}

QVariantMap MessageListModel::personaSampling() const {
    return persona_ ? to_variant_map(persona_->sampling) : QVariantMap();
}

QVariantMap MessageListModel::forkOrigin() const {
    if (!fork_origin_) return {};
    return {
        {QStringLiteral("conversationId"), QVariant::fromValue<qint64>(fork_origin_->conversation)},
        {QStringLiteral("messageId"), QVariant::fromValue<qint64>(fork_origin_->message)},
        {QStringLiteral("title"), fork_origin_->title}};
}

void MessageListModel::setConversationSampling(const QVariantMap& settings) {
    if (!store_ || !conversation_record_) return;
    st::Conversation c = *conversation_record_;
    c.sampling = sampling_settings_from(settings);
    if (c.sampling == conversation_record_->sampling) return;
    conversation_record_ = c;
    emit conversationLoaded();
    QPointer<MessageListModel> self(this);
    store_->update_conversation(c, [self](Result<void> r) {
        if (self && !r) self->set_error(error_text(r.error()));
    });
}

bool MessageListModel::choosePersona(qint64 personaId) {
    if (!store_ || !conversation_record_ || !rows_.empty() || generating()) return false;
    st::Conversation c = *conversation_record_;
    c.persona_id = personaId >= 0 ? std::optional<st::Id>(personaId) : std::nullopt;
    if (c.persona_id == conversation_record_->persona_id) return true;
    QPointer<MessageListModel> self(this);
    const qint64 id = conversation_;
    store_->update_conversation(c, [self, id](Result<void> r) {
        if (!self) return;
        if (!r) return self->set_error(error_text(r.error()));
        if (id == self->conversation_) self->reload();  // the persona's record and name
    });
    return true;
}

int MessageListModel::droppedMessages() const {
    auto it = dropped_.find(conversation_);
    return it == dropped_.end() ? 0 : it->second;
}

void MessageListModel::emit_state_changes() {
    const bool g = generating();
    const bool c = canSend();
    if (g != last_generating_) {
        last_generating_ = g;
        emit generatingChanged();
    }
    if (c != last_can_send_) {
        last_can_send_ = c;
        emit canSendChanged();
    }
    if (QVariantList busy = busyConversations(); busy != last_busy_) {
        last_busy_ = std::move(busy);
        emit busyConversationsChanged();
    }
}

void MessageListModel::set_error(const QString& error) {
    if (!error.isEmpty()) log::get("app")->warn("chat: {}", error.toStdString());
    if (error == error_) return;
    error_ = error;
    emit errorStringChanged();
}

// ---- the model -------------------------------------------------------------------------

QVariantList MessageListModel::sources_of(int row) const {
    QVariantList out;
    const st::Message& m = rows_[static_cast<size_t>(row)].message;
    if (m.role != st::Role::Assistant || row == 0) return out;
    const st::Message& asked = rows_[static_cast<size_t>(row) - 1].message;
    if (!m.parent_id || asked.id != *m.parent_id) return out;
    for (const st::Source& s : asked.sources) {
        // Its heading line (a Markdown heading, or the title line that is its section) is
        // shown apart, as the section.
        QString body = s.text;
        const QString first_line = body.section(QLatin1Char('\n'), 0, 0);
        if (body.contains(QLatin1Char('\n')) &&
            (first_line.startsWith(QLatin1Char('#')) ||
             (!s.heading.isEmpty() && s.heading.endsWith(first_line.trimmed()))))
            body = body.mid(body.indexOf(QLatin1Char('\n')) + 1);
        QString snippet = body.simplified();
        if (snippet.size() > 160) snippet = snippet.left(159) + QChar(0x2026);
        out << QVariantMap{
            {QStringLiteral("name"), s.name},
            {QStringLiteral("heading"), s.heading},
            {QStringLiteral("snippet"), snippet},
            {QStringLiteral("path"), s.path},
            {QStringLiteral("url"), QUrl::fromLocalFile(s.path).toString()},
            {QStringLiteral("exists"), !s.path.isEmpty() && QFileInfo::exists(s.path)}};
    }
    return out;
}

int MessageListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
    return {
        {MessageIdRole, "messageId"},
        {RoleRole, "role"},
        {TextRole, "text"},
        {StateRole, "state"},
        {VariantIndexRole, "variantIndex"},
        {VariantCountRole, "variantCount"},
        {TtftMsRole, "ttftMs"},
        {TokensPerSecondRole, "tokensPerSecond"},
        {PromptTokensCachedRole, "promptTokensCached"},
        {PromptTokensComputedRole, "promptTokensComputed"},
        {GeneratedTokensRole, "generatedTokens"},
        {InContextRole, "inContext"},
        {ErrorRole, "error"},
        {CreatedAtRole, "createdAt"},
        {ParentIdRole, "parentId"},
        {PrefillProgressRole, "prefillProgress"},
        {SegmentsRole, "segments"},
        {FinishReasonRole, "finishReason"},
        {SeedRole, "seed"},
        {ReasoningRole, "reasoning"},
        {ReasoningStateRole, "reasoningState"},
        {ReasoningSecondsRole, "reasoningSeconds"},
        {AnswerRole, "answer"},
        {MessagesDroppedRole, "messagesDropped"},
        {PromptTokensShiftedRole, "promptTokensShifted"},
        {PromptTokensLoadedRole, "promptTokensLoaded"},
        {SourcesRole, "sources"},
        {DraftTokensRole, "draftTokens"},
        {DraftAcceptedRole, "draftAccepted"},
    };
}

const MessageListModel::Stream* MessageListModel::stream_for(st::Id message_id) const {
    for (const auto& [id, s] : streams_)
        if (s.reply_id == message_id) return &s;
    return nullptr;
}

bool MessageListModel::in_context(int row) const {
    const int dropped = droppedMessages();
    if (dropped <= 0) return true;
    const bool has_system = !rows_.empty() && rows_.front().message.role == st::Role::System;
    if (rows_[static_cast<size_t>(row)].message.role == st::Role::System && row == 0) return true;
    const int first_kept = dropped + (has_system ? 1 : 0);
    return row >= first_kept;
}

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const st::ThreadEntry& e = rows_[static_cast<size_t>(index.row())];
    const st::Message& m = e.message;
    const Stream* s = m.role == st::Role::Assistant ? stream_for(m.id) : nullptr;
    const bool live = s && !s->ended;
    const st::GenerationStats& stats = s ? s->stats : m.stats;
    switch (role) {
        case MessageIdRole:
            return QVariant::fromValue<qint64>(m.id);
        case RoleRole:
            return st::role_name(m.role);
        case Qt::DisplayRole:
        case TextRole:
            return s ? s->text : m.text;
        case SegmentsRole:
            if (m.role != st::Role::Assistant) return segments_.of(m.id, m.text);
            return segments_.of(m.id, reply_parts(s ? s->text : m.text).answer);
        case AnswerRole:
            if (m.role != st::Role::Assistant) return m.text;
            return reply_parts(s ? s->text : m.text).answer;
        case ReasoningRole:
            if (m.role != st::Role::Assistant) return QString();
            return reply_parts(s ? s->text : m.text).reasoning;
        case ReasoningStateRole: {
            if (m.role != st::Role::Assistant) return QString();
            const ReplyParts p = reply_parts(s ? s->text : m.text);
            if (!p.has_reasoning) return QString();
            return p.thinking && live ? QStringLiteral("thinking") : QStringLiteral("done");
        }
        case ReasoningSecondsRole:
            if (live && !s->reasoning_closed)
                return s->clock.isValid() ? static_cast<double>(s->clock.elapsed()) / 1000.0 : 0.0;
            return stats.reasoning_ms ? *stats.reasoning_ms / 1000.0 : -1.0;
        case StateRole:
            if (live) return QStringLiteral("streaming");
            return message_state_name(s ? s->end_state : m.state);
        case VariantIndexRole:
            return e.variant_index;
        case VariantCountRole:
            return e.variant_count;
        case TtftMsRole:
            return live ? -1.0 : stats.ttft_ms.value_or(-1.0);
        case TokensPerSecondRole:
            return live ? 0.0 : stats.tokens_per_second.value_or(0.0);
        case PromptTokensCachedRole:
            return static_cast<int>(stats.prompt_tokens_cached.value_or(0));
        case PromptTokensComputedRole:
            return static_cast<int>(stats.prompt_tokens_computed.value_or(0));
        case MessagesDroppedRole:
            return static_cast<int>(stats.messages_dropped.value_or(0));
        case PromptTokensShiftedRole:
            return static_cast<int>(stats.prompt_tokens_shifted.value_or(0));
        case PromptTokensLoadedRole:
            return static_cast<int>(stats.prompt_tokens_loaded.value_or(-1));
        case SourcesRole:
            return sources_of(index.row());
        case DraftTokensRole:
            return static_cast<int>(stats.draft_tokens.value_or(0));
        case DraftAcceptedRole:
            return static_cast<int>(stats.draft_accepted.value_or(0));
        case GeneratedTokensRole:
            return static_cast<int>(live ? s->base_tokens + s->new_tokens
                                         : stats.generated_tokens.value_or(0));
        case InContextRole:
            return in_context(index.row());
        case ErrorRole:  // why it failed: the stream's, or kept by the history
            return stats.error.value_or(QString());
        case CreatedAtRole:
            return m.created_at;
        case ParentIdRole:
            return QVariant::fromValue<qint64>(m.parent_id.value_or(-1));
        case PrefillProgressRole:
            if (!live || s->new_tokens > 0 || s->prefill_total <= 0) return -1.0;
            return static_cast<double>(s->prefill_done) / static_cast<double>(s->prefill_total);
        case FinishReasonRole:
            return live ? QString() : finish_text(stats.finish_reason);
        case SeedRole:
            return stats.seed ? QString::number(*stats.seed) : QString();
        default:
            return {};
    }
}

int MessageListModel::rowOf(qint64 messageId) const {
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].message.id == messageId) return static_cast<int>(i);
    return -1;
}

QVariantMap MessageListModel::get(int row) const {
    QVariantMap map;
    if (row < 0 || row >= count()) return map;
    const QModelIndex i = index(row);
    const auto names = roleNames();
    for (auto it = names.begin(); it != names.end(); ++it)
        map.insert(QString::fromLatin1(it.value()), data(i, it.key()));
    return map;
}

void MessageListModel::update_row(st::Id message_id, const QList<int>& roles) {
    pending_updates_.erase(message_id);
    const int row = rowOf(message_id);
    if (row < 0) return;
    emit dataChanged(index(row), index(row), roles);
}

void MessageListModel::update_row_soon(st::Id message_id, const QList<int>& roles) {
    QList<int>& pending = pending_updates_[message_id];
    for (int r : roles)
        if (!pending.contains(r)) pending.append(r);
    if (!flush_timer_.isActive()) flush_timer_.start();
}

void MessageListModel::flush_updates() {
    auto pending = std::exchange(pending_updates_, {});
    for (const auto& [id, roles] : pending) {
        const int row = rowOf(id);
        if (row >= 0) emit dataChanged(index(row), index(row), roles);
    }
}
