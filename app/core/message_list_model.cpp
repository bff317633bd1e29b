#include "core/message_list_model.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QRandomGenerator>

#include <algorithm>

#include "chat/prompt_builder.h"
#include "common/log.h"
#include "core/sampling_settings_map.h"

using namespace hearth;
namespace st = hearth::store;

namespace {

QString state_text(st::MessageState s) {
    switch (s) {
        case st::MessageState::Complete: return QStringLiteral("done");
        case st::MessageState::Streaming: return QStringLiteral("streaming");
        case st::MessageState::Interrupted: return QStringLiteral("stopped");
        case st::MessageState::Failed: return QStringLiteral("error");
    }
    return QString();
}

QString finish_text(const std::optional<st::FinishReason>& r) {
    if (!r) return QString();
    switch (*r) {
        case st::FinishReason::Stop: return QStringLiteral("stop");
        case st::FinishReason::Length: return QStringLiteral("length");
        case st::FinishReason::Cancelled: return QStringLiteral("cancelled");
        case st::FinishReason::Error: return QStringLiteral("error");
    }
    return QString();
}

st::FinishReason finish_reason_of(StopReason r) {
    switch (r) {
        case StopReason::MaxTokens: return st::FinishReason::Length;
        case StopReason::Cancelled: return st::FinishReason::Cancelled;
        default: return st::FinishReason::Stop;
    }
}

bool same_entry(const st::ThreadEntry& a, const st::ThreadEntry& b) {
    return a.message.id == b.message.id && a.message.text == b.message.text &&
           a.message.state == b.message.state && a.message.stats == b.message.stats &&
           a.variant_index == b.variant_index && a.variant_count == b.variant_count &&
           a.message.updated_at == b.message.updated_at;
}

QString qerr(const Error& e) { return QString::fromStdString(e.message); }

// Reads a conversation, its persona and its active thread (on the store's thread).
Result<ThreadSnapshot> read_snapshot(st::Store& s, qint64 conversation) {
    auto c = s.conversation(conversation);
    if (!c) return c.error();
    ThreadSnapshot snap;
    snap.conversation = *c;
    if (c->persona_id) {
        if (auto p = s.persona(*c->persona_id)) snap.persona = *p;  // may be deleted
    }
    auto thread = s.active_thread(conversation);
    if (!thread) return thread.error();
    snap.thread = std::move(*thread);
    return snap;
}

}  // namespace

MessageListModel::MessageListModel(QObject* parent) : RowListModel(parent) {
    flush_timer_.setSingleShot(true);
    flush_timer_.setInterval(kUpdateIntervalMs);
    connect(&flush_timer_, &QTimer::timeout, this, &MessageListModel::flush_updates);
}

MessageListModel::~MessageListModel() {
    // Replies still streaming keep their text in the store: stop them, and write what
    // they have as interrupted (the store finishes the writes when it closes).
    for (auto& [id, s] : streams_) {
        if (bridge_) bridge_->cancel(id);
        if (s.reply_id && !s.ended) {
            s.stats.finish_reason = st::FinishReason::Cancelled;
            writer_.finish(*s.reply_id, {s.text, s.ids, st::MessageState::Interrupted, s.stats});
        }
    }
}

// ---- properties ------------------------------------------------------------------------

void MessageListModel::setBridge(EngineBridge* bridge) {
    if (bridge == bridge_) return;
    if (bridge_) bridge_->disconnect(this);
    bridge_ = bridge;
    if (bridge_) {
        connect(bridge_, &EngineBridge::requestEvent, this, &MessageListModel::on_event);
        connect(bridge_, &EngineBridge::modelChanged, this, &MessageListModel::emit_state_changes);
    }
    emit bridgeChanged();
    emit_state_changes();
}

QObject* MessageListModel::storeObject() const { return store_; }
void MessageListModel::setStoreObject(QObject* store) { setStore(qobject_cast<st::AsyncStore*>(store)); }

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
    }
    emit storeChanged();
    reload();
    emit_state_changes();
}

