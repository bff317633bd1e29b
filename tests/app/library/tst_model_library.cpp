// The Model page's list of models on this computer (core/model_library.h): what it lists
// from the folders it is given, the facts of each file, and what a person can do with a
// row (open at start, add a folder, delete a file it may delete, and nothing else).
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <string>

#include "core/app_settings.h"
#include "core/model_library.h"
#include "gguf/gguf_file.h"
#include "kv/disk_tier.h"
#include "model/synthetic_model.h"

#include "library_files.h"

using namespace hearth::models;

namespace {

QByteArray synthetic(const char* architecture, const std::string& chat_template = {}) {
    hearth::SyntheticModelSpec spec;
    spec.architecture = architecture;
    spec.chat_template = chat_template;
    auto bytes = hearth::make_synthetic_model(spec);
    if (!bytes) return {};
    return QByteArray(reinterpret_cast<const char*>(bytes->data()), qsizetype(bytes->size()));
}

bool wait_scanned(ModelLibrary& lib) {
    if (!lib.scanning()) return true;
    return QTest::qWaitFor([&] { return !lib.scanning(); }, 10000);
}

QVariant role(const ModelLibrary& lib, const QString& path, ModelLibrary::Role r) {
    return lib.data(lib.index(lib.indexOf(path)), r);
}

}  // namespace

