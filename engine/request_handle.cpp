#include "request_handle.h"

#include <condition_variable>
#include <deque>
#include <mutex>

namespace hearth {

using sched::Event;
using sched::RequestId;

struct RequestHandle::State {
    mutable std::mutex mu;
    std::condition_variable cv;
    std::deque<Event> events;
    bool last_delivered = false;
    bool last_taken = false;
};

RequestHandle::RequestHandle(RequestId id) : id_(id), state_(std::make_shared<State>()) {}

void RequestHandle::deliver(Event e) {
    {
        std::lock_guard lk(state_->mu);
        if (is_last_event(e)) state_->last_delivered = true;
        state_->events.push_back(std::move(e));
    }
    state_->cv.notify_all();
}

std::optional<Event> RequestHandle::next(std::chrono::milliseconds timeout) {
    std::unique_lock lk(state_->mu);
    if (state_->last_taken) return std::nullopt;
    if (!state_->cv.wait_for(lk, timeout, [&] { return !state_->events.empty(); }))
        return std::nullopt;
    Event e = std::move(state_->events.front());
    state_->events.pop_front();
    if (is_last_event(e)) state_->last_taken = true;
    return e;
}

Event RequestHandle::wait(const std::function<void(const Event&)>& on_event) {
    for (;;) {
        auto e = next();
        if (!e) continue;
        if (is_last_event(*e)) return std::move(*e);
        if (on_event) on_event(*e);
    }
}

bool RequestHandle::done() const {
    std::lock_guard lk(state_->mu);
    return state_->last_delivered;
}

}  // namespace hearth
