// Hugging Face search and repository listing (core/hub_search.h) against a local server
// playing the Hub. The answers have the shapes huggingface_hub reads (hf_api.py:
// list_models builds GET /api/models with search, filter, sort, limit and expand; ModelInfo
// takes id, downloads, likes, gated (false, "auto" or "manual"), lastModified;
// list_repo_tree reads GET /api/models/<repo>/tree/<revision>?recursive=true, RepoFile
// being {type, path, size, oid, lfs: {oid (the SHA-256), size, pointerSize}}), and a file's
// /resolve/ link redirects to a CDN host. A download from the listing is checked against
// its LFS SHA-256.
#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUrlQuery>
#include <QtTest>

#include "core/hub_search.h"
#include "core/model_downloader.h"
#include "test_http_server.h"

namespace {

QJsonObject lfs_file(const QString& path, qint64 size, const QString& sha) {
    return {{"type", "file"},
            {"path", path},
            {"size", size},
            {"oid", "0123456789abcdef0123456789abcdef01234567"},
            {"lfs", QJsonObject{{"oid", sha}, {"size", size}, {"pointerSize", 135}}}};
}

QByteArray json(const QJsonArray& a) {
    return QJsonDocument(a).toJson();
}

bool wait_idle(HubSearch& hub) {
    return QTest::qWaitFor([&] { return !hub.busy(); }, 10000);
}

}  // namespace

class TestHubSearch : public QObject {
    Q_OBJECT
    TestHttpServer server_;
    QByteArray model_;
    QString sha_;

  private slots:
    void initTestCase() {
        QVERIFY(server_.listen());
        model_ = small_synthetic_model();
        QVERIFY(!model_.isEmpty());
        sha_ = QString::fromLatin1(
            QCryptographicHash::hash(model_, QCryptographicHash::Sha256).toHex());

        TestRoute search;
        search.body = json(QJsonArray{QJsonObject{{"id", "bartowski/Tiny-GGUF"},
                                                  {"downloads", 12345},
                                                  {"likes", 67},
                                                  {"gated", false},
                                                  {"lastModified", "2026-10-01T12:00:00.000Z"}},
                                      QJsonObject{{"id", "meta-llama/Gated-GGUF"},
                                                  {"downloads", 99},
                                                  {"likes", 1},
                                                  {"gated", "manual"}},
                                      QJsonObject{{"downloads", 1}}});  // no id: passed over
        server_.setRoute("/api/models", search);

        TestRoute tree;
        tree.body = json(QJsonArray{
            QJsonObject{{"type", "file"}, {"path", "README.md"}, {"size", 900}, {"oid", "aa"}},
            QJsonObject{{"type", "directory"}, {"path", "big"}, {"size", 0}, {"oid", "bb"}},
            lfs_file("tiny-Q8_0.gguf", model_.size(), sha_),
            lfs_file("tiny-Q4_K_M.gguf", 300, QString(64, QLatin1Char('c'))),
            lfs_file("mmproj-tiny-f16.gguf", 200, QString(64, QLatin1Char('d'))),
            lfs_file("big/tiny-F16-00001-of-00002.gguf", 5000000, QString(64, QLatin1Char('e'))),
            lfs_file("big/tiny-F16-00002-of-00002.gguf", 4000000, QString(64, QLatin1Char('f')))});
        server_.setRoute("/api/models/bartowski/Tiny-GGUF/tree/main", tree);
        // The resolve link redirects to the CDN, which serves the bytes with ranges.
        TestRoute resolve;
        resolve.redirect_to = "/cdn/blobs/" + sha_.toLatin1();
        server_.setRoute("/bartowski/Tiny-GGUF/resolve/main/tiny-Q8_0.gguf", resolve);
        TestRoute cdn;
        cdn.body = model_;
        cdn.etag = "\"" + sha_.toLatin1() + "\"";
        server_.setRoute("/cdn/blobs/" + sha_.toLatin1(), cdn);
        TestRoute bad_resolve;
        bad_resolve.redirect_to = "/cdn/other";
        server_.setRoute("/bartowski/Tiny-GGUF/resolve/main/tiny-Q4_K_M.gguf", bad_resolve);
        TestRoute other;
        other.body = model_;  // not the file the listing's checksum names
        server_.setRoute("/cdn/other", other);

        TestRoute gated;
        gated.status = 401;
        server_.setRoute("/api/models/meta-llama/Gated-GGUF/tree/main", gated);
        TestRoute slow;
        slow.status = 429;
        server_.setRoute("/api/models/busy/Repo/tree/main", slow);
        TestRoute garbage;
        garbage.body = "<html>not json</html>";
        server_.setRoute("/api/models/odd/Repo/tree/main", garbage);
    }

