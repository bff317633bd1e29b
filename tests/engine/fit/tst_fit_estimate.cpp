// The fit estimate (fit_estimate.h) against the engine's real numbers: the KV cache it
// would allocate is exactly what Engine::create allocates (synthetic models, several
// contexts and budgets); the verdicts at their thresholds; the speed from the bandwidth;
// and, on the default model and Gemma 3 270M, the memory the engine's process grows by
// within 10 % of the estimate (decode speed against the estimate is a benchmark:
// `hearth-cli fit --check`, docs/benchmarks.md).
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine.h"
#include "fit_estimate.h"
#include "gguf/gguf_file.h"
#include "memory_probe.h"
#include "model/synthetic_model.h"
#include "support/test_model.h"
#include "tokenizer/tokenizer.h"

using namespace hearth;

namespace {

// The process's resident set, anonymous (heap, KV cache, activations) and file-backed
// (the mapped weights), from /proc/self/status.
struct Resident {
    std::uint64_t anon = 0, file = 0;
};
Resident resident() {
    Resident r;
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line.substr(line.find(':') + 1));
        std::uint64_t kib = 0;
        fields >> kib;
        if (line.rfind("RssAnon:", 0) == 0) r.anon = kib << 10;
        if (line.rfind("RssFile:", 0) == 0) r.file = kib << 10;
    }
    return r;
}

QString write_synthetic(const QTemporaryDir& dir, const SyntheticModelSpec& spec,
                        const char* name) {
    auto bytes = make_synthetic_model(spec);
    if (!bytes) return {};
    const QString path = dir.filePath(QLatin1String(name));
    std::ofstream(path.toStdString(), std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes->data()),
               static_cast<std::streamsize>(bytes->size()));
    return path;
}

ModelNeeds needs_of(const QString& path) {
    auto file = gguf::GgufFile::open(path.toStdString());
    if (!file) return {};
    auto needs = model_needs(**file);
    return needs ? *needs : ModelNeeds{};
}

// In a fresh process (this binary with --measure PATH CONTEXT: a process that ran an
// engine before keeps freed heap to reuse), opens the model, generates a few tokens (every
// weight read) and prints what the process grew by: anonymous and file-backed bytes.
int measure(const char* path, long long context) {
    const Resident before = resident();
    EngineConfig c;
    c.model_path = path;
    c.context_length = context;
    c.kv_disk_mb = 0;
    auto engine = Engine::create(c);
    if (!engine) return 2;
    sched::Request req;
    req.prompt = (*engine)->tokenizer().encode("Once upon a time", false);
    req.sampling = SamplingParams::greedy();
    req.max_tokens = 8;
    req.stop_at_end_of_generation = false;
    if ((*engine)->submit(std::move(req))->wait().kind != sched::EventKind::Finished) return 3;
    const Resident after = resident();
    std::printf("%llu %llu %llu\n", static_cast<unsigned long long>(after.anon - before.anon),
                static_cast<unsigned long long>(after.file - before.file),
                static_cast<unsigned long long>((*engine)->kv_bytes()));
    return 0;
}

// The estimate less the app's share against what a fresh process grew by. The mapped
// weights count as the file-backed part; where the system took some of those pages back
// (memory pressure from other tests), the rest is compared without them.
void check_resident(const QString& path, std::int64_t context) {
    if (test::kTimeScale > 1) QSKIP("a sanitizer's shadow memory is not the engine's");
    const ModelNeeds needs = needs_of(path);
    QVERIFY(needs.weight_bytes > 0);
    const FitEstimate e = estimate_fit(needs, context, 0, MachineFacts{});
    QProcess child;
    child.start(QCoreApplication::applicationFilePath(),
                {"--measure", path, QString::number(context)});
    QVERIFY(child.waitForFinished(120000));
    QCOMPARE(child.exitCode(), 0);
    const QStringList grown = QString::fromLatin1(child.readAllStandardOutput()).split(' ');
    QCOMPARE(grown.size(), 3);
    const double anon = grown[0].toDouble(), file = grown[1].toDouble();
    QCOMPARE(grown[2].trimmed().toULongLong(), static_cast<qulonglong>(e.kv_bytes));
    const double weights = static_cast<double>(e.weight_bytes);
    const double rest = static_cast<double>(e.total_bytes - e.overhead_bytes) - weights;
    const bool weights_resident = file >= 0.9 * weights;
    const double measured = weights_resident ? anon + file : anon;
    const double estimated = weights_resident ? rest + weights : rest;
    qInfo(
        "%s at %lld tokens: the engine took %.0f MiB (%.0f MiB heap, %.0f MiB of the file), "
        "estimated %.0f MiB (%+.1f %%)%s",
        qPrintable(QFileInfo(path).fileName()), static_cast<long long>(e.context),
        (anon + file) / (1 << 20), anon / (1 << 20), file / (1 << 20), (rest + weights) / (1 << 20),
        100 * (estimated / measured - 1),
        weights_resident ? "" : "; the weights were partly paged out: compared without them");
    QVERIFY2(std::abs(estimated / measured - 1) <= 0.10, "the estimate is off by more than 10 %");
}

}  // namespace

class TestFitEstimate : public QObject {
    Q_OBJECT