void MessageListModel::setSettings(AppSettings* settings) {
    if (settings == settings_) return;
    if (settings_) settings_->disconnect(this);
    settings_ = settings;
    if (settings_) connect(settings_, &AppSettings::maxReplyTokensChanged, this, &MessageListModel::settingsChanged);
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
    emit conversationIdChanged();
    emit countChanged();
    emit conversationLoaded();
    emit contextChanged();
    emit_state_changes();
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

ReplyDefaults MessageListModel::reply_defaults() const {
    ReplyDefaults d;
    d.sampling = default_sampling_ ? *default_sampling_ : settings_ ? settings_->samplingParams() : SamplingParams{};
    d.max_tokens = maxReplyTokens();
    d.stop_at_end_of_turn = stop_at_end_of_turn_;
    return d;
}

bool MessageListModel::busy(qint64 conversation) const {
    if (setting_up_.count(conversation)) return true;
    for (const auto& [id, s] : streams_)
        if (s.conversation == conversation && !s.ended) return true;
    return false;
}

bool MessageListModel::generating() const { return conversation_ >= 0 && busy(conversation_); }

bool MessageListModel::canSend() const {
    return conversation_ >= 0 && store_ && bridge_ && bridge_->loaded() && conversation_record_ &&
           !busy(conversation_);
}

QVariantMap MessageListModel::conversationSampling() const {
    return conversation_record_ ? to_variant_map(conversation_record_->sampling) : QVariantMap();
}

QVariantMap MessageListModel::personaSampling() const {
    return persona_ ? to_variant_map(persona_->sampling) : QVariantMap();
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
        if (self && !r) self->set_error(qerr(r.error()));
    });
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
}

void MessageListModel::set_error(const QString& error) {
    if (!error.isEmpty()) log::get("app")->warn("chat: {}", error.toStdString());
    if (error == error_) return;
    error_ = error;
    emit errorStringChanged();
}

// ---- the model -------------------------------------------------------------------------

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
        case MessageIdRole: return QVariant::fromValue<qint64>(m.id);
        case RoleRole: return st::role_name(m.role);
        case Qt::DisplayRole:
        case TextRole: return s ? s->text : m.text;
        case SegmentsRole: return segments_.of(m.id, s ? s->text : m.text);
        case StateRole:
            if (live) return QStringLiteral("streaming");
            return state_text(s ? s->end_state : m.state);
        case VariantIndexRole: return e.variant_index;
        case VariantCountRole: return e.variant_count;
        case TtftMsRole: return live ? -1.0 : stats.ttft_ms.value_or(-1.0);
        case TokensPerSecondRole: return live ? 0.0 : stats.tokens_per_second.value_or(0.0);
        case PromptTokensCachedRole: return static_cast<int>(stats.prompt_tokens_cached.value_or(0));
        case PromptTokensComputedRole: return static_cast<int>(stats.prompt_tokens_computed.value_or(0));
        case GeneratedTokensRole:
            return static_cast<int>(live ? s->base_tokens + s->new_tokens : stats.generated_tokens.value_or(0));
        case InContextRole: return in_context(index.row());
        case ErrorRole: {
            if (s && !s->error.isEmpty()) return s->error;
            auto it = errors_.find(m.id);
            return it == errors_.end() ? QString() : it->second;
        }
        case CreatedAtRole: return m.created_at;
        case ParentIdRole: return QVariant::fromValue<qint64>(m.parent_id.value_or(-1));
        case PrefillProgressRole:
            if (!live || s->new_tokens > 0 || s->prefill_total <= 0) return -1.0;
            return static_cast<double>(s->prefill_done) / static_cast<double>(s->prefill_total);
        case FinishReasonRole: return live ? QString() : finish_text(stats.finish_reason);
        case SeedRole: return stats.seed ? QString::number(*stats.seed) : QString();
        default: return {};
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

// ---- loading ---------------------------------------------------------------------------

void MessageListModel::reload() {
    const int serial = ++reload_serial_;
    if (conversation_ < 0 || !store_ || !store_->isOpen()) {  // storeOpened() reloads
        if (!rows_.empty()) apply_thread({});
        return;
    }
    const qint64 conversation = conversation_;
    QPointer<MessageListModel> self(this);
    store_->run<ThreadSnapshot>([conversation](st::Store& s) { return read_snapshot(s, conversation); },
                                [self, serial, conversation](Result<ThreadSnapshot> r) {
                                    if (!self || serial != self->reload_serial_ || conversation != self->conversation_)
                                        return;
                                    if (!r) return self->set_error(qerr(r.error()));
                                    self->apply_snapshot(*r);
                                });
}

