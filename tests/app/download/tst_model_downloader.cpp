// ModelDownloader against a local HTTP server (test_http_server.h) serving a synthetic
// GGUF: progress, checksums, cancel and resume, servers that ignore or botch Range,
// HTTP errors, a body that is not a GGUF, and an existing destination. Redirects, the
// Hub's headers and the token: tst_download_redirects.
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QNetworkProxy>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>

#include <algorithm>
#include <memory>

#include "core/model_downloader.h"
#include "test_http_server.h"

namespace {

constexpr int kWaitMs = 30000;

}  // namespace

class TestModelDownloader : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase();
    void init();
    void cleanup();

    void fileNames();
    void fullDownloadWithProgress();
    void checksumMatches();
    void checksumMismatchDeletesDownload();
    void malformedChecksumRefused();
    void cancelKeepsOnlyPart();
    void resumesAfterARestart();
    void discardDeletesPart();
    void cancelWhileVerifying();
    void resumeAfterDroppedConnection();
    void serverIgnoringRangeRestarts();
    void wrongContentRangeRestarts();
    void completePartIsVerified();
    void notFoundIsReadable();
    void serverErrorIsResumable();
    void notGgufRejected();
    void existingDestinationRefused();
    void diskFullIsReadable();
    void unsupportedScheme();

  private:
    QString dest(const QString& name) const { return QDir(dir_->path()).filePath(name); }
    std::unique_ptr<ModelDownloader> make();

    QByteArray model_;
    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<TestHttpServer> server_;
};

void TestModelDownloader::initTestCase() {
    // Talk to 127.0.0.1 directly, whatever proxy the environment names.
    QNetworkProxy::setApplicationProxy(QNetworkProxy::NoProxy);
    model_ = small_synthetic_model();
    QVERIFY(model_.size() > 100000);
}

void TestModelDownloader::init() {
    dir_ = std::make_unique<QTemporaryDir>();
    QVERIFY(dir_->isValid());
    server_ = std::make_unique<TestHttpServer>();
    QVERIFY(server_->listen());
}

void TestModelDownloader::cleanup() {
    server_.reset();
    dir_.reset();
}

std::unique_ptr<ModelDownloader> TestModelDownloader::make() {
    auto d = std::make_unique<ModelDownloader>();
    d->setModelsDir(dir_->path());
    return d;
}

void TestModelDownloader::fileNames() {
    QCOMPARE(ModelDownloader::fileNameForUrl(
                 QUrl("https://huggingface.co/org/repo/resolve/main/Tiny-Q4_0.gguf?download=true")),
             QStringLiteral("Tiny-Q4_0.gguf"));
    QCOMPARE(ModelDownloader::fileNameForUrl(QUrl("https://example.com/files/model")),
             QStringLiteral("model.gguf"));
    QCOMPARE(ModelDownloader::fileNameForUrl(QUrl("https://example.com/a%20b.GGUF")),
             QStringLiteral("a b.GGUF"));
    QVERIFY(ModelDownloader::fileNameForUrl(QUrl("https://example.com/")).isEmpty());
    QVERIFY(ModelDownloader::fileNameForUrl(QUrl("https://example.com/.hidden")).isEmpty());
    QVERIFY(ModelDownloader::fileNameForUrl(QUrl("https://example.com/x/..%2F..%2Fevil.gguf"))
                .indexOf(QLatin1Char('/')) < 0);

    // A Hugging Face page link downloads through its "resolve" link.
    auto d = make();
    d->start(QUrl("http://huggingface.co/org/repo/blob/main/sub/m.gguf"));
    QCOMPARE(d->url(), QUrl("http://huggingface.co/org/repo/resolve/main/sub/m.gguf"));
    QCOMPARE(d->destinationPath(), dest("m.gguf"));
    d->cancel();
    QCOMPARE(d->state(), ModelDownloader::Cancelled);
}

