// A model split by llama.cpp's own llama-gguf-split (scripts/quant-models: the default model
// in three parts of at most 100 tensors) reads as the model it came from: opened through
// its first or a later part, every metadata entry of the original (but the split keys)
// and every tensor, byte for byte, are there, and the forward pass gives the same logits,
// bit for bit, as the single file, which tst_model_golden holds to llama.cpp's goldens.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <cstring>

#include "cpu/cpu_backend.h"
#include "generation/generator.h"
#include "gguf/gguf_file.h"
#include "greedy_goldens.h"
#include "model/llama_model.h"
#include "support/test_model.h"
#include "tokenizer/tokenizer.h"

using namespace hearth;

namespace {

QString split_part(int no) {
    const QString env = qEnvironmentVariable("HEARTH_QUANT_MODELS");
    const QString dir = env.isEmpty() ? QStringLiteral(HEARTH_QUANT_MODELS_DIR) : env;
    return dir + QStringLiteral("/smollm2-split-0000%1-of-00003.gguf").arg(no);
}

std::vector<float> last_logits(const gguf::GgufFile& file, const std::vector<int32_t>& prompt) {
    kernels::CpuBackend backend(0);
    auto model = LlamaModel::load(file, backend);
    auto tokenizer = Tokenizer::from_gguf(file);
    if (!model || !tokenizer) return {};
    Generator gen(**model, **tokenizer);
    auto logits = gen.last_logits(prompt);
    return logits ? *logits : std::vector<float>();
}

}  // namespace

class TestSplitGolden : public QObject {
    Q_OBJECT

  private slots:
    void readsAsTheModelItCameFrom() {
        HEARTH_REQUIRE_MODEL(path);
        if (!QFile::exists(split_part(1))) {
            const QString why = split_part(1) + " is missing: run scripts/quant-models";
            if (test::in_ci()) QFAIL(qPrintable(why));
            QSKIP(qPrintable(why));
        }
        auto whole = gguf::GgufFile::open(path.toStdString());
        QVERIFY2(whole, whole ? "" : whole.message().c_str());
        const gguf::GgufFile& w = **whole;

        for (int through : {1, 3}) {
            auto split = gguf::GgufFile::open(split_part(through).toStdString());
            QVERIFY2(split, split ? "" : split.message().c_str());
            const gguf::GgufFile& s = **split;
            QCOMPARE(s.part_count(), std::size_t{3});
            QVERIFY(s.get_u32("split.count") == 3u);
            for (const auto& e : w.metadata()) {
                const gguf::Value* v = s.find(e.key);
                QVERIFY2(v, std::string(e.key).c_str());
                QCOMPARE(v->to_string(1u << 20), e.value.to_string(1u << 20));
            }
            QCOMPARE(s.tensors().size(), w.tensors().size());
            for (const auto& t : w.tensors()) {
                const gguf::TensorInfo* u = s.find_tensor(t.name);
                QVERIFY2(u, t.name.c_str());
                QCOMPARE(u->type, t.type);
                QCOMPARE(u->ne, t.ne);
                QCOMPARE(u->nbytes, t.nbytes);
                QVERIFY2(std::memcmp(u->data, t.data, t.nbytes) == 0, t.name.c_str());
            }
        }

        // The same logits as the single file, for a prompt of the goldens.
        QFile json(test::source_dir() + "/tests/data/inference/smollm2-goldens.json");
        QVERIFY(json.open(QIODevice::ReadOnly));
        const QJsonArray prompts = QJsonDocument::fromJson(json.readAll())["prompts"].toArray();
        QVERIFY(!prompts.isEmpty());
        const auto prompt = test::ints(prompts[0].toObject()["prompt_ids"].toArray());
        auto split = gguf::GgufFile::open(split_part(2).toStdString());
        QVERIFY(split);
        const auto a = last_logits(w, prompt);
        const auto b = last_logits(**split, prompt);
        QVERIFY(!a.empty());
        QCOMPARE(b.size(), a.size());
        QVERIFY(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    }
};

QTEST_GUILESS_MAIN(TestSplitGolden)
#include "tst_split_golden.moc"
