#include "guarded_server.h"

#include <algorithm>
#include <thread>

#ifdef _WIN32
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#endif

namespace hearth::server {

namespace {

using Clock = std::chrono::steady_clock;

#ifdef _WIN32
constexpr int kNoSignal = 0;
constexpr short kHangUp = POLLHUP;
int poll_one(socket_t s, short events, int timeout_ms) {
    WSAPOLLFD p{s, events, 0};
    const int r = ::WSAPoll(&p, 1, timeout_ms);
    return r > 0 ? p.revents : r;
}
void shut(socket_t s) {
    ::shutdown(s, SD_BOTH);
}
#else
constexpr int kNoSignal = MSG_NOSIGNAL;
constexpr short kHangUp = POLLRDHUP | POLLHUP;
int poll_one(socket_t s, short events, int timeout_ms) {
    pollfd p{s, events, 0};
    const int r = ::poll(&p, 1, timeout_ms);
    return r > 0 ? p.revents : r;
}
void shut(socket_t s) {
    ::shutdown(s, SHUT_RDWR);
}
#endif

// The connection this thread answers.
struct Connection {
    socket_t sock = INVALID_SOCKET;
    Clock::time_point deadline;  // to read the whole request by
    bool cut = false;            // the deadline passed
};
thread_local Connection* t_connection = nullptr;

void address_of(socket_t sock, bool peer, std::string& ip, int& port) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    auto* sa = reinterpret_cast<sockaddr*>(&ss);
    if ((peer ? ::getpeername(sock, sa, &len) : ::getsockname(sock, sa, &len)) != 0) return;
    char host[NI_MAXHOST];
    if (::getnameinfo(sa, len, host, sizeof(host), nullptr, 0, NI_NUMERICHOST) == 0) ip = host;
    port = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                    : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

}  // namespace

// The socket as httplib's Stream, every read bounded by the connection's deadline (all the
// reading a connection does is its one request's). httplib's Stream interface changed
// after 0.11 (Debian 12's): later versions (CPPHTTPLIB_VERSION_NUM; 0.58 checked, the one
// llama.cpp vendors and the Windows cross-build uses) split waiting from reading.
class GuardedServer::DeadlineStream : public httplib::Stream {
  public:
    DeadlineStream(Connection& c, std::chrono::milliseconds read_timeout,
                   std::chrono::milliseconds write_timeout)
        : c_(c), read_timeout_(read_timeout), write_timeout_(write_timeout) {}

#ifdef CPPHTTPLIB_VERSION_NUM
    bool is_readable() const override {
        return false;
    }  // nothing is buffered here
    bool wait_readable() const override {
        return readable();
    }
    bool wait_writable() const override {
        return writable();
    }
    time_t duration() const override {
        return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_).count();
    }
#else
    bool is_readable() const override {
        return readable();
    }
    bool is_writable() const override {
        return writable();
    }
#endif
    ssize_t read(char* ptr, size_t size) override {
        if (!readable()) return -1;
        return ::recv(c_.sock, ptr, static_cast<int>(size), 0);
    }
    ssize_t write(const char* ptr, size_t size) override {
        if (!writable()) return -1;
        return ::send(c_.sock, ptr, static_cast<int>(size), kNoSignal);
    }
    void get_remote_ip_and_port(std::string& ip, int& port) const override {
        address_of(c_.sock, true, ip, port);
    }
    void get_local_ip_and_port(std::string& ip, int& port) const override {
        address_of(c_.sock, false, ip, port);
    }
    socket_t socket() const override {
        return c_.sock;
    }

  private:
    bool readable() const {
        return wait(POLLIN, read_timeout_, true);
    }
    bool writable() const {
        return wait(POLLOUT, write_timeout_, false);
    }
    bool wait(short events, std::chrono::milliseconds timeout, bool reading) const {
        auto limit = timeout;
        bool by_deadline = false;  // the deadline, not the timeout, bounds this wait
        if (reading) {
            // Rounded up, so that a wait that times out has reached the deadline.
            const auto left =
                std::chrono::ceil<std::chrono::milliseconds>(c_.deadline - Clock::now());
            if (left.count() <= 0) {
                c_.cut = true;
                return false;
            }
            by_deadline = left <= limit;
            limit = std::min(limit, left);
        }
        const int r = poll_one(c_.sock, events, static_cast<int>(limit.count()));
        if (r == 0 && by_deadline) c_.cut = true;
        return r > 0 && (r & events);
    }

