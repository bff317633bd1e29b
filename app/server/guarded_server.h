// GuardedServer: cpp-httplib's server with what one facing untrusted clients needs and
// httplib does not do on its own.
//  * One request per connection, read under a deadline: a client that trickles its
//    request in (slowloris) is cut off when the deadline passes, however steadily it
//    sends (httplib's read timeout restarts with every byte).
//  * Every connection on a thread of its own, up to a cap (over it, new connections are
//    closed at once): a slow client holds only its own thread, never another's request.
//  * Whether the client of the request being answered has gone, so that its work is
//    cancelled at once instead of when a write fails.
//  * Stopping shuts every connection down, so that reads and writes in flight end.
//
// It reads and writes the socket through a Stream of its own (the deadline lives there)
// and hands it to httplib's request processing.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>

namespace hearth::server {

class GuardedServer : public httplib::Server {
  public:
    GuardedServer(std::chrono::milliseconds request_deadline, int max_connections);
    ~GuardedServer() override;

    // For handlers, on the thread of the connection they answer: the client closed its end
    // (or the connection broke). (A handler runs once the whole request is read; nothing is
    // read after it, so the deadline never cuts a request being answered.)
    static bool peer_gone();

    // Shuts every connection down and stops listening (then listen returns).
    void shut_down();

    int64_t cut_off() const;  // connections cut at their deadline
    int64_t refused() const;  // connections closed over the cap

  private:
    class Threads;
    class DeadlineStream;
    bool process_and_close_socket(socket_t sock) override;

    const std::chrono::milliseconds deadline_;
    const int max_connections_;
    mutable std::mutex mutex_;
    std::condition_variable idle_;
    std::set<socket_t> live_;
    int threads_ = 0;
    int64_t cut_off_ = 0, refused_ = 0;
    bool stopping_ = false;
};

}  // namespace hearth::server
