#include "test_http_server.h"

#include <QHostAddress>
#include <QPointer>
#include <QTcpSocket>
#include <QTimer>

#include <memory>

#include "model/synthetic_model.h"

TestHttpServer::TestHttpServer(QObject* parent) : QObject(parent) {
    connect(&server_, &QTcpServer::newConnection, this, &TestHttpServer::on_connection);
}

bool TestHttpServer::listen() {
    return server_.listen(QHostAddress::LocalHost, 0);
}

QUrl TestHttpServer::url(const QByteArray& path) const {
    return QUrl(QStringLiteral("http://127.0.0.1:%1%2")
                    .arg(server_.serverPort())
                    .arg(QString::fromLatin1(path)));
}

void TestHttpServer::on_connection() {
    while (QTcpSocket* socket = server_.nextPendingConnection()) {
        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        connect(socket, &QTcpSocket::disconnected, this, &TestHttpServer::connectionClosed);
        auto buffer = std::make_shared<QByteArray>();
        auto answered = std::make_shared<bool>(false);
        connect(socket, &QTcpSocket::readyRead, this, [this, socket, buffer, answered] {
            buffer->append(socket->readAll());
            const qsizetype end = buffer->indexOf("\r\n\r\n");
            if (end < 0 || *answered) return;
            *answered = true;
            const QList<QByteArray> lines = buffer->left(end).split('\n');
            TestRequest request;
            const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
            request.path = first.value(1);
            for (qsizetype i = 1; i < lines.size(); ++i) {
                const QByteArray line = lines[i].trimmed();
                const qsizetype colon = line.indexOf(':');
                if (colon > 0)
                    request.headers[line.left(colon).trimmed().toLower()] =
                        line.mid(colon + 1).trimmed();
            }
            requests_.append(request);
            respond(socket, request);
        });
    }
}

void TestHttpServer::respond(QTcpSocket* socket, const TestRequest& request) {
    QByteArray path = request.path;
    if (!routes_.contains(path)) path = path.left(path.indexOf('?'));  // ignore a query
    if (!routes_.contains(path)) {
        socket->write(
            "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found");
        socket->disconnectFromHost();
        return;
    }
    TestRoute& route = routes_[path];
    QByteArray head;
    QByteArray body;
    if (!route.redirect_to.isEmpty()) {
        head = "HTTP/1.1 302 Found\r\nLocation: " + route.redirect_to + "\r\n";
        body = "moved";
    } else if (route.status != 200) {
        head = "HTTP/1.1 " + QByteArray::number(route.status) + " Error\r\n";
        body = "error " + QByteArray::number(route.status);
    } else {
        const qint64 size = route.body.size();
        const QByteArray range = request.headers.value("range");
        const QByteArray if_range = request.headers.value("if-range");
        const bool range_applies = !range.isEmpty() && !route.ignore_range &&
                                   (if_range.isEmpty() || if_range == route.etag);
        qint64 from = 0;
        if (range_applies && range.startsWith("bytes=")) {
            const QByteArray spec = range.mid(6);
            from = spec.left(spec.indexOf('-')).toLongLong();
        }
        if (range_applies && from >= size) {
            head = "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */" +
                   QByteArray::number(size) + "\r\n";
        } else if (range_applies) {
            if (route.wrong_range_start) from = 0;
            head = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " +
                   QByteArray::number(from) + '-' + QByteArray::number(size - 1) + '/' +
                   QByteArray::number(size) + "\r\n";
            body = route.body.mid(from);
        } else {
            head = "HTTP/1.1 200 OK\r\n";
            body = route.body;
        }
        head += "Accept-Ranges: bytes\r\n";
        if (!route.etag.isEmpty()) head += "ETag: " + route.etag + "\r\n";
    }
    for (const auto& [name, value] : route.headers) head += name + ": " + value + "\r\n";
    head += "Content-Length: " + QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n";
    socket->write(head);

    qint64 limit = body.size();
    if (route.drop_after >= 0 && route.drop_times > 0) {
        --route.drop_times;
        limit = std::min<qint64>(limit, route.drop_after);
    }
    body.truncate(limit);
    if (route.chunk <= 0) {
        socket->write(body);
        socket->disconnectFromHost();
        return;
    }
    auto* timer = new QTimer(socket);
    auto sent = std::make_shared<qint64>(0);
    const int chunk = route.chunk;
    QPointer<QTcpSocket> guard(socket);
    connect(timer, &QTimer::timeout, socket, [guard, timer, body, sent, chunk] {
        if (!guard || guard->state() != QAbstractSocket::ConnectedState) {
            timer->stop();
            return;
        }
        const QByteArray piece = body.mid(*sent, chunk);
        *sent += piece.size();
        guard->write(piece);
        if (*sent >= body.size()) {
            timer->stop();
            guard->disconnectFromHost();
        }
    });
    timer->start(route.chunk_interval_ms);
}

QByteArray small_synthetic_model() {
    hearth::SyntheticModelSpec spec;
    spec.n_embd = 128;
    spec.n_ff = 256;
    auto bytes = hearth::make_synthetic_model(spec);
    if (!bytes) return {};
    return QByteArray(reinterpret_cast<const char*>(bytes->data()),
                      static_cast<qsizetype>(bytes->size()));
}
