#include "connection_guard.h"

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

void shut(socket_t sock) {
#ifdef _WIN32
    ::shutdown(sock, SD_BOTH);
#else
    ::shutdown(sock, SHUT_RDWR);
#endif
}

void close_socket(socket_t sock) {
#ifdef _WIN32
    ::closesocket(sock);
#else
    ::close(sock);
#endif
}

// The peer's address as httplib writes Request::remote_addr (numeric host) and its port.
bool peer_of(socket_t sock, std::string& addr, int& port) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    if (::getpeername(sock, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return false;
    char host[NI_MAXHOST];
    if (::getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof(host), nullptr, 0,
                      NI_NUMERICHOST) != 0)
        return false;
    addr = host;
    port = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                    : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    return true;
}

// The peer closed or reset the connection. After the one request a connection carries, a
// readable socket with nothing to read is a closed one.
bool closed_by_peer(socket_t sock) {
#ifdef _WIN32
    WSAPOLLFD p{sock, POLLRDNORM, 0};
    if (::WSAPoll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) return true;
    char c;
    u_long pending = 0;
    ::ioctlsocket(sock, FIONREAD, &pending);
    return pending == 0 && ::recv(sock, &c, 1, MSG_PEEK) <= 0;
#else
    pollfd p{sock, POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
    char c;
    return ::recv(sock, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
#endif
}

}  // namespace

// One thread per connection, up to the guard's cap.
class ConnectionGuard::Threads : public httplib::TaskQueue {
  public:
    explicit Threads(ConnectionGuard& guard) : guard_(guard) {}
    void enqueue(std::function<void()> fn) override {
        socket_t sock;
        {
            std::lock_guard lock(guard_.mutex_);
            sock = guard_.last_accepted_;
            guard_.last_accepted_ = INVALID_SOCKET;
            if (guard_.stopping_ || guard_.live_ >= guard_.max_connections_) {
                ++guard_.refused_;
                for (auto it = guard_.conns_.begin(); it != guard_.conns_.end(); ++it)
                    if (it->second.sock == sock) {
                        guard_.conns_.erase(it);
                        break;
                    }
                if (sock != INVALID_SOCKET) close_socket(sock);
                return;
            }
            ++guard_.live_;
        }
        std::thread([this, fn = std::move(fn), sock] {
            fn();  // reads the request, answers it and closes the socket
            guard_.finished(sock);
        }).detach();
    }
    void shutdown() override {
        std::unique_lock lock(guard_.mutex_);
        guard_.idle_.wait(lock, [&] { return guard_.live_ == 0; });
    }

  private:
    ConnectionGuard& guard_;
};

ConnectionGuard::ConnectionGuard(std::chrono::milliseconds request_deadline, int max_connections)
    : deadline_(request_deadline), max_connections_(max_connections) {
    watchdog_ = std::thread([this] { watch(); });
}

ConnectionGuard::~ConnectionGuard() {
    stop();
    {
        std::unique_lock lock(mutex_);
        idle_.wait(lock, [&] { return live_ == 0; });
    }
    watchdog_.join();
}

std::string ConnectionGuard::key_of(const std::string& addr, int port) {
    return addr + " " + std::to_string(port);
}

httplib::TaskQueue* ConnectionGuard::new_task_queue() { return new Threads(*this); }

void ConnectionGuard::accepted(socket_t sock) {
    std::string addr;
    int port = 0;
    const bool known = peer_of(sock, addr, port);
    std::lock_guard lock(mutex_);
    last_accepted_ = sock;
    if (known)
        conns_[key_of(addr, port)] = Conn{sock, std::chrono::steady_clock::now() + deadline_};
}

void ConnectionGuard::request_read(const httplib::Request& req) {
    std::lock_guard lock(mutex_);
    const auto it = conns_.find(key_of(req.remote_addr, req.remote_port));
    if (it != conns_.end()) it->second.armed = false;
}

bool ConnectionGuard::peer_gone(const httplib::Request& req) const {
    std::lock_guard lock(mutex_);
    const auto it = conns_.find(key_of(req.remote_addr, req.remote_port));
    return it != conns_.end() && closed_by_peer(it->second.sock);
}

void ConnectionGuard::finished(socket_t sock) {
    std::lock_guard lock(mutex_);
    for (auto it = conns_.begin(); it != conns_.end(); ++it)
        if (it->second.sock == sock) {
            conns_.erase(it);
            break;
        }
    if (--live_ == 0) idle_.notify_all();
}

void ConnectionGuard::stop() {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [key, c] : conns_) shut(c.sock);
    wake_.notify_all();
}

void ConnectionGuard::watch() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        wake_.wait_for(lock, std::chrono::milliseconds(200));
        const auto now = std::chrono::steady_clock::now();
        for (auto& [key, c] : conns_)
            if (c.armed && now > c.deadline) {
                c.armed = false;
                ++cut_off_;
                shut(c.sock);
            }
    }
}

int ConnectionGuard::live_connections() const {
    std::lock_guard lock(mutex_);
    return live_;
}

int64_t ConnectionGuard::cut_off() const {
    std::lock_guard lock(mutex_);
    return cut_off_;
}

int64_t ConnectionGuard::refused() const {
    std::lock_guard lock(mutex_);
    return refused_;
}

}  // namespace hearth::server