void MessageListModel::apply_snapshot(const ThreadSnapshot& snap) {
    conversation_record_ = snap.conversation;
    persona_ = snap.persona;
    emit conversationLoaded();
    apply_thread(snap.thread);
    emit_state_changes();
}

void MessageListModel::apply_thread(std::vector<st::ThreadEntry> thread) {
    writer_.patch(thread);
    if (merge_rows(rows_, std::move(thread),
                   [](const st::ThreadEntry& a, const st::ThreadEntry& b) { return a.message.id == b.message.id; },
                   same_entry))
        emit countChanged();
    segments_.retain([this](qint64 id) { return rowOf(id) >= 0; });
    try_reveal();
}

void MessageListModel::revealMessage(qint64 messageId) {
    reveal_ = messageId;
    reveal_selected_ = false;
    if (conversation_record_) try_reveal();
}

void MessageListModel::try_reveal() {
    if (!reveal_) return;
    const int row = rowOf(*reveal_);
    if (row >= 0) {
        reveal_.reset();
        emit messageRevealed(row);
        return;
    }
    if (reveal_selected_ || !store_ || conversation_ < 0) return;  // its branch is being shown
    // On another branch: show that branch and read the thread in one store job, so that no
    // snapshot read before the switch can be taken for the answer.
    reveal_selected_ = true;
    const st::Id id = *reveal_;
    const qint64 conversation = conversation_;
    const int serial = ++reload_serial_;  // supersedes reloads issued before
    QPointer<MessageListModel> self(this);
    store_->run<ThreadSnapshot>(
        [id, conversation](st::Store& s) -> Result<ThreadSnapshot> {
            if (auto shown = s.select_message(id); !shown) return shown.error();
            return read_snapshot(s, conversation);
        },
        [self, serial, conversation](Result<ThreadSnapshot> r) {
            if (!self || conversation != self->conversation_) return;
            if (!r) {
                self->reveal_.reset();
                return self->set_error(qerr(r.error()));
            }
            if (serial != self->reload_serial_) return;  // a later reload has the answer
            self->apply_snapshot(*r);                     // reveals it when it is there
            self->reveal_.reset();                        // not in this conversation at all
        });
}

// ---- actions ---------------------------------------------------------------------------

bool MessageListModel::send(const QString& text) {
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty() || !canSend()) return false;
    const chat::PromptBuilder* builder = bridge_->promptBuilder();
    st::MessageDraft draft;
    draft.role = st::Role::User;
    draft.text = trimmed;
    draft.token_ids = builder->encode_content(chat::Role::User, trimmed.toStdString());
    draft.token_fingerprint = bridge_->fingerprint();
    const qint64 conversation = conversation_;
    const bool first_message = std::none_of(rows_.begin(), rows_.end(), [](const st::ThreadEntry& e) {
        return e.message.role == st::Role::User;
    });
    ++setting_up_[conversation];
    set_error(QString());
    emit_state_changes();
    QPointer<MessageListModel> self(this);
    store_->append_message(conversation, draft, [self, conversation, trimmed, first_message](Result<st::Message> r) {
        if (!self) return;
        if (!r) {
            self->set_error(qerr(r.error()));
            self->setup_done(conversation);
            return;
        }
        // A new conversation is named after its first message.
        if (first_message && self->store_ && self->conversation_record_ &&
            self->conversation_record_->id == conversation) {
            st::Conversation c = *self->conversation_record_;
            if (c.title.isEmpty() || c.title == QLatin1String("New chat")) {
                QString title = trimmed.simplified();
                if (title.size() > 48) title = title.left(47) + QChar(0x2026);
                c.title = title;
                self->store_->update_conversation(c);
            }
        }
        self->start_reply(conversation, r->id);
    });
    return true;
}

void MessageListModel::setup_done(qint64 conversation) {
    auto it = setting_up_.find(conversation);
    if (it != setting_up_.end() && --it->second <= 0) setting_up_.erase(it);
    emit_state_changes();
}

