// Each architecture's forward pass against llama.cpp, on one small synthetic model per
// architecture (goldens recorded by scripts/goldens/architectures.py: llama-cpp-python,
// AVX2 build, on the bytes hearth-synthetic-model writes from the same spec):
// - the model built here from the recorded spec has the recorded SHA-256 (the very bytes
//   llama.cpp ran);
// - logits at the last prompt position within relative L2 1e-3 of llama.cpp's, with the
//   prompt in one step and in chunks of 7 tokens (the paged cache across steps);
// - greedy continuations of 32 tokens equal llama.cpp's, up to a step where its own two
//   best logits are within kTie (a near tie: reported, not failed);
// - through the engine (batch-invariant numerics, the scheduler, sampling on the
//   backend), with the prefix cache off and on (the second request served from the
//   first's blocks), the same greedy tokens, and cache on equal to cache off.
// Architecture semantics (where the norms sit, which RoPE, biases, per-head norms, head
// sizes other than n_embd / n_head) are what this checks; the kernels have their own
// suites.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <fstream>

#include "common/sha256.h"
#include "cpu/cpu_backend.h"
#include "engine.h"
#include "gguf/gguf_file.h"
#include "greedy_goldens.h"
#include "kv/kv_storage.h"
#include "model/llama_model.h"
#include "model/synthetic_model.h"

using namespace hearth;

using hearth::test::compare_greedy;
using hearth::test::Continuation;
using hearth::test::ints;
using hearth::test::kTie;

namespace {

constexpr double kMaxRelL2 = 1e-3;

double rel_l2(const float* a, const QJsonArray& want) {
    double d = 0, n = 0;
    for (qsizetype i = 0; i < want.size(); ++i) {
        const double w = want[i].toDouble();
        d += (a[i] - w) * (a[i] - w);
        n += w * w;
    }
    return std::sqrt(d / n);
}

int32_t argmax(const float* x, int32_t n) {
    int32_t best = 0;
    for (int32_t i = 1; i < n; ++i)
        if (x[i] > x[best]) best = i;
    return best;
}

SyntheticModelSpec spec_of(const QJsonObject& j) {
    SyntheticModelSpec s;
    s.architecture = j["arch"].toString().toStdString();
    s.seed = static_cast<uint32_t>(j["seed"].toInt());
    s.n_embd = j["n_embd"].toInt();
    s.n_layer = j["n_layer"].toInt();
    s.n_head = j["n_head"].toInt();
    s.n_head_kv = j["n_head_kv"].toInt();
    s.head_dim = j["head_dim"].toInt();
    s.n_ff = j["n_ff"].toInt();
    const auto type = [](const QString& name) {
        const auto t = quant::type_from_name(name.toStdString());
        if (!t) qFatal("unknown type %s", qPrintable(name));
        return *t;
    };
    s.weight_type = type(j["type"].toString());
    s.embedding_type = type(j["embedding_type"].toString());
    s.tied_embeddings = !j["untied"].toBool();
    if (j.contains("sliding_window")) s.sliding_window = j["sliding_window"].toInt();
    if (j.contains("swa_period")) s.swa_period = j["swa_period"].toInt();
    if (j.contains("rope_freq_base"))
        s.rope_freq_base = static_cast<float>(j["rope_freq_base"].toDouble());
    if (j.contains("rope_freq_base_swa"))
        s.rope_freq_base_swa = static_cast<float>(j["rope_freq_base_swa"].toDouble());
    if (j.contains("embedding_std"))
        s.embedding_std = static_cast<float>(j["embedding_std"].toDouble());
    if (j.contains("attn_softcap"))
        s.attn_softcap = static_cast<float>(j["attn_softcap"].toDouble());
    if (j.contains("final_softcap"))
        s.final_softcap = static_cast<float>(j["final_softcap"].toDouble());
    if (j.contains("longrope_original_context"))
        s.longrope_original_context = j["longrope_original_context"].toInt();
    if (j.contains("rope_attn_factor"))
        s.rope_attn_factor = static_cast<float>(j["rope_attn_factor"].toDouble());
    return s;
}

}  // namespace