    void quantisationFromTheName() {
        QCOMPARE(HubSearch::quant_of("Qwen3-4B-Q4_K_M.gguf"), QStringLiteral("Q4_K_M"));
        QCOMPARE(HubSearch::quant_of("gemma-3-270m-it-q8_0.gguf"), QStringLiteral("Q8_0"));
        QCOMPARE(HubSearch::quant_of("Llama-3.2-1B-Instruct.IQ4_XS.gguf"),
                 QStringLiteral("IQ4_XS"));
        QCOMPARE(HubSearch::quant_of("model-bf16-00001-of-00002.gguf"), QStringLiteral("BF16"));
        QCOMPARE(HubSearch::quant_of("model.gguf"), QString());
    }

    void searchAsksWhatHuggingFaceExpects() {
        HubSearch hub;
        hub.setBaseUrl(server_.url("").toString());
        hub.setToken("hf_secret");
        server_.clearRequests();
        hub.search("tiny llama", "trending");
        QVERIFY(wait_idle(hub));
        QCOMPARE(hub.errorString(), QString());
        QCOMPARE(hub.results().size(), 2);
        const QVariantMap first = hub.results()[0].toMap();
        QCOMPARE(first.value("id").toString(), QStringLiteral("bartowski/Tiny-GGUF"));
        QCOMPARE(first.value("downloads").toLongLong(), 12345);
        QCOMPARE(first.value("gated").toBool(), false);
        QCOMPARE(hub.results()[1].toMap().value("gated").toBool(), true);

        QCOMPARE(server_.requests().size(), 1);
        const TestRequest& r = server_.requests()[0];
        const QUrlQuery q(QUrl(QString::fromLatin1(r.path)));
        QCOMPARE(q.queryItemValue("search", QUrl::FullyDecoded), QStringLiteral("tiny llama"));
        QCOMPARE(q.queryItemValue("filter"), QStringLiteral("gguf"));
        QCOMPARE(q.queryItemValue("sort"), QStringLiteral("trendingScore"));
        QCOMPARE(q.allQueryItemValues("expand"),
                 (QStringList{"downloads", "likes", "gated", "lastModified"}));
        QCOMPARE(r.headers.value("authorization"), QByteArray("Bearer hf_secret"));
    }

    void listsARepositorysModels() {
        HubSearch hub;
        hub.setBaseUrl(server_.url("").toString());
        hub.listFiles("bartowski/Tiny-GGUF");
        QVERIFY(wait_idle(hub));
        QCOMPARE(hub.errorString(), QString());
        QCOMPARE(hub.repo(), QStringLiteral("bartowski/Tiny-GGUF"));
        QStringList names;
        for (const QVariant& v : hub.files()) names << v.toMap().value("name").toString();
        // Smallest first; no README, no projector; the split model once.
        QCOMPARE(names, (QStringList{"tiny-Q4_K_M.gguf", "tiny-Q8_0.gguf",
                                     "tiny-F16-00001-of-00002.gguf"}));
        const QVariantMap q8 = hub.files()[1].toMap();
        QCOMPARE(q8.value("quant").toString(), QStringLiteral("Q8_0"));
        QCOMPARE(q8.value("sha256").toString(), sha_);
        QCOMPARE(q8.value("size").toLongLong(), model_.size());
        QCOMPARE(q8.value("fit").toString(), QStringLiteral("fits"));
        const QVariantMap split = hub.files()[2].toMap();
        QCOMPARE(split.value("parts").toInt(), 2);
        QCOMPARE(split.value("size").toLongLong(), 9000000);
        // Every part to download, the first first; the engine opens split models.
        const QVariantList parts = split.value("files").toList();
        QCOMPARE(parts.size(), 2);
        QCOMPARE(parts[0].toMap().value("path").toString(),
                 QStringLiteral("big/tiny-F16-00001-of-00002.gguf"));
        QCOMPARE(parts[1].toMap().value("path").toString(),
                 QStringLiteral("big/tiny-F16-00002-of-00002.gguf"));
        QCOMPARE(split.value("fit").toString(), QStringLiteral("fits"));
        QCOMPARE(hub.downloadUrl("tiny-Q8_0.gguf"),
                 server_.url("/bartowski/Tiny-GGUF/resolve/main/tiny-Q8_0.gguf"));
    }