void MessageListModel::start_reply(qint64 conversation, st::Id parent_id, std::optional<st::Id> continue_reply) {
    QPointer<MessageListModel> self(this);
    if (!store_) {
        setup_done(conversation);
        return;
    }
    // The snapshot read here counts as a reload issued now: it supersedes reloads issued
    // before (read earlier) and is superseded by any issued after (read later).
    const int serial = conversation == conversation_ ? ++reload_serial_ : -1;
    store_->run<ThreadSnapshot>(
        [conversation](st::Store& s) { return read_snapshot(s, conversation); },
        [self, conversation, parent_id, continue_reply, serial](Result<ThreadSnapshot> r) {
            if (!self) return;
            MessageListModel& m = *self;
            const bool stop_requested = m.stop_requested_.erase(conversation) > 0;
            auto fail = [&](const QString& why) {
                m.set_error(why);
                m.setup_done(conversation);
            };
            if (!r) return fail(qerr(r.error()));
            if (conversation == m.conversation_ && serial == m.reload_serial_) m.apply_snapshot(*r);
            if (stop_requested) return m.setup_done(conversation);
            const chat::PromptBuilder* builder = m.bridge_ ? m.bridge_->promptBuilder() : nullptr;
            if (!builder) return fail(QStringLiteral("No model is loaded."));
            const QString fingerprint = m.bridge_->fingerprint();
            auto plan = plan_reply(*r, parent_id, continue_reply, *builder, fingerprint, m.bridge_->contextLength(),
                                   m.reply_defaults(), QRandomGenerator::global()->generate64());
            if (!plan) return fail(QString::fromStdString(plan.message()));
            if (m.dropped_[conversation] != plan->dropped) {
                m.dropped_[conversation] = plan->dropped;
                if (conversation == m.conversation_) {
                    emit m.contextChanged();
                    if (!m.rows_.empty()) emit m.dataChanged(m.index(0), m.index(m.count() - 1), {InContextRole});
                }
            }
            const std::uint64_t seed = plan->request.sampling.seed;
            const qint64 request_id = m.bridge_->submit(std::move(plan->request));
            if (request_id < 0) return fail(QStringLiteral("No model is loaded."));
            Stream& s = m.streams_[request_id];
            s.conversation = conversation;
            s.parent_id = parent_id;
            s.stats.seed = seed;
            m.setup_done(conversation);
            if (continue_reply) {
                // The reply exists (reopened): the new tokens go after what it has.
                for (const st::ThreadEntry& e : r->thread) {
                    if (e.message.id != *continue_reply) continue;
                    s.base_text = s.text = e.message.text;
                    s.base_ids = s.ids = e.message.token_ids;
                    s.base_tokens = e.message.stats.generated_tokens.value_or(
                        static_cast<std::int64_t>(e.message.token_ids.size()));
                }
                m.reply_begun(request_id, *continue_reply);
                return;
            }
            m.store_->begin_reply(conversation, parent_id, fingerprint, [self, request_id](Result<st::Id> reply) {
                if (self) self->reply_begun(request_id, std::move(reply));
            });
        });
}

void MessageListModel::reply_begun(qint64 request_id, Result<st::Id> reply) {
    auto it = streams_.find(request_id);
    if (it == streams_.end()) return;
    Stream& s = it->second;
    if (!reply) {
        set_error(qerr(reply.error()));
        s.begin_failed = true;
        if (bridge_) bridge_->cancel(request_id);
        if (s.ended) streams_.erase(it);
        emit_state_changes();
        return;
    }
    s.reply_id = *reply;
    emit replyStarted(*reply);
    if (s.ended) {
        end_stream(request_id);
    } else {
        if (s.new_tokens > 0) writer_.update(*s.reply_id, s.text, s.ids, true);
        update_row(*s.reply_id);  // a continued reply is on screen already
    }
    // A new reply's row arrives with the reload that begin_reply's threadChanged starts.
}

