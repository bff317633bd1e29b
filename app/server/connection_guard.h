// ConnectionGuard: what a server facing untrusted clients needs and cpp-httplib does not
// do on its own.
//  * Each connection carries one request (keep-alive off), read under a deadline: a
//    client that trickles its request in (slowloris) is cut off when the deadline passes,
//    however steadily it sends, instead of holding a worker for ever.
//  * Every connection runs on a thread of its own (ConnectionThreads), up to a cap; over
//    the cap new connections are closed at once. So a slow client holds only its own
//    thread and never delays another client's request.
//  * Whether a client has gone: a request being computed for a client that closed its
//    connection is cancelled (its KV blocks freed) without waiting for a write to fail.
//
// Connections are known by the peer's address and port (httplib's Request::remote_addr
// and remote_port), registered when httplib hands over an accepted socket.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace hearth::server {

class ConnectionGuard {
  public:
    ConnectionGuard(std::chrono::milliseconds request_deadline, int max_connections);
    ~ConnectionGuard();  // stop()s

    // httplib's socket-options hook: a socket was just accepted (the listening thread).
    void accepted(socket_t sock);
    // The whole request of this connection has been read: its deadline no longer applies.
    void request_read(const httplib::Request& req);
    // The client closed its end (or the connection broke).
    bool peer_gone(const httplib::Request& req) const;
    // Shuts every connection down (server stop), so that reads and writes in flight fail.
    void stop();

    // httplib's task queue: one thread per connection, with the cap.
    httplib::TaskQueue* new_task_queue();

    int live_connections() const;
    int64_t cut_off() const;  // connections shut down at their deadline
    int64_t refused() const;  // connections closed over the cap

  private:
    class Threads;
    struct Conn {
        socket_t sock;
        std::chrono::steady_clock::time_point deadline;
        bool armed = true;
    };
    static std::string key_of(const std::string& addr, int port);
    void watch();
    void finished(socket_t sock);

    const std::chrono::milliseconds deadline_;
    const int max_connections_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::map<std::string, Conn> conns_;  // by peer "addr port"
    socket_t last_accepted_ = INVALID_SOCKET;
    int live_ = 0;
    int64_t cut_off_ = 0, refused_ = 0;
    bool stopping_ = false;
    std::condition_variable idle_;
    std::thread watchdog_;
};

}  // namespace hearth::server