class TestModelLibrary : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    QString hearth_, mine_;

  private slots:
    void init() {
        QVERIFY(tmp_.isValid());
        hearth_ = tmp_.path() + "/hearth";
        mine_ = tmp_.path() + "/mine";
        QDir(hearth_).removeRecursively();
        QDir(mine_).removeRecursively();
        QDir().mkpath(hearth_);
        QDir().mkpath(mine_);
    }

    void listsWhatEachFileIs() {
        write(hearth_ + "/Tiny-Llama-F32.gguf", synthetic("llama"));
        write(hearth_ + "/not-a-model.gguf", QByteArray("GGUF") + QByteArray(60, 'x'));
        // Qwen3's template reads enable_thinking (its reasoning can be turned off).
        write(mine_ + "/Tiny-Qwen3-F32.gguf",
              synthetic("qwen3",
                        "{%- if enable_thinking is defined and enable_thinking is false "
                        "%}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"));
        AppSettings settings(tmp_.path() + "/s1.ini");
        ModelLibrary lib;
        lib.setActive(true);
        lib.setRootsForTesting(
            QList<SourceRoot>{{Source::Hearth, hearth_}, {Source::Folder, mine_}});
        lib.setSettings(&settings);
        QVERIFY(wait_scanned(lib));
        QCOMPARE(lib.rowCount(), 3);

        const QString llama = hearth_ + "/Tiny-Llama-F32.gguf";
        QCOMPARE(role(lib, llama, ModelLibrary::SupportedRole).toBool(), true);
        QCOMPARE(role(lib, llama, ModelLibrary::ArchitectureRole).toString(),
                 QStringLiteral("llama"));
        QCOMPARE(role(lib, llama, ModelLibrary::QuantisationRole).toString(),
                 QStringLiteral("F32"));
        QCOMPARE(role(lib, llama, ModelLibrary::SourceLabelRole).toString(),
                 QStringLiteral("Hearth"));
        QCOMPARE(role(lib, llama, ModelLibrary::CanDeleteRole).toBool(), true);
        const QString bad = hearth_ + "/not-a-model.gguf";
        QCOMPARE(role(lib, bad, ModelLibrary::SupportedRole).toBool(), false);
        QVERIFY(!role(lib, bad, ModelLibrary::WhyNotRole).toString().isEmpty());
        const QString qwen = mine_ + "/Tiny-Qwen3-F32.gguf";
        QCOMPARE(role(lib, qwen, ModelLibrary::SourceRole).toString(), QStringLiteral("folder"));
        QCOMPARE(role(lib, qwen, ModelLibrary::ArchitectureRole).toString(),
                 QStringLiteral("qwen3"));

        // Where it looked, for the page.
        QCOMPARE(lib.sources().size(), 2);
        QCOMPARE(lib.sources()[1].toMap().value("models").toInt(), 1);

        // Opening a model notes its time; setting it as the default makes it open at start.
        QVERIFY(!role(lib, llama, ModelLibrary::LastUsedRole).toDateTime().isValid());
        lib.setOpenPath(llama);
        QVERIFY(role(lib, llama, ModelLibrary::LastUsedRole).toDateTime().isValid());
        QCOMPARE(role(lib, llama, ModelLibrary::IsOpenRole).toBool(), true);
        lib.setDefault(qwen);
        QCOMPARE(role(lib, qwen, ModelLibrary::IsDefaultRole).toBool(), true);
        settings.setLastModelPath(llama);
        QCOMPARE(settings.modelToOpen(), qwen);

        // Whether its reasoning can be turned off, for its defaults' form.
        QCOMPARE(role(lib, qwen, ModelLibrary::ThinkingSwitchRole).toBool(), true);
        QCOMPARE(role(lib, llama, ModelLibrary::ThinkingSwitchRole).toBool(), false);
        // Defaults of its own are shown on its row as they are set.
        QCOMPARE(role(lib, qwen, ModelLibrary::OwnDefaultsRole).toBool(), false);
        QSignalSpy changed(&lib, &QAbstractItemModel::dataChanged);
        settings.setModelSampling(qwen, {{"temperature", 0.6}});
        QCOMPARE(changed.count(), 1);
        QCOMPARE(role(lib, qwen, ModelLibrary::OwnDefaultsRole).toBool(), true);
        QCOMPARE(role(lib, llama, ModelLibrary::OwnDefaultsRole).toBool(), false);
        settings.setModelSampling(qwen, {});
        settings.setModelPersona(llama, 3);
        QCOMPARE(role(lib, qwen, ModelLibrary::OwnDefaultsRole).toBool(), false);
        QCOMPARE(role(lib, llama, ModelLibrary::OwnDefaultsRole).toBool(), true);
        // A smaller context of its own changes its fit: the estimate's bytes go down.
        const double before = role(lib, qwen, ModelLibrary::EstimatedBytesRole).toDouble();
        QVERIFY(before > 0);
        settings.setModelContextLength(qwen, 256);
        QVERIFY(role(lib, qwen, ModelLibrary::EstimatedBytesRole).toDouble() < before);
    }

    void factsAreReadAgainWhenAFileChanges() {
        const QString path = hearth_ + "/changing.gguf";
        write(path, synthetic("llama"));
        ModelLibrary lib;
        lib.setActive(true);
        lib.setRootsForTesting(QList<SourceRoot>{{Source::Hearth, hearth_}});
        QVERIFY(wait_scanned(lib));
        QCOMPARE(role(lib, path, ModelLibrary::ArchitectureRole).toString(),
                 QStringLiteral("llama"));
        const QDateTime before = QFileInfo(path).lastModified();
        QFile::remove(path);
        write(path, synthetic("qwen2"));
        // The cache knows a file by its size and time, as make does; both names have five
        // letters, and the file system's clock can give both writes one time, so the new
        // file is dated as a real download a minute later would be.
        QFile changed(path);
        QVERIFY(changed.open(QIODevice::ReadWrite));
        QVERIFY(changed.setFileTime(before.addSecs(60), QFileDevice::FileModificationTime));
        changed.close();
        lib.refresh();
        QVERIFY(wait_scanned(lib));
        QCOMPARE(role(lib, path, ModelLibrary::ArchitectureRole).toString(),
                 QStringLiteral("qwen2"));
    }

    void deletesOnlyWhatItMay() {
        write(hearth_ + "/a.gguf", synthetic("llama"));
        write(hearth_ + "/open.gguf", synthetic("llama"));
        write(mine_ + "/Big-00001-of-00002.gguf", QByteArray("GGUF") + QByteArray(60, 'x'));
        write(mine_ + "/Big-00002-of-00002.gguf", QByteArray("GGUF") + QByteArray(60, 'x'));
        const QString ollama_root = tmp_.path() + "/ollama";
        QDir(ollama_root).removeRecursively();
        const QString digest(64, QLatin1Char('a'));
        write(ollama_root + "/blobs/sha256-" + digest, QByteArray("GGUF") + QByteArray(60, 'x'));
        write(
            ollama_root + "/manifests/registry.ollama.ai/library/m/latest",
            R"({"schemaVersion":2,"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:)" +
                digest.toLatin1() + R"(","size":64}]})");

        AppSettings settings(tmp_.path() + "/s2.ini");
        ModelLibrary lib;
        lib.setActive(true);
        lib.setSettings(&settings);
        lib.setRootsForTesting(QList<SourceRoot>{
            {Source::Hearth, hearth_}, {Source::Folder, mine_}, {Source::Ollama, ollama_root}});
        QVERIFY(wait_scanned(lib));
        QCOMPARE(lib.rowCount(), 4);
        lib.setOpenPath(hearth_ + "/open.gguf");
        lib.setDefault(hearth_ + "/a.gguf");

        const QString blob = ollama_root + "/blobs/sha256-" + digest;
        QCOMPARE(role(lib, blob, ModelLibrary::CanDeleteRole).toBool(), false);
        QVERIFY(lib.remove(blob).contains("belongs to Ollama"));
        QVERIFY(QFile::exists(blob));
        QVERIFY(lib.remove(hearth_ + "/open.gguf").contains("open"));
        QVERIFY(QFile::exists(hearth_ + "/open.gguf"));

        QCOMPARE(lib.remove(hearth_ + "/a.gguf"), QString());
        QVERIFY(!QFile::exists(hearth_ + "/a.gguf"));
        QCOMPARE(settings.defaultModelPath(), QString());  // no longer opened at start
        QCOMPARE(lib.indexOf(hearth_ + "/a.gguf"), -1);
        // A split model goes with all its parts.
        QCOMPARE(lib.remove(mine_ + "/Big-00001-of-00002.gguf"), QString());
        QVERIFY(!QFile::exists(mine_ + "/Big-00002-of-00002.gguf"));
        QCOMPARE(lib.rowCount(), 2);
    }

    void itsKvBlocksOnDiskGoToo() {
        const QString path = hearth_ + "/with-cache.gguf";
        write(path, synthetic("llama"));
        auto file = hearth::gguf::GgufFile::open(path.toStdString());
        QVERIFY(file);
        const std::string fingerprint = (*file)->content_fingerprint();
        file->reset();
        QTemporaryDir kv;
        {  // blocks this model left in the disk tier
            hearth::kv::TierKey::Parts parts;
            parts.model = fingerprint;
            parts.n_layers = 2;
            parts.n_kv_heads = 2;
            parts.head_dim = 16;
            hearth::kv::DiskTierConfig c;
            c.dir = kv.path().toStdString();
            auto tier = hearth::kv::DiskTier::open(c, hearth::kv::TierKey::make(parts), 256);
            QVERIFY(tier);
            const int32_t token = 7;
            const auto hash = hearth::kv::hash_block(std::nullopt, std::span(&token, 1), {});
            QVERIFY((*tier)->store(hash, std::vector<std::byte>(256)));
            (*tier)->flush();
        }
        QCOMPARE(hearth::kv::inspect_disk_tier(kv.path().toStdString())->size(), std::size_t{1});
        ModelLibrary lib;
        lib.setActive(true);
        lib.setKvDiskDir(kv.path());
        lib.setRootsForTesting(QList<SourceRoot>{{Source::Hearth, hearth_}});
        QVERIFY(wait_scanned(lib));
        QCOMPARE(lib.remove(path), QString());
        QCOMPARE(hearth::kv::inspect_disk_tier(kv.path().toStdString())->size(), std::size_t{0});
    }

    void theOpenModelThroughALink() {
#ifdef Q_OS_WIN
        QSKIP("links need privileges on Windows");
#else
        QTemporaryDir elsewhere;
        const QString real = elsewhere.filePath("real.gguf");
        write(real, synthetic("llama"));
        QVERIFY(QFile::link(real, mine_ + "/linked.gguf"));  // as Ollama's blob might be
        ModelLibrary lib;
        lib.setActive(true);
        lib.setRootsForTesting(QList<SourceRoot>{{Source::Folder, mine_}});
        QVERIFY(wait_scanned(lib));
        lib.setOpenPath(real);  // opened by its own path
        QCOMPARE(role(lib, mine_ + "/linked.gguf", ModelLibrary::IsOpenRole).toBool(), true);
        QVERIFY(lib.remove(mine_ + "/linked.gguf").contains("open"));
#endif
    }

    void foldersTheUserAdds() {
        AppSettings settings(tmp_.path() + "/s3.ini");
        ModelLibrary lib;
        lib.setActive(true);
        lib.setOtherApps(false);
        lib.setModelsDir(hearth_);
        lib.setSettings(&settings);
        QVERIFY(wait_scanned(lib));
        QCOMPARE(lib.rowCount(), 0);
        write(mine_ + "/found.gguf", synthetic("llama"));
        QVERIFY(lib.addFolder(tmp_.path() + "/nothing").contains("not a folder"));
        QVERIFY(lib.addFolder(hearth_).contains("already listed"));
        QCOMPARE(lib.addFolder(QUrl::fromLocalFile(mine_)), QString());
        QVERIFY(lib.addFolder(mine_ + "/").contains("already listed"));
        QCOMPARE(settings.modelFolders(), QStringList{mine_});
        QVERIFY(QTest::qWaitFor([&] { return lib.rowCount() == 1; }, 10000));
        QCOMPARE(role(lib, mine_ + "/found.gguf", ModelLibrary::SourceLabelRole).toString(),
                 QStringLiteral("Your folder"));
        lib.removeFolder(mine_);
        QVERIFY(QTest::qWaitFor([&] { return lib.rowCount() == 0 && !lib.scanning(); }, 10000));
        QVERIFY(settings.modelFolders().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestModelLibrary)
#include "tst_model_library.moc"