void MessageListModel::on_event(const sched::Event& e) {
    auto it = streams_.find(e.request);
    if (it == streams_.end()) return;
    Stream& s = it->second;
    const bool on_screen = s.reply_id && s.conversation == conversation_;
    switch (e.kind) {
        case sched::EventKind::PrefillProgress:
            s.prefill_done = e.prefill_done;
            s.prefill_total = e.prefill_total;
            if (on_screen) update_row_soon(*s.reply_id, {PrefillProgressRole});
            return;
        case sched::EventKind::Token:
            s.text += QString::fromStdString(e.text);
            if (e.token >= 0) s.ids.push_back(e.token);
            ++s.new_tokens;
            if (s.reply_id) writer_.update(*s.reply_id, s.text, s.ids);
            if (!on_screen) return;
            // The first token is shown at once (the time to first token is what a user
            // waits for); later ones are folded into the next frame's update.
            if (s.new_tokens == 1)
                update_row(*s.reply_id, {TextRole, SegmentsRole, GeneratedTokensRole, PrefillProgressRole});
            else
                update_row_soon(*s.reply_id, {TextRole, SegmentsRole, GeneratedTokensRole});
            return;
        case sched::EventKind::Finished:
            s.text = s.base_text + QString::fromStdString(e.text);
            s.ids = s.base_ids;
            s.ids.insert(s.ids.end(), e.tokens.begin(), e.tokens.end());
            s.new_tokens = static_cast<std::int32_t>(e.tokens.size());
            s.end_state = e.stop == StopReason::Cancelled ? st::MessageState::Interrupted : st::MessageState::Complete;
            s.stats.finish_reason = finish_reason_of(e.stop);
            break;
        case sched::EventKind::Error:
            s.end_state = st::MessageState::Failed;
            s.stats.finish_reason = st::FinishReason::Error;
            s.error = QString::fromStdString(e.error);
            set_error(s.error);
            break;
    }
    s.ended = true;
    const sched::RequestStats& rs = e.stats;
    if (rs.ttft_ms > 0) s.stats.ttft_ms = rs.ttft_ms;
    if (rs.decode_tokens_per_s() > 0) s.stats.tokens_per_second = rs.decode_tokens_per_s();
    s.stats.prompt_tokens_cached = rs.prompt_tokens_cached;
    s.stats.prompt_tokens_computed = rs.prompt_tokens_computed;
    s.stats.generated_tokens = s.base_tokens + s.new_tokens;
    if (s.begin_failed) {
        streams_.erase(it);
        emit_state_changes();
        return;
    }
    if (s.reply_id) end_stream(e.request);
    emit_state_changes();
}

void MessageListModel::end_stream(qint64 request_id) {
    auto it = streams_.find(request_id);
    if (it == streams_.end() || !it->second.reply_id) return;
    Stream s = std::move(it->second);
    const st::Id reply = *s.reply_id;
    const qint64 conversation = s.conversation;
    // Show the end in the row now; the store's copy follows.
    if (conversation == conversation_) {
        const int row = rowOf(reply);
        if (row >= 0) {
            st::Message& m = rows_[static_cast<size_t>(row)].message;
            m.text = s.text;
            m.token_ids = s.ids;
            m.state = s.end_state;
            m.stats = s.stats;
        }
    }
    if (!s.error.isEmpty()) errors_[reply] = s.error;
    streams_.erase(it);
    if (conversation == conversation_) update_row(reply);
    QPointer<MessageListModel> self(this);
    writer_.finish(reply, {s.text, s.ids, s.end_state, s.stats}, [self, conversation](Result<void> r) {
        if (!self) return;
        if (!r) self->set_error(qerr(r.error()));
        if (conversation == self->conversation_) self->reload();
    });
    emit replyFinished(reply, state_text(s.end_state));
    emit_state_changes();
}

void MessageListModel::stop() {
    if (conversation_ < 0) return;
    if (setting_up_.count(conversation_)) stop_requested_[conversation_] = true;
    for (const auto& [id, s] : streams_)
        if (s.conversation == conversation_ && !s.ended && bridge_) bridge_->cancel(id);
}

bool MessageListModel::regenerate() {
    if (!canSend() || rows_.empty()) return false;
    const st::Message& last = rows_.back().message;
    st::Id parent = 0;
    if (last.role == st::Role::Assistant) {
        if (!last.parent_id) return false;
        parent = *last.parent_id;
    } else {
        parent = last.id;
    }
    ++setting_up_[conversation_];
    set_error(QString());
    emit_state_changes();
    start_reply(conversation_, parent);
    return true;
}

