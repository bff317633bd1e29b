// ModelCatalog: the catalog built into the app is valid and complete (every model has a
// repository, files with sizes, sources, and an architecture Hearth runs); a malformed or
// hostile document is refused whole; the fit of a file counts its KV cache exactly as
// the engine sizes it; a newer list from the update address (a local server) is kept and
// used after a restart, an older, invalid, oversized or unreachable one is not, and
// automatic checks keep to the user's setting and to once a day.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkProxy>
#include <QRegularExpression>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "core/download_http.h"
#include "core/model_catalog.h"
#include "fit_estimate.h"
#include "test_http_server.h"

namespace {

constexpr int kWaitMs = 30000;

QJsonObject tiny_model(const QString& id = QStringLiteral("tiny-1b")) {
    return {
        {"id", id},
        {"name", "Tiny 1B"},
        {"family", "Tiny"},
        {"architecture", "llama"},
        {"parameters_b", 1.2},
        {"repo", "someone/Tiny-GGUF"},
        {"license", "apache-2.0"},
        {"context_length", 8192},
        {"description", "A small model."},
        {"recommended", "Q4_K_M"},
        {"shape", QJsonObject{{"layers", 16}, {"kv_heads", 8}, {"head_dim", 64}, {"vocab", 1000}}},
        {"files",
         QJsonArray{
             QJsonObject{
                 {"name", "Tiny-Q4_K_M.gguf"}, {"quant", "Q4_K_M"}, {"size_bytes", 800000000}},
             QJsonObject{
                 {"name", "sub/Tiny-Q8_0.gguf"}, {"quant", "Q8_0"}, {"size_bytes", 1300000000}}}},
        {"sources", QJsonArray{"https://huggingface.co/someone/Tiny-GGUF"}},
        {"unchecked", QJsonArray{}}};
}

QByteArray document(const QString& updated, const QJsonArray& models) {
    return QJsonDocument(QJsonObject{{"format", "hearth.catalog"},
                                     {"version", 1},
                                     {"updated", updated},
                                     {"models", models}})
        .toJson();
}

}  // namespace

