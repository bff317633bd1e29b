// ModelDownloader through redirects, as Hugging Face answers a download: the "resolve"
// link answers 302 to a CDN host, with the file's LFS checksum and size in X-Linked-Etag
// and X-Linked-Size (huggingface_hub's constants.py names the two headers;
// file_download.py's metadata request reads them from the Hub's own answer, sent with
// allow_redirects=False and following relative redirects only). A gated file needs the
// user's token, which goes to the Hub and never to the CDN host. Two local servers play
// the Hub and the CDN (different ports: different origins).
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QNetworkProxy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include "core/model_downloader.h"
#include "test_http_server.h"

namespace {

constexpr int kWaitMs = 30000;

}  // namespace

class TestDownloadRedirects : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase();
    void init();
    void cleanup();

    void redirectFollowed();
    void resumeThroughRedirect();
    void tokenGoesToTheHubOnly();
    void hubChecksumIsUsed();
    void hubChecksumDisagreeingStops();
    void hubSizeDisagreeingStops();
    void redirectLoopEnds();

  private:
    QString dest(const QString& name) const { return QDir(dir_->path()).filePath(name); }
    std::unique_ptr<ModelDownloader> make();
    // The Hub's answer for /org/repo/resolve/main/<name>: 302 to the CDN's /blob/<name>.
    void hub_redirect(const QByteArray& name, const QByteArray& etag, qint64 size);

    QByteArray model_;
    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<TestHttpServer> server_;  // the Hub
    std::unique_ptr<TestHttpServer> cdn_;
};

void TestDownloadRedirects::initTestCase() {
    QNetworkProxy::setApplicationProxy(QNetworkProxy::NoProxy);
    model_ = small_synthetic_model();
    QVERIFY(model_.size() > 100000);
}

void TestDownloadRedirects::init() {
    dir_ = std::make_unique<QTemporaryDir>();
    QVERIFY(dir_->isValid());
    server_ = std::make_unique<TestHttpServer>();
    QVERIFY(server_->listen());
    cdn_ = std::make_unique<TestHttpServer>();
    QVERIFY(cdn_->listen());
}

void TestDownloadRedirects::cleanup() {
    server_.reset();
    cdn_.reset();
    dir_.reset();
}

std::unique_ptr<ModelDownloader> TestDownloadRedirects::make() {
    auto d = std::make_unique<ModelDownloader>();
    d->setModelsDir(dir_->path());
    return d;
}

void TestDownloadRedirects::hub_redirect(const QByteArray& name, const QByteArray& etag,
                                         qint64 size) {
    TestRoute hub;
    hub.redirect_to = cdn_->url("/blob/" + name).toEncoded() + "?X-Amz-Signature=abc";
    hub.headers = {{"X-Linked-ETag", '"' + etag + '"'},
                   {"X-Linked-Size", QByteArray::number(size)},
                   {"ETag", "\"1f2e3d\""}};
    server_->setRoute("/org/repo/resolve/main/" + name, hub);
    cdn_->route("/blob/" + name).body = model_;
}

void TestDownloadRedirects::redirectFollowed() {
    TestRoute redirect;
    redirect.redirect_to = "/cdn/0123abcd?signature=xyz";
    server_->setRoute("/org/repo/resolve/main/tiny.gguf", redirect);
    server_->route("/cdn/0123abcd").body = model_;

    auto d = make();
    d->start(server_->url("/org/repo/resolve/main/tiny.gguf"), sha256_hex(model_));
    QCOMPARE(d->destinationPath(), dest("tiny.gguf"));  // named after the link, not the CDN
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Done, kWaitMs);
    QCOMPARE(read_all(dest("tiny.gguf")), model_);
    QCOMPARE(server_->requests().size(), 2);
    QCOMPARE(server_->requests()[1].path, QByteArray("/cdn/0123abcd?signature=xyz"));
}

void TestDownloadRedirects::resumeThroughRedirect() {
    TestRoute redirect;
    redirect.redirect_to = "/cdn/blob";
    server_->setRoute("/r/tiny.gguf", redirect);
    TestRoute cdn;
    cdn.body = model_;
    cdn.drop_after = model_.size() / 2;
    server_->setRoute("/cdn/blob", cdn);

    auto d = make();
    d->start(server_->url("/r/tiny.gguf"), sha256_hex(model_));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Failed, kWaitMs);
    const qint64 part = QFileInfo(dest("tiny.gguf.part")).size();
    QVERIFY(part > 0);
    d->resume();
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Done, kWaitMs);
    QCOMPARE(read_all(dest("tiny.gguf")), model_);
    // The Range went along with the redirect.
    QCOMPARE(server_->requests().size(), 4);
    QCOMPARE(server_->requests()[3].path, QByteArray("/cdn/blob"));
    QCOMPARE(server_->requests()[3].headers.value("range"),
             "bytes=" + QByteArray::number(part) + '-');
}