void TestModelDownloader::fullDownloadWithProgress() {
    TestRoute route;
    route.body = model_;
    route.chunk = 8192;
    route.chunk_interval_ms = 10;
    server_->setRoute("/models/tiny.gguf", route);

    auto d = make();
    QSignalSpy progress(d.get(), &ModelDownloader::progressChanged);
    QSignalSpy finished(d.get(), &ModelDownloader::finished);
    QList<qint64> received;
    QList<qint64> totals;
    double top_speed = 0;
    connect(d.get(), &ModelDownloader::progressChanged, this, [&] {
        received.append(d->bytesReceived());
        totals.append(d->bytesTotal());
        top_speed = std::max(top_speed, d->speed());
        QVERIFY(d->progress() >= 0.0 && d->progress() <= 1.0);
    });
    QList<ModelDownloader::State> states;
    connect(d.get(), &ModelDownloader::stateChanged, this, [&] { states.append(d->state()); });

    d->start(server_->url("/models/tiny.gguf?download=true"));
    QCOMPARE(d->state(), ModelDownloader::Downloading);
    QCOMPARE(d->destinationPath(), dest("tiny.gguf"));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Done, kWaitMs);

    QCOMPARE(finished.count(), 1);
    QCOMPARE(finished.at(0).at(0).toString(), dest("tiny.gguf"));
    QCOMPARE(read_all(dest("tiny.gguf")), model_);
    QVERIFY(!QFileInfo::exists(dest("tiny.gguf.part")));
    QCOMPARE(d->bytesReceived(), model_.size());
    QCOMPARE(d->bytesTotal(), model_.size());
    QCOMPARE(d->progress(), 1.0);
    QVERIFY(d->errorString().isEmpty());
    QCOMPARE(states,
             (QList<ModelDownloader::State>{ModelDownloader::Downloading,
                                            ModelDownloader::Verifying, ModelDownloader::Done}));

    // Several updates along the way, never going backwards, ending at the whole file.
    QVERIFY2(progress.count() >= 3, qPrintable(QString::number(progress.count())));
    for (qsizetype i = 1; i < received.size(); ++i) QVERIFY(received[i] >= received[i - 1]);
    QVERIFY(received.contains(model_.size()));
    QVERIFY(std::any_of(received.begin(), received.end(),
                        [&](qint64 r) { return r > 0 && r < model_.size(); }));
    QVERIFY(totals.contains(model_.size()));
    QVERIFY(top_speed > 0);  // the transfer takes over a second: the speed was measured
    QCOMPARE(d->speed(), 0.0);
    QCOMPARE(server_->requests().size(), 1);
    QVERIFY(!server_->requests()[0].headers.contains("range"));
}

void TestModelDownloader::checksumMatches() {
    server_->route("/m.gguf").body = model_;
    auto d = make();
    // Upper case and a "sha256:" prefix, as pasted from a model page.
    d->start(server_->url("/m.gguf"), QStringLiteral("  SHA256:") + sha256_hex(model_).toUpper());
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Done, kWaitMs);
    QCOMPARE(read_all(dest("m.gguf")), model_);
}

void TestModelDownloader::checksumMismatchDeletesDownload() {
    server_->route("/m.gguf").body = model_;
    auto d = make();
    QSignalSpy failed(d.get(), &ModelDownloader::failed);
    d->start(server_->url("/m.gguf"), QString(64, QLatin1Char('0')));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Failed, kWaitMs);
    QVERIFY2(d->errorString().contains(QLatin1String("Checksum mismatch")),
             qPrintable(d->errorString()));
    QVERIFY(d->errorString().contains(sha256_hex(model_)));
    QCOMPARE(failed.count(), 1);
    QVERIFY(!QFileInfo::exists(dest("m.gguf")));
    QVERIFY(!QFileInfo::exists(dest("m.gguf.part")));
    QVERIFY(!d->canResume());
}

