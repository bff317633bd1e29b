// MessageListModel: the replies being generated. A reply is planned from a fresh read of
// the thread (reply_planner.h), its message is created in the store, the request goes to
// the engine, and its events (tokens, progress, the end) update the row on screen, at
// most once a frame, and the store's copy (reply_writer.h).
#include "core/message_list_model.h"

#include <QDateTime>
#include <QRandomGenerator>

#include <algorithm>

#include "common/log.h"
#include "core/error_text.h"

using namespace hearth;
namespace st = hearth::store;

namespace {

st::FinishReason finish_reason_of(StopReason r) {
    switch (r) {
        case StopReason::MaxTokens:
            return st::FinishReason::Length;
        case StopReason::Cancelled:
            return st::FinishReason::Cancelled;
        default:
            return st::FinishReason::Stop;
    }
}

}  // namespace

void MessageListModel::prefetch_kv(const ThreadSnapshot& snap) {
    if (!backend_ || !backend_->ready() || !backend_->has_kv_cache()) return;
    const qint64 conversation = snap.conversation.id;
    const int dropped = backend_->prefetch(snap, reply_defaults(conversation));
    // What the model no longer sees is known before the next turn (after a restart too).
    if (dropped >= 0 && dropped_[conversation] != dropped) {
        dropped_[conversation] = dropped;
        if (conversation == conversation_) {
            emit contextChanged();
            if (!rows_.empty()) emit dataChanged(index(0), index(count() - 1), {InContextRole});
        }
    }
}

void MessageListModel::resolveContextFull(const QString& policy, bool remember) {
    if (!asked_) return;
    const Asked asked = *asked_;
    asked_.reset();
    emit contextFullChanged();
    const auto chosen = chat::parse_context_policy(policy.toStdString());
    if (!chosen ||
        (*chosen != chat::ContextPolicy::DropInSteps && *chosen != chat::ContextPolicy::Shift))
        return;
    overflow_[asked.conversation] = *chosen;
    if (remember && settings_) settings_->setContextOverflow(policy);
    ++setting_up_[asked.conversation];
    emit_state_changes();
    start_reply(asked.conversation, asked.parent_id, asked.continue_reply);
}

void MessageListModel::forgetKv(qint64 conversation) {
    // Issued before the store deletes the conversation: the store runs jobs in order, so
    // this read still sees it. Every branch: regenerated and edited turns too.
    // (A remote backend has no cache of ours to drop: nothing is read.)
    if (!store_ || !backend_ || !backend_->ready() || !backend_->has_kv_cache()) return;
    QPointer<MessageListModel> self(this);
    store_->run<std::vector<ThreadSnapshot>>(
        [conversation](st::Store& s) { return read_branch_snapshots(s, conversation); },
        [self, conversation](Result<std::vector<ThreadSnapshot>> r) {
            if (!self || !r || !self->backend_) return;
            for (const ThreadSnapshot& branch : *r)
                self->backend_->forget(branch, self->reply_defaults(conversation));
        });
}

