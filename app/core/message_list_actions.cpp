// MessageListModel: what the user does to the thread on screen (send, stop, regenerate,
// continue, edit and resend, page through variants, delete, copy).
#include "core/message_list_model.h"

#include <QClipboard>
#include <QGuiApplication>

#include <algorithm>

#include "core/document_lookup.h"
#include "core/error_text.h"

using namespace hearth;
namespace st = hearth::store;

// The user's message as the store keeps it: the passages of looked-up documents that
// match it (document_lookup.h; none for most chats) and the token ids of what the model
// reads, the passages with the text. Looking up runs on the store's thread; `then` gets
// the draft on this one (not after this model is gone).
void MessageListModel::draft_user_message(qint64 conversation, const QString& text,
                                          std::function<void(st::MessageDraft)> then) {
    QPointer<MessageListModel> self(this);
    store_->run<std::vector<st::Source>>(
        [conversation, text](st::Store& s) { return app::look_up_passages(s, conversation, text); },
        [self, conversation, text, then = std::move(then)](Result<std::vector<st::Source>> found) {
            if (!self) return;
            if (!found || !self->backend_) {
                self->set_error(found ? tr("The model was closed.") : error_text(found.error()));
                self->setup_done(conversation);
                return;
            }
            st::MessageDraft draft;
            draft.role = st::Role::User;
            draft.text = text;
            const ChatBackend& backend = *self->backend_;
            const auto ids = [&] {
                return backend.encode_content(chat::Role::User,
                                              app::with_passages(text, draft.sources));
            };
            // The passages take their share of the context at most: in rank order, each
            // that still fits (a long one passed over, a shorter one after it kept).
            const int context = backend.context_length();
            const std::size_t own = backend.encode_content(chat::Role::User, text).size();
            const auto fits = [&] {
                if (context <= 0 || draft.token_ids.empty()) {  // a remote endpoint: text
                    qsizetype chars = 0;
                    for (const st::Source& s : draft.sources) chars += s.text.size();
                    return chars <= app::kPassageCharsWithoutContext;
                }
                return draft.token_ids.size() - own <=
                       static_cast<std::size_t>(context / app::kPassageShareOfContext);
            };
            for (st::Source& s : *found) {
                draft.sources.push_back(std::move(s));
                draft.token_ids = ids();
                if (!fits()) draft.sources.pop_back();
            }
            draft.token_ids = ids();
            draft.token_fingerprint = backend.fingerprint();
            then(std::move(draft));
        });
}

bool MessageListModel::send(const QString& text) {
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty() || !canSend()) return false;
    const qint64 conversation = conversation_;
    const bool first_message =
        std::none_of(rows_.begin(), rows_.end(),
                     [](const st::ThreadEntry& e) { return e.message.role == st::Role::User; });
    ++setting_up_[conversation];
    set_error(QString());
    if (asked_ && asked_->conversation == conversation) {  // the question is moot now
        asked_.reset();
        emit contextFullChanged();
    }
    emit_state_changes();
    QPointer<MessageListModel> self(this);
    draft_user_message(
        conversation, trimmed,
        [self, conversation, trimmed, first_message](st::MessageDraft draft) {
            self->store_->append_message(
                conversation, draft,
                [self, conversation, trimmed, first_message](Result<st::Message> r) {
                    if (!self) return;
                    if (!r) {
                        self->set_error(error_text(r.error()));
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
        });
    return true;
}

void MessageListModel::setup_done(qint64 conversation) {
    auto it = setting_up_.find(conversation);
    if (it != setting_up_.end() && --it->second <= 0) setting_up_.erase(it);
    emit_state_changes();
}

void MessageListModel::stop() {
    if (conversation_ < 0) return;
    if (setting_up_.count(conversation_)) stop_requested_[conversation_] = true;
    for (const auto& [id, s] : streams_)
        if (s.conversation == conversation_ && !s.ended && backend_) backend_->cancel(id);
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
    if (backend_->fingerprint().isEmpty() || last.token_fingerprint != backend_->fingerprint() ||
        last.token_ids.empty())
        return false;
    return last.stats.finish_reason == st::FinishReason::Length ||
           last.state == st::MessageState::Interrupted;
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
            self->set_error(error_text(r.error()));
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
    const qint64 conversation = conversation_;
    ++setting_up_[conversation];
    set_error(QString());
    emit_state_changes();
    QPointer<MessageListModel> self(this);
    // The edited text is looked up again: its passages are its own.
    draft_user_message(conversation, trimmed,
                       [self, conversation, messageId](st::MessageDraft draft) {
                           self->store_->edit_message(
                               messageId, draft, [self, conversation](Result<st::Message> r) {
                                   if (!self) return;
                                   if (!r) {
                                       self->set_error(error_text(r.error()));
                                       self->setup_done(conversation);
                                       return;
                                   }
                                   self->start_reply(conversation, r->id);
                               });
                       });
    return true;
}

void MessageListModel::pageVariant(qint64 messageId, int delta) {
    if (!store_ || generating() || rowOf(messageId) < 0 || delta == 0) return;
    QPointer<MessageListModel> self(this);
    store_->page_variant(messageId, delta, [self](Result<st::Id> r) {
        if (self && !r) self->set_error(error_text(r.error()));
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
                          if (!r) self->set_error(error_text(r.error()));
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