    Connection& c_;
    std::chrono::milliseconds read_timeout_, write_timeout_;
    Clock::time_point start_ = Clock::now();
};

// A thread per connection; shutdown() waits for them all.
class GuardedServer::Threads : public httplib::TaskQueue {
  public:
    explicit Threads(GuardedServer& s) : s_(s) {}
#ifdef CPPHTTPLIB_VERSION_NUM
    bool enqueue(std::function<void()> fn) override {
        start(std::move(fn));
        return true;
    }
#else
    void enqueue(std::function<void()> fn) override {
        start(std::move(fn));
    }
#endif
    void shutdown() override {
        std::unique_lock lock(s_.mutex_);
        s_.idle_.wait(lock, [&] { return s_.threads_ == 0; });
    }

  private:
    void start(std::function<void()> fn) {
        {
            std::lock_guard lock(s_.mutex_);
            ++s_.threads_;
        }
        // The server, not this queue: httplib deletes the queue once shutdown() returns.
        std::thread([&s = s_, fn = std::move(fn)] {
            fn();
            std::lock_guard lock(s.mutex_);
            if (--s.threads_ == 0) s.idle_.notify_all();
        }).detach();
    }

    GuardedServer& s_;
};

GuardedServer::GuardedServer(std::chrono::milliseconds request_deadline, int max_connections)
    : deadline_(request_deadline), max_connections_(max_connections) {
    new_task_queue = [this] { return new Threads(*this); };
}

GuardedServer::~GuardedServer() {
    shut_down();
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return threads_ == 0; });
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
    {
        std::lock_guard lock(mutex_);
        if (stopping_ || static_cast<int>(live_.size()) >= max_connections_) {
            ++refused_;
            shut(sock);
            httplib::detail::close_socket(sock);
            return false;
        }
        live_.insert(sock);
    }
    Connection c{sock, Clock::now() + deadline_};
    t_connection = &c;
    DeadlineStream stream(c, std::chrono::milliseconds(read_timeout_sec_ * 1000),
                          std::chrono::milliseconds(write_timeout_sec_ * 1000));
    bool closed = false;
#ifdef CPPHTTPLIB_VERSION_NUM
    std::string remote_ip, local_ip;
    int remote_port = 0, local_port = 0;
    address_of(sock, true, remote_ip, remote_port);
    address_of(sock, false, local_ip, local_port);
    const bool ok = process_request(stream, remote_ip, remote_port, local_ip, local_port, true,
                                    closed, nullptr);
#else
    const bool ok = process_request(stream, true, closed, nullptr);
#endif
    t_connection = nullptr;
    {
        std::lock_guard lock(mutex_);
        live_.erase(sock);
        if (c.cut) ++cut_off_;
    }
    shut(sock);
    httplib::detail::close_socket(sock);
    return ok;
}

bool GuardedServer::peer_gone() {
    if (!t_connection) return false;
    const int r = poll_one(t_connection->sock, POLLIN | kHangUp, 0);
    if (r < 0) return true;
    if (r == 0) return false;
    if (r & (kHangUp | POLLERR | POLLNVAL)) return true;
    // Readable after its one request: either more bytes (not ours to read) or the end.
    char ch;
    return ::recv(t_connection->sock, &ch, 1, MSG_PEEK) == 0;
}

void GuardedServer::shut_down() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        for (socket_t s : live_) shut(s);
    }
    stop();
}

int64_t GuardedServer::cut_off() const {
    std::lock_guard lock(mutex_);
    return cut_off_;
}

int64_t GuardedServer::refused() const {
    std::lock_guard lock(mutex_);
    return refused_;
}

}  // namespace hearth::server