void TestModelDownloader::malformedChecksumRefused() {
    server_->route("/m.gguf").body = model_;
    auto d = make();
    d->start(server_->url("/m.gguf"), QStringLiteral("abc123"));
    QCOMPARE(d->state(), ModelDownloader::Failed);
    QVERIFY(d->errorString().contains(QLatin1String("64 hexadecimal")));
    QVERIFY(server_->requests().isEmpty());
}

void TestModelDownloader::cancelKeepsOnlyPart() {
    TestRoute route;
    route.body = model_;
    route.chunk = 4096;
    route.chunk_interval_ms = 20;
    server_->setRoute("/slow.gguf", route);

    auto d = make();
    QSignalSpy closed(server_.get(), &TestHttpServer::connectionClosed);
    d->start(server_->url("/slow.gguf"));
    QTRY_VERIFY_WITH_TIMEOUT(d->bytesReceived() >= 3 * 4096, kWaitMs);
    d->cancel();
    QCOMPARE(d->state(), ModelDownloader::Cancelled);
    QVERIFY(d->canResume());
    QVERIFY(d->errorString().isEmpty());
    const qint64 got = d->bytesReceived();
    QVERIFY(got < model_.size());

    QVERIFY(!QFileInfo::exists(dest("slow.gguf")));
    QCOMPARE(QDir(dir_->path()).entryList(QDir::Files | QDir::Hidden),
             (QStringList{"slow.gguf.part", "slow.gguf.part.json"}));
    QCOMPARE(QFileInfo(dest("slow.gguf.part")).size(), got);
    QCOMPARE(read_all(dest("slow.gguf.part")), model_.left(got));

    // Nothing more arrives after the cancel: the connection closes (the server, which
    // would send a piece every 20 ms, sees it go) and what was in flight is dropped.
    QTRY_VERIFY_WITH_TIMEOUT(closed.count() == 1, kWaitMs);
    QCoreApplication::processEvents();
    QCOMPARE(d->bytesReceived(), got);
    QCOMPARE(d->state(), ModelDownloader::Cancelled);

    // And it continues where it stopped.
    server_->route("/slow.gguf").chunk = 0;
    d->resume();
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Done, kWaitMs);
    QCOMPARE(read_all(dest("slow.gguf")), model_);
    QCOMPARE(server_->requests().last().headers.value("range"),
             "bytes=" + QByteArray::number(got) + '-');
}

void TestModelDownloader::resumesAfterARestart() {
    TestRoute route;
    route.body = model_;
    route.chunk = 4096;
    route.chunk_interval_ms = 20;
    server_->setRoute("/later.gguf", route);
    const QString sha =
        QString::fromLatin1(QCryptographicHash::hash(model_, QCryptographicHash::Sha256).toHex());
    qint64 got = 0;
    {
        auto d = make();
        d->start(server_->url("/later.gguf"), sha);
        QTRY_VERIFY_WITH_TIMEOUT(d->bytesReceived() >= 2 * 4096, kWaitMs);
        d->cancel();
        got = d->bytesReceived();
    }  // the app closes
    server_->route("/later.gguf").chunk = 0;
    auto d = make();  // the next run sees the paused download, with its link and checksum
    const QVariantList pending = d->pendingDownloads();
    QCOMPARE(pending.size(), 1);
    const QVariantMap p = pending[0].toMap();
    QCOMPARE(p.value("name").toString(), QStringLiteral("later.gguf"));
    QCOMPARE(p.value("url").toUrl(), server_->url("/later.gguf"));
    QCOMPARE(p.value("sha256").toString(), sha);
    QCOMPARE(p.value("received").toLongLong(), got);
    d->start(p.value("url").toUrl(), p.value("sha256").toString());
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Done, kWaitMs);
    QCOMPARE(server_->requests().last().headers.value("range"),
             "bytes=" + QByteArray::number(got) + '-');
    QCOMPARE(read_all(dest("later.gguf")), model_);
    QVERIFY(d->pendingDownloads().isEmpty());
    QCOMPARE(QDir(dir_->path()).entryList(QDir::Files | QDir::Hidden), QStringList{"later.gguf"});

    // One discarded from the list goes with its note.
    server_->route("/later.gguf").chunk = 4096;
    QFile::remove(dest("later.gguf"));
    d->start(server_->url("/later.gguf"));
    QTRY_VERIFY_WITH_TIMEOUT(d->bytesReceived() > 0, kWaitMs);
    d->cancel();
    auto next = make();
    QCOMPARE(next->pendingDownloads().size(), 1);
    next->discardPending("later.gguf");
    QVERIFY(next->pendingDownloads().isEmpty());
    QVERIFY(QDir(dir_->path()).entryList(QDir::Files | QDir::Hidden).isEmpty());
}