void TestDownloadRedirects::tokenGoesToTheHubOnly() {
    hub_redirect("gated.gguf", sha256_hex(model_).toLatin1(), model_.size());
    auto d = make();
    d->setToken(QStringLiteral(" hf_secret "));
    d->start(server_->url("/org/repo/resolve/main/gated.gguf"));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Done, kWaitMs);
    QCOMPARE(read_all(dest("gated.gguf")), model_);
    QCOMPARE(server_->requests().size(), 1);
    QCOMPARE(server_->requests()[0].headers.value("authorization"), QByteArray("Bearer hf_secret"));
    QCOMPARE(cdn_->requests().size(), 1);
    QVERIFY(!cdn_->requests()[0].headers.contains("authorization"));
    QCOMPARE(cdn_->requests()[0].path, QByteArray("/blob/gated.gguf?X-Amz-Signature=abc"));

    // Without a token nothing is sent, even to the Hub.
    QFile::remove(dest("gated.gguf"));
    server_->clearRequests();
    auto plain = make();
    plain->start(server_->url("/org/repo/resolve/main/gated.gguf"));
    QTRY_COMPARE_WITH_TIMEOUT(plain->state(), ModelDownloader::Done, kWaitMs);
    QVERIFY(!server_->requests()[0].headers.contains("authorization"));
}

void TestDownloadRedirects::hubChecksumIsUsed() {
    // No checksum given: the Hub's is the one checked, and a body that does not match it
    // is thrown away (the CDN sent the wrong bytes).
    hub_redirect("m.gguf", QByteArray(64, 'a'), model_.size());
    auto d = make();
    d->start(server_->url("/org/repo/resolve/main/m.gguf"));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Failed, kWaitMs);
    QVERIFY2(d->errorString().contains(QLatin1String("Checksum mismatch")),
             qPrintable(d->errorString()));
    QVERIFY(!QFileInfo::exists(dest("m.gguf")));
    QVERIFY(!QFileInfo::exists(dest("m.gguf.part")));

    // The right one: the download is verified and kept. A git blob's SHA-1 (40 digits)
    // is not a SHA-256 and is not used.
    hub_redirect("ok.gguf", sha256_hex(model_).toUpper().toLatin1(), model_.size());
    auto ok = make();
    ok->start(server_->url("/org/repo/resolve/main/ok.gguf"));
    QTRY_COMPARE_WITH_TIMEOUT(ok->state(), ModelDownloader::Done, kWaitMs);
    hub_redirect("sha1.gguf", QByteArray(40, 'b'), model_.size());
    auto sha1 = make();
    sha1->start(server_->url("/org/repo/resolve/main/sha1.gguf"));
    QTRY_COMPARE_WITH_TIMEOUT(sha1->state(), ModelDownloader::Done, kWaitMs);
}

void TestDownloadRedirects::hubChecksumDisagreeingStops() {
    // Listed with one checksum, the Hub now names another: the file changed; the CDN is
    // not asked for it.
    hub_redirect("m.gguf", QByteArray(64, 'c'), model_.size());
    auto d = make();
    d->start(server_->url("/org/repo/resolve/main/m.gguf"), sha256_hex(model_));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Failed, kWaitMs);
    QVERIFY2(d->errorString().contains(QLatin1String("changed since it was listed")),
             qPrintable(d->errorString()));
    QCOMPARE(cdn_->requests().size(), 0);
    QVERIFY(!QFileInfo::exists(dest("m.gguf")));
}

void TestDownloadRedirects::hubSizeDisagreeingStops() {
    hub_redirect("m.gguf", sha256_hex(model_).toLatin1(), model_.size() + 1);
    auto d = make();
    d->start(server_->url("/org/repo/resolve/main/m.gguf"));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Failed, kWaitMs);
    QVERIFY2(d->errorString().contains(QLatin1String("lists the file as")),
             qPrintable(d->errorString()));
    QVERIFY(!QFileInfo::exists(dest("m.gguf")));
}

void TestDownloadRedirects::redirectLoopEnds() {
    TestRoute loop;
    loop.redirect_to = "/loop.gguf";
    server_->setRoute("/loop.gguf", loop);
    auto d = make();
    d->start(server_->url("/loop.gguf"));
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), ModelDownloader::Failed, kWaitMs);
    QVERIFY2(d->errorString().contains(QLatin1String("Too many redirects")),
             qPrintable(d->errorString()));
    QCOMPARE(server_->requests().size(), 11);
}

QTEST_GUILESS_MAIN(TestDownloadRedirects)
#include "tst_download_redirects.moc"
