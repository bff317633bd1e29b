// A small HTTP/1.1 server for the downloader tests: fixed routes with Content-Length,
// Range/206 (or a server that ignores Range), a dropped connection mid-body, redirects,
// error statuses, extra headers and slow, chunked sending. One request per connection (Connection:
// close).
#pragma once

#include <QByteArray>
#include <QCryptographicHash>
#include <QFile>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPair>
#include <QTcpServer>
#include <QUrl>

struct TestRoute {
    int status = 200;  // anything but 200: sent as is, with a short body
    QByteArray body;
    QByteArray redirect_to;          // a path: answer 302 Found to it
    QByteArray etag;                 // sent as ETag; an If-Range that differs gets 200
    bool ignore_range = false;       // always 200 and the whole body
    bool wrong_range_start = false;  // 206 for a Range, but from byte 0
    qint64 drop_after = -1;          // close the connection after this many body bytes...
    int drop_times = 1;              // ...in this many answers (then whole answers)
    int chunk = 0;                   // > 0: send the body in pieces of this size...
    int chunk_interval_ms = 0;       // ...this far apart
    // Sent with the answer, whatever it is (e.g. the Hub's X-Linked-ETag on a redirect).
    QList<QPair<QByteArray, QByteArray>> headers;
};

struct TestRequest {
    QByteArray path;
    QHash<QByteArray, QByteArray> headers;  // lower-case names
};

// What the download suites check files with: the bytes of a file (empty if unreadable),
// and a SHA-256 in lower-case hex.
inline QByteArray read_all(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
inline QString sha256_hex(const QByteArray& data) {
    return QString::fromLatin1(QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex());
}

// A small synthetic GGUF (engine/model/synthetic_model.h) for the servers to serve; empty
// if it could not be generated.
QByteArray small_synthetic_model();

class TestHttpServer : public QObject {
    Q_OBJECT

  public:
    explicit TestHttpServer(QObject* parent = nullptr);
    bool listen();
    QUrl url(const QByteArray& path) const;

    void setRoute(const QByteArray& path, const TestRoute& route) { routes_[path] = route; }
    TestRoute& route(const QByteArray& path) { return routes_[path]; }
    const QList<TestRequest>& requests() const { return requests_; }
    void clearRequests() { requests_.clear(); }

  signals:
    // A connection ended (either side closed it): nothing more travels on it.
    void connectionClosed();

  private:
    void on_connection();
    void respond(class QTcpSocket* socket, const TestRequest& request);

    QTcpServer server_;
    QHash<QByteArray, TestRoute> routes_;
    QList<TestRequest> requests_;
};