class TestModelCatalog : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() { QNetworkProxy::setApplicationProxy(QNetworkProxy::NoProxy); }

    void builtInCatalogIsComplete() {
        QTemporaryDir empty;
        ModelCatalog c;
        c.setCacheDir(empty.path());
        QVERIFY(!c.fromUpdate());
        QVERIFY2(c.models().size() >= 15, "the catalog lists the desktop models of today");
        static const QRegularExpression date(QStringLiteral("^\\d{4}-\\d{2}-\\d{2}$"));
        QVERIFY(date.match(c.updated()).hasMatch());
        QSet<QString> families;
        for (const QVariant& v : c.models()) {
            const QVariantMap m = v.toMap();
            const QString id = m.value("id").toString();
            families.insert(m.value("family").toString());
            QVERIFY2(m.value("supported").toBool(), qPrintable(id));
            QVERIFY2(!m.value("description").toString().isEmpty(), qPrintable(id));
            QVERIFY2(!m.value("license").toString().isEmpty(), qPrintable(id));
            QVERIFY2(m.value("contextLength").toLongLong() >= 2048, qPrintable(id));
            QVERIFY2(!m.value("sources").toStringList().isEmpty(), qPrintable(id));
            for (const QString& s : m.value("sources").toStringList())
                QVERIFY2(s.startsWith(QLatin1String("https://")), qPrintable(id + ": " + s));
            // The KV cache's numbers, for a fit that is more than the weights.
            const QVariantMap shape = m.value("shape").toMap();
            QVERIFY2(shape.value("layers").toInt() > 0 && shape.value("kvHeads").toInt() > 0 &&
                         shape.value("headDim").toInt() > 0,
                     qPrintable(id));
            const QVariantList files = m.value("files").toList();
            QVERIFY2(!files.isEmpty(), qPrintable(id));
            int recommended = 0;
            for (const QVariant& fv : files) {
                const QVariantMap f = fv.toMap();
                QVERIFY2(f.value("size").toLongLong() > 50'000'000, qPrintable(id));
                QVERIFY2(!f.value("quant").toString().isEmpty(), qPrintable(id));
                QCOMPARE(f.value("url").toUrl().toString(),
                         "https://huggingface.co/" + m.value("repo").toString() + "/resolve/main/" +
                             f.value("name").toString());
                // Hearth opens single files: no split parts in the catalog.
                QVERIFY2(
                    !f.value("name").toString().contains(QRegularExpression("-\\d{5}-of-\\d{5}")),
                    qPrintable(id));
                recommended += f.value("recommended").toBool() ? 1 : 0;
            }
            QVERIFY2(recommended == 1, qPrintable(id + ": one recommended file"));
        }
        for (const char* f : {"Llama 3.2", "Qwen3", "Gemma 3", "SmolLM2"})
            QVERIFY2(families.contains(QLatin1String(f)), f);
    }

    void malformedDocumentsAreRefused_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("why");
        const auto with = [](const char* key, const QJsonValue& v) {
            QJsonObject m = tiny_model();
            m.insert(QLatin1String(key), v);
            return document("2026-12-01", {m});
        };
        const auto with_file = [](const QJsonObject& f) {
            QJsonObject m = tiny_model();
            m.insert("files", QJsonArray{f});
            return document("2026-12-01", {m});
        };
        QTest::newRow("not json") << QByteArray("{\"format\": ") << "not JSON";
        QTest::newRow("another format")
            << QJsonDocument(QJsonObject{{"format", "x"}}).toJson() << "not a Hearth model catalog";
        QByteArray newer = document("2026-12-01", {tiny_model()});
        newer.replace("\"version\": 1", "\"version\": 2");
        QTest::newRow("newer version") << newer << "newer Hearth";
        QTest::newRow("no date") << document("yesterday", {tiny_model()}) << "no date";
        QTest::newRow("no models") << document("2026-12-01", {}) << "no models";
        QTest::newRow("twice") << document("2026-12-01", {tiny_model(), tiny_model()})
                               << "listed twice";
        QTest::newRow("bad id") << with("id", "Tiny Model") << "valid id";
        QTest::newRow("repo escapes") << with("repo", "../../etc") << "owner/name";
        QTest::newRow("repo url") << with("repo", "https://evil.example/x") << "owner/name";
        QTest::newRow("no name") << with("name", "") << "no name";
        QTest::newRow("huge context") << with("context_length", 1e12) << "context_length";
        QTest::newRow("bad shape") << with("shape", QJsonObject{{"layers", -1}}) << "shape";
        QTest::newRow("file escapes")
            << with_file({{"name", "../../.bashrc.gguf"}, {"quant", "Q4_0"}, {"size_bytes", 10}})
            << "not a .gguf path";
        QTest::newRow("absolute file")
            << with_file({{"name", "/etc/x.gguf"}, {"quant", "Q4_0"}, {"size_bytes", 10}})
            << "not a .gguf path";
        QTest::newRow("not gguf") << with_file({{"name", "run.sh"},
                                                {"quant", "Q4_0"},
                                                {"size_bytes", 10}})
                                  << "not a .gguf path";
        QTest::newRow("negative size")
            << with_file({{"name", "a.gguf"}, {"quant", "Q4_0"}, {"size_bytes", -5}})
            << "size_bytes";
        QTest::newRow("too large") << QByteArray(3 << 20, ' ') << "larger than 2 MiB";
    }
    void malformedDocumentsAreRefused() {
        QFETCH(QByteArray, json);
        QFETCH(QString, why);
        QString error;
        QVERIFY(!ModelCatalog::parse(json, &error));
        QVERIFY2(error.contains(why), qPrintable(error));
    }

    void aFileFitCountsItsKvCache() {
        QTemporaryDir dir;
        QFile kept(dir.filePath("catalog.json"));
        QVERIFY(kept.open(QIODevice::WriteOnly));
        QJsonObject unshaped = tiny_model(QStringLiteral("unshaped"));
        unshaped.remove("shape");
        QJsonObject huge = tiny_model(QStringLiteral("huge"));
        huge.insert("files", QJsonArray{QJsonObject{
                                 {"name", "Huge.gguf"}, {"quant", "F16"}, {"size_bytes", 1e15}}});
        QJsonObject other = tiny_model(QStringLiteral("mamba"));
        other.insert("architecture", "mamba");
        kept.write(document("2999-01-01", {tiny_model(), unshaped, huge, other}));
        kept.close();

        ModelCatalog c;
        c.setCacheDir(dir.path());
        c.setContext(4096);
        QVERIFY(c.fromUpdate());
        QCOMPARE(c.models().size(), 4);
        const QVariantMap m = c.models()[0].toMap();
        const QVariantMap f = m.value("files").toList()[0].toMap();
        QCOMPARE(f.value("url").toUrl().toString(),
                 QStringLiteral(
                     "https://huggingface.co/someone/Tiny-GGUF/resolve/main/Tiny-Q4_K_M.gguf"));
        QVERIFY(f.value("recommended").toBool());
        QCOMPARE(f.value("fit").toString(), QStringLiteral("fits"));
        // The KV cache the engine would allocate for 4,096 tokens of this shape.
        const hearth::KvShape shape{16, 8, 64, 16};
        const auto kv = hearth::kv_cache_sizing(shape, 4096, 0).bytes();
        QVERIFY(kv > 0);
        QVERIFY2(f.value("fitDetail")
                     .toString()
                     .contains(hearth::download::human_size(static_cast<qint64>(kv))),
                 qPrintable(f.value("fitDetail").toString()));
        // Without the shape the weights alone are counted, and the label says so.
        const QVariantMap u = c.models()[1].toMap().value("files").toList()[0].toMap();
        QVERIFY2(u.value("fitText").toString().endsWith(QLatin1String("(plus its KV cache)")),
                 qPrintable(u.value("fitText").toString()));
        const QVariantMap h = c.models()[2].toMap().value("files").toList()[0].toMap();
        QCOMPARE(h.value("fit").toString(), QStringLiteral("too-big"));
        const QVariantMap o = c.models()[3].toMap();
        QVERIFY(!o.value("supported").toBool());
        QCOMPARE(o.value("files").toList()[0].toMap().value("fit").toString(),
                 QStringLiteral("unsupported"));
        // Files come from where the Hub is said to be.
        c.setHubUrl(QStringLiteral("http://127.0.0.1:9/"));
        QCOMPARE(c.models()[0].toMap().value("files").toList()[1].toMap().value("url").toUrl(),
                 QUrl("http://127.0.0.1:9/someone/Tiny-GGUF/resolve/main/sub/Tiny-Q8_0.gguf"));
    }

    void aNewerListIsKeptAndUsed() {
        TestHttpServer server;
        QVERIFY(server.listen());
        server.route("/catalog.json").body = document("2999-01-01", {tiny_model()});
        QTemporaryDir dir;
        ModelCatalog c;
        c.setCacheDir(dir.path());
        const QString built_in = c.updated();
        c.setUpdateUrl(server.url("/catalog.json").toString());
        c.checkForUpdate();
        QVERIFY(c.checking());
        QTRY_VERIFY_WITH_TIMEOUT(!c.checking(), kWaitMs);
        QVERIFY2(c.status().contains(QLatin1String("2999-01-01")), qPrintable(c.status()));
        QVERIFY(c.fromUpdate());
        QCOMPARE(c.models().size(), 1);
        QVERIFY(QFileInfo::exists(dir.filePath("catalog.json")));

        // After a restart, offline: the kept list.
        ModelCatalog again;
        again.setCacheDir(dir.path());
        QVERIFY(again.fromUpdate());
        QCOMPARE(again.updated(), QStringLiteral("2999-01-01"));

        // An older list (a stale mirror) leaves the built-in one in use.
        server.route("/catalog.json").body = document("2000-01-01", {tiny_model()});
        QTemporaryDir other;
        ModelCatalog old;
        old.setCacheDir(other.path());
        old.setUpdateUrl(server.url("/catalog.json").toString());
        old.checkForUpdate();
        QTRY_VERIFY_WITH_TIMEOUT(!old.checking(), kWaitMs);
        QVERIFY(!old.fromUpdate());
        QCOMPARE(old.updated(), built_in);
        QVERIFY2(old.status().contains(QLatin1String("up to date")), qPrintable(old.status()));
    }

    void aBadListChangesNothing_data() {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("why");
        QTest::newRow("invalid") << QByteArray("<html>captive portal</html>") << 200 << "not valid";
        QTest::newRow("server error") << QByteArray() << 503 << "HTTP 503";
        QTest::newRow("oversized") << QByteArray(3 << 20, '{') << 200 << "larger than 2 MiB";
    }
    void aBadListChangesNothing() {
        QFETCH(QByteArray, body);
        QFETCH(int, status);
        QFETCH(QString, why);
        TestHttpServer server;
        QVERIFY(server.listen());
        TestRoute r;
        r.body = body;
        r.status = status;
        server.setRoute("/catalog.json", r);
        QTemporaryDir dir;
        QFile kept(dir.filePath("catalog.json"));
        QVERIFY(kept.open(QIODevice::WriteOnly));
        const QByteArray before = document("2999-01-01", {tiny_model()});
        kept.write(before);
        kept.close();
        ModelCatalog c;
        c.setCacheDir(dir.path());
        c.setUpdateUrl(server.url("/catalog.json").toString());
        c.checkForUpdate();
        QTRY_VERIFY_WITH_TIMEOUT(!c.checking(), kWaitMs);
        QVERIFY2(c.status().contains(why), qPrintable(c.status()));
        QVERIFY(c.fromUpdate());
        QCOMPARE(c.models().size(), 1);
        QFile again(dir.filePath("catalog.json"));
        QVERIFY(again.open(QIODevice::ReadOnly));
        QCOMPARE(again.readAll(), before);
    }

    void unreachableSaysSo() {
        QTemporaryDir dir;
        ModelCatalog c;
        c.setCacheDir(dir.path());
        c.setUpdateUrl(QStringLiteral("http://127.0.0.1:9/catalog.json"));  // discard port
        c.checkForUpdate();
        QTRY_VERIFY_WITH_TIMEOUT(!c.checking(), kWaitMs);
        QVERIFY2(c.status().startsWith(QLatin1String("Cannot reach 127.0.0.1")),
                 qPrintable(c.status()));
        QVERIFY(!c.models().isEmpty());  // the built-in list, as before
    }

    void automaticChecksFollowTheSetting() {
        TestHttpServer server;
        QVERIFY(server.listen());
        server.route("/catalog.json").body = document("2999-01-01", {tiny_model()});
        QTemporaryDir dir;
        ModelCatalog c;
        c.setCacheDir(dir.path());
        c.setUpdateUrl(server.url("/catalog.json").toString());
        c.setUpdatesEnabled(false);
        c.checkIfDue();
        QVERIFY(!c.checking());
        c.setUpdatesEnabled(true);
        c.checkIfDue();
        QVERIFY(c.checking());
        QTRY_VERIFY_WITH_TIMEOUT(!c.checking(), kWaitMs);
        QCOMPARE(server.requests().size(), 1);
        c.checkIfDue();  // once a run
        QVERIFY(!c.checking());
        // A new run with a list kept less than a day ago does not ask either.
        ModelCatalog next;
        next.setCacheDir(dir.path());
        next.setUpdateUrl(server.url("/catalog.json").toString());
        next.checkIfDue();
        QVERIFY(!next.checking());
        QCOMPARE(server.requests().size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestModelCatalog)
#include "tst_model_catalog.moc"
