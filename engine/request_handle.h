// RequestHandle: the caller's end of one submitted request, a queue of its events that
// the engine thread fills and any thread drains.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "sched/scheduler.h"

namespace hearth {

// One submitted request. Shared between the caller and the engine thread.
class RequestHandle {
  public:
    sched::RequestId id() const { return id_; }
    // The next event, waiting up to timeout; nullopt on timeout or after the last event
    // (Finished or Error) was taken.
    std::optional<sched::Event> next(std::chrono::milliseconds timeout = std::chrono::hours(24));
    // Runs to the end, returning the final event (Finished or Error); other events are
    // passed to on_event if given.
    sched::Event wait(const std::function<void(const sched::Event&)>& on_event = {});
    bool done() const;

  private:
    friend class Engine;
    struct State;
    explicit RequestHandle(sched::RequestId id);
    void deliver(sched::Event e);
    sched::RequestId id_;
    std::shared_ptr<State> state_;
};

// Finished and Error end a request: nothing follows them.
inline bool is_last_event(const sched::Event& e) {
    return e.kind == sched::EventKind::Finished || e.kind == sched::EventKind::Error;
}

}  // namespace hearth