void TestModelDownloader::discardDeletesPart() {
    TestRoute route;
    route.body = model_;
    route.chunk = 4096;
    route.chunk_interval_ms = 20;
    server_->setRoute("/slow.gguf", route);
    auto d = make();
    d->start(server_->url("/slow.gguf"));
    QTRY_VERIFY_WITH_TIMEOUT(d->bytesReceived() > 0, kWaitMs);
    d->discard();  // only after a cancel or a failure
    QCOMPARE(d->state(), ModelDownloader::Downloading);
    d->cancel();
    QVERIFY(QFileInfo::exists(dest("slow.gguf.part")));
    d->discard();
    QCOMPARE(d->state(), ModelDownloader::Idle);
    QVERIFY(!d->canResume());
    QCOMPARE(d->bytesReceived(), 0);
    QVERIFY(QDir(dir_->path()).entryList(QDir::Files | QDir::Hidden).isEmpty());
}

void TestModelDownloader::cancelWhileVerifying() {
    server_->route("/v.gguf").body = model_;
    auto d = make();
    connect(d.get(), &ModelDownloader::stateChanged, this, [&] {
        if (d->state() == ModelDownloader::Verifying) d->cancel();
    });
    d->start(server_->url("/v.gguf"), sha256_hex(model_));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Cancelled, kWaitMs);
    // A verification result, if one were still coming, is ignored: let any verification
    // (on QtConcurrent's pool) end and its result reach the downloader, then look.
    QVERIFY(QThreadPool::globalInstance()->waitForDone(kWaitMs));
    QCoreApplication::sendPostedEvents();
    QCOMPARE(d->state(), ModelDownloader::Cancelled);
    QVERIFY(!QFileInfo::exists(dest("v.gguf")));
    QCOMPARE(QFileInfo(dest("v.gguf.part")).size(), model_.size());

    d->disconnect(this);
    d->resume();  // the .part is whole: the server answers 416 and it is verified again
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Done, kWaitMs);
    QCOMPARE(read_all(dest("v.gguf")), model_);
}

void TestModelDownloader::resumeAfterDroppedConnection() {
    TestRoute route;
    route.body = model_;
    route.etag = "\"v1\"";
    route.drop_after = model_.size() / 2;
    server_->setRoute("/drop.gguf", route);

    auto d = make();
    QSignalSpy failed(d.get(), &ModelDownloader::failed);
    d->start(server_->url("/drop.gguf"), sha256_hex(model_));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Failed, kWaitMs);
    QCOMPARE(failed.count(), 1);
    QVERIFY(!d->errorString().isEmpty());
    QVERIFY2(d->errorString().contains(QLatin1String("resume")), qPrintable(d->errorString()));
    QVERIFY(d->canResume());
    QVERIFY(!QFileInfo::exists(dest("drop.gguf")));
    const qint64 part = QFileInfo(dest("drop.gguf.part")).size();
    QVERIFY(part > 0 && part <= model_.size() / 2);
    QCOMPARE(read_all(dest("drop.gguf.part")), model_.left(part));

    d->resume();
    QCOMPARE(d->state(), ModelDownloader::Downloading);
    QCOMPARE(d->bytesReceived(), part);
    QVERIFY(d->errorString().isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Done, kWaitMs);
    QCOMPARE(read_all(dest("drop.gguf")), model_);
    QVERIFY(!QFileInfo::exists(dest("drop.gguf.part")));
    QCOMPARE(d->bytesTotal(), model_.size());

    QCOMPARE(server_->requests().size(), 2);
    const TestRequest& second = server_->requests()[1];
    QCOMPARE(second.headers.value("range"), "bytes=" + QByteArray::number(part) + '-');
    QCOMPARE(second.headers.value("if-range"), QByteArray("\"v1\""));
}