  private slots:
    void kvCacheIsWhatTheEngineAllocates_data() {
        QTest::addColumn<QString>("architecture");
        QTest::addColumn<qint64>("context");
        QTest::addColumn<qint64>("kvMb");
        QTest::newRow("llama, its own context") << "llama" << qint64(0) << qint64(0);
        QTest::newRow("llama, 300 tokens") << "llama" << qint64(300) << qint64(0);
        QTest::newRow("qwen3, a 3 MiB budget") << "qwen3" << qint64(0) << qint64(3);
        QTest::newRow("gemma3, 1000 tokens") << "gemma3" << qint64(1000) << qint64(0);
    }
    void kvCacheIsWhatTheEngineAllocates() {
        QFETCH(QString, architecture);
        QFETCH(qint64, context);
        QFETCH(qint64, kvMb);
        QTemporaryDir dir;
        SyntheticModelSpec spec;
        spec.architecture = architecture.toStdString();
        spec.context_length = 4096;
        if (architecture == "gemma3") spec.sliding_window = 128;
        const QString path = write_synthetic(dir, spec, "m.gguf");
        QVERIFY(!path.isEmpty());
        const ModelNeeds needs = needs_of(path);
        QCOMPARE(needs.context_length, qint64(4096));
        const FitEstimate e =
            estimate_fit(needs, context, static_cast<std::size_t>(kvMb), MachineFacts{});
        EngineConfig c;
        c.model_path = path.toStdString();
        c.context_length = context;
        c.kv_mb = static_cast<std::size_t>(kvMb);
        c.kv_disk_mb = 0;
        auto engine = Engine::create(c);
        QVERIFY2(engine, engine ? "" : engine.message().c_str());
        QCOMPARE(static_cast<std::uint64_t>((*engine)->kv_bytes()), e.kv_bytes);
    }

    void weightsAndWhatDecodingReads() {
        QTemporaryDir dir;
        SyntheticModelSpec spec;
        spec.tied_embeddings = false;
        const QString untied = write_synthetic(dir, spec, "untied.gguf");
        spec.tied_embeddings = true;
        const QString tied = write_synthetic(dir, spec, "tied.gguf");
        auto file = gguf::GgufFile::open(untied.toStdString());
        QVERIFY(file);
        std::uint64_t sum = 0, embedding = 0;
        for (const auto& t : (*file)->tensors()) {
            sum += t.nbytes;
            if (t.name == "token_embd.weight") embedding = t.nbytes;
        }
        const ModelNeeds u = needs_of(untied);
        QCOMPARE(u.weight_bytes, sum);
        QCOMPARE(u.decode_bytes, sum - embedding);  // one row of the table per token
        const ModelNeeds t = needs_of(tied);
        QCOMPARE(t.decode_bytes, t.weight_bytes);  // the table is the output layer too
        QVERIFY(t.activation_bytes > 0);
    }

    void verdictsAndSpeed() {
        ModelNeeds m;
        m.weight_bytes = m.decode_bytes = 1000ull << 20;
        m.n_layer = 10;
        m.n_head_kv = 2;
        m.head_dim = 64;
        m.context_length = 4096;
        m.activation_bytes = 10ull << 20;
        MachineFacts machine;
        const FitEstimate sized = estimate_fit(m, 0, 0, machine);
        const std::uint64_t total = sized.total_bytes;
        QCOMPARE(total,
                 sized.weight_bytes + sized.kv_bytes + sized.activation_bytes + kAppOverheadBytes);
        machine.ram_available =
            static_cast<std::uint64_t>(static_cast<double>(total) / kComfortableShare) + 1;
        QCOMPARE(estimate_fit(m, 0, 0, machine).verdict, FitVerdict::Fits);
        machine.ram_available = total;
        QCOMPARE(estimate_fit(m, 0, 0, machine).verdict, FitVerdict::Tight);
        machine.ram_available = total - 1;
        QCOMPARE(estimate_fit(m, 0, 0, machine).verdict, FitVerdict::TooBig);
        // A smaller context needs less.
        QVERIFY(estimate_fit(m, 512, 0, machine).total_bytes < total);

        QCOMPARE(estimate_fit(m, 0, 0, machine).tokens_per_s, 0.0);  // bandwidth unknown
        machine.read_bytes_per_s = 10e9;
        // Per token: the weights, and the KV of a 1,000-token chat (10 layers × 2 heads ×
        // 64 × K and V × 2 bytes = 5,120 bytes a token).
        const double per_token = double(1000ull << 20) + 5120.0 * kTypicalChatTokens;
        QCOMPARE(estimate_fit(m, 0, 0, machine).tokens_per_s, 10e9 / per_token);
    }

    void thisComputer() {
        auto memory = system_memory();
        QVERIFY2(memory, memory ? "" : memory.message().c_str());
        QVERIFY(memory->total > 0);
        QVERIFY(memory->available > 0 && memory->available <= memory->total);
        // A small read, so the test stays quick: some bytes per second, not a benchmark.
        QVERIFY(measure_read_bandwidth(2, std::size_t{8} << 20, 1) > 0);
    }

    void residentSetOfTheDefaultModel() {
        HEARTH_REQUIRE_MODEL(model_path);
        check_resident(model_path, 2048);
    }

    void residentSetOfGemma3() {
        HEARTH_REQUIRE_GEMMA3_MODEL(model_path);
        check_resident(model_path, 2048);
    }
};

int main(int argc, char** argv) {
    if (argc == 4 && std::strcmp(argv[1], "--measure") == 0)
        return measure(argv[2], std::atoll(argv[3]));
    QCoreApplication app(argc, argv);
    TestFitEstimate t;
    return QTest::qExec(&t, argc, argv);
}
#include "tst_fit_estimate.moc"