    void readsEveryPageOfARepository() {
        // The tree comes in pages; a Link header's rel="next" names the next one
        // (huggingface_hub's utils/_pagination.py: paginate follows response.links["next"]).
        const QByteArray next =
            "/api/models/paged/Many-GGUF/tree/main?recursive=true&cursor=ZmlsZToxMDAw";
        TestRoute first;
        first.body = json({lfs_file("many-Q2_K.gguf", 3000000, sha_)});
        first.headers = {{"Link", "<" + server_.url(next).toEncoded() + ">; rel=\"next\""}};
        server_.setRoute("/api/models/paged/Many-GGUF/tree/main", first);
        server_.route(next).body = json({lfs_file("many-Q8_0.gguf", 8000000, sha_)});
        HubSearch hub;
        hub.setBaseUrl(server_.url("").toString());
        hub.listFiles("paged/Many-GGUF");
        QVERIFY(wait_idle(hub));
        QCOMPARE(hub.errorString(), QString());
        QStringList names;
        for (const QVariant& v : hub.files()) names << v.toMap().value("name").toString();
        QCOMPARE(names, (QStringList{"many-Q2_K.gguf", "many-Q8_0.gguf"}));

        // A next page on another site is not asked for (the token would go with it).
        TestRoute away;
        away.body = json({lfs_file("away-Q2_K.gguf", 3000000, sha_)});
        away.headers = {{"Link", "<https://elsewhere.example/x?cursor=1>; rel=\"next\""}};
        server_.setRoute("/api/models/paged/Away-GGUF/tree/main", away);
        hub.setToken(QStringLiteral("hf_secret"));
        hub.listFiles("paged/Away-GGUF");
        QVERIFY(wait_idle(hub));
        QVERIFY2(hub.errorString().contains(QLatin1String("elsewhere.example")),
                 qPrintable(hub.errorString()));

        // The header as RFC 8288 writes it: several links, quoted or bare, relative.
        const QUrl page("https://h.example/api/a");
        QCOMPARE(HubSearch::next_page("<https://h.example/a?cursor=2>; rel=\"next\", "
                                      "<https://h.example/a>; rel=\"prev\"",
                                      page),
                 QUrl("https://h.example/a?cursor=2"));
        QCOMPARE(HubSearch::next_page("<https://h.example/a>; rel=\"prev\"", page), QUrl());
        QCOMPARE(HubSearch::next_page("</api/x?cursor=3>; rel=next", page),
                 QUrl("https://h.example/api/x?cursor=3"));
        QCOMPARE(HubSearch::next_page("", page), QUrl());
    }

    void downloadsThroughTheCdnAndChecksTheSum() {
        HubSearch hub;
        hub.setBaseUrl(server_.url("").toString());
        hub.listFiles("bartowski/Tiny-GGUF");
        QVERIFY(wait_idle(hub));
        QTemporaryDir dir;
        ModelDownloader downloader;
        downloader.setModelsDir(dir.path());
        QSignalSpy done(&downloader, &ModelDownloader::finished);
        const QVariantMap q8 = hub.files()[1].toMap();
        downloader.start(hub.downloadUrl(q8.value("path").toString()),
                         q8.value("sha256").toString());
        QTRY_VERIFY_WITH_TIMEOUT(!done.isEmpty(), 15000);
        QCOMPARE(done[0][0].toString(), dir.filePath("tiny-Q8_0.gguf"));

        // The bytes do not match the repository's checksum: refused, nothing left behind.
        QSignalSpy failed(&downloader, &ModelDownloader::failed);
        const QVariantMap q4 = hub.files()[0].toMap();
        downloader.start(hub.downloadUrl(q4.value("path").toString()),
                         q4.value("sha256").toString());
        QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty(), 15000);
        QVERIFY2(failed[0][0].toString().contains("SHA-256", Qt::CaseInsensitive) ||
                     failed[0][0].toString().contains("checksum", Qt::CaseInsensitive),
                 qPrintable(failed[0][0].toString()));
        QVERIFY(!QFile::exists(dir.filePath("tiny-Q4_K_M.gguf")));
    }

    void saysWhatWentWrong_data() {
        QTest::addColumn<QString>("repo");
        QTest::addColumn<QString>("expected");
        QTest::newRow("gated") << "meta-llama/Gated-GGUF"
                               << "gated or private";
        QTest::newRow("missing") << "nobody/Nothing"
                                 << "no repository nobody/Nothing";
        QTest::newRow("rate limit") << "busy/Repo"
                                    << "slow down";
        QTest::newRow("not JSON") << "odd/Repo"
                                  << "not a file list";
        QTest::newRow("not a name") << "../etc"
                                    << "not a repository name";
    }
    void saysWhatWentWrong() {
        QFETCH(QString, repo);
        QFETCH(QString, expected);
        HubSearch hub;
        hub.setBaseUrl(server_.url("").toString());
        hub.listFiles(repo);
        QVERIFY(wait_idle(hub));
        QVERIFY2(hub.errorString().contains(expected), qPrintable(hub.errorString()));
        QVERIFY(hub.files().isEmpty());
    }

    void offline() {
        HubSearch hub;
        hub.setBaseUrl("http://127.0.0.1:1");  // nothing listens there
        hub.search("llama");
        QVERIFY(wait_idle(hub));
        QVERIFY2(hub.errorString().startsWith("Cannot reach Hugging Face"),
                 qPrintable(hub.errorString()));
        QVERIFY(hub.results().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestHubSearch)
#include "tst_hub_search.moc"