void TestModelDownloader::serverIgnoringRangeRestarts() {
    TestRoute route;
    route.body = model_;
    route.ignore_range = true;
    route.drop_after = model_.size() / 3;
    server_->setRoute("/norange.gguf", route);

    auto d = make();
    d->start(server_->url("/norange.gguf"), sha256_hex(model_));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Failed, kWaitMs);
    QVERIFY(QFileInfo(dest("norange.gguf.part")).size() > 0);

    d->resume();
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Done, kWaitMs);
    QCOMPARE(read_all(dest("norange.gguf")), model_);  // not the first third twice
    QCOMPARE(d->bytesReceived(), model_.size());
    QCOMPARE(server_->requests().size(), 2);
    QVERIFY(server_->requests()[1].headers.value("range").startsWith("bytes="));
}

void TestModelDownloader::wrongContentRangeRestarts() {
    TestRoute route;
    route.body = model_;
    route.wrong_range_start = true;  // answers 206 from byte 0 whatever was asked
    server_->setRoute("/badrange.gguf", route);
    // A stale .part from an earlier attempt.
    {
        QFile part(dest("badrange.gguf.part"));
        QVERIFY(part.open(QIODevice::WriteOnly));
        part.write(model_.left(1000));
    }
    auto d = make();
    d->start(server_->url("/badrange.gguf"), sha256_hex(model_));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Done, kWaitMs);
    QCOMPARE(read_all(dest("badrange.gguf")), model_);
    QCOMPARE(server_->requests().size(), 2);
    QCOMPARE(server_->requests()[0].headers.value("range"), QByteArray("bytes=1000-"));
    QVERIFY(!server_->requests()[1].headers.contains("range"));
}

void TestModelDownloader::completePartIsVerified() {
    server_->route("/whole.gguf").body = model_;
    {
        QFile part(dest("whole.gguf.part"));
        QVERIFY(part.open(QIODevice::WriteOnly));
        part.write(model_);
    }
    auto d = make();
    d->start(server_->url("/whole.gguf"));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Done, kWaitMs);
    QCOMPARE(read_all(dest("whole.gguf")), model_);
    QCOMPARE(server_->requests().size(), 1);  // answered 416 with the size: nothing to fetch
    QCOMPARE(d->bytesTotal(), model_.size());
}

void TestModelDownloader::notFoundIsReadable() {
    auto d = make();
    QSignalSpy failed(d.get(), &ModelDownloader::failed);
    d->start(server_->url("/missing.gguf"));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Failed, kWaitMs);
    QVERIFY2(d->errorString().contains(QLatin1String("HTTP 404")), qPrintable(d->errorString()));
    QCOMPARE(failed.count(), 1);
    QCOMPARE(failed.at(0).at(0).toString(), d->errorString());
    QVERIFY(QDir(dir_->path()).entryList(QDir::Files | QDir::Hidden).isEmpty());
}

void TestModelDownloader::serverErrorIsResumable() {
    TestRoute route;
    route.status = 503;
    server_->setRoute("/busy.gguf", route);
    auto d = make();
    d->start(server_->url("/busy.gguf"));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Failed, kWaitMs);
    QVERIFY2(d->errorString().contains(QLatin1String("HTTP 503")), qPrintable(d->errorString()));
    QVERIFY(d->canResume());
    server_->route("/busy.gguf").status = 200;
    server_->route("/busy.gguf").body = model_;
    d->resume();
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Done, kWaitMs);
    QCOMPARE(read_all(dest("busy.gguf")), model_);
}