class TestArchitectureGolden : public QObject {
    Q_OBJECT

    QJsonArray models_;

    // The recorded model's bytes, checked against the recorded hash.
    std::vector<std::byte> model_bytes(const QJsonObject& m) {
        auto bytes = make_synthetic_model(spec_of(m["spec"].toObject()));
        if (!bytes) qFatal("synthetic model: %s", bytes.message().c_str());
        Sha256 h;
        h.update(std::span<const std::byte>(*bytes));
        const std::string digest = h.finish_hex();
        if (digest != m["sha256"].toString().toStdString()) {
#if defined(__GLIBCXX__)
            qFatal(
                "%s: the synthetic model's bytes changed (SHA-256 %s, the goldens' %s): "
                "regenerate the goldens (scripts/goldens/README.md)",
                qPrintable(m["spec"].toObject()["name"].toString()), digest.c_str(),
                qPrintable(m["sha256"].toString()));
#else
            // The weights come from std::normal_distribution, whose values are the
            // standard library's own: the goldens were recorded with libstdc++'s.
            QSKIP(
                "this standard library draws other random weights than the goldens' "
                "(libstdc++)");
#endif
        }
        return std::move(bytes).value();
    }

    void rows() {
        QTest::addColumn<int>("index");
        for (qsizetype i = 0; i < models_.size(); ++i)
            QTest::newRow(qPrintable(models_[i].toObject()["spec"].toObject()["name"].toString()))
                << static_cast<int>(i);
    }

