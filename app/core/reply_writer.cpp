#include "core/reply_writer.h"

namespace st = hearth::store;

ReplyWriter::ReplyWriter() : ended_(std::make_shared<std::map<st::Id, End>>()) {}

void ReplyWriter::update(st::Id reply, const QString& text, const std::vector<std::int32_t>& ids,
                         bool force) {
    if (!store_) return;
    QElapsedTimer& last = last_write_[reply];
    if (!force && last.isValid() && last.elapsed() < kWriteIntervalMs) return;
    store_->update_reply(reply, text, ids);
    last.start();
}

void ReplyWriter::finish(st::Id reply, End end, std::function<void(hearth::Result<void>)> done) {
    last_write_.erase(reply);
    if (!store_) return;
    store_->update_reply(reply, end.text, end.ids);
    const st::GenerationStats stats = end.stats;
    const st::MessageState state = end.state;
    (*ended_)[reply] = std::move(end);
    std::weak_ptr<std::map<st::Id, End>> ended = ended_;
    store_->finish_reply(reply, stats, state,
                         [ended, reply, done = std::move(done)](hearth::Result<void> r) {
                             // Snapshots read before this write have all been delivered (the store
                             // is FIFO); later ones read the end from the store.
                             if (auto e = ended.lock()) e->erase(reply);
                             if (done) done(std::move(r));
                         });
}

void ReplyWriter::patch(std::vector<st::ThreadEntry>& thread) const {
    for (st::ThreadEntry& e : thread) {
        if (e.message.state != st::MessageState::Streaming) continue;
        auto it = ended_->find(e.message.id);
        if (it == ended_->end()) continue;
        e.message.text = it->second.text;
        e.message.token_ids = it->second.ids;
        e.message.state = it->second.state;
        e.message.stats = it->second.stats;
    }
}