void TestModelDownloader::notGgufRejected() {
    QByteArray page =
        "<!DOCTYPE html><html><body>Please log in to download this model.</body></html>";
    page += QByteArray(5000, ' ');
    server_->route("/gated.gguf").body = page;
    auto d = make();
    d->start(server_->url("/gated.gguf"));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Failed, kWaitMs);
    QVERIFY2(d->errorString().contains(QLatin1String("not a GGUF model")),
             qPrintable(d->errorString()));
    QVERIFY(d->errorString().contains(QLatin1String("web page")));
    QCOMPARE(d->bytesReceived(), page.size());
    QVERIFY(QDir(dir_->path()).entryList(QDir::Files | QDir::Hidden).isEmpty());
}

void TestModelDownloader::existingDestinationRefused() {
    server_->route("/have.gguf").body = model_;
    {
        QFile existing(dest("have.gguf"));
        QVERIFY(existing.open(QIODevice::WriteOnly));
        existing.write("my own model");
    }
    auto d = make();
    QVERIFY(d->destinationExists(server_->url("/have.gguf")));
    QVERIFY(!d->destinationExists(server_->url("/other.gguf")));
    QSignalSpy failed(d.get(), &ModelDownloader::failed);
    d->start(server_->url("/have.gguf"));
    QCOMPARE(d->state(), ModelDownloader::Failed);
    QVERIFY2(d->errorString().contains(QLatin1String("already exists")),
             qPrintable(d->errorString()));
    QCOMPARE(failed.count(), 1);
    QVERIFY(!d->canResume());
    d->resume();  // not resumable: nothing happens
    QCOMPARE(d->state(), ModelDownloader::Failed);
    // Nothing was sent: a later download through the same downloader is the only request
    // the server ever gets (one that resume() had sent would have come first).
    server_->route("/other.gguf").body = model_;
    d->start(server_->url("/other.gguf"));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Done, kWaitMs);
    QCOMPARE(server_->requests().size(), 1);
    QCOMPARE(server_->requests().first().path, QByteArray("/other.gguf"));
    QCOMPARE(read_all(dest("have.gguf")), QByteArray("my own model"));
    QVERIFY(!QFileInfo::exists(dest("have.gguf.part")));
}

void TestModelDownloader::diskFullIsReadable() {
#ifdef Q_OS_LINUX
    if (!QFileInfo::exists(QStringLiteral("/dev/full"))) QSKIP("no /dev/full");
    server_->route("/full.gguf").body = model_;
    // Writes to /dev/full fail with ENOSPC, like a full disk.
    QVERIFY(QFile::link(QStringLiteral("/dev/full"), dest("full.gguf.part")));
    auto d = make();
    d->start(server_->url("/full.gguf"));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Failed, kWaitMs);
    QVERIFY2(d->errorString().contains(QLatin1String("Cannot write")),
             qPrintable(d->errorString()));
    QVERIFY2(d->errorString().contains(QLatin1String("disk full")), qPrintable(d->errorString()));
    QVERIFY(!QFileInfo::exists(dest("full.gguf")));
#else
    QSKIP("needs /dev/full");
#endif
}

void TestModelDownloader::unsupportedScheme() {
    auto d = make();
    d->start(QUrl("ftp://example.com/m.gguf"));
    QCOMPARE(d->state(), ModelDownloader::Failed);
    QVERIFY(d->errorString().contains(QLatin1String("http")));
    d->start(QUrl("not a url"));
    QCOMPARE(d->state(), ModelDownloader::Failed);
}

QTEST_GUILESS_MAIN(TestModelDownloader)
#include "tst_model_downloader.moc"