bool MessageListModel::canContinue(qint64 messageId) const {
    if (!canSend() || rows_.empty()) return false;
    const st::Message& last = rows_.back().message;
    if (last.id != messageId || last.role != st::Role::Assistant || !last.parent_id) return false;
    if (last.token_fingerprint != bridge_->fingerprint() || last.token_ids.empty()) return false;
    return last.stats.finish_reason == st::FinishReason::Length || last.state == st::MessageState::Interrupted;
}

bool MessageListModel::continueReply(qint64 messageId) {
    if (!canContinue(messageId)) return false;
    const st::Id parent = *rows_.back().message.parent_id;
    const qint64 conversation = conversation_;
    ++setting_up_[conversation];
    set_error(QString());
    emit_state_changes();
    QPointer<MessageListModel> self(this);
    store_->reopen_reply(messageId, [self, conversation, parent, messageId](Result<void> r) {
        if (!self) return;
        if (!r) {
            self->set_error(qerr(r.error()));
            self->setup_done(conversation);
            return;
        }
        self->start_reply(conversation, parent, messageId);
    });
    return true;
}

bool MessageListModel::editAndResend(qint64 messageId, const QString& text) {
    const QString trimmed = text.trimmed();
    const int row = rowOf(messageId);
    if (trimmed.isEmpty() || row < 0 || !canSend()) return false;
    if (rows_[static_cast<size_t>(row)].message.role != st::Role::User) return false;
    st::MessageDraft draft;
    draft.role = st::Role::User;
    draft.text = trimmed;
    draft.token_ids = bridge_->promptBuilder()->encode_content(chat::Role::User, trimmed.toStdString());
    draft.token_fingerprint = bridge_->fingerprint();
    const qint64 conversation = conversation_;
    ++setting_up_[conversation];
    set_error(QString());
    emit_state_changes();
    QPointer<MessageListModel> self(this);
    store_->edit_message(messageId, draft, [self, conversation](Result<st::Message> r) {
        if (!self) return;
        if (!r) {
            self->set_error(qerr(r.error()));
            self->setup_done(conversation);
            return;
        }
        self->start_reply(conversation, r->id);
    });
    return true;
}

void MessageListModel::pageVariant(qint64 messageId, int delta) {
    if (!store_ || generating() || rowOf(messageId) < 0 || delta == 0) return;
    QPointer<MessageListModel> self(this);
    store_->page_variant(messageId, delta, [self](Result<st::Id> r) {
        if (self && !r) self->set_error(qerr(r.error()));
        // threadChanged reloads the thread.
    });
}

void MessageListModel::deleteMessage(qint64 messageId) {
    if (!store_ || generating() || rowOf(messageId) < 0) return;
    QPointer<MessageListModel> self(this);
    QPointer<st::AsyncStore> store = store_;
    store_->run<void>([messageId](st::Store& s) { return s.delete_message(messageId); },
                      [self, store](Result<void> r) {
                          if (!self) return;
                          if (!r) self->set_error(qerr(r.error()));
                          self->reload();
                          if (store) emit store->conversationsChanged();
                      });
}

void MessageListModel::copyText(qint64 messageId) const {
    const int row = rowOf(messageId);
    if (row < 0) return;
    if (auto* app = qobject_cast<QGuiApplication*>(QCoreApplication::instance()))
        app->clipboard()->setText(data(index(row), TextRole).toString());
}

bool MessageListModel::copyCode(qint64 messageId, int segment) const {
    const int row = rowOf(messageId);
    if (row < 0 || segment < 0) return false;
    const QVariantList segments = data(index(row), SegmentsRole).toList();
    if (segment >= segments.size()) return false;
    const QVariantMap seg = segments.at(segment).toMap();
    if (seg.value(QStringLiteral("kind")).toString() != QLatin1String("code")) return false;
    auto* app = qobject_cast<QGuiApplication*>(QCoreApplication::instance());
    if (!app) return false;
    app->clipboard()->setText(seg.value(QStringLiteral("text")).toString());
    return true;
}