  private slots:
    void initTestCase() {
        QFile f(QStringLiteral(HEARTH_SOURCE_DIR "/tests/data/inference/architectures.json"));
        QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.fileName()));
        models_ = QJsonDocument::fromJson(f.readAll()).object()["models"].toArray();
        QVERIFY(!models_.isEmpty());
    }

    void forwardMatchesLlamaCpp_data() {
        rows();
    }
    void forwardMatchesLlamaCpp() {
        QFETCH(int, index);
        const QJsonObject m = models_[index].toObject();
        auto file = gguf::GgufFile::parse(model_bytes(m));
        QVERIFY2(file, file ? "" : file.message().c_str());
        kernels::CpuBackend backend(2);
        auto model = LlamaModel::load(**file, backend);
        QVERIFY2(model, model ? "" : model.message().c_str());
        const ModelConfig& c = (*model)->config();
        const auto V = static_cast<int32_t>(c.n_vocab);
        QCOMPARE(V, m["n_vocab"].toInt());
        std::vector<int32_t> table(64);
        for (size_t i = 0; i < table.size(); ++i)
            table[i] = static_cast<int32_t>((i * 37) % table.size());  // not contiguous

        int ties = 0;
        for (const auto& pv : m["prompts"].toArray()) {
            const QJsonObject p = pv.toObject();
            const std::vector<int32_t> ids = ints(p["ids"].toArray());
            const std::vector<int32_t> want = ints(p["greedy"].toArray());
            for (int32_t chunk : {static_cast<int32_t>(ids.size()), 7}) {
                auto kv = KvStorage::create(
                    backend,
                    {static_cast<int32_t>(c.n_layer), static_cast<int32_t>(c.n_head_kv),
                     static_cast<int32_t>(c.head_dim), 16},
                    64);
                QVERIFY(kv);
                std::vector<float> logits;
                std::vector<int32_t> seq = ids;
                for (int32_t done = 0; done < static_cast<int32_t>(ids.size()); done += chunk) {
                    const int32_t n =
                        std::min<int32_t>(chunk, static_cast<int32_t>(ids.size()) - done);
                    SequenceStep s;
                    s.tokens =
                        std::span(seq).subspan(static_cast<size_t>(done), static_cast<size_t>(n));
                    s.start_pos = done;
                    s.block_table = table;
                    QVERIFY((*model)->forward(std::span(&s, 1), **kv, logits));
                }
                const double err = rel_l2(logits.data(), p["logits"].toArray());
                QVERIFY2(err < kMaxRelL2, qPrintable(QString("prompt of %1, chunks of %2: "
                                                             "relative L2 %3")
                                                         .arg(ids.size())
                                                         .arg(chunk)
                                                         .arg(err)));
                std::vector<int32_t> got;
                while (got.size() < want.size()) {
                    got.push_back(argmax(logits.data(), V));
                    seq.push_back(got.back());
                    SequenceStep s;
                    s.tokens = std::span(seq).subspan(seq.size() - 1, 1);
                    s.start_pos = static_cast<int32_t>(seq.size()) - 1;
                    s.block_table = table;
                    QVERIFY((*model)->forward(std::span(&s, 1), **kv, logits));
                }
                const Continuation cmp = compare_greedy(got, want, p["top2_gap"].toArray());
                if (cmp.tie) ++ties;
                QVERIFY2(cmp.tie || cmp.matched == static_cast<int>(want.size()),
                         qPrintable(QString("prompt of %1, chunks of %2: greedy differs at "
                                            "token %3")
                                        .arg(ids.size())
                                        .arg(chunk)
                                        .arg(cmp.matched)));
            }
        }
        if (ties > 0) qInfo("%d continuations stopped at a near tie", ties);
    }

    void engineMatchesLlamaCpp_data() {
        rows();
    }
    void engineMatchesLlamaCpp() {
        QFETCH(int, index);
        const QJsonObject m = models_[index].toObject();
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("model.gguf")).toStdString();
        {
            const std::vector<std::byte> bytes = model_bytes(m);
            std::ofstream f(path, std::ios::binary);
            f.write(reinterpret_cast<const char*>(bytes.data()),
                    static_cast<std::streamsize>(bytes.size()));
            QVERIFY(f.flush());
        }
        std::vector<std::vector<int32_t>> by_cache[2];
        for (bool cache : {false, true}) {
            EngineConfig config;
            config.model_path = path;
            config.device = "cpu";
            config.n_threads = 2;
            config.kv_mb = 16;
            config.prefix_caching = cache;
            auto engine = Engine::create(config);
            QVERIFY2(engine, engine ? "" : engine.message().c_str());
            const QJsonArray prompts = m["prompts"].toArray();
            // Cache on: each prompt twice, the second served from the first's blocks.
            for (int round = 0; round < (cache ? 2 : 1); ++round) {
                for (qsizetype i = 0; i < prompts.size(); ++i) {
                    const QJsonObject p = prompts[i].toObject();
                    sched::Request r;
                    r.conversation = static_cast<kv::SeqId>(1 + i + 100 * round);
                    r.prompt = ints(p["ids"].toArray());
                    r.max_tokens = static_cast<int32_t>(p["greedy"].toArray().size());
                    r.stop_at_end_of_generation = false;
                    r.park_at_end = false;
                    const sched::Event last = (*engine)->submit(r)->wait();
                    QVERIFY2(last.kind == sched::EventKind::Finished, last.error.c_str());
                    const std::vector<int32_t>& got = last.tokens;  // the generated ids
                    if (cache && round == 1) {
                        QVERIFY(last.stats.prompt_tokens_cached > 0 || r.prompt.size() < 16);
                        QCOMPARE(got, by_cache[1][static_cast<size_t>(i)]);
                        continue;
                    }
                    const Continuation cmp =
                        compare_greedy(got, ints(p["greedy"].toArray()), p["top2_gap"].toArray());
                    QVERIFY2(cmp.tie || cmp.matched == static_cast<int>(got.size()),
                             qPrintable(QString("prompt %1, cache %2: greedy differs at token %3 "
                                                "of %4")
                                            .arg(i)
                                            .arg(cache ? "on" : "off")
                                            .arg(cmp.matched)
                                            .arg(got.size())));
                    by_cache[cache ? 1 : 0].push_back(got);
                }
            }
        }
        QCOMPARE(by_cache[1], by_cache[0]);
    }
};

QTEST_GUILESS_MAIN(TestArchitectureGolden)
#include "tst_architecture_golden.moc"