void MessageListModel::start_reply(qint64 conversation, st::Id parent_id,
                                   std::optional<st::Id> continue_reply) {
    QPointer<MessageListModel> self(this);
    if (!store_) {
        setup_done(conversation);
        return;
    }
    // The snapshot read here counts as a reload issued now: it supersedes reloads issued
    // before (read earlier) and is superseded by any issued after (read later).
    const int serial = conversation == conversation_ ? ++reload_serial_ : -1;
    store_->run<ThreadSnapshot>(
        [conversation](st::Store& s) { return read_thread_snapshot(s, conversation); },
        [self, conversation, parent_id, continue_reply, serial](Result<ThreadSnapshot> r) {
            if (!self) return;
            MessageListModel& m = *self;
            const bool stop_requested = m.stop_requested_.erase(conversation) > 0;
            auto fail = [&](const QString& why) {
                m.set_error(why);
                m.setup_done(conversation);
            };
            if (!r) return fail(error_text(r.error()));
            if (conversation == m.conversation_ && serial == m.reload_serial_) m.apply_snapshot(*r);
            if (stop_requested) return m.setup_done(conversation);
            ChatBackend* backend = m.backend_;
            if (!backend || !backend->ready()) return fail(QStringLiteral("No model is loaded."));
            const QString fingerprint = backend->fingerprint();
            auto plan = plan_reply(*r, parent_id, continue_reply, fingerprint,
                                   m.reply_defaults(conversation),
                                   QRandomGenerator::global()->generate64());
            if (!plan) return fail(QString::fromStdString(plan.message()));
            const std::uint64_t seed = plan->request.sampling.seed;
            auto started = backend->start(plan->request);
            if (!started && started.error().code == chat::kContextFull) {
                // The model's setting is "ask": the reply waits for the user's answer.
                m.asked_ = Asked{conversation, parent_id, continue_reply,
                                 QString::fromStdString(started.message())};
                emit m.contextFullChanged();
                return m.setup_done(conversation);
            }
            if (!started) return fail(QString::fromStdString(started.message()));
            if (m.dropped_[conversation] != started->dropped) {
                m.dropped_[conversation] = started->dropped;
                if (conversation == m.conversation_) {
                    emit m.contextChanged();
                    if (!m.rows_.empty())
                        emit m.dataChanged(m.index(0), m.index(m.count() - 1), {InContextRole});
                }
            }
            const qint64 request_id = started->id;
            Stream& s = m.streams_[request_id];
            s.conversation = conversation;
            s.parent_id = parent_id;
            s.fingerprint = fingerprint;
            s.stats.seed = seed;
            if (started->dropped_now > 0) s.stats.messages_dropped = started->dropped_now;
            m.setup_done(conversation);
            if (continue_reply) {
                // The reply exists (reopened): the new tokens go after what it has.
                for (const st::ThreadEntry& e : r->thread) {
                    if (e.message.id != *continue_reply) continue;
                    s.base_text = s.text = e.message.text;
                    s.base_ids = s.ids = e.message.token_ids;
                    s.base_tokens = e.message.stats.generated_tokens.value_or(
                        static_cast<std::int64_t>(e.message.token_ids.size()));
                    s.stats.reasoning_ms = e.message.stats.reasoning_ms;
                    s.reasoning_closed = s.text.contains(QLatin1String("</think>"));
                }
                s.continued = true;
                m.reply_begun(request_id, *continue_reply);
                return;
            }
            m.store_->begin_reply(conversation, parent_id, fingerprint,
                                  [self, request_id](Result<st::Id> reply) {
                                      if (self) self->reply_begun(request_id, std::move(reply));
                                  });
        });
}

void MessageListModel::reply_begun(qint64 request_id, Result<st::Id> reply) {
    auto it = streams_.find(request_id);
    if (it == streams_.end()) return;
    Stream& s = it->second;
    if (!reply) {
        set_error(error_text(reply.error()));
        s.begin_failed = true;
        if (backend_) backend_->cancel(request_id);
        if (s.ended) streams_.erase(it);
        emit_state_changes();
        return;
    }
    s.reply_id = *reply;
    if (!s.continued) show_new_reply(s);
    emit replyStarted(*reply);
    if (s.ended) {
        end_stream(request_id);
    } else {
        if (s.new_tokens > 0) writer_.update(*s.reply_id, s.text, s.ids, true);
        update_row(*s.reply_id);  // a continued reply is on screen already
    }
}

