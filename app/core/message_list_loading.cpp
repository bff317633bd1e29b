// MessageListModel: loading the conversation's thread from the store (a snapshot of the
// conversation, its persona and the branch on screen), merging it into the rows, and
// showing a message that is on another branch (message_list_model.h).
#include <QPointer>

#include <utility>

#include "core/error_text.h"
#include "core/message_list_model.h"

using namespace hearth;
namespace st = hearth::store;

namespace {

// Everything a view shows or an action reads (Continue needs the reply's token ids and
// their fingerprint): a row the model made itself is replaced by the store's copy unless
// the two agree on all of it.
bool same_entry(const st::ThreadEntry& a, const st::ThreadEntry& b) {
    return a.message.id == b.message.id && a.message.text == b.message.text &&
           a.message.state == b.message.state && a.message.stats == b.message.stats &&
           a.variant_index == b.variant_index && a.variant_count == b.variant_count &&
           a.message.updated_at == b.message.updated_at &&
           a.message.token_fingerprint == b.message.token_fingerprint &&
           a.message.token_ids == b.message.token_ids;
}

}  // namespace

void MessageListModel::reload() {
    const int serial = ++reload_serial_;
    if (conversation_ < 0 || !store_ || !store_->isOpen()) {  // storeOpened() reloads
        if (!rows_.empty()) apply_thread({});
        return;
    }
    const qint64 conversation = conversation_;
    QPointer<MessageListModel> self(this);
    store_->run<ThreadSnapshot>(
        [conversation](st::Store& s) { return read_thread_snapshot(s, conversation); },
        [self, serial, conversation](Result<ThreadSnapshot> r) {
            if (!self || serial != self->reload_serial_ || conversation != self->conversation_)
                return;
            if (!r) return self->set_error(error_text(r.error()));
            self->apply_snapshot(*r);
            if (std::exchange(self->prefetch_pending_, false)) self->prefetch_kv(*r);
        });
}

void MessageListModel::refresh_record() {
    if (!store_ || !store_->isOpen() || !conversation_record_) return;
    const qint64 id = conversation_;
    QPointer<MessageListModel> self(this);
    store_->run<st::Conversation>(
        [id](st::Store& s) { return s.conversation(id); },
        [self, id](Result<st::Conversation> r) {
            if (!self || !r || id != self->conversation_ || !self->conversation_record_) return;
            if (r->title == self->conversation_record_->title) return;
            self->conversation_record_->title = r->title;
            emit self->titleChanged();
        });
}

void MessageListModel::apply_snapshot(const ThreadSnapshot& snap) {
    conversation_record_ = snap.conversation;
    persona_ = snap.persona;
    fork_origin_ = snap.fork_origin;
    emit conversationLoaded();
    emit titleChanged();
    apply_thread(snap.thread);
    emit_state_changes();
}

void MessageListModel::apply_thread(std::vector<st::ThreadEntry> thread) {
    writer_.patch(thread);
    if (merge_rows(
            rows_, std::move(thread),
            [](const st::ThreadEntry& a, const st::ThreadEntry& b) {
                return a.message.id == b.message.id;
            },
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
            return read_thread_snapshot(s, conversation);
        },
        [self, serial, conversation](Result<ThreadSnapshot> r) {
            if (!self || conversation != self->conversation_) return;
            if (!r) {
                self->reveal_.reset();
                return self->set_error(error_text(r.error()));
            }
            if (serial != self->reload_serial_) return;  // a later reload has the answer
            self->apply_snapshot(*r);                    // reveals it when it is there
            self->reveal_.reset();                       // not in this conversation at all
        });
}
