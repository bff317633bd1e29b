// ReplyWriter: the store's copy of the replies MessageListModel is generating.
//
// While a reply streams, its text and ids are written at most every kWriteIntervalMs (the
// store coalesces further, to about once a second); a crash loses at most that much, and
// the store marks the reply interrupted when it next opens. When the reply ends, its last
// text, its statistics and its end state are written, and until the store has
// acknowledged that write the writer remembers the end: a snapshot of the thread read
// before the write still says "streaming", and patch() puts the known end over it.
#pragma once

#include <QElapsedTimer>
#include <QPointer>

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "store/async_store.h"

class ReplyWriter {
  public:
    static constexpr int kWriteIntervalMs = 100;

    struct End {
        QString text;
        std::vector<std::int32_t> ids;
        hearth::store::MessageState state = hearth::store::MessageState::Complete;
        hearth::store::GenerationStats stats;
    };

    ReplyWriter();

    void set_store(hearth::store::AsyncStore* store) { store_ = store; }

    // The reply so far; written now if force or the last write is old enough.
    void update(hearth::store::Id reply, const QString& text, const std::vector<std::int32_t>& ids,
                bool force = false);
    // The reply ended: its last text and its end. done (optional) runs on the GUI thread
    // once the store has written it (or failed to).
    void finish(hearth::store::Id reply, End end,
                std::function<void(hearth::Result<void>)> done = {});
    // Replaces what a thread read from the store says of replies that ended here but whose
    // end the store has not acknowledged yet.
    void patch(std::vector<hearth::store::ThreadEntry>& thread) const;

  private:
    QPointer<hearth::store::AsyncStore> store_;
    std::map<hearth::store::Id, QElapsedTimer> last_write_;
    // Shared with the store's callbacks, which may outlive this writer.
    std::shared_ptr<std::map<hearth::store::Id, End>> ended_;
};