void MessageListModel::show_new_reply(const Stream& s) {
    // The store's thread now ends with the reply after its parent (a new variant if the
    // parent had one). Shown at once, not one store round trip later: a short reply
    // otherwise ended before its row came, with the reload that begin_reply's
    // threadChanged starts. That reload, read after begin_reply, brings the store's copy.
    if (s.conversation != conversation_) return;
    const int parent = rowOf(s.parent_id);
    if (parent < 0) return;  // not on screen yet: the reload brings both
    const auto end = rows_.begin() + parent + 1;
    std::vector<st::ThreadEntry> thread(rows_.begin(), end);
    st::ThreadEntry& e = thread.emplace_back();
    if (end != rows_.end() && end->message.parent_id == s.parent_id) {  // regenerated
        e.variant_index = end->variant_count;
        e.variant_count = end->variant_count + 1;
    }
    st::Message& m = e.message;
    m.id = *s.reply_id;
    m.conversation_id = s.conversation;
    m.parent_id = s.parent_id;
    m.role = st::Role::Assistant;
    m.token_fingerprint = s.fingerprint;
    m.state = st::MessageState::Streaming;
    m.created_at = m.updated_at = QDateTime::currentDateTimeUtc();
    apply_thread(std::move(thread));
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
            if (!s.clock.isValid()) s.clock.start();
            s.text += QString::fromStdString(e.text);
            if (e.token >= 0) s.ids.push_back(e.token);
            ++s.new_tokens;
            // The reasoning block's time: from the first token to its </think>, looked for
            // only where this piece could have completed it.
            if (!s.reasoning_closed &&
                s.text.indexOf(QLatin1String("</think>"),
                               std::max<qsizetype>(
                                   0, s.text.size() - static_cast<qsizetype>(e.text.size()) - 8)) >=
                    0) {
                s.reasoning_closed = true;
                s.stats.reasoning_ms = static_cast<double>(s.clock.elapsed());
            }
            if (s.reply_id) writer_.update(*s.reply_id, s.text, s.ids);
            if (!on_screen) return;
            // The first token is shown at once (the time to first token is what a user
            // waits for); later ones are folded into the next frame's update.
            if (s.new_tokens == 1)
                update_row(*s.reply_id,
                           {TextRole, SegmentsRole, GeneratedTokensRole, PrefillProgressRole,
                            ReasoningRole, ReasoningStateRole, ReasoningSecondsRole, AnswerRole});
            else
                update_row_soon(*s.reply_id,
                                {TextRole, SegmentsRole, GeneratedTokensRole, ReasoningRole,
                                 ReasoningStateRole, ReasoningSecondsRole, AnswerRole});
            return;
        case sched::EventKind::Finished:
            s.text = s.base_text + QString::fromStdString(e.text);
            s.ids = s.base_ids;
            s.ids.insert(s.ids.end(), e.tokens.begin(), e.tokens.end());
            // A remote backend has no ids, only the server's count.
            s.new_tokens = e.tokens.empty() ? e.stats.generated_tokens
                                            : static_cast<std::int32_t>(e.tokens.size());
            s.end_state = e.stop == StopReason::Cancelled ? st::MessageState::Interrupted
                                                          : st::MessageState::Complete;
            s.stats.finish_reason = finish_reason_of(e.stop);
            break;
        case sched::EventKind::Error:
            s.end_state = st::MessageState::Failed;
            s.stats.finish_reason = st::FinishReason::Error;
            s.stats.error = QString::fromStdString(e.error);  // stored with the reply
            set_error(*s.stats.error);
            break;
    }
    s.ended = true;
    // A reply that stopped while still thinking thought until then.
    if (!s.reasoning_closed && s.clock.isValid() && reply_parts(s.text).thinking)
        s.stats.reasoning_ms = static_cast<double>(s.clock.elapsed());
    const sched::RequestStats& rs = e.stats;
    if (rs.ttft_ms > 0) s.stats.ttft_ms = rs.ttft_ms;
    if (rs.decode_tokens_per_s() > 0) s.stats.tokens_per_second = rs.decode_tokens_per_s();
    s.stats.prompt_tokens_cached = rs.prompt_tokens_cached;
    s.stats.prompt_tokens_computed = rs.prompt_tokens_computed;
    if (!backend_ || backend_->has_kv_cache())
        s.stats.prompt_tokens_loaded = rs.prompt_tokens_loaded;
    if (rs.prompt_tokens_shifted > 0) s.stats.prompt_tokens_shifted = rs.prompt_tokens_shifted;
    if (rs.draft_tokens > 0) {
        s.stats.draft_tokens = rs.draft_tokens;
        s.stats.draft_accepted = rs.draft_accepted;
    }
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
    streams_.erase(it);
    if (conversation == conversation_) update_row(reply);
    QPointer<MessageListModel> self(this);
    writer_.finish(reply, {s.text, s.ids, s.end_state, s.stats},
                   [self, conversation](Result<void> r) {
                       if (!self) return;
                       if (!r) self->set_error(error_text(r.error()));
                       if (conversation == self->conversation_) self->reload();
                   });
    emit replyFinished(reply, message_state_name(s.end_state));
    emit_state_changes();
}
