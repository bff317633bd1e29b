// Mailbox: items handed from any thread to one receiving thread, under a std::mutex that
// ThreadSanitizer sees (Qt's event queue, locked inside the uninstrumented Qt library, it
// does not). The sender posts and, when post() says the box was empty, wakes the receiver
// once (in the app: a named slot invoked queued, carrying nothing); the receiver takes
// everything in order, until a take() finds the box empty: that last take() is what orders
// the receiver's work before a clear() by whoever tears it down.
#pragma once

#include <deque>
#include <mutex>
#include <utility>

namespace hearth {

template <typename T>
class Mailbox {
  public:
    // True when the box was empty: the receiver needs a wake-up (one per batch).
    bool post(T item) {
        std::lock_guard lock(mu_);
        items_.push_back(std::move(item));
        return items_.size() == 1;
    }
    std::deque<T> take() {
        std::lock_guard lock(mu_);
        return std::exchange(items_, {});
    }
    // Drops what is queued. Also orders everything the senders did before their last
    // post() before what the caller does next (a receiver tearing down after its senders).
    void clear() {
        std::lock_guard lock(mu_);
        items_.clear();
    }

  private:
    std::mutex mu_;
    std::deque<T> items_;
};

}  // namespace hearth
